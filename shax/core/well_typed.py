"""Definitions known to be well typed, so that a pipeline checks types once.

`check_types` recomputes the type of every binding; a pass or stage that checked its
input that way before every step would repeat the work at every step. So the
definitions `check_types` accepts, and those a stage or pass builds with every binding
typed by the type rules (from parts known to be well typed), are remembered here, and
a check of the input is skipped for them. By identity and weakly: an entry goes when
its definition does, and definitions are immutable, so what is known stays true.
"""

from __future__ import annotations

import weakref
from typing import Any, TypeVar

import attrs

from shax.core.ir import Definition

D = TypeVar("D", bound=Definition)

# id -> the definition, for the definitions known to be well typed
_known: weakref.WeakValueDictionary[int, Definition] = weakref.WeakValueDictionary()


def is_well_typed(defn: Definition) -> bool:
    """Whether `defn` is known to pass `check_types` (False means: not known)."""
    return _known.get(id(defn)) is defn


def mark_well_typed(defn: D) -> D:
    """Remember that `defn` passes `check_types`; returns it."""
    _known[id(defn)] = defn
    return defn


def evolved(defn: D, **changes: Any) -> D:
    """`defn` with another name or fewer outputs (attrs.evolve), known to be well typed if
    `defn` is: neither changes a binding or a returned var's type."""
    assert set(changes) <= {"name", "outputs"}, "only changes that keep the bindings' types"
    result = attrs.evolve(defn, **changes)
    return mark_well_typed(result) if is_well_typed(defn) else result

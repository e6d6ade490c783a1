"""What is derived from a definition, kept while the definition lives.

Definitions are values: what is derived from one stays true, so each derivation (its
derivative, its transpose, whether running it has an effect) is built once per
definition and kept by the definition's identity until it is collected. Threads missing
an entry at once may each build it; either is kept, both right.
"""

from __future__ import annotations

import weakref
from collections.abc import Callable, Hashable
from typing import TYPE_CHECKING, Any, TypeVar

if TYPE_CHECKING:
    from shax.core.ir import Definition

T = TypeVar("T")

# id(definition) -> (what was derived) -> the derived value
_derived: dict[int, dict[Hashable, Any]] = {}


def derived(defn: Definition, key: Hashable, build: Callable[[], T]) -> T:
    """`build()`, the `key` derivation of `defn`, built once while `defn` lives."""
    entries = _derived.get(id(defn))
    if entries is None:
        entries = _derived.setdefault(id(defn), {})
        weakref.finalize(defn, _derived.pop, id(defn), None)
    found = entries.get(key)
    if found is None:
        found = entries[key] = build()
    return found


def has_effects(defn: Definition) -> bool:
    """Whether running `defn` has an effect (`Primitive.has_effect`), found once per definition."""
    return derived(defn, "effects", lambda: any(b.prim.has_effect() for b in defn.bindings))


def known(defn: Definition, key: Hashable) -> Any:
    """The `key` derivation of `defn` if it was built (or set), else None."""
    return _derived.get(id(defn), {}).get(key)


def replace(defn: Definition, key: Hashable, value: Any) -> None:
    """Set the `key` derivation of `defn` to `value`, whether built before or not."""
    derived(defn, key, lambda: value)
    _derived[id(defn)][key] = value

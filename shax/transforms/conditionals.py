"""Conditionals with `jax.lax`'s signatures: `cond` and `switch`.

    y = shax.cond(pred, true_fun, false_fun, *operands)     pred: a bool or int scalar
    y = shax.switch(index, branches, *operands)             index clamped to the branches

Operands and results are pytrees. On numpy values the taken branch runs (a Python `if`:
only it). On tracers each records one `cond` operation (`shax.control.cond`) holding
every branch as a typed definition, traced once at the operands' types through the
transforms' staging; `cond` is a switch of (false_fun, true_fun) on the predicate as an
int, as in JAX. The branches must return the same structure of the same types.
"""

from __future__ import annotations

import reprlib
from collections.abc import Callable, Sequence
from typing import Any

import attrs
import numpy as np

import typeclasses as tc
from shax.control import Cond
from shax.control.callees import rearranged
from shax.control.cond import run_all, taken
from shax.core.errors import ShaxError, ShaxTypeError, a_type, at
from shax.core.location import current_source
from shax.core.pytree import leaf_paths, unflatten
from shax.core.types import TensorType, bool_, i32
from shax.passes import cleanup
from shax.tracing.trace import check_arity, check_function, function_name
from shax.tracing.tracer import Tracer, tracing
from shax.transforms.arguments import leaf_type, typed_leaves
from shax.transforms.staging import Staging, stage


def cond(pred: Any, true_fun: Callable[..., Any], false_fun: Callable[..., Any], *operands: Any) -> Any:
    """`true_fun(*operands)` if `pred` (a bool or int scalar) holds, else `false_fun(*operands)`."""
    try:
        for role, fun in (("true_fun", true_fun), ("false_fun", false_fun)):
            check_function("cond", fun)
            check_arity("cond", role, fun, _given(operands))
        t = _scalar("cond", "the predicate", pred)
        if t.dtype.is_float:
            raise ShaxTypeError(f"cond: the predicate must be a bool or int scalar, got {t}")
        if isinstance(pred, Tracer):
            index: Any = tc.convert_element_type(pred if t.dtype == bool_ else pred != 0, np.int32)
        else:
            index = np.int32(bool(pred))
        return _switch("cond", index, [false_fun, true_fun], operands)
    except ShaxError as error:
        raise at(error, current_source()) from None


def switch(index: Any, branches: Sequence[Any], *operands: Any) -> Any:
    """`branches[clamp(index, 0, len(branches) - 1)](*operands)`; `index` an int scalar."""
    try:
        if isinstance(branches, (str, bytes)) or not isinstance(branches, Sequence) or not branches:
            shown = reprlib.repr(branches)
            raise ShaxTypeError(f"switch: branches must be a non-empty sequence of functions, got {shown}")
        for k, f in enumerate(branches):
            check_function("switch", f)
            check_arity("switch", f"branches[{k}]", f, _given(operands))
        t = _scalar("switch", "the index", index)
        if t.dtype.is_float or t.dtype == bool_:
            raise ShaxTypeError(f"switch: the index must be an int scalar, got {t}")
        if not isinstance(index, Tracer):
            converted: Any = np.int32(taken(index, len(branches)))  # clamped first: any int fits
        else:
            converted = index if t.dtype == i32 else tc.convert_element_type(index, np.int32)
        return _switch("switch", converted, list(branches), operands)
    except ShaxError as error:
        raise at(error, current_source()) from None


def _given(operands: tuple[Any, ...]) -> list[str]:
    """How an arity error names the arguments a branch is called with."""
    return [f"operands[{k}]" for k in range(len(operands))]


def _scalar(what: str, name: str, value: Any) -> TensorType:
    """The type of a scalar predicate or index (a Python int is i32), or an error."""
    if not isinstance(value, (Tracer, np.ndarray, np.generic, bool, int)):
        raise ShaxTypeError(f"{what}: {name} must be a scalar, got {a_type(value)}")
    t = leaf_type(value)
    if t.shape:
        raise ShaxTypeError(f"{what}: {name} must be a scalar, got {t}")
    return t


def _switch(what: str, index: Any, branches: list[Callable[..., Any]], operands: tuple[Any, ...]) -> Any:
    leaves, in_tree, types = typed_leaves(what, operands)
    if not tracing() and not any(isinstance(v, Tracer) for v in [index, *leaves]):
        # A Python `if`: only the taken branch runs.
        return branches[taken(index, len(branches))](*unflatten(in_tree, leaves))
    names = _names(what, branches)
    stagings = [stage(f, in_tree, types) for f in branches]
    _check_agree(what, names, stagings)
    captured = [c for s in stagings for c in s.captured]
    arg_types = [*types, *(c.type for c in captured)]
    defns, start = [], 0
    for name, s in zip(names, stagings):
        positions = [*range(len(types)), *(len(types) + start + j for j in range(len(s.captured)))]
        defns.append(cleanup(rearranged(attrs.evolve(s.typed, name=name), arg_types, positions)))
        start += len(s.captured)
    outputs = run_all(Cond(tuple(defns)), [index, *leaves, *captured])
    return unflatten(stagings[0].out_tree, outputs)


def _names(what: str, branches: list[Callable[..., Any]]) -> list[str]:
    """Each branch's printed name: its function's, or what it is (cond's f_false, f_true)."""
    if what == "cond":
        defaults = ["f_false", "f_true"]
    else:
        defaults = [f"f{k}" for k in range(len(branches))]
    names = [function_name(f) for f in branches]
    return [d if n == "f" or names.count(n) > 1 else n for n, d in zip(names, defaults)]


def _check_agree(what: str, names: list[str], stagings: list[Staging]) -> None:
    """Every branch returns the first's structure, each leaf of the first's type."""
    first = stagings[0]
    first_types = first.typed.output_types()
    for name, s in zip(names[1:], stagings[1:]):
        if s.out_tree != first.out_tree:
            raise ShaxTypeError(
                f"{what}: the branches return different structures: {names[0]} {first.out_tree}, {name} {s.out_tree}"
            )
        for path, t, u in zip(leaf_paths(first.out_tree), first_types, s.typed.output_types()):
            if t != u:
                leaf = f"output{path} differs" if path else "outputs differ"
                raise ShaxTypeError(f"{what}: the branches' {leaf}: {t} in {names[0]}, {u} in {name}")

"""The differentiation transforms, each a composition of the stages (JAX's conventions):

    grad(f, wrt=None)(*args)         -> gradients          linearize, transpose, zip, ct = 1
    value_and_grad(f, wrt=None)(...) -> (value, gradients)
    vjp(f, *primals)                 -> (out, vjp_fn)      vjp_fn(ct) -> one cotangent per primal
    jvp(f, primals, tangents)        -> (out, tangent)     linearize, zip
    linearize(f, *primals)           -> (out, f_jvp)       f_jvp(*tangents) -> tangent

Arguments are pytrees (see `shax.pytree`) of arrays and numbers; gradients and
cotangents have their primal's structure exactly (a dict of one leaf gets a dict, a
NamedTuple the same NamedTuple, None stays None), and leaves that are not floats (or
that do not reach the output) get zeros of their type. Values an enclosing transform
traces (a closed-over outer variable) are constants here: only the declared arguments
are differentiated, so nested transforms do not confuse their perturbations.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Hashable, Sequence
from typing import Any

import attrs
import numpy as np

from shax import passes, stages
from shax.errors import ShaxError, ShaxTypeError, ShaxValueError, at
from shax.evaluate import check_argument
from shax.ir import LinearizedDefinition
from shax.location import current_source
from shax.pytree import LEAF, TreeDef, flatten, unflatten
from shax.tracing import check_function, function_location, function_name
from shax.transforms.arguments import abstract_arguments, zeros_like
from shax.transforms.cache import cache
from shax.transforms.program import Program
from shax.transforms.staging import Staging, stage
from shax.transforms.transformed import Transformed
from shax.types import TensorType

# An int, a parameter name, a tuple (or list) of them, or None (every float parameter).
# Checked when the transform is made, with a message naming what was given.
Wrt = Any


@attrs.frozen
class _Parameters:
    """Where each parameter's leaves sit among the flattened arguments, and which leaves
    are differentiated (float leaves of the parameters chosen)."""

    in_tree: TreeDef
    types: tuple[TensorType, ...]
    chosen: tuple[int, ...]  # parameter positions, in the order asked for
    differentiated: tuple[int, ...]  # leaf indices
    starts: tuple[int, ...]  # each parameter's first leaf index, then the number of leaves
    flat: bool = attrs.field(init=False)  # every parameter a single leaf (not a container of one)

    def __attrs_post_init__(self) -> None:
        object.__setattr__(self, "flat", self.in_tree.flat)

    @staticmethod
    def of(in_tree: TreeDef, types: tuple[TensorType, ...], chosen: Sequence[int]) -> _Parameters:
        starts = _leaf_starts(in_tree)
        leaves = [k for p in chosen for k in range(starts[p], starts[p + 1]) if types[k].dtype.is_float]
        return _Parameters(in_tree, types, tuple(chosen), tuple(leaves), tuple(starts))

    def cotangents(self, values: Sequence[Any], positions: Sequence[int]) -> Sequence[Any]:
        """One pytree per parameter in `positions`: the differentiated leaves' `values`
        (in `differentiated` order), zeros for the other leaves."""
        if self.flat and self.differentiated == positions:
            return values  # every parameter one leaf, each differentiated: nothing to assemble
        by_leaf = dict(zip(self.differentiated, values))
        starts = self.starts
        return [
            unflatten(
                self.in_tree.children[p],
                [by_leaf[k] if k in by_leaf else zeros_like(self.types[k]) for k in range(starts[p], starts[p + 1])],
            )
            for p in positions
        ]


def _linearized_at(
    fn: Callable[..., Any], in_tree: TreeDef, types: tuple[TensorType, ...], chosen: Sequence[int]
) -> tuple[Staging, _Parameters, LinearizedDefinition]:
    """fn staged at `types` and linearized in the float leaves of the parameters `chosen`."""
    params = _Parameters.of(in_tree, types, chosen)
    staging = stage(fn, in_tree, types)
    return staging, params, stages.linearize(staging.typed, wrt=params.differentiated)


def _leaf_starts(in_tree: TreeDef) -> list[int]:
    """The index of each parameter's first leaf, and the number of leaves at the end."""
    starts = [0]
    for child in in_tree.children:
        starts.append(starts[-1] + child.num_leaves)
    return starts


# grad and value_and_grad ------------------------------------------------------------------


class Grad(Transformed):
    """`grad(f)`: reverse mode, the VJP definition with the output cotangent fixed to one."""

    kind = "grad"
    with_value = False

    def __init__(self, fn: Callable[..., Any], wrt: Wrt = None) -> None:
        super().__init__(fn)
        self.wrt = _checked_wrt(self.kind, wrt)

    def key(self) -> Hashable:
        return self.wrt

    def build(self, in_tree: TreeDef, types: tuple[TensorType, ...]) -> _BuiltGrad:
        chosen, single = _resolve_wrt(self.kind, self.fn, self.wrt, in_tree, types)
        staging, params, lin = _linearized_at(self.fn, in_tree, types, chosen)
        out_type = _scalar_output(self.kind, self.fn, staging)
        vjp = stages.zip_definitions(stages.transpose(lin))  # (args, captured, ct) -> (out, cts)
        one = np.ones((), out_type.dtype.numpy)
        defn = passes.bind_arguments(vjp, {len(vjp.arg_types) - 1: one})
        if not self.with_value:
            defn = attrs.evolve(defn, outputs=defn.outputs[1:])
        defn = passes.cleanup(attrs.evolve(defn, name=self.__name__))
        return _BuiltGrad(Program(defn), staging.captured, params, single, self.with_value)


class ValueAndGrad(Grad):
    """`value_and_grad(f)`: f's value and its gradients, from one VJP definition."""

    kind = "value_and_grad"
    with_value = True


@attrs.frozen
class _BuiltGrad:
    program: Program  # (argument leaves, captured) -> ([value], gradient leaves)
    captured: tuple[Any, ...]
    params: _Parameters
    single: bool
    with_value: bool

    def call(self, leaves: Sequence[Any]) -> Any:
        results = self.program([*leaves, *self.captured] if self.captured else leaves)
        value, grads = (results[0], results[1:]) if self.with_value else (None, results)
        trees = self.params.cotangents(grads, self.params.chosen)
        gradients = trees[0] if self.single else tuple(trees)
        return (value, gradients) if self.with_value else gradients


def grad(fn: Callable[..., Any], wrt: Wrt = None) -> Grad:
    """The gradient of `fn`, which must return a scalar float: with respect to every
    float parameter by default, or to `wrt` (an index, a name, or a tuple of them). One
    parameter gives one gradient, several a tuple in the order listed."""
    return Grad(fn, wrt)


def value_and_grad(fn: Callable[..., Any], wrt: Wrt = None) -> ValueAndGrad:
    """`(fn(*args), grad(fn, wrt)(*args))`, computed together."""
    return ValueAndGrad(fn, wrt)


def _checked_wrt(what: str, wrt: Wrt) -> Wrt:
    """`wrt` with a list as a tuple and numpy ints as ints (it is part of the cache key), or
    a ShaxTypeError if it is not an int, a parameter name, a tuple of them or None."""
    if wrt is None:
        return None
    several = isinstance(wrt, (tuple, list))
    items = tuple(wrt) if several else (wrt,)
    for item in items:
        if isinstance(item, bool) or not isinstance(item, (int, np.integer, str)):
            message = f"{what}: wrt must be an int, a parameter name or a tuple of them, got {wrt!r}"
            raise at(ShaxTypeError(message), current_source())
    checked = tuple(item if isinstance(item, str) else int(item) for item in items)
    return checked if several else checked[0]


def _resolve_wrt(
    what: str, fn: Callable[..., Any], wrt: Wrt, in_tree: TreeDef, types: tuple[TensorType, ...]
) -> tuple[tuple[int, ...], bool]:
    """(parameter positions to differentiate, whether one gradient is returned bare)."""
    fname = function_name(fn)
    starts = _leaf_starts(in_tree)
    count = len(in_tree.children)
    names = _parameter_names(fn, count)

    def is_float(p: int) -> bool:
        return any(types[k].dtype.is_float for k in range(starts[p], starts[p + 1]))

    def describe(p: int) -> str:
        shown = ", ".join(str(t) for t in types[starts[p] : starts[p + 1]]) or "no tensors"
        return f"parameter {names[p] or p} ({shown})"

    if wrt is None:
        chosen = tuple(p for p in range(count) if is_float(p))
        if not chosen:
            listed = "; ".join(describe(p) for p in range(count)) or "none"
            message = f"{what}: {fname} has no float parameter to differentiate (parameters: {listed})"
            raise at(ShaxTypeError(message), current_source())
        return chosen, len(chosen) == 1
    single = not isinstance(wrt, tuple)
    chosen = tuple(_position(what, fname, item, names, count) for item in ((wrt,) if single else wrt))
    if len(set(chosen)) != len(chosen):
        raise at(ShaxValueError(f"{what}: wrt={wrt!r} names a parameter twice"), current_source())
    for p in chosen:
        # A parameter with no leaves at all (None, ()) is differentiable: its gradient is itself, as in JAX.
        if not is_float(p) and starts[p] != starts[p + 1]:
            message = (
                f"{what}: wrt names {describe(p)} of {fname}, which holds no float tensor; only f32 and f64 values "
                "can be differentiated (write 2.0, not 2, for a float number)"
            )
            raise at(ShaxTypeError(message), current_source())
    return chosen, single


def _parameter_names(fn: Callable[..., Any], count: int) -> list[str | None]:
    """The name of each of the `count` positional parameters (None past *args)."""
    try:
        parameters = list(inspect.signature(fn).parameters.values())
    except (TypeError, ValueError):
        return [None] * count
    positional = [p.name for p in parameters if p.kind in (inspect.Parameter.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    return (positional + [None] * count)[:count]


def _position(what: str, fname: str, item: Any, names: list[str | None], count: int) -> int:
    listed = ", ".join(f"{k}: {n}" if n else str(k) for k, n in enumerate(names)) or "none"
    if isinstance(item, str):
        if item not in names:
            raise at(
                ShaxValueError(f"{what}: {fname} has no parameter {item!r} (parameters: {listed})"), current_source()
            )
        return names.index(item)
    if not 0 <= item < count:
        message = f"{what}: wrt={item} is out of range: {fname} was called with {count} argument(s) ({listed})"
        raise at(ShaxValueError(message), current_source())
    return item


def _scalar_output(what: str, fn: Callable[..., Any], staging: Staging) -> TensorType:
    out_types = staging.typed.output_types()
    if staging.out_tree == LEAF and out_types[0].shape == () and out_types[0].dtype.is_float:
        return out_types[0]
    shown = ", ".join(map(str, out_types))
    returns = shown if staging.out_tree == LEAF else f"{staging.out_tree.kind} ({shown})"
    message = (
        f"{what}: {function_name(fn)} must return a scalar float to be differentiated, but it returns {returns}; "
        "reduce it to a scalar first (e.g. reduce_sum(y, axes=[0])), or use vjp for other outputs"
    )
    raise at(ShaxTypeError(message), function_location(fn) or current_source())


# vjp, linearize, jvp -------------------------------------------------------------------------


@attrs.frozen
class _Linearized:
    """A function linearized at some argument types: its primal program (argument
    leaves and captured values -> output leaves, then residuals) and linear program
    (tangents of the differentiated leaves, or output cotangents once transposed, then
    the residuals -> the other side)."""

    primal_program: Program
    linear_program: Program
    num_residuals: int
    staging: Staging
    params: _Parameters

    def primal(self, leaves: Sequence[Any]) -> tuple[list[Any], list[Any]]:
        """(output leaves, residuals) at `leaves`."""
        results = self.primal_program([*leaves, *self.staging.captured])
        split = len(results) - self.num_residuals
        return results[:split], results[split:]


def _linearized(what: str, fn: Callable[..., Any], primals: Sequence[Any], transposed: bool) -> tuple[Any, list[Any]]:
    check_function(what, fn)
    leaves, in_tree, types = abstract_arguments(what, primals)

    def build() -> tuple[_Linearized, bool]:
        staging, params, lin = _linearized_at(fn, in_tree, types, range(len(in_tree.children)))
        if transposed:
            lin = stages.transpose(lin)
        primal, linear = Program(passes.cleanup(lin.primal)), Program(passes.cleanup(lin.linear))
        return _Linearized(primal, linear, lin.num_residuals, staging, params), not staging.captured

    return cache.get(fn, (what, in_tree, types), build), leaves


def vjp(fn: Callable[..., Any], *primals: Any) -> tuple[Any, Callable[..., tuple[Any, ...]]]:
    """`(fn(*primals), vjp_fn)`: `vjp_fn(ct)` pulls a cotangent of fn's output (same
    structure) back to one cotangent per primal, as a tuple."""
    built, leaves = _linearized("vjp", fn, primals, transposed=True)
    outputs, residuals = built.primal(leaves)
    out_tree = built.staging.out_tree
    out_types = built.linear_program.defn.arg_types[: out_tree.num_leaves]  # (output cotangents, residuals)

    def vjp_fn(*cts: Any) -> tuple[Any, ...]:
        # One argument with the structure of fn's result, as JAX's vjp_fn takes.
        if len(cts) != 1:
            structure = "" if out_tree == LEAF else f" {out_tree}"
            message = (
                f"vjp_fn: takes one cotangent, like {function_name(fn)}'s result{structure} of "
                f"{', '.join(map(str, out_types))}, but was called with {len(cts)} arguments"
            )
            raise at(ShaxTypeError(message), current_source())
        ct_leaves = _matching_leaves("vjp_fn", "cotangent", cts[0], out_tree, out_types, function_name(fn))
        arg_cts = built.linear_program([*ct_leaves, *residuals])
        return tuple(built.params.cotangents(arg_cts, range(len(built.params.in_tree.children))))

    return unflatten(out_tree, outputs), vjp_fn


def linearize(fn: Callable[..., Any], *primals: Any) -> tuple[Any, Callable[..., Any]]:
    """`(fn(*primals), f_jvp)`: `f_jvp(*tangents)` is fn's derivative at `primals`
    applied to tangents of the primals' structure (the primal is not recomputed)."""
    built, leaves = _linearized("linearize", fn, primals, transposed=False)
    outputs, residuals = built.primal(leaves)
    out_tree = built.staging.out_tree

    def f_jvp(*tangents: Any) -> Any:
        params = built.params
        tangent_leaves = _matching_leaves("f_jvp", "tangent", tangents, params.in_tree, params.types, function_name(fn))
        differentiated = [tangent_leaves[k] for k in params.differentiated]
        return unflatten(out_tree, built.linear_program([*differentiated, *residuals]))

    return unflatten(out_tree, outputs), f_jvp


def jvp(fn: Callable[..., Any], primals: Any, tangents: Any) -> tuple[Any, Any]:
    """`(fn(*primals), tangent out)`: fn's derivative at `primals` applied to `tangents`
    (a tuple of the primals' structure), computed alongside fn in one definition."""
    check_function("jvp", fn)
    if not isinstance(primals, (tuple, list)) or not isinstance(tangents, (tuple, list)):
        message = "jvp: primals and tangents must be tuples (one entry per argument), as jvp(f, (x,), (dx,))"
        raise at(ShaxTypeError(message), current_source())
    leaves, in_tree, types = abstract_arguments("jvp", primals)
    tangent_leaves = _matching_leaves("jvp", "tangent", tuple(tangents), in_tree, types, function_name(fn))

    def build() -> tuple[_BuiltJvp, bool]:
        staging, params, lin = _linearized_at(fn, in_tree, types, range(len(in_tree.children)))
        defn = stages.zip_definitions(lin)  # (args, captured, tangents) -> (outputs, output tangents)
        return _BuiltJvp(Program(defn), staging, params), not staging.captured

    built: _BuiltJvp = cache.get(fn, ("jvp", in_tree, types), build)
    differentiated = [tangent_leaves[k] for k in built.params.differentiated]
    results = built.program([*leaves, *built.staging.captured, *differentiated])
    split = len(results) // 2
    out_tree = built.staging.out_tree
    return unflatten(out_tree, results[:split]), unflatten(out_tree, results[split:])


@attrs.frozen
class _BuiltJvp:
    program: Program
    staging: Staging
    params: _Parameters


def _matching_leaves(
    what: str, role: str, tree: Any, expected: TreeDef, types: Sequence[TensorType], fname: str
) -> list[Any]:
    """The leaves of `tree`, which must nest as `expected`, each of its type in `types`
    (a Python number takes that dtype, as an argument of `evaluate` does)."""
    try:
        leaves, got = flatten(tree)
    except ShaxError as error:
        raise type(error)(f"{what}: {error}") from None
    if got != expected:
        message = (
            f"{what}: the {role}s must have the structure of {fname}'s "
            f"{'arguments' if role == 'tangent' else 'outputs'}: expected {expected}, got {got}"
        )
        raise at(ShaxValueError(message), current_source())
    try:
        return [check_argument(f"{what}: {role} leaf {k}", t, leaf) for k, (t, leaf) in enumerate(zip(types, leaves))]
    except ShaxError as error:
        raise at(error, current_source()) from None

"""The differentiation transforms, each a composition of the stages (JAX's conventions):

    grad(f, wrt=None)(*args)         -> gradients          linearize, transpose, zip, ct = 1
    value_and_grad(f, wrt=None)(...) -> (value, gradients)
    vjp(f, *primals)                 -> (out, vjp_fn)      vjp_fn(ct) -> one cotangent per primal
    jvp(f, primals, tangents)        -> (out, tangent)     linearize, zip
    linearize(f, *primals)           -> (out, f_jvp)       f_jvp(*tangents) -> tangent

JAX's options: `argnums=` beside `wrt=` (`shax.transforms.wrt`), and `has_aux=True`
(`shax.transforms.aux`): f returns `(out, aux)`, and grad gives `(gradients, aux)`,
value_and_grad `((value, aux), gradients)`, vjp, jvp and linearize their results then aux.

Arguments are pytrees (see `shax.core.pytree`) of arrays and numbers; gradients and
cotangents have their primal's structure exactly (a dict of one leaf gets a dict, a
NamedTuple the same NamedTuple, None stays None), and leaves that are not floats (or
that do not reach the output) get zeros of their type. Values an enclosing transform
traces (a closed-over outer variable) are constants here: only the declared arguments
are differentiated, so nested transforms do not confuse their perturbations.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Sequence
from typing import Any

import attrs
import numpy as np

from shax import passes, stages
from shax.core.errors import ShaxError, ShaxTypeError, ShaxValueError, at, reworded
from shax.core.ir import Definition, LinearizedDefinition
from shax.core.location import current_source
from shax.core.pytree import LEAF, TreeDef, flatten, unflatten
from shax.core.types import TensorType
from shax.core.well_typed import evolved
from shax.tracing.evaluate import check_argument
from shax.tracing.trace import check_function, function_location, function_name
from shax.transforms.arguments import abstract_arguments, zeros_like
from shax.transforms.aux import Aux, checked_has_aux, merged, split_aux
from shax.transforms.cache import cache
from shax.transforms.program import Program
from shax.transforms.staging import Staging, stage
from shax.transforms.transformed import Transformed
from shax.transforms.wrt import Wrt, checked_choice, leaf_starts, resolve


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
        starts = leaf_starts(in_tree)
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
    what: str,
    fn: Callable[..., Any],
    in_tree: TreeDef,
    types: tuple[TensorType, ...],
    chosen: Sequence[int],
    has_aux: bool = False,
) -> tuple[Staging, _Parameters, LinearizedDefinition, Aux | None]:
    """fn staged at `types` and linearized in the float leaves of the parameters `chosen`;
    with `has_aux`, only the first of the pair fn returns, the second its `Aux`."""
    params = _Parameters.of(in_tree, types, chosen)
    staging, aux = stage(fn, in_tree, types), None
    if has_aux:
        staging, aux = split_aux(what, fn, staging)
    return staging, params, stages.linearize(staging.typed, wrt=params.differentiated), aux


def _with_aux(defn: Definition, aux: Aux | None) -> Definition:
    """`defn`, returning the aux results last (cleaned either way)."""
    return passes.cleanup(defn) if aux is None else merged(defn, aux.defn)


def _aux_of(aux: Aux | None, results: Sequence[Any]) -> Any:
    """The aux pytree, from the last leaves of `results`."""
    assert aux is not None
    return unflatten(aux.tree, results[len(results) - aux.num_leaves :])


# grad and value_and_grad ------------------------------------------------------------------


class Grad(Transformed):
    """`grad(f)`: reverse mode, the VJP definition with the output cotangent fixed to one."""

    kind = "grad"
    with_value = False

    def __init__(self, fn: Callable[..., Any], wrt: Wrt = None, argnums: Wrt = None, has_aux: bool = False) -> None:
        super().__init__(fn)
        self.choice = checked_choice(self.kind, wrt, argnums, fn)
        self.has_aux = checked_has_aux(self.kind, has_aux)

    def key(self) -> Hashable:
        return (self.choice, self.has_aux)

    def build(self, in_tree: TreeDef, types: tuple[TensorType, ...]) -> _BuiltGrad:
        chosen, single = resolve(self.kind, self.fn, self.choice, in_tree, types)
        staging, params, lin, aux = _linearized_at(self.kind, self.fn, in_tree, types, chosen, self.has_aux)
        out_type = _scalar_output(self.kind, self.fn, staging)
        # The output cotangent fixed to one, and the value dropped unless asked for, before
        # zip: its cleanup then simplifies with them, and the program is cleaned once.
        transposed = stages.transpose(lin)  # (ct, residuals) -> cts
        primal = transposed.primal  # (value, residuals)
        if not self.with_value:
            primal = evolved(primal, outputs=primal.outputs[1:])
        linear = passes.bind_arguments(transposed.linear, {0: np.ones((), out_type.dtype.numpy)})
        defn = stages.zip_definitions(LinearizedDefinition(primal, linear, transposed.num_residuals))
        defn = evolved(defn, name=self.__name__)  # (args, captured) -> ([value], gradients)
        if aux is not None:
            defn = merged(defn, aux.defn)  # and the aux results last
        return _BuiltGrad(Program(defn), staging.captured, params, single, self.with_value, aux)


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
    aux: Aux | None = None

    def call(self, leaves: Sequence[Any]) -> Any:
        results = self.program([*leaves, *self.captured] if self.captured else leaves)
        if self.aux is not None:
            return self._with_aux(results)
        value, grads = (results[0], results[1:]) if self.with_value else (None, results)
        trees = self.params.cotangents(grads, self.params.chosen)
        gradients = trees[0] if self.single else tuple(trees)
        return (value, gradients) if self.with_value else gradients

    def _with_aux(self, results: Sequence[Any]) -> Any:
        # JAX's: grad gives (gradients, aux), value_and_grad ((value, aux), gradients)
        aux = _aux_of(self.aux, results)
        start = 1 if self.with_value else 0
        grads = results[start : start + len(self.params.differentiated)]
        trees = self.params.cotangents(grads, self.params.chosen)
        gradients = trees[0] if self.single else tuple(trees)
        return ((results[0], aux), gradients) if self.with_value else (gradients, aux)


def grad(fn: Callable[..., Any], wrt: Wrt = None, *, argnums: Wrt = None, has_aux: bool = False) -> Grad:
    """The gradient of `fn`, which must return a scalar float: with respect to every
    float parameter by default, or to `wrt` (an index, a name, or a tuple of them) or
    `argnums` (JAX's: an index or a tuple of indices, negative from the end). One
    parameter gives one gradient, several a tuple in the order listed. With `has_aux`,
    fn returns `(value, aux)` and grad gives `(gradients, aux)`."""
    return Grad(fn, wrt, argnums, has_aux)


def value_and_grad(
    fn: Callable[..., Any], wrt: Wrt = None, *, argnums: Wrt = None, has_aux: bool = False
) -> ValueAndGrad:
    """`(fn(*args), grad(fn, wrt)(*args))`, computed together; with `has_aux`,
    `((value, aux), gradients)`."""
    return ValueAndGrad(fn, wrt, argnums, has_aux)


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
    aux: Aux | None

    def primal(self, leaves: Sequence[Any]) -> tuple[list[Any], list[Any], Any]:
        """(output leaves, residuals, aux or None) at `leaves`."""
        results = self.primal_program([*leaves, *self.staging.captured])
        aux = None if self.aux is None else _aux_of(self.aux, results)
        end = len(results) - (0 if self.aux is None else self.aux.num_leaves)
        split = end - self.num_residuals
        return results[:split], results[split:end], aux


def _linearized(
    what: str, fn: Callable[..., Any], primals: Sequence[Any], transposed: bool, has_aux: Any
) -> tuple[Any, list[Any]]:
    check_function(what, fn)
    has_aux = checked_has_aux(what, has_aux)
    leaves, in_tree, types = abstract_arguments(what, primals)

    def build() -> tuple[_Linearized, bool]:
        everything = range(len(in_tree.children))
        staging, params, lin, aux = _linearized_at(what, fn, in_tree, types, everything, has_aux)
        if transposed:
            lin = stages.transpose(lin)
        primal, linear = Program(_with_aux(lin.primal, aux)), Program(passes.cleanup(lin.linear))
        return _Linearized(primal, linear, lin.num_residuals, staging, params, aux), not staging.captured

    return cache.get(fn, (what, has_aux, in_tree, types), build), leaves


def vjp(fn: Callable[..., Any], *primals: Any, has_aux: bool = False) -> tuple[Any, ...]:
    """`(fn(*primals), vjp_fn)`: `vjp_fn(ct)` pulls a cotangent of fn's output (same
    structure) back to one cotangent per primal, as a tuple. With `has_aux`, fn returns
    `(out, aux)` and vjp gives `(out, vjp_fn, aux)`."""
    built, leaves = _linearized("vjp", fn, primals, True, has_aux)
    outputs, residuals, aux = built.primal(leaves)
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

    if built.aux is not None:
        return unflatten(out_tree, outputs), vjp_fn, aux
    return unflatten(out_tree, outputs), vjp_fn


def linearize(fn: Callable[..., Any], *primals: Any, has_aux: bool = False) -> tuple[Any, ...]:
    """`(fn(*primals), f_jvp)`: `f_jvp(*tangents)` is fn's derivative at `primals`
    applied to tangents of the primals' structure (the primal is not recomputed). With
    `has_aux`, fn returns `(out, aux)` and linearize gives `(out, f_jvp, aux)`."""
    built, leaves = _linearized("linearize", fn, primals, False, has_aux)
    outputs, residuals, aux = built.primal(leaves)
    out_tree = built.staging.out_tree

    def f_jvp(*tangents: Any) -> Any:
        params = built.params
        tangent_leaves = _matching_leaves("f_jvp", "tangent", tangents, params.in_tree, params.types, function_name(fn))
        differentiated = [tangent_leaves[k] for k in params.differentiated]
        return unflatten(out_tree, built.linear_program([*differentiated, *residuals]))

    if built.aux is not None:
        return unflatten(out_tree, outputs), f_jvp, aux
    return unflatten(out_tree, outputs), f_jvp


def jvp(fn: Callable[..., Any], primals: Any, tangents: Any, has_aux: bool = False) -> tuple[Any, ...]:
    """`(fn(*primals), tangent out)`: fn's derivative at `primals` applied to `tangents`
    (a tuple of the primals' structure), computed alongside fn in one definition. With
    `has_aux`, fn returns `(out, aux)` and jvp gives `(out, tangent out, aux)`."""
    check_function("jvp", fn)
    has_aux = checked_has_aux("jvp", has_aux)
    if not isinstance(primals, (tuple, list)) or not isinstance(tangents, (tuple, list)):
        message = "jvp: primals and tangents must be tuples (one entry per argument), as jvp(f, (x,), (dx,))"
        raise at(ShaxTypeError(message), current_source())
    leaves, in_tree, types = abstract_arguments("jvp", primals)
    tangent_leaves = _matching_leaves("jvp", "tangent", tuple(tangents), in_tree, types, function_name(fn))

    def build() -> tuple[_BuiltJvp, bool]:
        everything = range(len(in_tree.children))
        staging, params, lin, aux = _linearized_at("jvp", fn, in_tree, types, everything, has_aux)
        defn = stages.zip_definitions(lin)  # (args, captured, tangents) -> (outputs, output tangents)
        return _BuiltJvp(Program(defn if aux is None else merged(defn, aux.defn)), staging, params, aux), (
            not staging.captured
        )

    built: _BuiltJvp = cache.get(fn, ("jvp", has_aux, in_tree, types), build)
    differentiated = [tangent_leaves[k] for k in built.params.differentiated]
    results = built.program([*leaves, *built.staging.captured, *differentiated])
    out_tree = built.staging.out_tree
    split = out_tree.num_leaves
    out, tangent_out = unflatten(out_tree, results[:split]), unflatten(out_tree, results[split : 2 * split])
    if built.aux is not None:
        return out, tangent_out, _aux_of(built.aux, results)
    return out, tangent_out


@attrs.frozen
class _BuiltJvp:
    program: Program
    staging: Staging
    params: _Parameters
    aux: Aux | None


def _matching_leaves(
    what: str, role: str, tree: Any, expected: TreeDef, types: Sequence[TensorType], fname: str
) -> list[Any]:
    """The leaves of `tree`, which must nest as `expected`, each of its type in `types`
    (a Python number takes that dtype, as an argument of `evaluate` does)."""
    try:
        leaves, got = flatten(tree)
    except ShaxError as error:
        raise reworded(error, f"{what}: {error}") from None
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

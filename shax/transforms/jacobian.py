"""`jacfwd`, `jacrev` and `hessian` (JAX's): the Jacobian of f in the arguments `argnums`,
as one batched program, built from the other transforms rather than a loop:

    jacfwd(f)(x) = vmap(e ↦ jvp(f, x, e))(I)        one tangent per input element
    jacrev(f)(x) = vmap(c ↦ vjp(f, x)(c))(I)        one cotangent per output element
    hessian(f)   = jacfwd(jacrev(f))

The rows of the identity I are the basis, split per leaf. The layout is JAX's: for each
output leaf of shape O (nested as f's output) and each input leaf of shape I (nested as
the argument, or a tuple of arguments when `argnums` is a tuple), an array of shape
O + I. f is traced once per argument types (cached like every transform); the program
`shax.xpr` shows is the batched one. Arguments and outputs differentiated must be floats.
"""

from __future__ import annotations

import inspect
import math
from collections.abc import Callable, Hashable, Sequence
from typing import Any

import attrs
import numpy as np

import typeclasses as tc
from shax import passes
from shax.core.errors import ShaxTypeError, at
from shax.core.location import current_source
from shax.core.pytree import TreeDef, flatten, unflatten
from shax.core.types import TensorType
from shax.tracing.trace import check_function, function_location, function_name
from shax.tracing.tracer import Tracer
from shax.transforms.autodiff import jvp, vjp
from shax.transforms.aux import checked_has_aux
from shax.transforms.program import Program
from shax.transforms.staging import stage
from shax.transforms.transformed import Transformed
from shax.transforms.vmap import vmap
from shax.transforms.wrt import Wrt, checked_choice, leaf_starts, resolve


class Jacobian(Transformed):
    """`jacfwd(f)` (forward: `forward`) or `jacrev(f)`: f's Jacobian, one batched program."""

    kind = "jacfwd"
    forward = True

    def __init__(self, fn: Callable[..., Any], argnums: Wrt = 0, has_aux: bool = False) -> None:
        super().__init__(fn)
        if argnums is None:  # JAX's: no default of every parameter here
            raise at(
                ShaxTypeError(f"{self.kind}: argnums must be an int or a tuple of ints, got None"), current_source()
            )
        self.choice = checked_choice(self.kind, None, argnums)
        self.has_aux = checked_has_aux(self.kind, has_aux)
        self.user_fn = fn  # the user's function: tracing checks calls against it, and errors point at it

    def key(self) -> Hashable:
        return (self.choice, self.has_aux)

    def build(self, in_tree: TreeDef, types: tuple[TensorType, ...]) -> _BuiltJacobian:
        chosen, single = resolve(self.kind, self.fn, self.choice, in_tree, types)
        starts = leaf_starts(in_tree)
        for p in chosen:
            for k in range(starts[p], starts[p + 1]):
                if not types[k].dtype.is_float:
                    message = (
                        f"{self.kind}: argument {p} of {function_name(self.fn)} holds a {types[k]}; "
                        "only float arguments are differentiated"
                    )
                    raise at(ShaxTypeError(message), current_source())
        jacobian = _forward if self.forward else _reverse

        def body(*args: Any) -> Any:
            return jacobian(self.kind, self.fn, args, chosen, single, self.has_aux)

        body.__name__ = self.__name__
        body.__wrapped__ = self.user_fn  # type: ignore[attr-defined]
        staging = stage(body, in_tree, types)
        return _BuiltJacobian(Program(passes.cleanup(staging.typed)), staging.captured, staging.out_tree)


class JacRev(Jacobian):
    kind = "jacrev"
    forward = False


class Hessian(Jacobian):
    """`hessian(f)`: `jacfwd(jacrev(f))`, named and located as f."""

    kind = "hessian"

    def __init__(self, fn: Callable[..., Any], argnums: Wrt = 0, has_aux: bool = False) -> None:
        check_function(self.kind, fn)  # (before jacrev checks it, under its own name)
        super().__init__(JacRev(fn, argnums, has_aux), argnums, has_aux)
        self.user_fn = fn


@attrs.frozen
class _BuiltJacobian:
    program: Program  # (argument leaves, captured) -> Jacobian leaves (then aux leaves)
    captured: tuple[Any, ...]
    out_tree: TreeDef

    def call(self, leaves: Sequence[Any]) -> Any:
        return unflatten(self.out_tree, self.program([*leaves, *self.captured]))


def _forward(
    what: str, fn: Callable[..., Any], args: Sequence[Any], chosen: Sequence[int], single: bool, aux: bool
) -> Any:
    """The Jacobian by one batched jvp: a tangent per element of the chosen arguments."""
    primals = tuple(args[p] for p in chosen)
    g = _of_chosen(fn, args, chosen)
    x_leaves, x_tree = flatten(primals)
    basis = _basis([tc.shape(x) for x in x_leaves], [_dtype(x) for x in x_leaves])

    def push(*tangent_leaves: Any) -> Any:
        return jvp(g, primals, unflatten(x_tree, tangent_leaves), has_aux=aux)[1]

    y_leaves, y_tree = flatten(vmap(push)(*basis))
    _check_outputs(what, fn, y_leaves)
    blocks = []
    for y in y_leaves:  # y: (n, *O), n the number of input elements
        out_shape = tuple(tc.shape(y))[1:]
        pieces = []
        for x, (start, size) in zip(x_leaves, _segments([tc.shape(x) for x in x_leaves])):
            in_shape = tuple(tc.shape(x))
            block = tc.reshape(_rows(y, start, size), [*in_shape, *out_shape])  # I + O
            rank_in, rank_out = len(in_shape), len(out_shape)
            pieces.append(tc.transpose(block, [*range(rank_in, rank_in + rank_out), *range(rank_in)]))  # O + I
        blocks.append(_arranged(x_tree, pieces, single))
    jacobian = unflatten(y_tree, blocks)
    return (jacobian, fn(*args)[1]) if aux else jacobian


def _reverse(
    what: str, fn: Callable[..., Any], args: Sequence[Any], chosen: Sequence[int], single: bool, aux: bool
) -> Any:
    """The Jacobian by one batched vjp: a cotangent per element of the outputs."""
    primals = tuple(args[p] for p in chosen)
    pulled = vjp(_of_chosen(fn, args, chosen), *primals, has_aux=aux)
    out, vjp_fn = pulled[0], pulled[1]
    y_leaves, y_tree = flatten(out)
    _check_outputs(what, fn, y_leaves)
    basis = _basis([tc.shape(y) for y in y_leaves], [_dtype(y) for y in y_leaves])

    def pull(*ct_leaves: Any) -> Any:
        return vjp_fn(unflatten(y_tree, ct_leaves))

    ct_leaves, ct_tree = flatten(vmap(pull)(*basis))  # each (m, *I), m the number of output elements
    blocks = []
    for y, (start, size) in zip(y_leaves, _segments([tc.shape(y) for y in y_leaves])):
        out_shape = tuple(tc.shape(y))
        pieces = [tc.reshape(_rows(ct, start, size), [*out_shape, *tc.shape(ct)[1:]]) for ct in ct_leaves]
        blocks.append(_arranged(ct_tree, pieces, single))
    jacobian = unflatten(y_tree, blocks)
    return (jacobian, pulled[2]) if aux else jacobian


def _of_chosen(fn: Callable[..., Any], args: Sequence[Any], chosen: Sequence[int]) -> Callable[..., Any]:
    """fn of the chosen arguments, the others fixed."""

    def g(*xs: Any) -> Any:
        full = list(args)
        for p, x in zip(chosen, xs):
            full[p] = x
        return fn(*full)

    # Named and located as fn, for errors; its own signature (the chosen arguments)
    g.__name__, g.__wrapped__ = function_name(fn), fn  # type: ignore[attr-defined]
    g.__signature__ = inspect.Signature([inspect.Parameter("xs", inspect.Parameter.VAR_POSITIONAL)])  # type: ignore[attr-defined]
    return g


def _segments(shapes: Sequence[Sequence[int]]) -> list[tuple[int, int]]:
    """(first row, number of rows) of each leaf in the flattened basis."""
    sizes = [math.prod(s) for s in shapes]
    return [(sum(sizes[:k]), n) for k, n in enumerate(sizes)]


def _basis(shapes: Sequence[Sequence[int]], dtypes: Sequence[Any]) -> list[np.ndarray]:
    """The rows of the identity of the leaves' total size, cut into one (n, *shape) array per leaf."""
    total = sum(math.prod(s) for s in shapes)
    return [
        np.eye(total, dtype=dtype)[:, start : start + size].reshape(total, *shape)
        for shape, dtype, (start, size) in zip(shapes, dtypes, _segments(shapes))
    ]


def _rows(x: Any, start: int, size: int) -> Any:
    """x's rows start .. start + size (along axis 0), x itself if that is all of them."""
    shape = list(tc.shape(x))
    if start == 0 and size == shape[0]:
        return x
    return tc.slice(x, [start, *[0] * (len(shape) - 1)], [start + size, *shape[1:]])


def _arranged(tree: TreeDef, pieces: list[Any], single: bool) -> Any:
    """The blocks of one output leaf, nested as the arguments (a tuple of them, or the one)."""
    nested = unflatten(tree, pieces)
    return nested[0] if single else nested


def _dtype(x: Any) -> np.dtype[Any]:
    return np.dtype(x.type.dtype.numpy) if isinstance(x, Tracer) else np.asarray(x).dtype


def _check_outputs(what: str, fn: Callable[..., Any], leaves: Sequence[Any]) -> None:
    for y in leaves:
        dtype = _dtype(y)
        if not np.issubdtype(dtype, np.floating):
            message = f"{what}: {function_name(fn)} returns a {dtype.name} value; only float outputs have a Jacobian"
            raise at(ShaxTypeError(message), function_location(fn) or current_source())


def jacfwd(fn: Callable[..., Any], argnums: Wrt = 0, has_aux: bool = False) -> Jacobian:
    """The Jacobian of `fn` in the arguments `argnums` (an int, or a tuple of ints), by
    forward mode: output shape + input shape per pair of leaves. With `has_aux`, fn
    returns `(out, aux)` and jacfwd gives `(jacobian, aux)`."""
    return Jacobian(fn, argnums, has_aux)


def jacrev(fn: Callable[..., Any], argnums: Wrt = 0, has_aux: bool = False) -> JacRev:
    """`jacfwd`'s Jacobian by reverse mode: one batched vjp, a cotangent per output element."""
    return JacRev(fn, argnums, has_aux)


def hessian(fn: Callable[..., Any], argnums: Wrt = 0, has_aux: bool = False) -> Hessian:
    """The Hessian of a scalar `fn`: `jacfwd(jacrev(fn, argnums), argnums)` (input shape twice)."""
    return Hessian(fn, argnums, has_aux)

"""What a transform reads of its arguments: their types and how they nest, never their values.

A transform builds its definition from its arguments' leaf types and tree structure (a
pytree of leaves) alone: `abstract_arguments` reads both off the values it is called
with, `abstract_types` off values or types (what `xpr` and `jit(f).source` are shown).
A leaf is an array, a Python number (weakly typed: a float takes the float dtype of the
other arguments if they agree on one, else f32; an int likewise their integer dtype, else
i32) or a tracer of an
enclosing transform; anything else is a `ShaxTypeError` naming the leaf
by its path (`argument 0['w']`), and a dict whose keys cannot be sorted a
`ShaxValueError` (see `shax.core.pytree`), each naming the transform.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from shax.core.errors import ShaxError, ShaxTypeError, ShaxValueError, at, reworded
from shax.core.jax_arrays import from_jax_arguments
from shax.core.location import current_source
from shax.core.pytree import TreeDef, flatten, leaf_paths
from shax.core.types import INTEGERS, DType, TensorType, fits, i32
from shax.tracing.tracer import Tracer


def leaf_type(value: Any) -> TensorType:
    """The type a transform sees for one argument leaf: a tracer's, an array's, or a
    Python number's (a float is f32, an int i32, as when tracing; `weakly_typed` may
    change them, and checks that each int fits its dtype)."""
    if isinstance(value, Tracer):
        return value.type
    if type(value) is int:
        return TensorType(i32, ())
    return TensorType.of(value)


def abstract_arguments(what: str, args: Sequence[Any]) -> tuple[list[Any], TreeDef, tuple[TensorType, ...]]:
    """(leaves, tree, leaf types) of a transformed function's arguments (a JAX array read
    as the numpy array it holds)."""
    leaves, tree = flatten_arguments(what, args)
    leaves = list(from_jax_arguments(tuple(leaves)))
    types = []
    for k, leaf in enumerate(leaves):
        try:
            types.append(leaf_type(leaf))
        except ShaxError as error:
            label = argument_labels(tree)[k]
            raise at(ShaxTypeError(f"{what}: {label}: {error}{_unregistered(leaf)}"), current_source()) from None
    try:
        return leaves, tree, weakly_typed(leaves, types)
    except WeakNumberError as error:
        label = argument_labels(tree)[error.index]
        raise at(ShaxValueError(f"{what}: {label}: {error}"), current_source()) from None


def _unregistered(leaf: Any) -> str:
    """A hint when `leaf` is of a class of the user's own: it could be a pytree node."""
    if type(leaf).__module__ in ("builtins", "numpy") or isinstance(leaf, type):
        return ""
    return (
        f" ({type(leaf).__name__} is no pytree node: register it with shax.tree_util.register_dataclass, "
        "register_pytree_node or register_pytree_node_class)"
    )


def weakly_typed(leaves: Sequence[Any], types: list[TensorType]) -> tuple[TensorType, ...]:
    """`types`, with each Python float's the float dtype of the other arguments when they
    agree on one, and each Python int's their integer dtype likewise: a Python number is
    weakly typed (JAX's convention), so in `grad(f)(x_f64, 2.0)` the 2.0 is f64 and in
    `jit(f)(labels_i64, 2**40)` the 2**40 is i64. f32 and i32 when nothing else decides.
    An int its dtype cannot hold (2**40 alone, 300 next to a u8 array) is a
    `WeakNumberError` naming its position in `leaves`."""
    for kind, in_kind in ((float, _is_float), (int, _is_integer)):
        numbers = [k for k, leaf in enumerate(leaves) if type(leaf) is kind]
        others = {t.dtype for k, t in enumerate(types) if in_kind(t.dtype) and type(leaves[k]) is not kind}
        adopted = next(iter(others)) if len(others) == 1 else None
        for k in numbers:
            if adopted is not None:
                types[k] = TensorType(adopted, ())
            if not fits(leaves[k], types[k].dtype):
                why = ", the dtype of the other integer arguments" if adopted is not None else ""
                raise WeakNumberError(k, f"the Python int {leaves[k]} does not fit {types[k].dtype.name}{why}")
    return tuple(types)


class WeakNumberError(ShaxValueError):
    """A Python number an argument's dtype cannot hold; `index` is its leaf's position."""

    def __init__(self, index: int, message: str) -> None:
        super().__init__(message)
        self.index = index


def _is_float(dtype: DType) -> bool:
    return dtype.is_float


def _is_integer(dtype: DType) -> bool:
    return dtype in INTEGERS


def flatten_arguments(what: str, args: Any, is_leaf: Callable[[Any], bool] | None = None) -> tuple[list[Any], TreeDef]:
    """`flatten(tuple(args))`, its errors naming the transform `what`."""
    try:
        return flatten(tuple(args), is_leaf)
    except ShaxError as error:
        raise reworded(error, f"{what}: {error}") from None


def argument_labels(tree: TreeDef) -> list[str]:
    """How to name each argument leaf: `argument 1`, `argument 0['w']`, `argument 2[1].b`."""
    return [f"argument {k}{path}" for k, child in enumerate(tree.children) for path in leaf_paths(child)]


def abstract_types(what: str, args: Sequence[Any]) -> tuple[TreeDef, tuple[TensorType, ...]]:
    """(tree, leaf types) of arguments given as values or as types (`f32[3]`, "f32[3]"):
    what `xpr` and `jit(f).source` are shown."""
    leaves, tree = flatten_arguments(what, args, is_leaf=lambda x: isinstance(x, (TensorType, str)))
    try:
        types = tuple(
            leaf
            if isinstance(leaf, TensorType)
            else TensorType.parse(leaf)
            if isinstance(leaf, str)
            else leaf_type(leaf)
            for leaf in leaves
        )
    except ShaxError as error:
        raise at(reworded(error, f"{what}: {error}"), current_source()) from None
    return tree, types


def zeros_like(t: TensorType) -> np.ndarray:
    """Zeros of type `t`: the gradient of a leaf that is not differentiated."""
    return np.zeros(t.shape, t.dtype.numpy)


def typed_leaves(what: str, tree: Any, others: Sequence[Any] = ()) -> tuple[list[Any], TreeDef, list[TensorType]]:
    """The leaves of `tree` (Python numbers as arrays, weakly typed like the other leaves
    and `others`' arrays: a loop's carry like its xs), its structure, and their types."""
    leaves, treedef = flatten(tree)
    context = [leaf for leaf in others if isinstance(leaf, (Tracer, np.ndarray, np.generic))]
    try:
        types = list(weakly_typed([*leaves, *context], [leaf_type(v) for v in [*leaves, *context]]))[: len(leaves)]
    except ShaxError as error:
        raise reworded(error, f"{what}: {error}") from None
    values = [
        v if isinstance(v, (Tracer, np.ndarray, np.generic)) else np.asarray(v, t.dtype.numpy)
        for v, t in zip(leaves, types)
    ]
    return values, treedef, types

"""`shax.jit(f, backend="xla")`: f's cleaned definition exported to JAX
(`shax.export.lowering`) and compiled by `jax.jit`, once per argument types and tree
structure, like the numpy backend (`shax.transforms.jit`).

    fast = shax.jit(shax.grad(loss), backend="xla")
    fast(params, x, y)                  # traced, exported and compiled on the first call
    print(fast.source(params, x, y))    # the StableHLO JAX lowers it to

Arguments are numpy values, Python numbers (weakly typed, as everywhere) or JAX arrays
(sharded ones too: `jax.jit` places the computation); results are JAX arrays. A 64-bit
program runs with JAX's x64 mode on. Called on tracers of an enclosing shax transform,
the definition is inlined into their trace, as the numpy backend's is.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import attrs
import jax
import numpy as np

from shax import passes
from shax.core.errors import ShaxError, ShaxTypeError, ShaxValueError, at
from shax.core.ir import Definition
from shax.core.location import current_source
from shax.core.pytree import TreeDef, builder, unflatten
from shax.core.types import TensorType, dtype_of_numpy, fits
from shax.export.lowering import JaxFunction, exported, x64
from shax.tracing.evaluate import evaluate
from shax.tracing.tracer import Tracer
from shax.transforms.arguments import (
    WeakNumberError,
    abstract_types,
    argument_labels,
    flatten_arguments,
    leaf_type,
    weakly_typed,
)
from shax.transforms.cache import closure_contents, unchanged
from shax.transforms.jit import Jit
from shax.transforms.staging import stage
from shax.transforms.transformed import NUMPY_SCALARS


class XlaJit(Jit):
    kind = "jit"

    def __init__(self, fn: Callable[..., Any]) -> None:
        super().__init__(fn)
        # argument key (see _key) -> (how what was built runs leaves of that key, fn's closure contents then)
        self._fast: dict[tuple[Any, ...], tuple[Callable[[Sequence[Any]], Any], tuple[Any, ...]]] = {}

    def key(self) -> tuple[str]:
        return ("xla",)

    def build(self, in_tree: TreeDef, types: tuple[TensorType, ...]) -> _BuiltXla:  # type: ignore[override]
        staging = stage(self.fn, in_tree, types)
        defn = passes.cleanup(passes.hoist_accumulations(staging.typed))
        function = exported("jit", defn)
        run = _runner(defn.name, function.jitted, staging.out_tree, function.wide)
        return _BuiltXla(defn, function, function.jitted, staging.captured, staging.out_tree, run)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        if kwargs:
            return super().__call__(*args, **kwargs)  # its error
        # The fast path: JAX's flattening (in C++) and the leaves' classes, dtypes and
        # shapes key what this object built before. It is taken only where shax's own
        # flattening gave the same leaves in the same order (checked when it is stored),
        # so a JAX tree structure stands for one shax tree structure.
        flat: Sequence[Any] = args  # arrays and numbers only: no flattening needed
        structure: Any = None
        key = _key(structure, flat)
        if key is None:
            try:
                flat, structure = jax.tree_util.tree_flatten(args)
                key = _key(structure, flat)
            # What JAX cannot flatten: shax's flattening says why. A tree nested deeper than
            # JAX's C++ recursion goes (about a thousand levels) is a SystemError or a
            # RecursionError there; shax's flattening is a loop and takes it.
            except (TypeError, ValueError, RecursionError, SystemError):
                key = None
        if key is not None:
            found = self._fast.get(key)
            if found is not None and (self.fn_closure is None or unchanged(self.fn, found[1])):
                return found[0](flat)
        leaves, in_tree, types = _abstract_arguments(args)
        built = self.built(in_tree, types)
        same = len(leaves) == len(flat) and all(a is b for a, b in zip(leaves, flat))
        if key is not None and same and not built.captured:
            numbers = tuple(k for k, a in enumerate(leaves) if a.__class__ in _NUMBERS)  # the key fixes them
            self._fast[key] = (built.converting(numbers) if numbers else built.run, closure_contents(self.fn))
        return built.call(leaves)

    def source(self, *args: Any) -> str:
        """The StableHLO text `jax.jit` lowers f to, for arguments like `args` (values, or their types)."""
        leaves, tree = flatten_arguments("jit.source", args, is_leaf=lambda x: isinstance(x, (TensorType, str)))
        in_tree, types = abstract_types("jit.source", unflatten(tree, [_as_type(a) for a in leaves]))
        built = self.built(in_tree, types)
        return built.lowered_text()


@attrs.frozen
class _BuiltXla:
    defn: Definition  # (argument leaves, captured) -> output leaves
    function: JaxFunction
    jitted: Callable[..., list[Any]]  # jax.jit of the function
    captured: tuple[Any, ...]
    out_tree: TreeDef
    # `call` for leaves that need no conversion: arrays of the declared types (`_runner`)
    run: Callable[[Sequence[Any]], Any]

    def call(self, leaves: Sequence[Any]) -> Any:
        args = [*leaves, *self.captured]
        for k, a in enumerate(args):  # (one loop: this runs on every call)
            cls = a.__class__
            if cls is Tracer:  # inside a shax transform: inline
                return unflatten(self.out_tree, evaluate(self.defn, *args))
            if cls in _NUMBERS:
                args[k] = self._number(k, a)
        return self.run(args)

    def converting(self, positions: tuple[int, ...]) -> Callable[[Sequence[Any]], Any]:
        """`call` for leaves that are arrays of the declared types but at `positions`, Python
        numbers (the fast path's key fixes which): only those are converted on each call."""
        run, number = self.run, self._number

        def call(leaves: Sequence[Any]) -> Any:
            args = list(leaves)
            for k in positions:
                args[k] = number(k, args[k])
            return run(args)

        return call

    def _number(self, k: int, a: float | int | bool) -> Any:
        """A Python number, weakly typed, as its declared dtype, before JAX types it."""
        dtype = self.defn.arg_types[k].dtype
        if not fits(a, dtype):  # an int too large (the key has its class, not its value)
            message = f"jit: argument {k}: the Python int {a} does not fit {dtype.name}"
            raise at(ShaxValueError(message), current_source())
        return np.asarray(a, dtype.numpy)

    def lowered_text(self) -> str:
        specs = [jax.ShapeDtypeStruct(t.shape, np.dtype(t.dtype.numpy)) for t in self.defn.arg_types]
        if self.function.wide:
            with x64():
                return str(self.jitted.lower(*specs).as_text())  # type: ignore[attr-defined]
        return str(self.jitted.lower(*specs).as_text())  # type: ignore[attr-defined]


def _runner(
    name: str, jitted: Callable[..., list[Any]], out_tree: TreeDef, wide: bool
) -> Callable[[Sequence[Any]], Any]:
    """The jitted function on leaves as they are (JAX's own jit checks and keys them
    again), the output tree built by one generated call (`pytree.builder`), x64 on
    around a 64-bit program: all a call with arrays of the declared types needs."""
    build = builder(out_tree)
    if wide:

        def run_wide(leaves: Sequence[Any]) -> Any:
            try:
                with x64():
                    return build(jitted(*leaves))
            except RuntimeError as error:
                raise _out_of_memory(name, error) from None

        return run_wide

    def run(leaves: Sequence[Any]) -> Any:
        try:
            return build(jitted(*leaves))
        except RuntimeError as error:
            raise _out_of_memory(name, error) from None

    return run


def _out_of_memory(name: str, error: RuntimeError) -> Exception:
    """XLA's error (jax.errors.JaxRuntimeError, XlaRuntimeError before) as raised: a
    ShaxValueError at the caller's line if it ran out of memory, else as it is."""
    if not str(error).startswith("RESOURCE_EXHAUSTED"):
        return error
    return at(ShaxValueError(f"{name}: out of memory: XLA: {error}"), current_source())


_NUMBERS = frozenset({float, int, bool})
# the classes whose instances' class alone decides their type: a numpy scalar's dtype, a
# Python number's weak type
_BY_CLASS = frozenset({*NUMPY_SCALARS, *_NUMBERS})
# numpy's array class and JAX's concrete array classes met so far (`isinstance(a,
# jax.Array)` costs as much as the rest of a leaf's key)
_ARRAY_CLASSES = {np.ndarray}


def _key(structure: Any, leaves: Sequence[Any]) -> tuple[Any, ...] | None:
    """What decides the arguments' types, given JAX's flattening of them, if each leaf is
    an array (numpy's or JAX's: both run alike), a numpy scalar or a Python number: the
    tree structure, then per leaf an array's dtype and shape, or the class of a leaf
    whose class decides its type. One flat tuple, read unambiguously: a dtype is never a
    class, and a shape follows each dtype. None if a leaf is anything else."""
    key: list[Any] = [structure]
    append = key.append
    for a in leaves:
        cls = a.__class__
        if cls in _ARRAY_CLASSES:
            append(a.dtype)
            append(a.shape)
        elif cls in _BY_CLASS:
            append(cls)
        elif isinstance(a, jax.Array):
            _ARRAY_CLASSES.add(cls)
            append(a.dtype)
            append(a.shape)
        else:
            return None
    return tuple(key)


def _as_type(value: Any) -> Any:
    """A JAX array's type (shax reads only numpy's arrays); anything else as it is."""
    return _leaf_type(value) if isinstance(value, jax.Array) else value


def _leaf_type(value: Any) -> TensorType:
    if isinstance(value, jax.Array):  # JAX's tracers too: a shax jit inside a JAX transform
        return TensorType(dtype_of_numpy(np.dtype(value.dtype)), tuple(value.shape))
    return leaf_type(value)


def _abstract_arguments(args: Sequence[Any]) -> tuple[list[Any], TreeDef, tuple[TensorType, ...]]:
    """`shax.transforms.arguments.abstract_arguments`, reading JAX arrays' types too."""
    leaves, tree = flatten_arguments("jit", args)
    types = []
    for k, leaf in enumerate(leaves):
        try:
            types.append(_leaf_type(leaf))
        except ShaxError as error:
            label = argument_labels(tree)[k]
            raise at(ShaxTypeError(f"jit: {label}: {error}"), current_source()) from None
    try:
        return leaves, tree, weakly_typed(leaves, types)
    except WeakNumberError as error:
        label = argument_labels(tree)[error.index]
        raise at(ShaxValueError(f"jit: {label}: {error}"), current_source()) from None

"""Staging a Python function for a transform: its arguments' types, its typed definition,
and a cache so that a transformed function is traced once per argument structure.

A transform never looks at argument values while it builds its definition, only at
their types and how they nest (a pytree of leaves): `abstract_arguments` reads both.
It then traces the function on tracers of those types (`shax.tracing.trace_pytree`),
types the definition (`infer_types`) and builds whatever the transform needs, once:
`StagingCache` keeps the result per (transform, argument types, tree structure).

A function that closes over a tracer of an enclosing trace (the outer variable of a
nested `grad`) reads it through an extra argument: a constant of the inner transform.
Such a staging depends on that outer tracer, so it is never cached; neither is one
whose closure cells hold other objects than when it was staged (a rebound variable).
"""

from __future__ import annotations

import inspect
import weakref
from collections.abc import Callable, Hashable, Sequence
from typing import Any

import attrs
import numpy as np

from shax.codegen import Compiled, compile_definition
from shax.errors import ShaxError, ShaxTypeError, at
from shax.evaluate import evaluate
from shax.ir import Binding, Definition
from shax.location import current_source
from shax.primitives import Arg, Constant
from shax.pytree import TreeDef, flatten, unflatten
from shax.stages import infer_types
from shax.tracer import Tracer
from shax.tracing import Traced, function_name, trace_pytree
from shax.types import TensorType


def leaf_type(value: Any) -> TensorType:
    """The type a transform sees for one argument leaf: a tracer's, an array's, or a
    Python number's (a float is f32, an int i32, as when tracing)."""
    if isinstance(value, Tracer):
        return value.type
    return TensorType.of(value)


def abstract_arguments(what: str, args: Sequence[Any]) -> tuple[list[Any], TreeDef, tuple[TensorType, ...]]:
    """(leaves, tree, leaf types) of a transformed function's arguments."""
    leaves, tree = flatten(tuple(args))
    types = []
    for k, leaf in enumerate(leaves):
        try:
            types.append(leaf_type(leaf))
        except ShaxError as error:
            raise at(ShaxTypeError(f"{what}: argument leaf {k}: {error}"), current_source()) from None
    return leaves, tree, tuple(types)


def abstract_types(what: str, args: Sequence[Any]) -> tuple[TreeDef, tuple[TensorType, ...]]:
    """(tree, leaf types) of arguments given as values or as types (`f32[3]`, "f32[3]"):
    what `xpr` and `jit(f).source` are shown."""
    leaves, tree = flatten(tuple(args), is_leaf=lambda x: isinstance(x, (TensorType, str)))
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
        raise at(type(error)(f"{what}: {error}"), current_source()) from None
    return tree, types


@attrs.frozen
class Staging:
    """A function traced at some argument types: its typed definition (the declared
    argument leaves, then the captured outer tracers), and how its results nest."""

    typed: Definition
    in_tree: TreeDef
    out_tree: TreeDef
    captured: tuple[Tracer, ...]


def stage(fn: Callable[..., Any], in_tree: TreeDef, types: Sequence[TensorType]) -> Staging:
    """Trace `fn` on tracers of `types` (nested as `in_tree`) and type its definition."""
    traced: Traced = trace_pytree(fn, unflatten(in_tree, types))
    return Staging(infer_types(traced.defn), in_tree, traced.out_tree, traced.captured)


class Program:
    """A definition a transform built, and how it runs: on tracers through `evaluate`,
    which inlines it into their trace; on values through its compiled numpy source
    (`shax.codegen`) — at once if `compile_now`, else from its second run on values, so
    a program run once (a one-off vjp) does not pay for compiling."""

    __slots__ = ("defn", "_compiled", "_runs")

    def __init__(self, defn: Definition, compile_now: bool = False) -> None:
        self.defn = defn
        self._compiled: Compiled | None = compile_definition(defn) if compile_now else None
        self._runs = 0

    @property
    def compiled(self) -> Compiled:
        if self._compiled is None:
            self._compiled = compile_definition(self.defn)
        return self._compiled

    def __call__(self, args: Sequence[Any]) -> list[Any]:
        for a in args:  # (a loop: this runs on every call of every transformed function)
            if type(a) is Tracer:
                return evaluate(self.defn, *args)
        if self._compiled is None:
            self._runs += 1
            if self._runs == 1:
                return evaluate(self.defn, *args)
        # The transforms pass as many arguments as the definition takes (they built both),
        # so the generated function is called directly; it checks their types itself.
        return self.compiled.function(*args)


def zeros_like(t: TensorType) -> np.ndarray:
    return np.zeros(t.shape, t.dtype.numpy)


class StagingCache:
    """What a transform built for a function, per key (argument types and tree
    structure, never values). Held weakly by function: a dropped function drops its
    entries. Functions that cannot be weakly referenced are staged on every call."""

    def __init__(self) -> None:
        # fn -> key -> (what was built, the objects in fn's closure cells when it was built)
        self._entries: weakref.WeakKeyDictionary[Any, dict[Hashable, tuple[Any, tuple[Any, ...]]]] = (
            weakref.WeakKeyDictionary()
        )

    def get(self, fn: Callable[..., Any], key: Hashable, build: Callable[[], tuple[Any, bool]]) -> Any:
        """The entry for (fn, key), built by `build() -> (entry, cacheable)` if missing or stale."""
        cells = _closure_contents(fn)
        try:
            per_fn = self._entries.setdefault(fn, {})
        except TypeError:  # not weakly referenceable
            return build()[0]
        found = per_fn.get(key)
        if found is not None and len(found[1]) == len(cells) and all(a is b for a, b in zip(found[1], cells)):
            return found[0]
        entry, cacheable = build()
        if cacheable:
            per_fn[key] = (entry, cells)
        else:
            per_fn.pop(key, None)
        return entry


def _closure_contents(fn: Callable[..., Any]) -> tuple[Any, ...]:
    cells = getattr(fn, "__closure__", None) or ()
    contents: list[Any] = []
    for cell in cells:
        try:
            contents.append(cell.cell_contents)
        except ValueError:  # an empty cell: a variable not yet assigned
            contents.append(_EMPTY)
    return tuple(contents)


_EMPTY = object()
cache = StagingCache()


class Transformed:
    """A transformed function. Calling it reads its arguments' types and structure,
    builds (once per those, see `cache`) what the transform makes of `fn`, and runs it.
    Subclasses say what they build: `build(in_tree, types)` returns an object whose
    `call(leaves)` gives the result, and `key()` holds the transform's own parameters."""

    kind = "transform"

    def __init__(self, fn: Callable[..., Any]) -> None:
        if not callable(fn):
            raise at(ShaxTypeError(f"{self.kind}: expected a function, got {type(fn).__name__}"), current_source())
        self.fn = fn
        self.fn_closure = getattr(fn, "__closure__", None)
        # plain key (see _plain_key) -> (what was built, fn's closure contents then)
        self._plain: dict[tuple[Any, ...], tuple[Any, tuple[Any, ...]]] = {}
        self.__name__ = f"{self.kind}_{function_name(fn)}"
        self.__qualname__ = self.__name__
        self.__doc__ = getattr(fn, "__doc__", None)
        signature = _plain_signature(fn)
        if signature is not None:
            self.__signature__ = signature

    def key(self) -> Hashable:
        return ()

    def build(self, in_tree: TreeDef, types: tuple[TensorType, ...]) -> Any:
        raise NotImplementedError

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        if kwargs:
            message = f"{self.kind}: pass {function_name(self.fn)}'s arguments by position, not as {', '.join(kwargs)}="
            raise at(ShaxTypeError(message), current_source())
        # The fast path, for arguments that are all arrays or numbers (no pytrees): a
        # key read off them directly, for what this object built before.
        key = _plain_key(args)
        if key is not None:
            found = self._plain.get(key)
            if found is not None and (self.fn_closure is None or _closure_contents(self.fn) == found[1]):
                return found[0].call(args)
        leaves, in_tree, types = abstract_arguments(self.kind, args)
        built = self.built(in_tree, types)
        if key is not None and not built.captured:
            self._plain[key] = (built, _closure_contents(self.fn))
        return built.call(leaves)

    def built(self, in_tree: TreeDef, types: tuple[TensorType, ...]) -> Any:
        """What this transform builds of `fn` at these argument types (from the cache)."""

        def build() -> tuple[Any, bool]:
            built = self.build(in_tree, types)
            return built, not built.captured

        return cache.get(self.fn, (self.kind, self.key(), in_tree, types), build)

    def __repr__(self) -> str:
        return f"<{self.__name__}>"


_NUMPY_LEAVES = frozenset({np.ndarray, *(type(np.zeros((), d)[()]) for d in ("f4", "f8", "i4", "?"))})


def _plain_key(args: Sequence[Any]) -> tuple[Any, ...] | None:
    """What decides the types of `args` if each is an array, a numpy scalar or a Python
    number (a float is always f32): class, dtype and shape; None for anything else."""
    key: list[Any] = []
    for a in args:
        cls = a.__class__
        if cls in _NUMPY_LEAVES:
            key.append((cls, a.dtype, a.shape))
        elif cls is float or cls is int or cls is bool:
            key.append(cls)
        else:
            return None
    return tuple(key)


def _plain_signature(fn: Callable[..., Any]) -> inspect.Signature | None:
    """fn's signature without annotations: a transform keeps the parameters, not the types."""
    try:
        signature = inspect.signature(fn)
    except (TypeError, ValueError):
        return None
    parameters = [p.replace(annotation=inspect.Parameter.empty) for p in signature.parameters.values()]
    return signature.replace(parameters=parameters, return_annotation=inspect.Signature.empty)


def bind_arguments(defn: Definition, values: dict[int, np.ndarray]) -> Definition:
    """`defn` with the arguments indexed in `values` fixed to those constants; the
    others keep their order (grad fixes the output cotangent of a VJP to one)."""
    kept = [k for k in range(len(defn.arg_types)) if k not in values]
    position = {k: n for n, k in enumerate(kept)}
    bindings = []
    for b in defn.bindings:
        if isinstance(b.prim, Arg):
            k = b.prim.index
            b = Binding(b.var, Constant(values[k]) if k in values else Arg(position[k]), (), b.source)
        bindings.append(b)
    return Definition(defn.name, tuple(defn.arg_types[k] for k in kept), tuple(bindings), defn.outputs)

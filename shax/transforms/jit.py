"""`shax.jit(f)`: f's cleaned definition compiled to Python source that calls numpy
directly (`shax.codegen`), once per argument types and tree structure.

    fast = shax.jit(shax.grad(loss))
    fast(params, x, y)                  # traced and compiled on the first call only
    print(fast.source(params, x, y))    # the generated code

It composes: `jit(grad(f))` and `jit(vmap(f))` compile the whole transformed program;
called on tracers (`grad(jit(f))`), a jitted function inlines its definition into the
enclosing trace like any transform, and the outer transform sees through it.

`jit(f, static_argnums=..., static_argnames=...)` fixes some arguments as Python values,
compiled into the program (`shax.transforms.static`): once per distinct value.

`jit(f, backend="xla")` is `shax.export`'s (`xla_jit`): the export sits above the transforms
(its jitted function is a `Jit`), so it registers its backend here (`backends`) when
imported, and `import shax` imports it.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import attrs

from shax import passes
from shax.core.errors import ShaxValueError, at
from shax.core.location import current_source
from shax.core.pytree import TreeDef, builder, unflatten
from shax.core.types import TensorType
from shax.tracing.trace import check_function
from shax.transforms.arguments import abstract_arguments, abstract_types
from shax.transforms.cache import cache, closure_contents, unchanged
from shax.transforms.program import Program, out_of_memory
from shax.transforms.staging import stage
from shax.transforms.static import StaticCall, Statics, checked_statics
from shax.transforms.transformed import Transformed, plain_key


class Jit(Transformed):
    kind = "jit"

    def build(self, in_tree: TreeDef, types: tuple[TensorType, ...]) -> _BuiltJit:
        return _built_jit(self.fn, in_tree, types)

    def source(self, *args: Any) -> str:
        """The generated source for arguments like `args` (values, or their types)."""
        in_tree, types = abstract_types("jit.source", args)
        return self.built(in_tree, types).program.compiled.source


class StaticJit(Jit):
    """`jit(f)` with static arguments: a class of its own, so that a jitted function
    without them pays nothing for them on each call."""

    def __init__(self, fn: Callable[..., Any], statics: Statics) -> None:
        super().__init__(fn)
        self.statics = statics

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        call = self.statics.split(self.fn, args, kwargs)
        plain = plain_key(call.dynamic)
        if plain is not None:
            found = self._plain.get((call.key, plain))
            if found is not None and (self.fn_closure is None or unchanged(self.fn, found[1])):
                return found[0](call.dynamic)
        leaves, in_tree, types = abstract_arguments(self.kind, call.dynamic)
        built = self._static_built(call, in_tree, types)
        if plain is not None and not built.captured:
            self._plain[(call.key, plain)] = (built.plain, closure_contents(self.fn))
        return built.call(leaves)

    def _static_built(self, call: StaticCall, in_tree: TreeDef, types: tuple[TensorType, ...]) -> _BuiltJit:
        def build() -> tuple[_BuiltJit, bool]:
            built = _built_jit(call.staged(self.fn), in_tree, types)
            return built, not built.captured

        return cache.get(self.fn, (self.kind, call.key, in_tree, types), build)

    def source(self, *args: Any, **kwargs: Any) -> str:
        """The generated source for arguments like `args` (values, or their types; static
        arguments as values)."""
        call = self.statics.split(self.fn, args, kwargs)
        in_tree, types = abstract_types("jit.source", call.dynamic)
        return self._static_built(call, in_tree, types).program.compiled.source


def _built_jit(fn: Callable[..., Any], in_tree: TreeDef, types: tuple[TensorType, ...]) -> _BuiltJit:
    staging = stage(fn, in_tree, types)
    program = Program(passes.cleanup(staging.typed), compile_now=True)
    function, build = program.compiled.function, builder(staging.out_tree)

    def plain(leaves: Sequence[Any]) -> Any:
        try:
            return build(function(*leaves))
        except MemoryError as error:
            raise out_of_memory(program.defn, error) from None

    return _BuiltJit(program, staging.captured, staging.out_tree, plain)


@attrs.frozen
class _BuiltJit:
    program: Program  # (argument leaves, captured) -> output leaves
    captured: tuple[Any, ...]
    out_tree: TreeDef
    # `call` for leaves that are arrays and numbers, when nothing is captured: the
    # compiled function, which checks them, then the output tree; three calls in all
    plain: Callable[[Sequence[Any]], Any]

    def call(self, leaves: Sequence[Any]) -> Any:
        return unflatten(self.out_tree, self.program([*leaves, *self.captured] if self.captured else leaves))


# The backends other than numpy, by name: each makes the jitted function of fn and its
# static arguments (None if it has none). Filled by `shax.export`, with "xla".
backends: dict[str, Callable[[Callable[..., Any], Statics | None], Jit]] = {}


def jit(fn: Any, static_argnums: Any = None, static_argnames: Any = None, backend: str = "numpy") -> Jit:
    """`fn`, compiled per argument types on its first call: to numpy source (`backend="numpy"`),
    or exported to JAX and compiled by XLA (`backend="xla"`, `shax.export.xla_jit`). The
    arguments at `static_argnums` (ints) or named in `static_argnames` are static: hashable
    Python values passed to fn as they are, compiled once per distinct value (numpy backend)."""
    check_function("jit", fn)
    if not isinstance(backend, str) or backend not in ("numpy", *backends):
        known = " or ".join(map(repr, ("numpy", *backends)))
        raise at(ShaxValueError(f"jit: backend must be {known}, got {backend!r:.60}"), current_source())
    statics = checked_statics(fn, static_argnums, static_argnames)
    if backend != "numpy":
        return backends[backend](fn, statics)
    return Jit(fn) if statics is None else StaticJit(fn, statics)

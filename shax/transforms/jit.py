"""`shax.jit(f)`: f's cleaned definition compiled to Python source that calls numpy
directly (`shax.codegen`), once per argument types and tree structure.

    fast = shax.jit(shax.grad(loss))
    fast(params, x, y)                  # traced and compiled on the first call only
    print(fast.source(params, x, y))    # the generated code

It composes: `jit(grad(f))` and `jit(vmap(f))` compile the whole transformed program;
called on tracers (`grad(jit(f))`), a jitted function inlines its definition into the
enclosing trace like any transform, and the outer transform sees through it.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import attrs

from shax import passes
from shax.errors import ShaxValueError, at
from shax.location import current_source
from shax.pytree import TreeDef, unflatten
from shax.transforms.arguments import abstract_types
from shax.transforms.program import Program
from shax.transforms.staging import stage
from shax.transforms.transformed import Transformed
from shax.types import TensorType


class Jit(Transformed):
    kind = "jit"

    def build(self, in_tree: TreeDef, types: tuple[TensorType, ...]) -> _BuiltJit:
        staging = stage(self.fn, in_tree, types)
        program = Program(passes.cleanup(staging.typed), compile_now=True)
        return _BuiltJit(program, staging.captured, staging.out_tree)

    def source(self, *args: Any) -> str:
        """The generated source for arguments like `args` (values, or their types)."""
        in_tree, types = abstract_types("jit.source", args)
        return self.built(in_tree, types).program.compiled.source


@attrs.frozen
class _BuiltJit:
    program: Program  # (argument leaves, captured) -> output leaves
    captured: tuple[Any, ...]
    out_tree: TreeDef

    def call(self, leaves: Sequence[Any]) -> Any:
        return unflatten(self.out_tree, self.program([*leaves, *self.captured]))


def jit(fn: Any, backend: str = "numpy") -> Jit:
    """`fn`, compiled per argument types on its first call: to numpy source (`backend="numpy"`),
    or exported to JAX and compiled by XLA (`backend="xla"`, `shax.export.xla_jit`)."""
    if not isinstance(backend, str) or backend not in ("numpy", "xla"):
        raise at(ShaxValueError(f"jit: backend must be 'numpy' or 'xla', got {backend!r:.60}"), current_source())
    if backend == "xla":
        from shax.export import require_jax

        require_jax("jit(backend='xla')")
        from shax.export.xla_jit import XlaJit

        return XlaJit(fn)
    return Jit(fn)

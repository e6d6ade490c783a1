"""debug_print: prints its operands' runtime values through `str.format` (`shax.debug.print`,
JAX's `jax.debug.print`). It is an effect (`Primitive.effectful`): its result, an empty
f32[0] that nothing reads, only gives the binding a var, and every pass keeps the binding,
never merges two (each is its own operation: `cons_key`) and leaves effects in the order
they ran (tracing binds a trace's effects first, in order). Its operands are not
differentiated (no tangent; under `grad` the forward program prints the primal values
once). Batched, it prints once per batch element, as JAX's does: `batch` counts the leading
axes, shared by every operand, that it loops over (JAX's order: the innermost `vmap`'s
axis varies slowest).

Evaluation prints (numpy operands) or records (tracers, or any operands under a trace:
through `shax.rules.evaluate.record`, since rules know no tracer); compiled code calls
`print_values`, and the XLA export `jax.debug.callback` (`shax.export.debug_rules`).
"""

from __future__ import annotations

import builtins
import functools
import json
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, ClassVar

import attrs
import numpy as np

import typeclasses as tc
from shax.core.primitive import Linearity, Primitive
from shax.core.types import TensorType, f32
from shax.rules.batch import batch_rule, batched_at
from shax.rules.codegen import Operand, Site, codegen_rule
from shax.rules.cost import cost_rule
from shax.rules.evaluate import eval_rule, record
from shax.rules.export import export_rule
from shax.rules.types import type_rule

if TYPE_CHECKING:
    from shax.tracing.tracer import Tracer

__all__ = ["DebugPrint"]

# What a print returns: nothing to read (a var for the binding).
TOKEN = TensorType(f32, (0,))


@attrs.frozen
class DebugPrint(Primitive):
    """`fmt.format(*positional, **named)` printed, the last len(names) operands the named ones."""

    name: ClassVar[str] = "debug_print"
    linearity: ClassVar[tuple[Linearity, ...]] = ()  # per operation: see `operand_linearity`
    variadic: ClassVar[bool] = True
    effectful: ClassVar[bool] = True
    fmt: str
    count: int  # the number of operands
    names: tuple[str, ...] = ()  # the keyword names of the last operands
    batch: int = 0  # leading axes of every operand printed one element at a time

    @property
    def arity(self) -> int:  # type: ignore[override]
        return self.count

    @property
    def operand_linearity(self) -> tuple[Linearity, ...]:
        # d debug_print(x, ...) = 0: printing has no tangent
        return (Linearity.NON_DIFFERENTIABLE,) * self.count

    def cons_key(self) -> Any:
        return object()  # two prints of the same values are two prints

    def show(self, names: Mapping[int, str]) -> str:
        """How bindings print it: `debug_print "x = {} y = {y}" [y]`, its batch if batched."""
        keywords = f" [{','.join(self.names)}]" if self.names else ""
        return f"{self.name} {json.dumps(self.fmt)}{keywords}" + (f" batch {self.batch}" if self.batch else "")

    def print_values(self, *operands: Any, dtypes: Sequence[np.dtype[Any]] | None = None) -> np.ndarray:
        """Print the operands' values (each batch element's in turn), as `dtypes` if given
        (compiled code computes a float32 scalar as a Python float); the empty result."""
        values = [np.asarray(o) if dtypes is None else np.asarray(o, d) for o, d in zip(operands, dtypes or operands)]
        positional = len(values) - len(self.names)
        batch_shape = values[0].shape[: self.batch] if self.batch else ()
        for index in np.ndindex(*batch_shape):
            element = [v[index] for v in values]
            named = dict(zip(self.names, element[positional:]))
            builtins.print(self.fmt.format(*element[:positional], **named))
        return np.zeros(0, np.float32)


@type_rule(DebugPrint)
def _debug_print_type(prim: DebugPrint, operands: Sequence[TensorType]) -> TensorType:
    if len(operands) != prim.count:
        raise prim.fail(f"takes {prim.count} operand(s), got {len(operands)}", *operands)
    if prim.batch and any(t.shape[: prim.batch] != operands[0].shape[: prim.batch] for t in operands):
        raise prim.fail(f"every operand needs the same {prim.batch} leading batch axes", *operands)
    return TOKEN


# debug_print on numpy values: printed; on tracers (or under a trace): recorded there
@eval_rule(DebugPrint)
def _debug_print_eval(prim: DebugPrint, operands: Sequence[Any]) -> Any:
    recorded = record(prim, operands, open_trace=True)
    return prim.print_values(*operands) if recorded is None else recorded


# debug_print: a call of `print_values` at the operands' dtypes, bound as a global
@codegen_rule(DebugPrint)
def _debug_print_codegen(prim: DebugPrint, site: Site, operands: Sequence[Operand]) -> str:
    site.fresh(contiguous=True)
    show = functools.partial(prim.print_values, dtypes=[np.dtype(o.type.dtype.numpy) for o in operands])
    return f"{site.constant(show)}({', '.join(map(str, operands))})"


# debug_print: no flops
@cost_rule(DebugPrint)
def _debug_print_cost(prim: DebugPrint, operands: Sequence[TensorType], out: TensorType) -> int:
    return 0


# debug_print: each batched operand's batch axis moved after the batch axes it has (an
# unbatched one broadcast there), one more axis printed element by element, inside the
# others (JAX's order: under vmap(vmap(f)), the inner vmap's axis varies slowest); the
# result unbatched
@batch_rule(DebugPrint)
def _debug_print_batch(
    prim: DebugPrint, operands: Sequence[Tracer], dims: Sequence[int | None]
) -> tuple[Tracer, int | None]:
    size = next(tc.shape(x)[d] for x, d in zip(operands, dims) if d is not None)
    moved = [batched_at(x, d, prim.batch, size) for x, d in zip(operands, dims)]
    return record(attrs.evolve(prim, batch=prim.batch + 1), moved), None


# debug_print: jax.debug.callback of the same `print_values` that evaluation and compiled
# code run, ordered, so that XLA prints once per execution (once per iteration inside a
# loop) in program order; its empty result made in JAX
@export_rule(DebugPrint)
def _debug_print_export(prim: DebugPrint, operands: Sequence[Any], out: TensorType) -> Any:
    import jax
    import jax.numpy as jnp

    def show(*values: Any) -> None:
        prim.print_values(*(np.asarray(v) for v in values))

    jax.debug.callback(show, *operands, ordered=True)
    return jnp.zeros(0, jnp.float32)

"""argsort: the indices (i32) that sort x along one axis, ascending, equal elements in
their order (a stable sort, as JAX's; NaNs last, as numpy's). Piecewise constant, so not
differentiated; `sort` is the default definition take_along_axis(x, argsort(x)), whose
derivative is then the gather's: each sorted element's cotangent goes back to where it
came from."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, ClassVar

import attrs
import numpy as np

import typeclasses as tc
from shax.core.errors import ShaxValueError
from shax.core.primitive import Linearity, Primitive, integer
from shax.core.types import TensorType, bool_, i32
from shax.rules.batch import batch_rule, batched, shifted
from shax.rules.cost import cost_rule
from shax.rules.export import export_rule
from shax.rules.types import type_rule

if TYPE_CHECKING:
    from shax.tracing.tracer import Tracer

__all__ = ["ArgSort"]


@attrs.frozen
class ArgSort(Primitive):
    name, function = "argsort", tc.argsort
    linearity: ClassVar[tuple[Linearity, ...]] = (Linearity.NON_DIFFERENTIABLE,)
    axis: int = attrs.field(converter=integer)


@type_rule(ArgSort)
def _argsort_type(prim: ArgSort, operands: Sequence[TensorType]) -> TensorType:
    (x,) = operands
    if not 0 <= prim.axis < x.rank:
        raise prim.fail(f"axis {prim.axis} is not an axis of a rank-{x.rank} tensor", x, error=ShaxValueError)
    if x.dtype == bool_:
        raise prim.fail("cannot sort booleans", x)
    return TensorType(i32, x.shape)


# argsort: the axis shifted past the batch axis d, which stays put
@batch_rule(ArgSort)
def _argsort_batch(prim: ArgSort, operands: Sequence[Tracer], dims: Sequence[int | None]) -> tuple[Tracer, int | None]:
    (x,), d = operands, batched(dims[0])
    return tc.argsort(x, shifted(prim.axis, d)), d


# argsort: a comparison sort of each row of n elements, n·⌈log₂ n⌉ comparisons
@cost_rule(ArgSort)
def _argsort_cost(prim: ArgSort, operands: Sequence[TensorType], out: TensorType) -> int:
    (x,) = operands
    n = x.shape[prim.axis]
    return x.size * max(n - 1, 0).bit_length()


# argsort: a stable sort of (key, position) by key. lax.sort's order is total (-0 < +0,
# -NaN first); numpy's keeps -0 and +0 as equal and puts every NaN last: the keys are
# made so (x + 0 is +0 for ±0; a NaN becomes +NaN).
@export_rule(ArgSort)
def _argsort_export(prim: ArgSort, operands: Sequence[Any], out: TensorType) -> Any:
    import jax.numpy as jnp
    from jax import lax

    (x,) = operands
    if jnp.issubdtype(x.dtype, jnp.floating):
        x = lax.add(x, lax.full_like(x, 0))
        x = lax.select(lax.ne(x, x), lax.full_like(x, np.nan), x)
    positions = lax.broadcasted_iota(np.int32, np.shape(x), prim.axis)
    return lax.sort((x, positions), dimension=prim.axis, is_stable=True, num_keys=1)[1]

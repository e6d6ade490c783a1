"""checkpoint_name: x itself, named for a checkpoint policy (JAX's
`jax.ad_checkpoint.checkpoint_name`; `shax.checkpoint_name` is in `shax.transforms.checkpoint`).
`shax.checkpoint_policies.save_only_these_names` saves the values so named and recomputes
the others. It is the identity in evaluation, batching, compiled code and its transpose;
linear, so its tangent is named too. No pass removes it: the name must reach linearize."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, ClassVar

import attrs
import numpy as np

from shax.core.errors import ShaxTypeError, at
from shax.core.location import current_source
from shax.core.primitive import Linearity, Primitive
from shax.core.types import TensorType
from shax.rules.batch import batch_rule, unary_batch
from shax.rules.codegen import Operand, Site, codegen_rule
from shax.rules.evaluate import eval_rule, record
from shax.rules.export import export_rule
from shax.rules.transpose import Linear, transpose_rule
from shax.rules.types import type_rule

if TYPE_CHECKING:
    from shax.tracing.tracer import Tracer

__all__ = ["CheckpointName"]


@attrs.frozen
class CheckpointName(Primitive):
    """x, named `label` (`name` is the printed primitive's)."""

    name: ClassVar[str] = "checkpoint_name"  # no typeclass function: `apply` records it
    # d name(x) = name(dx)
    linearity: ClassVar[tuple[Linearity, ...]] = (Linearity.LINEAR,)
    shape_only: ClassVar[bool] = True  # no flops: the identity
    label: str = attrs.field(validator=attrs.validators.instance_of(str))

    def apply(self, *operands: Any) -> Any:
        """Recorded on a tracer (`record`: no typeclass function reaches the tracer); an
        array or a number is itself."""
        (x,) = operands
        recorded = record(self, operands)
        if recorded is not None:
            return recorded
        if not isinstance(x, (np.ndarray, np.generic, int, float)):
            message = f"checkpoint_name: expected an array or a number to name, got {type(x).__name__} {x!r:.60}"
            raise at(ShaxTypeError(message), current_source())
        return x


@type_rule(CheckpointName)
def _checkpoint_name_type(prim: CheckpointName, operands: Sequence[TensorType]) -> TensorType:
    (x,) = operands
    return x


# checkpoint_name: x itself on values; recorded on tracers
@eval_rule(CheckpointName)
def _checkpoint_name_eval(prim: CheckpointName, operands: Sequence[Any]) -> Any:
    return prim.apply(*operands)


# checkpoint_name: x itself
@codegen_rule(CheckpointName)
def _checkpoint_name_codegen(prim: CheckpointName, site: Site, operands: Sequence[Operand]) -> str:
    (x,) = operands
    return str(x)


# checkpoint_name: elementwise, the batch axis stays put
@batch_rule(CheckpointName)
def _checkpoint_name_batch(
    prim: CheckpointName, operands: Sequence[Tracer], dims: Sequence[int | None]
) -> tuple[Tracer, int | None]:
    return unary_batch(prim, operands, dims)


# (name dx)ᵀ ct = ct
@transpose_rule(CheckpointName)
def _checkpoint_name_transpose(prim: CheckpointName, ct: Tracer, operands: Sequence[Linear]) -> tuple[Tracer]:
    return (ct,)


# checkpoint_name x = x (JAX's name only steers its own checkpoint policies)
@export_rule(CheckpointName)
def _checkpoint_name_export(prim: CheckpointName, operands: Sequence[Any], out: TensorType) -> Any:
    return operands[0]

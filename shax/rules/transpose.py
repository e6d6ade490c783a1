"""What transpose rules are written with.

A transpose rule (`shax.stages.transpose`) gets the cotangent of a binding's result and
its operands: a `Linear` marker for each operand that depends on the tangent inputs (the
rule returns its cotangent) and a value (a tracer) for each that does not. It returns one
cotangent per operand, None where there is none. For mul, linear in one factor:

    # mul: (r · dy)ᵀ ct = r · ct and (dx · r)ᵀ ct = ct · r

Which operands may be `Linear` follows from the primitive's linearity, and the stage
checks it before calling the rule: exactly its linear operands (all of them: `x + c` is
affine), or exactly one of its bilinear ones. A primitive linear in no operand needs no
rule: transposing it is an error naming it.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, Protocol

import attrs

import typeclasses as tc
from shax.core.primitive import Primitive
from shax.core.types import TensorType
from shax.rules.linearize import Zero
from shax.rules.table import RuleTable

if TYPE_CHECKING:
    from shax.tracing.tracer import Tracer


@attrs.frozen
class Linear:
    """An operand of a linear program's binding that depends on the tangent inputs."""

    type: TensorType


Operand = Any  # a Linear marker, or a tracer of the transposed program


class TransposeRule(Protocol):
    def __call__(self, prim: Any, ct: Any, operands: Sequence[Operand], /) -> Sequence[Tracer | None]:
        """The operands' cotangents (None: not linear there) from the result's cotangent `ct`
        (a tracer; for a `multi_result` primitive, the list of its results', None where a
        result has none)."""


def not_linear(prim: Primitive, ct: Tracer, operands: Sequence[Operand]) -> Sequence[Tracer | None]:
    """The transpose rule of a primitive that is linear in none of its operands."""
    raise prim.fail("is not linear, but an operand depends on the tangent inputs", *(o.type for o in operands))


def _derive(cls: type[Primitive]) -> TransposeRule | None:
    if cls.variadic:  # linear per operation: a variadic primitive that can be linear registers its rule
        return not_linear
    linear = cls.linear_operands or cls.bilinear_operands
    return None if linear else not_linear


transpose_rules: RuleTable[TransposeRule] = RuleTable("transpose", _derive)
transpose_rule = transpose_rules.register


def check_linear_operands(prim: Primitive, operands: Sequence[Operand]) -> None:
    """Nothing if the `Linear` operands are ones `prim` is linear in (all of its linear
    operands, or one bilinear one); else an error: the binding is not linear in the tangents."""
    pattern = tuple(k for k, o in enumerate(operands) if isinstance(o, Linear))
    linear, bilinear = prim.linear_operands, prim.bilinear_operands
    if (linear or bilinear) and not (pattern == linear if linear else len(pattern) == 1 and pattern[0] in bilinear):
        message = (
            f"is not linear in the tangent inputs when its operand(s) {list(pattern)}, and no others, depend on them"
        )
        raise prim.fail(message, *(o.type for o in operands))


# f elementwise and linear in operand k (the others fixed): its Jacobian is diagonal, so
# (f(.., dx_k, ..))ᵀ ct = f(.., ct, ..) with the other linear operands zero, summed back to
# x_k's shape: (dx + dy)ᵀ ct = (ct, ct), (dx − dy)ᵀ ct = (ct, −ct), (r · dy)ᵀ ct = r · ct,
# (dx / r)ᵀ ct = ct / r, (−dx)ᵀ ct = −ct.
def elementwise_transpose(prim: Primitive, ct: Tracer, operands: Sequence[Operand]) -> list[Tracer | None]:
    cotangents: list[Tracer | None] = []
    for k, operand in enumerate(operands):
        if not isinstance(operand, Linear):
            cotangents.append(None)
            continue
        zeros = [j for j, o in enumerate(operands) if j != k and isinstance(o, Linear)]
        if zeros and prim.neutral is not None and prim.neutral[0] == 0 and set(zeros) <= set(prim.neutral[1]):
            image = ct  # f(.., ct, .., 0, ..) = ct, 0 being neutral there: the sum's x + 0 = x, without dispatch
        else:
            image = prim.apply(*(ct if j == k else Zero(o.type) if j in zeros else o for j, o in enumerate(operands)))
        cotangents.append(unbroadcast(image, operand.type))
    return cotangents


def unbroadcast(ct: Tracer, target: TensorType, dims: Sequence[int] | None = None) -> Tracer:
    """The adjoint of broadcasting a `target` to ct's shape (input axis i at output axis
    dims[i]; numpy's trailing alignment by default): sum ct over the new axes and over
    the size-1 axes that were stretched."""
    shape = tc.shape(ct)
    if dims is None and shape == target.shape:  # nothing was broadcast (the common case)
        return ct
    dims = tuple(range(len(shape) - target.rank, len(shape)) if dims is None else dims)
    summed = [a for a in range(len(shape)) if a not in dims or (target.shape[dims.index(a)] == 1 and shape[a] != 1)]
    if summed:
        ct = tc.reduce_sum(ct, summed)
        shape = tc.shape(ct)
    if shape != target.shape:
        ct = tc.reshape(ct, target.shape)
    return ct

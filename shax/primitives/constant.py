"""Constants: a literal array, printed like the original: `fromList [2] [1.0,2.0]`."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, ClassVar

import attrs
import numpy as np

from shax.primitive import Linearity, Primitive
from shax.rules.codegen import Operand, Site, codegen_rule
from shax.rules.evaluate import eval_rule
from shax.rules.types import type_rule
from shax.types import TensorType

__all__ = ["SMALL_CONSTANT", "Constant"]


def _frozen_array(value: Any) -> np.ndarray:
    array = np.array(value)
    array.flags.writeable = False
    return array


# Constants up to this many elements are compared by value (hash-consing, CSE) and printed.
SMALL_CONSTANT = 16


@attrs.frozen(eq=False)
class Constant(Primitive):
    """A literal array. Without operands, it depends on no input: its tangent is zero, it
    is never batched and never linear in anything (all derived from its linearity)."""

    name: ClassVar[str] = "fromList"
    shape_only: ClassVar[bool] = True
    linearity: ClassVar[tuple[Linearity, ...]] = ()
    value: np.ndarray = attrs.field(converter=_frozen_array)

    # Identity, not Primitive's field-wise equality (which would see no fields and make
    # every two constants equal); cons_key compares small constants by value.
    __eq__ = object.__eq__
    __ne__ = object.__ne__
    __hash__ = object.__hash__

    def cons_key(self) -> Any:
        if self.value.size > SMALL_CONSTANT:
            return self
        return (Constant, self.value.dtype.str, self.value.shape, self.value.tobytes())


@type_rule(Constant)
def _constant_type(prim: Constant, operands: Sequence[TensorType]) -> TensorType:
    return TensorType.of(prim.value)


@eval_rule(Constant)
def _constant_eval(prim: Constant, operands: Sequence[Any]) -> np.ndarray:
    return prim.value


# A constant is a global of the compiled function, bound once: the very array evaluate returns.
@codegen_rule(Constant)
def _constant_codegen(prim: Constant, site: Site, operands: Sequence[Operand]) -> str:
    return site.constant(prim.value)

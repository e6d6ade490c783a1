"""Constants: a literal array, printed like the original: `fromList [2] [1.0,2.0]`."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, ClassVar

import attrs
import numpy as np

from shax.core.primitive import Linearity, Primitive
from shax.core.printing import SMALL_CONSTANT, show_array
from shax.core.types import TensorType
from shax.rules.codegen import Operand, Site, codegen_rule
from shax.rules.evaluate import eval_rule
from shax.rules.export import export_rule
from shax.rules.types import type_rule

__all__ = ["SMALL_CONSTANT", "Constant"]


def _frozen_array(value: Any) -> np.ndarray:
    """`value` as an array no one can write: itself if it is one already (a constant's, when
    a pass builds another constant from it), else a copy, so that writing into the caller's
    array later does not change the program."""
    if isinstance(value, np.ndarray) and not value.flags.writeable and value.flags.owndata:
        return value
    array = np.array(value)
    array.flags.writeable = False
    return array


def uniform_value(array: np.ndarray) -> np.ndarray | None:
    """The one value every element of `array` holds, bit for bit (-0.0 is not 0.0, a NaN's
    payload counts), if it has more than SMALL_CONSTANT elements and is C-contiguous; else
    None. Such an array (`np.zeros(n)`) is traced as a broadcast of that value, so that a
    program holds no copy of it (what numpy computes from it is the same)."""
    if array.size <= SMALL_CONSTANT or not array.flags.c_contiguous:
        return None
    bits = array.reshape(-1).view(f"u{array.dtype.itemsize}")  # a view: no memory spent
    first = bits[0]
    if bits[-1] != first or bits[bits.size // 2] != first or bits.min() != first or bits.max() != first:
        return None
    return array.reshape(-1)[:1].reshape(())


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

    def show(self, names: Mapping[int, str]) -> str:
        return show_array(self.value)  # `fromList [2] [1.0,2.0]`, elided when large

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


@export_rule(Constant)
def _constant_export(prim: Constant, operands: Sequence[Any], out: TensorType) -> Any:
    import jax.numpy as jnp

    return jnp.asarray(prim.value, prim.value.dtype)

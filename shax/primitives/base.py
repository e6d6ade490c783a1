"""What every primitive is: a frozen attrs class with a printed `name`, its
`linearity`, and its static parameters as typed fields. Also the two structural
primitives, `arg{k}` (read an argument) and constants (`fromList [2] [1.0,2.0]`).
"""

from __future__ import annotations

import enum
from collections.abc import Sequence
from typing import Any, ClassVar

import attrs
import numpy as np

from shax.batching import never_batched
from shax.errors import ShaxTypeError, ShaxValueError
from shax.linear import bilinear_jvp, linear_jvp, not_linear, zero_tangent
from shax.pysource import Site
from shax.rules import batch_rule, codegen_rule, eval_rule, linearize_rule, transpose_rule, type_rule
from shax.types import TensorType


class Linearity(enum.Enum):
    LINEAR = "linear"  # f(a·u + b·v) = a·f(u) + b·f(v) in its one operand
    BILINEAR = "bilinear"  # linear in each operand separately (mul, dot_general)
    NONLINEAR = "nonlinear"
    NON_DIFFERENTIABLE = "non-differentiable"  # zero tangent (eq, constants)


@attrs.frozen
class Primitive:
    name: ClassVar[str]
    linearity: ClassVar[Linearity]
    arity: ClassVar[int]  # number of operands
    # Structural primitives are handled by each stage itself, not through rule tables.
    structural: ClassVar[bool] = False

    def cons_key(self) -> Any:
        """What identifies this operation for hash-consing and CSE."""
        return self

    def fail(self, message: str, *operand_types: TensorType, error: type = ShaxTypeError) -> Exception:
        """An error naming this primitive and its operand types."""
        operands = ", ".join(map(str, operand_types))
        return error(f"{self.name}: {message}" + (f" (operands: {operands})" if operand_types else ""))


def derive_linearize_rules(*classes: type[Primitive]) -> None:
    """Register the linearize rules that follow from the primitives' linearity: a linear
    primitive is its own derivative, a bilinear one is differentiated term by term."""
    derived = {Linearity.LINEAR: linear_jvp, Linearity.BILINEAR: bilinear_jvp}
    for cls in classes:
        if cls.linearity not in derived:
            raise TypeError(f"{cls.name} is {cls.linearity.value}: its linearize rule cannot be derived")
        linearize_rule(cls)(derived[cls.linearity])


def ints(values: Any) -> tuple[int, ...]:
    """A static parameter that is a list of ints, as a tuple."""
    try:
        items = tuple(values)
    except TypeError:
        raise ShaxValueError(f"expected a list of ints, got {values!r}") from None
    if all(type(v) is int for v in items):  # the common case, checked first: stages build many
        return items
    if not all(isinstance(v, (int, np.integer)) and not isinstance(v, bool) for v in items):
        raise ShaxValueError(f"expected a list of ints, got {values!r}")
    return tuple(int(v) for v in items)


def int_pairs(values: Sequence[Any]) -> tuple[tuple[int, int], ...]:
    try:
        pairs = tuple(ints(p) for p in values)
    except (ShaxValueError, TypeError):
        raise ShaxValueError(f"expected a list of (lo, hi) int pairs, got {values!r}") from None
    if not all(len(p) == 2 for p in pairs):
        raise ShaxValueError(f"expected a list of (lo, hi) int pairs, got {values!r}")
    return pairs  # type: ignore[return-value]


@attrs.frozen
class Arg(Primitive):
    """`x0 = arg0`: the value of argument `index`."""

    name: ClassVar[str] = "arg"
    linearity: ClassVar[Linearity] = Linearity.LINEAR
    arity: ClassVar[int] = 0
    structural: ClassVar[bool] = True
    index: int


def _frozen_array(value: Any) -> np.ndarray:
    array = np.array(value)
    array.flags.writeable = False
    return array


# Constants up to this many elements are compared by value (hash-consing, CSE) and printed.
SMALL_CONSTANT = 16


@attrs.frozen(eq=False)
class Constant(Primitive):
    """A literal array, printed like the original: `fromList [] [2.0]`."""

    name: ClassVar[str] = "fromList"
    linearity: ClassVar[Linearity] = Linearity.NON_DIFFERENTIABLE
    arity: ClassVar[int] = 0
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
def _constant_type(prim: Constant) -> TensorType:
    return TensorType.of(prim.value)


@eval_rule(Constant)
def _constant_eval(prim: Constant) -> np.ndarray:
    return prim.value


# A constant is a global of the compiled function, bound once: the very array evaluate returns.
@codegen_rule(Constant)
def _constant_codegen(prim: Constant, site: Site) -> str:
    return site.constant(prim.value)


# constant: d c = 0
linearize_rule(Constant)(zero_tangent)
# A constant does not depend on the tangents; transpose treats a zero one as the zero map.
transpose_rule(Constant)(not_linear)
# A constant has no operands to batch: the same value for every example.
batch_rule(Constant)(never_batched)

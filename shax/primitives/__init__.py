"""Every primitive of the IR, by family. Importing this registers all their rules."""

from shax.primitives.base import SMALL_CONSTANT, Arg, Constant, Linearity, Primitive
from shax.primitives.dot import DotGeneral
from shax.primitives.pointwise import (
    Abs,
    Add,
    Binary,
    Cos,
    Div,
    Eq,
    Exp,
    Log,
    Max,
    Min,
    Mul,
    Neg,
    Pow,
    Select,
    Signum,
    Sin,
    Sqrt,
    Sub,
    Tan,
    Tanh,
    Unary,
)
from shax.primitives.shape import Broadcast, Pad, ReduceSum, Reshape, Slice, Transpose


def all_primitives() -> list[type[Primitive]]:
    """Every concrete primitive class (leaves of the Primitive hierarchy)."""
    found, stack = [], [Primitive]
    while stack:
        cls = stack.pop()
        subclasses = cls.__subclasses__()
        if not subclasses and cls is not Primitive:
            found.append(cls)
        stack.extend(subclasses)
    return sorted(found, key=lambda c: c.__name__)


__all__ = [
    "SMALL_CONSTANT", "Abs", "Add", "Arg", "Binary", "Broadcast", "Constant", "Cos", "Div",
    "DotGeneral", "Eq", "Exp", "Linearity", "Log", "Max", "Min", "Mul", "Neg", "Pad", "Pow",
    "Primitive", "ReduceSum", "Reshape", "Select", "Signum", "Sin", "Slice", "Sqrt", "Sub",
    "Tan", "Tanh", "Transpose", "Unary", "all_primitives",
]  # fmt: skip

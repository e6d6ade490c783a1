"""Typeclasses for array programs: `Floating`, `Ord`, `HNP`, their functions, and
the numpy instance. Knows nothing of shax; shax registers its tracer as another instance.

    from typeclasses import sin, broadcast, dot
    A = TypeVar("A", bound=Floating)
    def f(x: A, y: A) -> A: return sin(x + y) * cos(x + y)
"""

from typeclasses import numpy_instance as _numpy_instance  # noqa: F401 - registers the instance
from typeclasses.dispatch import HNP, Floating, NoInstanceError, Ord, Tensor, register_instance
from typeclasses.functions import (
    abs,
    add,
    broadcast,
    cos,
    cosh,
    div,
    dot,
    dot_dims,
    dot_general,
    eq,
    exp,
    log,
    log_base,
    max,
    min,
    mul,
    neg,
    pad,
    pow,
    reduce_sum,
    reshape,
    select,
    shape,
    signum,
    sin,
    sinh,
    slice,
    sqrt,
    sub,
    tan,
    tanh,
    transpose,
)
from typeclasses.instance import Instance

__all__ = [
    "HNP", "Floating", "Instance", "NoInstanceError", "Ord", "abs", "add", "broadcast", "cos",
    "cosh", "div", "dot", "dot_dims", "dot_general", "eq", "exp", "log", "log_base", "max", "min",
    "mul", "neg", "pad", "pow", "reduce_sum", "register_instance", "reshape", "select", "shape",
    "signum", "sin", "sinh", "slice", "sqrt", "sub", "tan", "tanh", "Tensor", "transpose",
]  # fmt: skip

"""Typeclasses for array programs: `Floating`, `Ord`, `HNP`, their functions, and
the numpy instance. Knows nothing of shax; shax registers its tracer as another instance.

    from typeclasses import sin, broadcast, dot
    A = TypeVar("A", bound=Floating)
    def f(x: A, y: A) -> A: return sin(x + y) * cos(x + y)
"""

from typeclasses import numpy_instance as _numpy_instance  # noqa: F401 - registers the instance
from typeclasses.define import define_function
from typeclasses.dispatch import (
    FUNCTIONS,
    HNP,
    ArgumentsError,
    Floating,
    MissingMethodError,
    NoInstanceError,
    Ord,
    Tensor,
    method_of,
    register_instance,
    set_error_hook,
    typeclass_function,
)
from typeclasses.functions import *  # noqa: F403 - every typeclass function, listed in its __all__
from typeclasses.functions import __all__ as _functions
from typeclasses.instance import Instance

__all__ = [
    "FUNCTIONS", "HNP", "ArgumentsError", "Floating", "Instance", "MissingMethodError", "NoInstanceError", "Ord",
    "Tensor", "define_function", "method_of", "register_instance", "set_error_hook", "typeclass_function",
    *_functions,
]  # fmt: skip

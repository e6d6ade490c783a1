"""The numpy instance as shax registers it: typeclass functions on numpy values (arrays,
numpy scalars, Python numbers) accept what they accept on tracers, and fail with
ShaxErrors naming the function, the operands' types and the user's line.

typeclasses' own numpy instance (`typeclasses.numpy_instance`) runs numpy and knows
nothing of shax's types. Imported, shax registers this instance in its place for the
same value types; it checks with the one source of truth for what an operation
accepts, the type rule of the primitive implementing it, as the tracer does:

- an HNP function (`reshape`, `broadcast`, `transpose`, `slice`, `pad`, `reduce_sum`,
  `dot_general`, `select`, `eq`) builds its primitive from the static arguments as the
  tracer does, and types its operands by the primitive's rule before numpy runs: a
  `slice` out of range, a bad `broadcast`, a `pad` value its dtype cannot hold are
  errors, not numpy's silent clip or truncation. Python numbers are weakly typed, as
  when tracing, and a number as a `select` branch stands for a tensor of the
  predicate's shape;
- Floating and Ord functions run numpy as they are, with numpy's promotions (on plain
  numpy values, numpy's rules hold).

Either way numpy's own errors come out as ShaxErrors, and on input the rules accept
the results are what typeclasses' instance computes. `shax.evaluate` checks a
definition's types once and runs typeclasses' instance directly
(`shax.rules.evaluate.numpy_rules`), so evaluation pays for no check per operation.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

import typeclasses as tc
from shax.core.array_subclasses import REFUSED, RefusingInstance
from shax.core.errors import ShaxError, ShaxTypeError, ShaxValueError, at, named
from shax.core.location import current_source
from shax.core.primitive import DerivedInstance, Primitive, from_user_args, implementing, primitive_method
from shax.core.types import TensorType, describe, reference_dtype, weak_dtype
from shax.primitives import Select
from shax.rules.types import result_types
from typeclasses.numpy_instance import NUMPY_TYPES, numpy_instance

# What numpy raises on values it cannot combine (OverflowError: a Python int beyond a dtype).
# AttributeError: numpy's ufunc on an object array calls the method of that name on each
# element (`None.arctan2`), which the element lacks.
NUMPY_ERRORS = (TypeError, ValueError, IndexError, ArithmeticError, AttributeError)


class CheckedNumpyInstance(DerivedInstance):
    """Each method is derived on first use from typeclasses' numpy method of the same name:
    for an HNP function, checked by its primitive's type rule; for the others, and
    functions no primitive implements (`shape`), with numpy's errors as ShaxErrors."""

    def level(self, value: Any) -> int:
        return 0

    def __getattr__(self, method: str) -> Any:
        if method.startswith("_") or implementing(method) is not None:
            return super().__getattr__(method)  # derived from the primitive (`derive`)
        setattr(type(self), method, _numpy_method(method, getattr(numpy_instance, method)))
        return getattr(self, method)

    def derive(self, cls: type[Primitive], method: str) -> Callable[..., Any]:
        numpy_method = getattr(numpy_instance, method)
        if tc.FUNCTIONS[method][1] is not tc.HNP:
            return _numpy_method(method, numpy_method)

        def run(prim: Primitive, operands: tuple[Any, ...]) -> Any:
            _check(prim, operands)
            return _call(prim.name, numpy_method, (*operands, *prim.static_args()))

        return primitive_method(cls, method, run, from_user_args(cls))

    def select(self, pred: Any, on_true: Any, on_false: Any) -> Any:
        operands = (pred, on_true, on_false)
        _check(Select(), operands, numbers_shaped=True)
        return _call("select", numpy_instance.select, operands)


def _check(prim: Primitive, operands: tuple[Any, ...], numbers_shaped: bool = False) -> None:
    """Nothing if `prim`'s type rule accepts numpy values `operands`; else its ShaxError at
    the user's line. `numbers_shaped`: a Python number stands for a tensor of the first
    operand's shape (select's branches, as when tracing)."""
    try:
        types = _operand_types(prim.name, operands)
        if numbers_shaped:
            types = [
                t.with_shape(types[0].shape) if isinstance(o, (bool, int, float)) else t
                for o, t in zip(operands, types)
            ]
        result_types(prim, *types)
    except ShaxError as error:
        raise at(named(error, prim.name), current_source()) from None


def _operand_types(op: str, operands: Sequence[Any]) -> list[TensorType]:
    """The types of numpy values as operands of `op`: an array's or numpy scalar's own, a
    Python number's weak one (`shax.core.types.weak_dtype`), as the tracer lifts them."""
    arrays = [TensorType.of(o) if isinstance(o, (np.ndarray, np.generic)) else None for o in operands]
    if None not in arrays:  # no Python numbers: the common case
        return arrays  # type: ignore[return-value]  # no None in it
    reference = reference_dtype([t.dtype for t in arrays if t is not None])
    return [TensorType(weak_dtype(o, reference, op), ()) if t is None else t for o, t in zip(operands, arrays)]


def _numpy_method(method: str, numpy_method: Callable[..., Any]) -> Callable[..., Any]:
    """The instance method calling `numpy_method`, numpy's errors raised as ShaxErrors."""
    name = tc.FUNCTIONS[method][0].__name__ if method in tc.FUNCTIONS else method

    def call(self: Any, *args: Any) -> Any:
        return _call(name, numpy_method, args)

    call.__name__ = method
    return call


def _call(op: str, numpy_method: Callable[..., Any], args: tuple[Any, ...]) -> Any:
    try:
        return numpy_method(*args)
    except ShaxError:  # from a typeclass function it calls (a user's numpy function may)
        raise
    except NUMPY_ERRORS as error:
        raise _numpy_error(op, args, error) from error


def _numpy_error(op: str, args: tuple[Any, ...], error: Exception) -> ShaxError:
    """numpy's `error` running `op` on `args`, as a ShaxError at the user's line."""
    kind = ShaxValueError if isinstance(error, OverflowError) else ShaxTypeError
    message = f"{op}: numpy: {type(error).__name__}: {error} (arguments: {', '.join(map(describe, args))})"
    return at(kind(message), current_source())


# Where typeclasses' numpy instance overrides a default definition with numpy's own function
# (`logaddexp`: numpy's C loop, whose last bit the definition may not give), that.
for _method in vars(tc.Instance).keys() & vars(type(numpy_instance)).keys() - {"level"}:
    if not _method.startswith("_"):
        setattr(CheckedNumpyInstance, _method, _numpy_method(_method, getattr(numpy_instance, _method)))

checked_numpy_instance = CheckedNumpyInstance()
tc.register_instance(checked_numpy_instance, *NUMPY_TYPES)
# np.matrix and masked arrays are ndarrays whose operations are not an ndarray's: refused.
tc.register_instance(RefusingInstance(), *REFUSED)

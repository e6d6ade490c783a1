"""numpy's dtype promotion on the numpy surface: `shax.numpy`'s functions, and Python's
operators on tracers (`PromotedOperators`, mixed into the tracer). Where a traced operation
mixes dtypes, each operand is converted to the dtype numpy's own computation takes it in, so a function gives the same
dtypes traced as on numpy arrays: `f32 + i32` is f64, `sin(i32)` f64, `i32 == i64` compares
in i64, `i32 * 0.5` is f64. A traced operand's conversion is a `convert_element_type`
binding, visible in the printed program; a numpy constant is converted as numpy would
(`astype`), and prints with its new type. Programs that mix no dtypes are unchanged.

The table is numpy's, asked on the numpy dtypes of shax's (`ufunc.resolve_dtypes` for a
ufunc, `np.result_type` for the functions that take operands to a common dtype), so a
new shax dtype needs no rows here. NEP 50's rules come with it: a Python number is weak
(`x * 2` keeps x's dtype; `weak_dtype` still refuses one the dtype cannot hold), a numpy
scalar or array is not (`f32 * np.float64(2)` is f64). Where numpy computes traced operands
in a dtype shax lacks (`sin` of a u8 is float16), the operation is a ShaxTypeError naming it.
numpy values alone are converted too, so that `shax.numpy`'s structural functions
(`concatenate`, `where`) and its strict numpy instance give numpy's answers on them.

Only this surface promotes: the typeclass functions (`tc.add`, `tc.sin`, ...) stay strict,
as the Haskell original is, so rules and passes never convert behind the user's back.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from typing import Any

import numpy as np

import typeclasses as tc
from shax.core.errors import ShaxError, ShaxTypeError, ShaxValueError, at, named
from shax.core.location import current_source
from shax.core.types import DType, TensorType, describe, dtype_of_numpy, weak_dtype
from typeclasses.operators import Operators, comparable

# What numpy's type resolution is given for an operand: a numpy dtype, or Python's `int` or
# `float` for a weak number.
Key = Any


def ufunc_operands(ufunc: np.ufunc, op: str, *operands: Any) -> tuple[Any, ...]:
    """`operands` of numpy's `ufunc` (shax's `op`), each in the dtype numpy's loop for
    them takes it in."""
    if _unmixed(operands):
        return operands
    keys = _keys(operands)
    if keys is None:
        return operands
    loop = _ufunc_loop(ufunc, keys)
    traced = any(isinstance(o, PromotedOperators) for o in operands)
    if traced and loop is not None and _INT8 in loop and _INT8 not in keys:
        # numpy computes booleans' integer arithmetic (`mask // mask`, `square(mask)`) in
        # int8, which shax lacks: traced, in i32, as JAX does (the values are the same).
        loop = tuple(np.dtype(np.int32) if d == _INT8 else d for d in loop)
    return _converted(op, operands, keys, loop)


def promoted(ufunc: np.ufunc, op: str, function: Any, *operands: Any) -> Any:
    """`function` (a typeclass function) of `operands` as numpy's `ufunc` computes it: the
    operands promoted (`ufunc_operands`), and booleans alone through the logical operation
    numpy's boolean loop is, where shax's primitive takes no bool (`_BOOLEAN`)."""
    operands = ufunc_operands(ufunc, op, *operands)
    if ufunc is np.power:
        power = _integer_power(*operands)
        if power is not None:
            return power
    if all(_is_bool(o) for o in operands):
        if not any(isinstance(o, PromotedOperators) for o in operands):
            return _numpy(ufunc, op, operands)
        boolean = _BOOLEAN.get(ufunc.__name__)
        if boolean is not None:
            return boolean(op, *operands)
    return function(*operands)


def _integer_power(x: Any, n: Any) -> Any:
    """x ** n of a traced integer x and a constant n >= 0 (`counts ** 2`), which shax's `pow`
    (of floats) does not take: JAX's integer_pow, repeated squaring, exact and wrapping as
    numpy's integer power does. None for any other operands (`pow` decides)."""
    if not isinstance(x, PromotedOperators) or x.type.dtype.is_float or x.type.dtype.name == "bool":
        return None
    try:
        constant = not isinstance(n, PromotedOperators) and np.ndim(n) == 0 and np.asarray(n).dtype.kind in "iu"
    except ValueError:  # a sequence numpy cannot read: `pow` refuses it by name
        return None
    if not constant or int(n) < 0:
        return None
    k, result, square = int(n), None, x
    while k:
        if k & 1:
            result = square if result is None else tc.mul(result, square)
        k >>= 1
        if k:
            square = tc.mul(square, square)
    if result is None:  # x ** 0
        from shax.tracing.tracer import lift  # on use: the tracer mixes in this module's operators

        tracer: Any = x
        return lift(tracer.owner, np.ones(tuple(x.type.shape), x.type.dtype.numpy), None, "pow")
    return result


def _numpy(ufunc: np.ufunc, op: str, operands: tuple[Any, ...]) -> Any:
    """numpy's own answer on numpy booleans (`square` of a mask is int8, `abs` a copy); its
    error a ShaxError naming `op`."""
    try:
        return ufunc(*operands)
    except (TypeError, ValueError) as error:
        kind = ShaxTypeError if isinstance(error, TypeError) else ShaxValueError
        raise at(named(kind(f"numpy: {error}"), op), current_source()) from None


def _is_bool(operand: Any) -> bool:
    if isinstance(operand, (bool, np.bool_)):
        return True
    dtype = operand.type.dtype.dtype if isinstance(operand, PromotedOperators) else getattr(operand, "dtype", None)
    return dtype == np.bool_


def boolean_product(product: Any, *operands: Any) -> Any:
    """`product` (`matmul`, `dot`, ...) of `operands`, booleans alone as numpy's: each element
    ∨ of ∧s, the count of true products (in i32) nonzero; other operands as they are."""
    if not all(_is_bool(o) for o in operands):
        return product(*operands)
    return tc.ne(product(*(tc.convert_element_type(o, np.dtype(np.int32)) for o in operands)), 0)


def _refused(advice: str) -> Any:
    def refuse(op: str, *operands: Any) -> Any:
        shown = ", ".join(describe(o) for o in operands)
        message = f"numpy has no {op} of booleans (operands: {shown}); {advice}"
        raise at(named(ShaxTypeError(message), op), current_source())

    return refuse


# numpy's boolean loops (`??->?`) are logic on {False, True} ordered False < True: + and max
# are ∨, * and min ∧, a < b is ¬a ∧ b, a <= b is ¬a ∨ b, |a| is a; a matrix product is ∨ of
# ∧s (computed as a count of the i32 products, nonzero). shax's arithmetic primitives take
# no bool (their rules are of numbers), so booleans alone go to the logical primitives.
# numpy refuses - of booleans, saying what to write instead.
_BOOLEAN: dict[str, Any] = {
    "add": lambda op, a, b: tc.logical_or(a, b),
    "maximum": lambda op, a, b: tc.logical_or(a, b),
    "multiply": lambda op, a, b: tc.logical_and(a, b),
    "minimum": lambda op, a, b: tc.logical_and(a, b),
    "greater": lambda op, a, b: tc.logical_and(a, tc.logical_not(b)),
    "less": lambda op, a, b: tc.logical_and(tc.logical_not(a), b),
    "greater_equal": lambda op, a, b: tc.logical_or(a, tc.logical_not(b)),
    "less_equal": lambda op, a, b: tc.logical_or(tc.logical_not(a), b),
    "absolute": lambda op, a: a,
    "matmul": lambda op, a, b: boolean_product(tc.matmul, a, b),
    "subtract": _refused("use ^ (logical_xor) instead, as numpy says"),
    "negative": _refused("use ~ (logical_not) instead, as numpy says"),
}


def common_operands(op: str, operands: Sequence[Any]) -> tuple[Any, ...]:
    """`operands` in numpy's common dtype of them (`np.result_type`: `where`'s branches,
    `concatenate`'s arrays)."""
    operands = tuple(operands)
    keys = _keys(operands)
    if keys is None:
        return operands
    if float in keys and all(k is int or k is float for k in keys):
        # Python numbers alone stay weak, of their common kind (`where(c, 1.5, -2)` is a
        # float, lifted as one float beside tracers), rather than an f32 and an i32.
        return tuple(float(o) for o in operands)
    common = _result_type(keys)
    return _converted(op, operands, keys, None if common is None else (common,) * len(operands))


def _unmixed(operands: Sequence[Any]) -> bool:
    """Whether nothing needs converting, found cheaply for the common case: tracers of one
    float dtype and Python numbers (numpy computes floats in their own dtype)."""
    dtype = None
    for o in operands:
        if isinstance(o, PromotedOperators):
            if dtype is None:
                dtype = o.type.dtype
            elif o.type.dtype is not dtype:
                return False
        elif type(o) is not float and type(o) is not int:
            return False
    return dtype is not None and dtype.is_float


def _keys(operands: Sequence[Any]) -> tuple[Key, ...] | None:
    """What numpy's type resolution is given for each operand; None if one is no number
    or array (the operation's own error names it)."""
    keys: list[Key] = []
    for o in operands:
        if isinstance(o, PromotedOperators):
            keys.append(o.type.dtype.dtype)
        elif isinstance(o, (np.ndarray, np.generic)):  # first: np.float64 is a Python float too
            keys.append(o.dtype)
        elif isinstance(o, bool):
            keys.append(np.dtype(np.bool_))
        elif isinstance(o, (int, float)):
            keys.append(float if isinstance(o, float) else int)
        else:
            return None
    return tuple(keys)


@functools.lru_cache(maxsize=4096)
def _ufunc_loop(ufunc: np.ufunc, keys: tuple[Key, ...]) -> tuple[np.dtype[Any], ...] | None:
    """The input dtypes of numpy's loop of `ufunc` for operands of `keys`; None where numpy
    has none (`-` of a bool): the operation's own error then names it."""
    try:
        return tuple(ufunc.resolve_dtypes((*keys, *(None,) * ufunc.nout))[: ufunc.nin])
    except TypeError:
        return None


_INT8 = np.dtype(np.int8)


@functools.lru_cache(maxsize=4096)
def _result_type(keys: tuple[Key, ...]) -> np.dtype[Any] | None:
    """numpy's common dtype of operands of `keys` (a weak number stands as 0 or 0.0)."""
    try:
        return np.result_type(*(0 if k is int else 0.0 if k is float else k for k in keys))
    except TypeError:
        return None


def _converted(
    op: str, operands: tuple[Any, ...], keys: tuple[Key, ...], wants: tuple[np.dtype[Any], ...] | None
) -> tuple[Any, ...]:
    if wants is None:
        return operands
    if not any(isinstance(o, PromotedOperators) for o in operands) and not all(map(_has_shax_dtype, wants)):
        return operands  # numpy values numpy computes in a dtype shax lacks (float16): numpy's own answer
    one = all(w == wants[0] for w in wants)
    out = []
    for o, key, want in zip(operands, keys, wants):
        if key is int or key is float or isinstance(o, bool):
            out.append(_number(op, o, want, one))
        elif key == want:
            out.append(o)
        else:
            dtype = _shax_dtype(op, want, operands)
            out.append(tc.convert_element_type(o, dtype.dtype) if isinstance(o, PromotedOperators) else o.astype(want))
    return tuple(out)


def _number(op: str, number: bool | int | float, want: np.dtype[Any], one: bool) -> Any:
    """A Python number where numpy's loop takes `want`: as it is where it will be lifted
    to `want` anyway (weakly, beside operands of that one dtype), else an array of `want`;
    an error if `want` cannot hold it (300 as a u8)."""
    dtype = _shax_dtype(op, want, (number,))
    if isinstance(number, bool) or dtype.name == "bool":  # numpy's value: True as 1.0, 2 as True
        return np.asarray(number, want)
    try:
        weak_dtype(number, dtype, op)
    except ShaxError as error:
        raise at(error, current_source()) from None
    return number if one else np.asarray(number, want)


def _has_shax_dtype(dtype: np.dtype[Any]) -> bool:
    try:
        dtype_of_numpy(dtype)
    except ShaxError:
        return False
    return True


def _shax_dtype(op: str, want: np.dtype[Any], operands: Sequence[Any]) -> DType:
    try:
        return dtype_of_numpy(want)
    except ShaxError as error:
        shown = ", ".join(describe(o) for o in operands)
        message = f"numpy computes this in {want.name}, which shax lacks (operands: {shown}); {error}"
        raise at(named(ShaxTypeError(message), op), current_source()) from None


class PromotedOperators(Operators):
    """Python's arithmetic operators and comparisons, each its typeclass function on the
    operands numpy's ufunc of the operator promotes them to (`x + 1`, `x @ w`, `i == labels`).
    Mixed into the tracer, whose `type` these read."""

    __slots__ = ()
    type: TensorType

    def __add__(self, other: Any) -> Any:
        return promoted(np.add, "add", tc.add, self, other)

    def __radd__(self, other: Any) -> Any:
        return promoted(np.add, "add", tc.add, other, self)

    def __sub__(self, other: Any) -> Any:
        return promoted(np.subtract, "sub", tc.sub, self, other)

    def __rsub__(self, other: Any) -> Any:
        return promoted(np.subtract, "sub", tc.sub, other, self)

    def __mul__(self, other: Any) -> Any:
        return promoted(np.multiply, "mul", tc.mul, self, other)

    def __rmul__(self, other: Any) -> Any:
        return promoted(np.multiply, "mul", tc.mul, other, self)

    def __truediv__(self, other: Any) -> Any:
        return promoted(np.divide, "div", tc.div, self, other)

    def __rtruediv__(self, other: Any) -> Any:
        return promoted(np.divide, "div", tc.div, other, self)

    def __pow__(self, other: Any) -> Any:
        return promoted(np.power, "pow", tc.pow, self, other)

    def __rpow__(self, other: Any) -> Any:
        return promoted(np.power, "pow", tc.pow, other, self)

    def __matmul__(self, other: Any) -> Any:
        return promoted(np.matmul, "matmul", tc.matmul, self, other)

    def __rmatmul__(self, other: Any) -> Any:
        return promoted(np.matmul, "matmul", tc.matmul, other, self)

    def __neg__(self) -> Any:
        return promoted(np.negative, "negate", tc.neg, self)

    def __abs__(self) -> Any:
        return promoted(np.absolute, "abs", tc.abs, self)

    def __eq__(self, other: Any) -> Any:
        return tc.eq(*ufunc_operands(np.equal, "eq", self, other)) if comparable(other) else NotImplemented

    def __ne__(self, other: Any) -> Any:
        return tc.ne(*ufunc_operands(np.not_equal, "ne", self, other)) if comparable(other) else NotImplemented

    def __lt__(self, other: Any) -> Any:
        return promoted(np.less, "lt", tc.lt, self, other)

    def __le__(self, other: Any) -> Any:
        return promoted(np.less_equal, "le", tc.le, self, other)

    def __gt__(self, other: Any) -> Any:
        return promoted(np.greater, "gt", tc.gt, self, other)

    def __ge__(self, other: Any) -> Any:
        return promoted(np.greater_equal, "ge", tc.ge, self, other)

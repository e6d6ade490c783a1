"""Python's operators for a value type whose instance is registered: each operator is
its typeclass function, so `x + 1.0`, `2.0 * x`, `-x`, `abs(x)`, `x ** 2`, `a @ b`,
`x == y` and `x < 0.0` dispatch like `add`, `mul`, `neg`, `abs`, `pow`, `matmul`, `eq`
and `lt`. Comparisons are elementwise, as numpy's: `x == y` is a boolean tensor, never
Python's identity, so such a value is not hashable."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

import typeclasses.functions as tc

if TYPE_CHECKING:
    # A value type with these operators has its instance registered, which makes it a member
    # of every typeclass (`register_instance`, through ABC.register, which mypy cannot see).
    from typeclasses.dispatch import Tensor as _Member
else:
    _Member = object


class Operators(_Member):
    __slots__ = ()
    # Make `ndarray * value` defer to the value's reflected operators (a subclass may
    # instead take numpy's ufuncs on itself with a method).
    __array_ufunc__: Any = None

    def __add__(self, other: Any) -> Any:
        return tc.add(self, other)

    def __radd__(self, other: Any) -> Any:
        return tc.add(other, self)

    def __sub__(self, other: Any) -> Any:
        return tc.sub(self, other)

    def __rsub__(self, other: Any) -> Any:
        return tc.sub(other, self)

    def __mul__(self, other: Any) -> Any:
        return tc.mul(self, other)

    def __rmul__(self, other: Any) -> Any:
        return tc.mul(other, self)

    def __truediv__(self, other: Any) -> Any:
        return tc.div(self, other)

    def __rtruediv__(self, other: Any) -> Any:
        return tc.div(other, self)

    def __pow__(self, other: Any) -> Any:
        return tc.pow(self, other)

    def __rpow__(self, other: Any) -> Any:
        return tc.pow(other, self)

    def __matmul__(self, other: Any) -> Any:
        return tc.matmul(self, other)

    def __rmatmul__(self, other: Any) -> Any:
        return tc.matmul(other, self)

    def __neg__(self) -> Any:
        return tc.neg(self)

    def __pos__(self) -> Any:
        return self

    def __abs__(self) -> Any:
        return tc.abs(self)

    # A comparison with what is no tensor (None, a string) is Python's, as in numpy and JAX:
    # `x == None` is False.
    def __eq__(self, other: Any) -> Any:
        return tc.eq(self, other) if comparable(other) else NotImplemented

    def __ne__(self, other: Any) -> Any:
        return tc.ne(self, other) if comparable(other) else NotImplemented

    def __lt__(self, other: Any) -> Any:
        return tc.lt(self, other)

    def __le__(self, other: Any) -> Any:
        return tc.le(self, other)

    def __gt__(self, other: Any) -> Any:
        return tc.gt(self, other)

    def __ge__(self, other: Any) -> Any:
        return tc.ge(self, other)

    # Defining `__eq__` leaves the class without `__hash__` (Python's rule), as it must be.


def comparable(other: object) -> bool:
    """Whether `==` and `!=` with `other` are elementwise (else Python's: `x == None` is False)."""
    return isinstance(other, (Operators, np.ndarray, np.generic, int, float))

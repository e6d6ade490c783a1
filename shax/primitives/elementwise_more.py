"""The numpy surface's elementwise primitives beyond Floating's first set: the inverse
trigonometric and hyperbolic functions, erf, the remainder and the integer quotient, rounding,
and the logical functions, each one declaration of the elementwise family
(`shax.primitives.elementwise`) with its derivative, one line of math. `square`, `clip`,
`logaddexp`, `where` and the other numpy names need no primitive: they are default methods
(`typeclasses.instance`).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import typeclasses as tc
from shax.core.primitive import Linearity
from shax.core.types import INTEGERS, bool_
from shax.primitives.elementwise import elementwise
from shax.primitives.pointwise import FLOATS, NUMBERS
from shax.rules.codegen import Elementwise
from typeclasses.numpy_instance import erf as numpy_erf
from typeclasses.numpy_instance import quot as numpy_quot

Z = Linearity.NON_DIFFERENTIABLE
BOOL = frozenset({bool_})

__all__ = [
    "Arccos", "Arcsin", "Arcsinh", "Arctan", "Arctan2", "Arctanh", "Ceil", "Erf", "Floor", "LogicalAnd", "LogicalNot",
    "LogicalOr", "Quot", "Rem", "Round",
]  # fmt: skip

# arcsin: d(arcsin x) = dx / √(1 − x²)
Arcsin = elementwise(
    tc.arcsin,
    FLOATS,
    Elementwise("np.arcsin"),
    derivative=lambda x, out: 1.0 / tc.sqrt(1.0 - x * x),
    export="asin",
    numpy="arcsin",
)
# arccos: d(arccos x) = −dx / √(1 − x²)
Arccos = elementwise(
    tc.arccos,
    FLOATS,
    Elementwise("np.arccos"),
    derivative=lambda x, out: -1.0 / tc.sqrt(1.0 - x * x),
    export="acos",
    numpy="arccos",
)
# arctan: d(arctan x) = dx / (1 + x²)
Arctan = elementwise(
    tc.arctan,
    FLOATS,
    Elementwise("np.arctan"),
    derivative=lambda x, out: 1.0 / (1.0 + x * x),
    export="atan",
    numpy="arctan",
)
# arcsinh: d(arcsinh x) = dx / √(x² + 1)
Arcsinh = elementwise(
    tc.arcsinh,
    FLOATS,
    Elementwise("np.arcsinh"),
    derivative=lambda x, out: 1.0 / tc.sqrt(x * x + 1.0),
    export="asinh",
    numpy="arcsinh",
)
# arctanh: d(arctanh x) = dx / (1 − x²)
Arctanh = elementwise(
    tc.arctanh,
    FLOATS,
    Elementwise("np.arctanh"),
    derivative=lambda x, out: 1.0 / (1.0 - x * x),
    export="atanh",
    numpy="arctanh",
)
# arctan2: d arctan2(y, x) = (x · dy − y · dx) / (x² + y²)
Arctan2 = elementwise(
    tc.arctan2,
    FLOATS,
    Elementwise("np.arctan2"),
    derivative=lambda y, x, out: (x / (x * x + y * y), -y / (x * x + y * y)),
    export="atan2",
    numpy="arctan2",
)


# rem and quot of integers by 0 are 0 (numpy's) where XLA gives x and -1: divided by 1
# there, then replaced
def _integer_division(name: str) -> Callable[[Any, Any], Any]:
    def divide(x: Any, y: Any) -> Any:
        import jax.numpy as jnp
        from jax import lax

        function = getattr(lax, name)
        if not jnp.issubdtype(y.dtype, jnp.integer):
            return function(x, y)
        zero = lax.eq(y, lax.full_like(y, 0))
        return lax.select(zero, lax.full_like(x, 0), function(x, lax.select(zero, lax.full_like(y, 1), y)))

    return divide


# rem: x − trunc(x / y) · y, so d rem(x, y) = dx − trunc(x / y) · dy (trunc is piecewise
# constant); the 1 is spread to the result's shape through `0 · out`. Of integers too (no
# tangents there), 0 where y is 0 (numpy's `fmod`)
Rem = elementwise(
    tc.rem,
    NUMBERS,
    Elementwise("np.fmod"),
    derivative=lambda x, y, out: (1.0 + 0.0 * out, -tc.signum(x / y) * tc.floor(tc.abs(x / y))),
    export=_integer_division("rem"),
)
# quot: trunc(x / y) of integers, which have no tangents
Quot = elementwise(
    tc.quot,
    frozenset(INTEGERS),
    Elementwise(numpy_quot, ufunc=False),
    linearity=(Z, Z),
    export=_integer_division("div"),
)
# erf: d erf(x) = 2/√π · e^(−x²) · dx; compiled code calls the numpy instance's function
Erf = elementwise(
    tc.erf,
    FLOATS,
    Elementwise(numpy_erf, ufunc=False),
    derivative=lambda x, out: (2.0 / math.sqrt(math.pi)) * tc.exp(-(x * x)),
    export="erf",
)
# floor, ceil, round: piecewise constant, d ⌊x⌋ = d ⌈x⌉ = d round(x) = 0
Floor = elementwise(tc.floor, FLOATS, Elementwise("np.floor"), linearity=(Z,), export="floor", numpy="floor")
Ceil = elementwise(tc.ceil, FLOATS, Elementwise("np.ceil"), linearity=(Z,), export="ceil", numpy="ceil")


# round: halves to even (numpy's `rint`)
def _round_export(x: Any) -> Any:
    from jax import lax

    return lax.round(x, lax.RoundingMethod.TO_NEAREST_EVEN)


Round = elementwise(tc.round, FLOATS, Elementwise("np.rint"), linearity=(Z,), export=_round_export, numpy="rint")


# The logical functions take and give booleans: nothing to differentiate. Exported as
# selects (lax's names for them changed across versions): not x = x ? false : true,
# x and y = x ? y : false, x or y = x ? true : y
def _not_export(x: Any) -> Any:
    from jax import lax

    return lax.select(x, lax.full_like(x, False), lax.full_like(x, True))


def _and_export(x: Any, y: Any) -> Any:
    from jax import lax

    return lax.select(x, y, x)


def _or_export(x: Any, y: Any) -> Any:
    from jax import lax

    return lax.select(x, x, y)


LogicalAnd = elementwise(
    tc.logical_and,
    BOOL,
    Elementwise("np.logical_and"),
    linearity=(Z, Z),
    commutative=True,
    export=_and_export,
    numpy="logical_and",
)
LogicalOr = elementwise(
    tc.logical_or,
    BOOL,
    Elementwise("np.logical_or"),
    linearity=(Z, Z),
    commutative=True,
    export=_or_export,
    numpy="logical_or",
)
LogicalNot = elementwise(
    tc.logical_not, BOOL, Elementwise("np.logical_not"), linearity=(Z,), export=_not_export, numpy="logical_not"
)

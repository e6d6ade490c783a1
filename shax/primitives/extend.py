"""Adding primitives from outside shax.

The quick path, for a function applied element by element:

    softplus = shax.extend.elementwise_primitive(
        "softplus",
        numpy=lambda x: np.logaddexp(0.0, x),
        derivative=lambda x, out: 1.0 / (1.0 + tc.exp(-x)),    # f'(x), with typeclass functions
    )
    softplus(np.float32(2.0))            # runs the numpy function
    shax.grad(lambda x: softplus(x) * x)(2.0)

The result is a typeclass function: on numpy values it calls `numpy`; on tracers it records
one `softplus` binding, which prints under its name in every stage; `grad`, `jvp`, `vjp`,
`vmap` and `jit` (whose compiled code calls `numpy`) handle it, and so do higher
derivatives, since the derivative is itself written with typeclass functions. Operands are
f32 or f64 tensors of one dtype, broadcast like numpy's; `numpy` must keep their dtype
(as numpy's ufuncs do) and broadcast like a ufunc. With several operands, `derivative`
returns the partial derivatives, one per operand: `lambda x, y, out: (dx_part, dy_part)`.

The general path is the one shax's own primitives take (docs/adding-a-primitive.md walks through
it): declare the typeclass function (`define_function`), a `Primitive` subclass naming it,
its `linearity` per operand and its static parameters as attrs fields, and register the
rules its linearity does not decide, with the decorators below, under the class (a
`cost_rule` for `shax.stats`, an `export_rule` for the XLA backend, importing jax inside).
"""

from __future__ import annotations

import abc
import inspect
import sys
from collections.abc import Callable
from typing import Any

import numpy as np

import typeclasses
from shax.core.errors import ShaxTypeError, ShaxValueError, at
from shax.core.location import current_source
from shax.core.primitive import Linearity, Primitive, int_pairs, ints
from shax.primitives.elementwise import Pointwise, elementwise
from shax.primitives.pointwise import FLOATS
from shax.rules.batch import batch_rule, batched_at, moveaxis, shifted
from shax.rules.codegen import Elementwise, Operand, Site, codegen_rule, shape_source
from shax.rules.cost import cost_rule
from shax.rules.evaluate import eval_rule
from shax.rules.export import export_rule
from shax.rules.linearize import Zero, linearize_rule, residual, zero_rule
from shax.rules.transpose import Linear, transpose_rule, unbroadcast
from shax.rules.types import broadcast_shapes, type_rule
from typeclasses import Floating
from typeclasses.define import positional_parameters

__all__ = [
    "Elementwise", "Linear", "Linearity", "Operand", "Pointwise", "Primitive", "Site", "Zero", "batch_rule",
    "batched_at", "broadcast_shapes", "codegen_rule", "cost_rule", "define_function", "elementwise",
    "elementwise_primitive", "eval_rule", "export_rule", "int_pairs", "ints", "linearize_rule", "moveaxis",
    "residual", "shape_source", "shifted", "transpose_rule", "type_rule", "unbroadcast", "zero_rule",
]  # fmt: skip


def define_function(
    name: str, numpy: Callable[..., Any], operands: int | None = None, typeclass: type[abc.ABC] = Floating
) -> Callable[..., Any]:
    """`typeclasses.define_function`: a new typeclass function with its numpy instance, the
    first `operands` of `numpy`'s parameters its operands; a bad declaration is a ShaxError
    at the caller's line."""
    try:
        return typeclasses.define_function(name, numpy, operands, typeclass)
    except TypeError as error:
        raise at(ShaxTypeError(str(error)), current_source()) from None
    except ValueError as error:
        raise at(ShaxValueError(str(error)), current_source()) from None


def elementwise_primitive(name: str, numpy: Callable[..., Any], derivative: Callable[..., Any]) -> Callable[..., Any]:
    """A new elementwise primitive `name` computed by `numpy`, with derivative
    `derivative(*operands, out)` (see the module docstring); returns its typeclass function."""
    where = current_source()
    if not isinstance(name, str) or not name.isidentifier():
        raise at(ShaxValueError(f"elementwise_primitive: the name must be an identifier, got {name!r}"), where)
    for role, given in (("numpy", numpy), ("derivative", derivative)):
        if not callable(given):
            raise at(ShaxTypeError(f"elementwise_primitive: {name}'s {role} must be a function, got {given!r}"), where)
    arity, taken = len(positional_parameters(numpy)), len(positional_parameters(derivative))
    if arity < 1 or taken != arity + 1:
        message = (
            f"elementwise_primitive: {name}'s numpy function takes {arity} operand(s), so its derivative takes "
            f"them and the result, {arity + 1} in all; it takes {taken}"
        )
        raise at(ShaxValueError(message), where)

    def on_numpy(*operands: Any) -> Any:
        # numpy's own dtype rules may widen (np.float32 next to a Python float); the
        # primitive's type says the result has the operands' dtype, so it gets it.
        out = numpy(*operands)
        dtypes = {o.dtype for o in operands if isinstance(o, (np.ndarray, np.generic))}
        if len(dtypes) == 1 and getattr(out, "dtype", None) not in dtypes:
            out = np.asarray(out).astype(dtypes.pop())[()]
        return out

    on_numpy.__name__ = on_numpy.__qualname__ = name  # how compiled code's header names it
    on_numpy.__signature__ = inspect.signature(numpy)  # type: ignore[attr-defined]  # read by define_function
    function = typeclasses.define_function(name, on_numpy)
    module = sys._getframe(1).f_globals.get("__name__", "__main__")
    elementwise(function, FLOATS, Elementwise(on_numpy, ufunc=False), derivative=derivative, module=module)
    return function

"""The elementwise family: one call declares a primitive applied element by element, with
every rule its family shares (like JAX's `standard_unop` + `defjvp`):

    # tanh: d(tanh x) = (1 − tanh² x) · dx
    Tanh = elementwise(tc.tanh, FLOATS, Elementwise("np.tanh", float32_scalar="tanhf"),
                       derivative=lambda x, out: 1.0 - out * out)

- type: the operands share a dtype from `accepts` and broadcast like numpy's; the result
  has their dtype (or `result_dtype`: bool for comparisons) and the broadcast shape;
- evaluation: the typeclass function (the default for every primitive);
- batching: the batch axis stays put (one operand), or the operands line up under
  numpy's broadcasting (several);
- codegen: the given `Elementwise` rule (a numpy ufunc, or a Python function);
- linearize: from `derivative` (f'(x), or the partials for several operands, written
  with typeclass functions so that they differentiate again), or from `linearity`, or
  written by hand under the declaration;
- transpose: for an operand it is linear in, the function itself (elementwise, its
  Jacobian is diagonal): (dx + dy)ᵀ ct = (ct, ct), (r · dy)ᵀ ct = r · ct;
- symbolic zeros: derived from `linearity` (nonlinear by default);
- export to XLA: `export`, the name of its `jax.lax` function (`export="sin"`), or a
  function of the operands that imports jax itself, applied to the operands broadcast to
  the result's shape (`shax.rules.export`);
- numpy's name: `numpy`, the name (or names) of numpy's ufunc it is (`numpy="sin"`), which
  `shax.numpy` gives numpy's signature and promotion.

The class is named after the function (`tc.dot_general` -> `DotGeneral`) and prints
under `name` (the function's name by default).
"""

from __future__ import annotations

import inspect
import sys
from collections.abc import Callable, Sequence
from typing import Any, ClassVar

import attrs

from shax.core.primitive import Linearity, Primitive
from shax.core.types import DType, TensorType, bool_
from shax.rules.batch import batch_rule, broadcasting_batch, unary_batch
from shax.rules.codegen import Elementwise, codegen_rule
from shax.rules.linearize import Derivative, elementwise_jvp, linearize_rule
from shax.rules.transpose import elementwise_transpose, transpose_rule
from shax.rules.types import broadcast_shapes, type_rule


@attrs.frozen
class Pointwise(Primitive):
    """An elementwise primitive: operands of one dtype from `accepts`, broadcast like numpy's."""

    accepts: ClassVar[frozenset[DType]]
    result_dtype: ClassVar[DType | None] = None  # None: the operands' dtype
    elementwise: ClassVar[bool] = True
    # The `jax.lax` function it is (`"sin"`, or a function importing jax): its export to XLA.
    lax_export: ClassVar[str | Callable[..., Any] | None] = None
    # numpy's ufuncs it is (`("abs", "absolute")`): `shax.numpy` defines them.
    numpy_names: ClassVar[tuple[str, ...]] = ()


def _pointwise_type(prim: Pointwise, operands: Sequence[TensorType]) -> TensorType:
    first = operands[0]
    if any(t.dtype != first.dtype for t in operands):
        raise prim.fail("operands have different dtypes", *operands)
    if first.dtype not in prim.accepts:
        raise prim.fail(f"{first.dtype.name} is not supported", *operands)
    return TensorType(prim.result_dtype or first.dtype, broadcast_shapes(prim, *operands))


def elementwise(
    function: Callable[..., Any],
    accepts: frozenset[DType],
    codegen: Elementwise,
    *,
    derivative: Derivative | None = None,
    linearity: Sequence[Linearity] | None = None,
    name: str | None = None,
    result_dtype: DType | None = None,
    commutative: bool = False,
    neutral: tuple[int, tuple[int, ...]] | None = None,
    export: str | Callable[..., Any] | None = None,
    numpy: str | tuple[str, ...] = (),
    module: str | None = None,
) -> type[Pointwise]:
    """Declare the elementwise primitive implementing the typeclass function `function`
    (see the module docstring); `module` names where it is declared (the caller's module)."""
    arity = len(linearity) if linearity is not None else len(inspect.signature(function).parameters)
    if derivative is not None and linearity is not None:
        raise ValueError(f"{function.__name__}: give its derivative or its linearity, not both")
    printed = name or function.__name__
    operands = tuple(linearity or (Linearity.NONLINEAR,) * arity)
    namespace = {
        "name": printed,
        "function": function,
        "linearity": operands,
        "accepts": frozenset(accepts),
        "result_dtype": result_dtype,
        "commutative": commutative,
        "neutral": neutral,
        "lax_export": staticmethod(export) if callable(export) else export,
        "numpy_names": (numpy,) if isinstance(numpy, str) else tuple(numpy),
        "broadcasting": arity > 1,
        "booleans_as_numbers": arity > 1 and bool_ not in accepts,
        "__module__": module or sys._getframe(1).f_globals["__name__"],
        "__doc__": f"`{printed}`, element by element.",
    }
    class_name = "".join(part.capitalize() for part in function.__name__.split("_"))
    cls = attrs.frozen(type(class_name, (Pointwise,), namespace))
    type_rule(cls)(_pointwise_type)
    batch_rule(cls)(unary_batch if arity == 1 else broadcasting_batch)
    codegen_rule(cls)(codegen)
    if derivative is not None:
        linearize_rule(cls)(elementwise_jvp(derivative))
    if {Linearity.LINEAR, Linearity.BILINEAR} & set(operands):
        transpose_rule(cls)(elementwise_transpose)
    return cls

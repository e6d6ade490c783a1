"""`shax.extend`: users add primitives, which every stage and transform then handles.

The quick path (`elementwise_primitive`) against closed-form derivatives, finite
differences, a loop (vmap) and evaluate (jit, bit for bit); the general path (a
`Primitive` subclass with its rules) on a linear primitive with a static parameter."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, ClassVar

import attrs
import numpy as np
import pytest

import shax
import typeclasses as tc
from shax import f32, f64
from shax.core.types import TensorType
from shax.extend import (
    Elementwise,
    Linearity,
    Primitive,
    batch_rule,
    define_function,
    elementwise,
    elementwise_primitive,
    shifted,
    transpose_rule,
    type_rule,
)
from shax.primitives.pointwise import FLOATS
from shax.rules import TABLES
from shax.testing.numeric import check_directional_derivative

L = Linearity.LINEAR


def sigmoid(x: Any) -> Any:
    return 1.0 / (1.0 + np.exp(-x))


softplus = elementwise_primitive(
    "softplus",
    numpy=lambda x: np.logaddexp(0.0, x),
    derivative=lambda x, out: 1.0 / (1.0 + tc.exp(-x)),
)
# ∂/∂x √(x² + y²) = x / out, ∂/∂y = y / out
radius = elementwise_primitive(
    "radius",
    numpy=lambda x, y: np.sqrt(x * x + y * y),
    derivative=lambda x, y, out: (x / out, y / out),
)

X = np.array([0.5, -1.0, 2.0, -3.5])


def loss(x: Any) -> Any:
    return tc.reduce_sum(softplus(x) * x, [0])


def test_it_runs_on_numpy_values_with_their_dtype() -> None:
    assert softplus(np.float32(2.0)).dtype == np.float32
    np.testing.assert_allclose(softplus(X), np.logaddexp(0.0, X))
    np.testing.assert_allclose(radius(X, 2.0), np.hypot(X, 2.0))


def test_it_prints_under_its_name_in_every_stage() -> None:
    explanation = shax.explain(loss, f64[4])
    for section in ("trace", "types", "rewrites", "linearized", "zipped"):
        assert "= softplus x" in explanation.sections()[section], section
    assert "softplus x0" in str(shax.trace(softplus, f32[3]))


def test_grad_jvp_and_vjp_use_its_derivative() -> None:
    expected = sigmoid(X) * X + np.logaddexp(0.0, X)
    np.testing.assert_allclose(shax.grad(loss)(X), expected, rtol=1e-12)
    _, tangent = shax.jvp(softplus, (X,), (np.ones(4),))
    np.testing.assert_allclose(tangent, sigmoid(X), rtol=1e-12)
    _, vjp_fn = shax.vjp(radius, X, np.full(4, 2.0))
    ct_x, ct_y = vjp_fn(np.ones(4))
    r = np.hypot(X, 2.0)
    np.testing.assert_allclose(ct_x, X / r, rtol=1e-12)
    np.testing.assert_allclose(ct_y, 2.0 / r, rtol=1e-12)


def test_higher_derivatives_differentiate_the_derivative() -> None:
    """The derivative is written with typeclass functions: it is traced and differentiated."""
    second = shax.grad(shax.grad(softplus))
    third = shax.grad(second)
    x = np.float64(0.3)
    s = sigmoid(x)
    np.testing.assert_allclose(second(x), s * (1 - s), rtol=1e-12)
    check_directional_derivative(second, [x], [np.float64(1.0)], [third(x)], what="the third derivative")


def test_vmap_equals_a_loop_and_jit_equals_evaluate() -> None:
    xs = np.linspace(-2.0, 2.0, 12).reshape(3, 4).astype(np.float32)
    batched = shax.vmap(shax.grad(loss))(xs)
    np.testing.assert_array_equal(batched, np.stack([shax.grad(loss)(x) for x in xs]))
    fast = shax.jit(shax.grad(loss))
    assert "c" in fast.source(xs[0]) and "<function softplus>" in fast.source(xs[0])
    for x in xs:
        assert fast(x).tobytes() == shax.evaluate(shax.xpr(shax.grad(loss), x), x)[0].tobytes()
    both = shax.jit(lambda x, y: tc.reduce_sum(radius(x, y), [0, 1]))
    y = np.float32(0.5)
    assert both(xs, y) == np.sum(np.sqrt(xs * xs + y * y), axis=(0, 1), dtype=np.float32)


def test_declaring_a_name_again_gives_a_new_primitive() -> None:
    """A notebook cell rerun: the new declaration works beside the old one."""
    again = elementwise_primitive("softplus", numpy=lambda x: 2.0 * x, derivative=lambda x, out: 2.0 + 0.0 * x)
    assert again is not softplus
    assert shax.grad(again)(1.5) == 2.0
    np.testing.assert_allclose(shax.grad(softplus)(1.5), sigmoid(1.5), rtol=1e-6)


@pytest.mark.parametrize(
    ("name", "numpy", "derivative", "message"),
    [
        ("soft plus", np.tanh, lambda x, out: x, "must be an identifier"),
        ("f", np.tanh, lambda x: x, "takes 1 operand.*2 in all; it takes 1"),
        ("f", lambda x, y: x, lambda x, out: x, "takes 2 operand.*3 in all; it takes 2"),
    ],
)
def test_bad_declarations_are_named_errors(name: Any, numpy: Any, derivative: Any, message: str) -> None:
    with pytest.raises(shax.ShaxError, match=message):
        elementwise_primitive(name, numpy=numpy, derivative=derivative)


@pytest.mark.parametrize(
    ("name", "numpy", "operands", "message"),
    [
        ("cum sum", np.cumsum, None, "the name must be an identifier"),
        ("cumsum", lambda x, axis: x, 3, "cumsum needs between 1 and 2 operand"),
    ],
)
def test_bad_function_declarations_are_named_errors(name: str, numpy: Any, operands: Any, message: str) -> None:
    with pytest.raises(shax.ShaxValueError, match=f"{message}.*test_extend.py"):
        define_function(name, numpy, operands)


def test_it_only_takes_floats() -> None:
    with pytest.raises(shax.ShaxTypeError, match=r"softplus: i32 is not supported.*test_extend.py"):
        shax.trace(softplus, shax.i32[3])


# The general path: cumsum along an axis, a linear primitive with a static parameter.

cumsum = define_function("cumsum", lambda x, axis: np.cumsum(x, axis=axis), operands=1)


@attrs.frozen
class Cumsum(Primitive):
    """Running sums along `axis`; linear, so its derivative is itself (derived)."""

    name: ClassVar[str] = "cumsum"
    function = cumsum
    linearity: ClassVar[tuple[Linearity, ...]] = (Linearity.LINEAR,)
    axis: int


@type_rule(Cumsum)
def _cumsum_type(prim: Cumsum, operands: Sequence[TensorType]) -> TensorType:
    (x,) = operands
    if not 0 <= prim.axis < x.rank:
        raise prim.fail(f"axis {prim.axis} is not an axis of a rank-{x.rank} tensor", x)
    return x


# cumsum: (cumsum dx)ᵀ ct = the sums of ct from each position on = Σ ct − cumsum ct + ct
@transpose_rule(Cumsum)
def _cumsum_transpose(prim: Cumsum, ct: Any, operands: Sequence[Any]) -> tuple[Any]:
    (x,) = operands
    shape = x.type.shape
    total = tc.broadcast(tc.reduce_sum(ct, [prim.axis]), [a for a in range(len(shape)) if a != prim.axis], shape)
    return (total - cumsum(ct, prim.axis) + ct,)


# cumsum along a per-example axis of a batch with its batch axis at d
@batch_rule(Cumsum)
def _cumsum_batch(prim: Cumsum, operands: Sequence[Any], dims: Sequence[int | None]) -> tuple[Any, int | None]:
    (x,), (d,) = operands, dims
    return cumsum(x, shifted(prim.axis, d)), d


def test_a_primitive_declared_the_general_way() -> None:
    m = np.arange(6.0).reshape(2, 3)
    weights = np.array([[1.0, -2.0, 0.5], [3.0, 1.0, -1.0]])

    def f(x: Any) -> Any:
        return tc.reduce_sum(tc.sin(cumsum(x, 1)) * weights, [0, 1])

    assert "cumsum 1 x0" in str(shax.trace(lambda x: cumsum(x, 1), f64[2, 3]))
    c = np.cos(np.cumsum(m, axis=1)) * weights
    expected = np.cumsum(c[:, ::-1], axis=1)[:, ::-1]  # the derivative of a running sum: sums from the right
    np.testing.assert_allclose(shax.grad(f)(m), expected, rtol=1e-12)
    np.testing.assert_allclose(shax.vmap(shax.grad(f))(np.stack([m, 2 * m])), [expected, shax.grad(f)(2 * m)])
    fast = shax.jit(shax.grad(f))  # codegen: the numpy implementation, derived
    assert fast(m).tobytes() == shax.grad(f)(m).tobytes()
    with pytest.raises(shax.ShaxTypeError, match="cumsum: axis 2 is not an axis of a rank-2 tensor"):
        shax.trace(lambda x: cumsum(x, 2), f64[2, 3])


# A linear elementwise primitive from the family helper: every rule derived from its linearity.
axpy = define_function("axpy", lambda x, y: 2.0 * x + y)
Axpy = elementwise(axpy, FLOATS, Elementwise(lambda x, y: 2.0 * x + y, ufunc=False), linearity=(L, L))


def test_a_linear_elementwise_primitive_needs_no_rule_of_its_own() -> None:
    """linearize: d axpy(x, y) = axpy(dx, dy); transpose: (axpy(dx, dy))ᵀ ct = (axpy(ct, 0), axpy(0, ct))
    summed to each operand's shape, the zeros materialized; zeros: axpy(0, 0) = 0."""
    x, y = np.array([[1.0, -2.0, 3.0]]), np.array([0.5, 4.0, -1.0])
    gx, gy = shax.grad(lambda x, y: tc.reduce_sum(tc.sin(axpy(x, y)), [0, 1]))(x, y)
    c = np.cos(2.0 * x + y)
    np.testing.assert_allclose(gx, 2.0 * c, rtol=1e-12)
    np.testing.assert_allclose(gy, c[0], rtol=1e-12)
    _, tangent = shax.jvp(lambda x: axpy(x, y), (x,), (np.ones_like(x),))
    np.testing.assert_allclose(tangent, 2.0 * np.ones_like(x))
    family = ("type", "codegen", "batch", "transpose")  # what the family helper registers
    assert [name for name, table in TABLES.items() if table.is_registered(Axpy) and name not in family] == []

"""`shax.numpy`'s elementwise functions against numpy (dtype, shape, values) on numpy
values, traced, compiled and batched; their gradients against the known derivatives
(JAX's, including its choices at ties and at infinities)."""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import shax
import shax.numpy as snp
import typeclasses as tc
from shax.numpy import _elementwise

# A safe domain per function: (low, high) of uniformly drawn operands.
INSIDE_ONE, POSITIVE, REAL, NONZERO = (-0.9, 0.9), (0.5, 2.0), (-2.0, 2.0), (0.5, 2.0)
UNARY: dict[str, tuple[float, float]] = {
    "sin": REAL, "cos": REAL, "tan": (-1.2, 1.2), "arcsin": INSIDE_ONE, "arccos": INSIDE_ONE, "arctan": REAL,
    "tanh": REAL, "sinh": REAL, "cosh": REAL, "arcsinh": REAL, "arctanh": INSIDE_ONE, "exp": REAL, "expm1": REAL,
    "log": POSITIVE, "log1p": POSITIVE, "sqrt": POSITIVE, "square": REAL, "reciprocal": NONZERO, "abs": REAL,
    "absolute": REAL, "negative": REAL, "sign": REAL, "floor": (-3.0, 3.0), "ceil": (-3.0, 3.0), "rint": (-3.0, 3.0),
    "round": (-3.0, 3.0), "around": (-3.0, 3.0),
}  # fmt: skip
BINARY: dict[str, tuple[tuple[float, float], tuple[float, float]]] = {
    name: (REAL, REAL)
    for name in (
        "add", "subtract", "multiply", "arctan2", "logaddexp", "maximum", "minimum", "equal", "not_equal", "less",
        "less_equal", "greater", "greater_equal",
    )
}  # fmt: skip
BINARY |= {"divide": (REAL, NONZERO), "true_divide": (REAL, NONZERO), "power": (POSITIVE, REAL)}
BINARY |= {name: (REAL, NONZERO) for name in ("fmod", "remainder", "mod", "floor_divide")}
LOGICAL = ("logical_and", "logical_or")
DTYPES = (np.float32, np.float64)


def draw(rng: np.random.Generator, domain: tuple[float, float], shape: tuple[int, ...], dtype: Any) -> np.ndarray:
    return rng.uniform(*domain, shape).astype(dtype)


def operands(name: str, dtype: Any, shapes: tuple[tuple[int, ...], ...] = ((3, 4), (4,))) -> list[np.ndarray]:
    rng = np.random.default_rng(sum(map(ord, name)))
    if name in LOGICAL:
        return [rng.random(s) < 0.5 for s in shapes]
    domains = (UNARY[name],) if name in UNARY else BINARY[name]
    values = [draw(rng, d, s, dtype) for d, s in zip(domains, shapes)]
    # Ties too (equal, maximum's and logaddexp's), and halves (round's halves to even).
    if len(values) == 2:
        values[1][:2] = values[0][0, :2]
    elif name in ("floor", "ceil", "rint", "round", "around"):
        values[0].flat[:3] = [0.5, 1.5, -2.5]
    return values


NAMES = sorted({*UNARY, *BINARY, *LOGICAL})


def test_the_names_are_numpys() -> None:
    assert set(NAMES) | {"clip", "logical_not", "divmod"} == set(_elementwise.__all__)
    assert all(hasattr(np, name) for name in snp.__all__)


def assert_same(ours: Any, theirs: Any) -> None:
    """Equal as numpy's results are: dtype, shape and every value (NaN where numpy's is, -0 too)."""
    assert np.asarray(ours).dtype == np.asarray(theirs).dtype
    assert np.shape(ours) == np.shape(theirs)
    np.testing.assert_array_equal(ours, theirs)
    assert np.array_equal(np.signbit(ours), np.signbit(theirs))


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("name", NAMES)
def test_numpy_values_give_numpys_results(name: str, dtype: Any) -> None:
    args = operands(name, dtype)
    assert_same(getattr(snp, name)(*args), getattr(np, name)(*args))


@pytest.mark.parametrize("name", ["sin", "add", "arctan2", "logaddexp", "maximum", "square", "less"])
def test_python_numbers_are_weak(name: str) -> None:
    """A Python number keeps the array's dtype (NEP 50), as in numpy."""
    args = [np.linspace(0.1, 0.9, 4, dtype=np.float32), 0.5][: 1 if name in UNARY else 2]
    assert_same(getattr(snp, name)(*args), getattr(np, name)(*args))


def rtol(dtype: Any) -> float:
    return 2e-6 if dtype == np.float32 else 1e-14


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("name", NAMES)
def test_compiled_and_batched_results_are_numpys(name: str, dtype: Any) -> None:
    """Traced, the default definitions compute numpy's formula, within an ulp of its C loops."""
    args = operands(name, dtype)
    expected = getattr(np, name)(*args)
    f = getattr(snp, name)
    for ours in (shax.jit(f)(*args), shax.vmap(f)(*args) if len(args) == 1 else shax.vmap(f, (0, None))(*args)):
        assert ours.dtype == expected.dtype and ours.shape == expected.shape
        np.testing.assert_allclose(ours, expected, rtol=rtol(dtype), atol=rtol(dtype))


# The derivative of each differentiable function, in float64, at the drawn operands.
DERIVATIVES: dict[str, Callable[[np.ndarray], np.ndarray]] = {
    "arcsin": lambda x: 1 / np.sqrt(1 - x**2),
    "arccos": lambda x: -1 / np.sqrt(1 - x**2),
    "arctan": lambda x: 1 / (1 + x**2),
    "arcsinh": lambda x: 1 / np.sqrt(x**2 + 1),
    "arctanh": lambda x: 1 / (1 - x**2),
    "square": lambda x: 2 * x,
    "reciprocal": lambda x: -1 / x**2,
    "sign": np.zeros_like,
    "floor": np.zeros_like,
    "ceil": np.zeros_like,
    "rint": np.zeros_like,
    "round": np.zeros_like,
    "around": np.zeros_like,
}


@pytest.mark.parametrize("name", sorted(DERIVATIVES))
def test_unary_gradients(name: str) -> None:
    (x,) = operands(name, np.float64, ((5,),))
    x = x + 0.01  # off round's halves
    grad = shax.grad(lambda v: tc.reduce_sum(getattr(snp, name)(v), [0]))(x)
    np.testing.assert_allclose(grad, DERIVATIVES[name](x), rtol=1e-13)


def test_erf_and_its_gradient() -> None:
    x = np.linspace(-3.0, 3.0, 13)
    np.testing.assert_array_equal(tc.erf(x), [math.erf(v) for v in x])
    grad = shax.grad(lambda v: tc.reduce_sum(tc.erf(v), [0]))(x)
    np.testing.assert_allclose(grad, 2 / math.sqrt(math.pi) * np.exp(-(x**2)), rtol=1e-14)


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: np.dtype(d).name)
def test_erf_compiled_is_evaluate_bit_for_bit(dtype: Any) -> None:
    x = np.random.default_rng(0).normal(size=(50,)).astype(dtype) * 2
    for v in (x, x[0]):
        ours = shax.jit(tc.erf)(v)
        assert_same(ours, tc.erf(v))
        assert_same(ours, shax.evaluate(shax.stages.infer_types(shax.trace(tc.erf, shax.TensorType.of(v))), v)[0])
    assert tc.erf(np.float32(0.5)) == np.float32(math.erf(0.5))


def test_arctan2_gradient() -> None:
    """∂/∂y arctan2(y, x) = x / (x² + y²), ∂/∂x = −y / (x² + y²)."""
    y, x = np.array([1.0, -2.0, 0.5]), np.array([3.0, 1.0, -0.5])
    gy, gx = shax.grad(lambda a, b: tc.reduce_sum(snp.arctan2(a, b), [0]))(y, x)
    np.testing.assert_allclose(gy, x / (x**2 + y**2), rtol=1e-15)
    np.testing.assert_allclose(gx, -y / (x**2 + y**2), rtol=1e-15)


def test_logaddexp_gradients_are_jaxs() -> None:
    """JAX's: e^(x − out) and e^(y − out), ½ each at a tie; at (0, −∞) 1 and 0, at (∞, ∞)
    1 and 1 (`jax.grad(jnp.logaddexp, (0, 1))`, float64)."""
    x = np.array([1.0, 2.0, 0.0, -40.0])
    y = np.array([-0.5, 2.0, 40.0, 0.0])
    gradient = shax.grad(lambda a, b: tc.reduce_sum(snp.logaddexp(a, b), [0]))
    gx, gy = gradient(x, y)
    out = np.logaddexp(x, y)
    np.testing.assert_allclose(gx, np.exp(x - out), rtol=1e-15)
    np.testing.assert_allclose(gy, np.exp(y - out), rtol=1e-15)
    assert gx[1] == gy[1] == 0.5
    with np.errstate(invalid="ignore"):  # ∞ − ∞, in the branch not taken
        gx, gy = gradient(
            np.array([0.0, np.inf, -np.inf, np.inf, 3.0]), np.array([-np.inf, np.inf, 1.0, -np.inf, np.inf])
        )
    # The last two are the limits (JAX gives 1, 0 and e³, 1 there).
    np.testing.assert_array_equal(gx, [1.0, 1.0, 0.0, 1.0, 0.0])
    np.testing.assert_array_equal(gy, [0.0, 1.0, 1.0, 0.0, 1.0])


def test_logaddexp_second_derivatives_are_jaxs_at_a_tie() -> None:
    """`jax.hessian(lambda a: jnp.logaddexp(a[0], a[1]))([1., 1.])` = [[¼, −¼], [−¼, ¼]]:
    σ(x − y)(1 − σ(x − y)), which max's weights and |x − y| alone would make 0."""
    f, one = snp.logaddexp, np.float64(1.0)
    assert shax.grad(shax.grad(f, 0), 0)(one, one) == pytest.approx(0.25, rel=1e-15)
    assert shax.grad(shax.grad(f, 0), 1)(one, one) == pytest.approx(-0.25, rel=1e-15)
    assert shax.grad(shax.grad(f, 0), 0)(one, -one) == pytest.approx(np.exp(-2) / (1 + np.exp(-2)) ** 2, rel=1e-14)


# Its formula meets ∞ − ∞ in a branch that select then drops: numpy warns of the NaN.
@pytest.mark.filterwarnings("ignore:invalid value encountered:RuntimeWarning")
def test_logaddexp_of_infinities_is_numpys() -> None:
    x = np.array([np.inf, -np.inf, np.inf, 1.0])
    y = np.array([np.inf, -np.inf, -np.inf, -np.inf])
    for ours in (snp.logaddexp(x, y), shax.jit(snp.logaddexp)(x, y)):
        assert_same(ours, np.logaddexp(x, y))


def test_maximum_and_minimum_split_ties() -> None:
    gx, gy = shax.grad(lambda a, b: tc.reduce_sum(snp.maximum(a, b) + 3.0 * snp.minimum(a, b), [0]))(
        np.array([1.0, 2.0, 3.0]), np.array([1.0, 0.0, 5.0])
    )
    np.testing.assert_array_equal(gx, [2.0, 1.0, 3.0])
    np.testing.assert_array_equal(gy, [2.0, 3.0, 1.0])


def test_round_halves_to_even() -> None:
    x = np.array([0.5, 1.5, 2.5, -0.5, -1.5, 0.49999997], np.float32)
    for ours in (snp.round(x), shax.jit(snp.round)(x)):
        assert_same(ours, np.round(x))
    assert_same(snp.round(x, 2), np.round(x, 2))  # more decimals: tests/test_array_protocols.py


@pytest.mark.parametrize(
    "bounds", [(-0.5, 0.5), (None, 0.5), (-0.5, None), (0.5, -0.5), (np.array([-1.0, 0.0, 0.2]), 0.5)]
)
def test_clip(bounds: tuple[Any, Any]) -> None:
    x = np.array([[-2.0, 0.1, 3.0], [0.4, -0.3, 0.0]])
    assert_same(snp.clip(x, *bounds), np.clip(x, *bounds))
    assert_same(shax.jit(lambda v: snp.clip(v, *bounds))(x), np.clip(x, *bounds))
    grad = shax.grad(lambda v: tc.reduce_sum(snp.clip(v, *bounds), [0, 1]))(x)
    lo, hi = (-np.inf if bounds[0] is None else bounds[0]), (np.inf if bounds[1] is None else bounds[1])
    np.testing.assert_array_equal(grad, ((x > lo) & (x < hi)).astype(float))


def test_clip_needs_a_bound() -> None:
    with pytest.raises(shax.ShaxValueError, match="clip: a_min and a_max are both None"):
        snp.clip(np.ones(3), None, None)


@pytest.mark.parametrize(
    "shapes", [((2, 3), (2, 3), (2, 3)), ((3, 1), (1, 4), (4,)), ((), (2,), ()), ((2, 1), (), (1, 5))]
)
def test_where_broadcasts_its_three_operands(shapes: tuple[tuple[int, ...], ...]) -> None:
    rng = np.random.default_rng(0)
    cond = rng.random(shapes[0]) < 0.5
    x, y = (rng.normal(size=s) for s in shapes[1:])
    expected = np.where(cond, x, y)
    assert_same(snp.where(cond, x, y), expected)
    assert_same(shax.jit(snp.where)(cond, x, y), expected)
    gx, gy = shax.grad(lambda a, b: tc.reduce_sum(snp.where(cond, a, b), list(range(expected.ndim))), (0, 1))(x, y)
    # Each branch's gradient counts the output elements it supplies.
    taken = np.broadcast_to(cond, expected.shape).astype(float)
    np.testing.assert_array_equal(gx, _sum_to(taken, np.shape(x)))
    np.testing.assert_array_equal(gy, _sum_to(1.0 - taken, np.shape(y)))


def _sum_to(value: np.ndarray, shape: tuple[int, ...]) -> np.ndarray:
    """`value` summed over the axes numpy broadcast `shape` along."""
    value = value.sum(axis=tuple(range(value.ndim - len(shape))))
    return value.sum(axis=tuple(k for k, n in enumerate(shape) if n == 1), keepdims=True).reshape(shape)


def test_where_with_a_python_number_branch() -> None:
    x = np.array([[-1.0, 2.0], [3.0, -4.0]], np.float32)
    for ours in (snp.where(x > 0, x, 0.0), shax.jit(lambda v: snp.where(v > 0, v, 0.0))(x)):
        assert_same(ours, np.where(x > 0, x, np.float32(0.0)))
    grad = shax.grad(lambda v: tc.reduce_sum(snp.where(v > 0, 2.0 * v, 1.0), [0, 1]))(x)
    np.testing.assert_array_equal(grad, [[0.0, 2.0], [2.0, 0.0]])


def test_where_of_shapes_that_do_not_broadcast_is_an_error() -> None:
    with pytest.raises(shax.ShaxTypeError, match=r"where: shapes .* do not broadcast.*test_numpy_elementwise.py:"):
        snp.where(np.ones(3) > 0, np.ones(3), np.ones(4))


def test_logical_functions() -> None:
    a, b = np.array([True, True, False, False]), np.array([True, False, True, False])
    for name in ("logical_and", "logical_or"):
        assert_same(getattr(snp, name)(a, b), getattr(np, name)(a, b))
        assert_same(shax.jit(getattr(snp, name))(a, b), getattr(np, name)(a, b))
    assert_same(shax.jit(snp.logical_not)(a), np.logical_not(a))
    assert_same(shax.vmap(snp.logical_not)(a), np.logical_not(a))


def test_logical_functions_take_booleans_only() -> None:
    x = shax.f32[3]
    with pytest.raises(shax.ShaxTypeError, match="logical_and: f32 is not supported"):
        shax.trace(lambda v: snp.logical_and(v, v), x)
    with pytest.raises(shax.ShaxTypeError, match="logical_not: f32 is not supported"):
        shax.trace(snp.logical_not, x)


def test_a_comparison_gives_a_mask_for_where_under_vmap() -> None:
    xs = np.array([[1.0, -2.0], [-3.0, 4.0]])
    f = shax.vmap(lambda v: snp.where(snp.logical_and(v > -2.5, v < 2.0), snp.square(v), snp.sign(v)))
    assert_same(f(xs), np.where((xs > -2.5) & (xs < 2.0), np.square(xs), np.sign(xs)))


def test_defaults_need_no_primitive() -> None:
    """square, clip, maximum, sign, where, logaddexp trace to the primitives they are written with."""
    defn = shax.trace(lambda v: snp.where(v > 0, snp.logaddexp(snp.square(v), snp.sign(v)), v), shax.f64[3])
    names = {b.prim.name for b in defn.bindings}
    assert {"mul", "sign", "max", "log1p", "select"} <= names
    assert not {"square", "logaddexp", "where"} & names

"""shax.numpy's reductions are numpy's: the same dtype, shape and values for every
`axis` (None, an int, a tuple, negative) and `keepdims`, on numpy values, traced (jit,
the tracer's methods) and batched (vmap); their gradients are JAX's, at ties of max and
min and at zeros of prod (the expected values below are JAX's, computed with
jax 0.10.2, x64 enabled)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import typeguard

import shax
import shax.numpy as snp
import typeclasses as tc

REDUCTIONS = ["sum", "prod", "max", "min", "amax", "amin", "mean", "var", "std"]
AXES: list[Any] = [None, 0, 1, -1, -3, (), (0, 2), (-1, 0), (2, 1, 0)]
RNG = np.random.default_rng(0)
X64 = RNG.uniform(-2.0, 2.0, (2, 3, 4))
SAMPLES = {
    "f64": X64,
    "f32": X64.astype(np.float32),
    "i32": RNG.integers(-3, 4, (2, 3, 4)).astype(np.int32),  # ties for max, min, argmax
}


def line_of(marker: str) -> str:
    lines = Path(__file__).read_text().splitlines()
    (number,) = [k for k, line in enumerate(lines, 1) if line.rstrip().endswith(f"# {marker}")]
    return f"{Path(__file__).name}:{number}"


def numpy_reduction(name: str, x: np.ndarray, axis: Any, keepdims: bool) -> Any:
    """numpy's result; integer sums and products in i32, as JAX's (numpy widens to int64)."""
    widening = name in ("sum", "prod") and x.dtype == np.int32
    options: dict[str, Any] = {"dtype": np.int32} if widening else {}
    return getattr(np, name)(x, axis=axis, keepdims=keepdims, **options)


def assert_same(actual: Any, expected: Any) -> None:
    """The same dtype, shape and values (NaN where numpy has NaN)."""
    actual, expected = np.asarray(actual), np.asarray(expected)
    assert (actual.dtype, actual.shape) == (expected.dtype, expected.shape)
    np.testing.assert_array_equal(actual, expected)


def reduction_cases() -> list[Any]:
    return [
        pytest.param(name, dtype, axis, keepdims, id=f"{name}-{dtype}-{axis}-{keepdims}")
        for name in REDUCTIONS
        for dtype in SAMPLES
        for axis in AXES
        for keepdims in (False, True)
    ]


@pytest.mark.parametrize(("name", "dtype", "axis", "keepdims"), reduction_cases())
def test_a_reduction_of_numpy_values_is_numpys(name: str, dtype: str, axis: Any, keepdims: bool) -> None:
    x = SAMPLES[dtype]
    assert_same(getattr(snp, name)(x, axis=axis, keepdims=keepdims), numpy_reduction(name, x, axis, keepdims))


@pytest.mark.parametrize(("name", "dtype", "axis", "keepdims"), reduction_cases())
def test_a_traced_reduction_is_numpys(name: str, dtype: str, axis: Any, keepdims: bool) -> None:
    x = SAMPLES[dtype]
    expected = numpy_reduction(name, x, axis, keepdims)
    assert_same(shax.jit(lambda x: getattr(snp, name)(x, axis, keepdims=keepdims))(x), expected)
    method = "max" if name == "amax" else "min" if name == "amin" else name
    assert_same(shax.jit(lambda x: getattr(x, method)(axis=axis, keepdims=keepdims))(x), expected)


@pytest.mark.parametrize("name", REDUCTIONS)
@pytest.mark.parametrize("axis", [None, 0, -1, (0, 1)])
def test_a_batched_reduction_is_a_loop_of_numpys(name: str, axis: Any) -> None:
    x = SAMPLES["f64"]
    batched = shax.vmap(lambda row: getattr(snp, name)(row, axis=axis, keepdims=True), in_axes=1)(x)
    expected = np.stack([numpy_reduction(name, x[:, k], axis, True) for k in range(x.shape[1])])
    np.testing.assert_allclose(batched, expected, rtol=1e-12)


ARG_AXES: list[Any] = [None, 0, 1, 2, -1, -3]


@pytest.mark.parametrize("name", ["argmax", "argmin"])
@pytest.mark.parametrize("dtype", list(SAMPLES))
@pytest.mark.parametrize("axis", ARG_AXES)
@pytest.mark.parametrize("keepdims", [False, True])
def test_an_arg_reduction_is_numpys_first_index_as_i32(name: str, dtype: str, axis: Any, keepdims: bool) -> None:
    x = SAMPLES[dtype]
    expected = getattr(np, name)(x, axis=axis, keepdims=keepdims).astype(np.int32)
    assert_same(getattr(snp, name)(x, axis=axis, keepdims=keepdims), expected)
    assert_same(shax.jit(lambda x: getattr(snp, name)(x, axis, keepdims=keepdims))(x), expected)
    assert_same(shax.jit(lambda x: getattr(x, name)(axis=axis, keepdims=keepdims))(x), expected)


@pytest.mark.parametrize("name", ["argmax", "argmin"])
@pytest.mark.parametrize("axis", [None, 0, -1])
def test_a_batched_arg_reduction_is_a_loop_of_numpys(name: str, axis: Any) -> None:
    x = SAMPLES["i32"]
    batched = shax.vmap(lambda row: getattr(snp, name)(row, axis=axis), in_axes=2)(x)
    expected = np.stack([getattr(np, name)(x[:, :, k], axis=axis) for k in range(x.shape[2])]).astype(np.int32)
    assert_same(batched, expected)


def test_ties_and_nans_choose_numpys_first_index() -> None:
    x = np.array([[1.0, 3.0, 3.0, 0.0], [np.nan, 2.0, np.nan, 5.0]])
    for name in ("argmax", "argmin"):
        expected = getattr(np, name)(x, axis=1).astype(np.int32)
        assert_same(getattr(snp, name)(x, axis=1), expected)
        assert_same(shax.jit(lambda x, name=name: getattr(snp, name)(x, axis=1))(x), expected)


def test_reductions_of_python_numbers_and_scalars_are_numpys() -> None:
    assert_same(snp.sum(3.0), np.sum(3.0))
    assert_same(snp.max(np.float32(2.0)), np.max(np.float32(2.0)))
    assert_same(snp.argmax(np.float32(2.0)), np.int32(0))
    assert_same(snp.prod(np.zeros((2, 0))), np.prod(np.zeros((2, 0))))
    assert_same(snp.sum(np.zeros((2, 0)), axis=1, keepdims=True), np.zeros((2, 1)))


def test_max_and_min_propagate_nan_as_numpy() -> None:
    x = np.array([[1.0, np.nan], [2.0, -np.inf]])
    for name in ("max", "min"):
        expected = getattr(np, name)(x, axis=1)
        assert_same(shax.jit(lambda x, name=name: getattr(snp, name)(x, axis=1))(x), expected)


# Gradients, against JAX's values.


def grad_of(name: str, x: Any, axis: Any = None) -> np.ndarray:
    return np.asarray(shax.grad(lambda x: snp.sum(getattr(snp, name)(x, axis=axis)))(np.asarray(x)))


@pytest.mark.parametrize(
    ("name", "x", "expected"),
    [
        # ties split the cotangent evenly (JAX's _reduce_chooser_jvp_rule), at ±∞ too
        ("max", [2.0, 4.0, 3.0, 4.0], [0.0, 0.5, 0.0, 0.5]),
        ("max", [2.0, np.inf, 3.0, np.inf], [0.0, 0.5, 0.0, 0.5]),
        ("min", [-np.inf, 1.0, -np.inf], [0.5, 0.0, 0.5]),
        ("min", [1.0, 1.0, 1.0, 2.0], [1 / 3, 1 / 3, 1 / 3, 0.0]),
        # a NaN result equals no element: 0 / 0 everywhere, as JAX's
        ("max", [2.0, np.nan, 3.0, np.inf], [np.nan] * 4),
        # the product of the others: no zero, one zero (only it has a gradient), two zeros
        ("prod", [2.0, 1.0, 3.0, 4.0], [12.0, 24.0, 8.0, 6.0]),
        ("prod", [1.0, 0.0, 3.0], [0.0, 3.0, 0.0]),
        ("prod", [2.0, 0.0, 3.0, 0.0], [0.0, 0.0, 0.0, 0.0]),
        ("prod", [0.0], [1.0]),
    ],
)
@pytest.mark.filterwarnings("ignore:invalid value encountered:RuntimeWarning")  # the NaN case's 0 / 0
def test_gradients_at_ties_and_zeros_are_jaxs(name: str, x: list[float], expected: list[float]) -> None:
    np.testing.assert_allclose(grad_of(name, x), expected, rtol=1e-15)


def test_gradients_along_axes_are_jaxs() -> None:
    x = np.array([[1.0, 3.0, 3.0], [2.0, 0.0, 0.0]])
    np.testing.assert_allclose(grad_of("max", x, 1), [[0.0, 0.5, 0.5], [1.0, 0.0, 0.0]])
    np.testing.assert_allclose(grad_of("min", x, 0), [[1.0, 0.0, 0.0], [0.0, 1.0, 1.0]])
    np.testing.assert_allclose(grad_of("prod", x, 1), [[9.0, 3.0, 3.0], [0.0, 0.0, 0.0]])
    third, ninth = 1 / 3, 8 / 9
    np.testing.assert_allclose(grad_of("var", x, 1), [[-ninth, ninth / 2, ninth / 2], [ninth, -ninth / 2, -ninth / 2]])
    np.testing.assert_allclose(grad_of("mean", x), np.full((2, 3), third / 2))


def test_the_tangent_of_a_tied_max_is_the_average_of_the_tied_tangents() -> None:
    out, tangent = shax.jvp(snp.max, (np.array([1.0, 3.0, 3.0]),), (np.array([1.0, 2.0, 4.0]),))
    assert (out, tangent) == (3.0, 3.0)


def test_an_arg_reduction_chooses_without_a_gradient_of_its_own() -> None:
    # Each row's max where it comes first, else its min: the gradient is that element's 1.
    def f(x: Any) -> Any:
        first = tc.eq(snp.argmax(x, axis=1), np.int32(0))
        return snp.sum(tc.select(first, snp.max(x, axis=1), snp.min(x, axis=1)))

    x = np.array([[3.0, 1.0, 2.0], [1.0, 5.0, 0.0]])
    np.testing.assert_array_equal(shax.grad(f)(x), [[1.0, 0.0, 0.0], [0.0, 0.0, 1.0]])


# Without typeguard (as users run shax), the functions' own checks catch what the annotations forbid.
@typeguard.suppress_type_checks
def test_bad_axes_are_shax_errors_at_the_callers_line() -> None:
    x = SAMPLES["f64"]
    with pytest.raises(shax.ShaxValueError, match=f"sum: axis 3 is out of range.*{line_of('range')}"):
        snp.sum(x, axis=3)  # range
    with pytest.raises(shax.ShaxValueError, match=f"max: axis \\(0, -3\\) repeats an axis.*{line_of('twice')}"):
        shax.jit(lambda x: x.max(axis=(0, -3)))(x)  # twice
    with pytest.raises(shax.ShaxTypeError, match=f"mean: axis must be an int.*{line_of('list')}"):
        snp.mean(x, axis=[0, 1])  # list
    with pytest.raises(shax.ShaxTypeError, match=f"argmax: axis must be an int or None.*{line_of('tuple')}"):
        snp.argmax(x, axis=(0,))  # tuple
    with pytest.raises(shax.ShaxTypeError, match=f"var: keepdims must be a bool.*{line_of('keepdims')}"):
        snp.var(x, keepdims=1)  # keepdims
    with pytest.raises(shax.ShaxValueError, match=f"reduce_min: .*empty.*{line_of('empty')}"):
        snp.min(np.zeros((2, 0)), axis=1)  # empty
    with pytest.raises(shax.ShaxValueError, match=f"argmin: axis 0 is empty.*{line_of('empty_arg')}"):
        shax.jit(snp.argmin)(np.zeros((0,)))  # empty_arg


def test_numpys_own_functions_on_a_tracer_call_its_methods() -> None:
    # np.sum(x, axis=...) on what is no array calls x.sum(axis=..., dtype=None, out=None).
    x = SAMPLES["f64"]

    def f(x: Any) -> Any:
        return (
            np.sum(x, axis=1),
            np.var(x, axis=(0, 2), keepdims=True),
            np.amax(x),
            np.argmin(x, axis=-1),
            np.std(x, axis=0, ddof=1),
            np.mean(x, dtype=np.float32),
        )

    for actual, expected in zip(shax.jit(f)(x), f(x)):
        if np.asarray(expected).dtype != np.int64:  # argmin's index: shax's i32 (JAX's)
            assert np.asarray(actual).dtype == np.asarray(expected).dtype
        np.testing.assert_allclose(actual, expected, rtol=1e-15)


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda x: snp.sum(x, initial=1.0), "sum: initial=1.0 is not supported"),
        (lambda x: x.max(out=np.zeros(())), "max: out=array.* is not supported"),
    ],
)
@typeguard.suppress_type_checks  # their annotations say None, which typeguard would report
def test_numpys_options_other_than_their_defaults_are_refused(call: Callable[[Any], Any], message: str) -> None:
    with pytest.raises(shax.ShaxValueError, match=message):
        shax.jit(call)(SAMPLES["f64"])


# mean, var and std: numpy's ddof and dtype.

MOMENTS = ["var", "std"]


@pytest.mark.parametrize("name", MOMENTS)
@pytest.mark.parametrize("dtype", list(SAMPLES))
@pytest.mark.parametrize("axis", [None, 0, -1, (0, 2)])
@pytest.mark.parametrize("ddof", [0, 1])
def test_ddof_divides_by_n_minus_ddof_as_numpy(name: str, dtype: str, axis: Any, ddof: int) -> None:
    x = SAMPLES[dtype]
    expected = getattr(np, name)(x, axis=axis, ddof=ddof)
    assert_same(getattr(snp, name)(x, axis=axis, ddof=ddof), expected)
    assert_same(shax.jit(lambda x: getattr(snp, name)(x, axis, ddof=ddof))(x), expected)
    assert_same(
        shax.jit(lambda x: getattr(x, name)(axis=axis, ddof=ddof, keepdims=True))(x),
        np.asarray(getattr(np, name)(x, axis=axis, ddof=ddof, keepdims=True)),
    )
    assert_same(getattr(snp, name)(x, axis=axis, correction=ddof), expected)  # the array API's name


@pytest.mark.filterwarnings("ignore::RuntimeWarning")  # numpy's "Degrees of freedom <= 0", 0 / 0, x / 0
@pytest.mark.parametrize("name", MOMENTS)
def test_ddof_at_or_beyond_the_count_gives_numpys_nan_and_inf(name: str) -> None:
    x = np.array([[1.0, 2.0], [3.0, 3.0]])
    for ddof in (2, 3):
        expected = getattr(np, name)(x, axis=1, ddof=ddof)  # [inf, nan]: Σ d² / 0
        assert_same(getattr(snp, name)(x, axis=1, ddof=ddof), expected)
        assert_same(shax.jit(lambda x, ddof=ddof: getattr(snp, name)(x, axis=1, ddof=ddof))(x), expected)


@pytest.mark.parametrize("name", ["mean", *MOMENTS])
@pytest.mark.parametrize(("data", "dtype"), [("f32", np.float64), ("f32", shax.f64), ("i32", np.float32)])
@pytest.mark.parametrize("axis", [None, 1, (0, 2)])
def test_dtype_is_the_one_numpy_computes_in(name: str, data: str, dtype: Any, axis: Any) -> None:
    x = SAMPLES[data]
    numpy_dtype = np.float64 if dtype is shax.f64 else dtype
    expected = getattr(np, name)(x, axis=axis, dtype=numpy_dtype)
    actual = [getattr(snp, name)(x, axis=axis, dtype=dtype), shax.jit(lambda x: getattr(x, name)(axis, dtype))(x)]
    for result in actual:
        if name != "mean" and data == "i32":
            # numpy subtracts an f32 mean from i32 data in f64 (their promotion) before summing
            # the squares in f32; shax converts the data to f32 first: equal to f32 rounding.
            assert np.asarray(result).dtype == np.float32
            np.testing.assert_allclose(result, expected, rtol=1e-6)
        else:
            assert_same(result, expected)


def test_the_mean_of_integers_and_bools_is_numpys_float64() -> None:
    for x in (SAMPLES["i32"], SAMPLES["i32"] > 0, 3, True):
        for name in ("mean", "var", "std"):
            expected = getattr(np, name)(x)
            assert_same(getattr(snp, name)(x), expected)
            if isinstance(x, np.ndarray):
                assert_same(shax.jit(getattr(snp, name))(x), expected)


def test_a_batched_variance_with_ddof_is_a_loop_of_numpys() -> None:
    x = SAMPLES["f64"]
    batched = shax.vmap(lambda row: snp.std(row, axis=0, ddof=1), in_axes=1)(x)
    np.testing.assert_allclose(batched, np.stack([np.std(x[:, k], axis=0, ddof=1) for k in range(3)]), rtol=1e-14)


def test_gradients_of_ddof_and_dtype_are_jaxs() -> None:
    x = np.array([[1.0, 3.0, 3.0], [2.0, 0.0, 0.0]])
    third, two_thirds, half_root = 4 / 3, 2 / 3, 0.5**0.5
    var1 = shax.grad(lambda x: snp.sum(snp.var(x, axis=1, ddof=1)))(x)
    np.testing.assert_allclose(var1, [[-third, two_thirds, two_thirds], [third, -two_thirds, -two_thirds]])
    std1 = shax.grad(lambda x: snp.sum(snp.std(x, axis=0, ddof=1)))(x)
    np.testing.assert_allclose(std1, [[-half_root, half_root, half_root], [half_root, -half_root, -half_root]])
    a, b = 0.06622662, 0.19867985  # jax.grad(jnp.std)(x)
    np.testing.assert_allclose(shax.grad(snp.std)(x), [[-a, b, b], [a, -b, -b]], rtol=1e-7)
    # computed in f64, the gradient comes back to the f32 argument, as JAX's
    g = shax.grad(lambda x: snp.var(x, dtype=np.float64))(x.astype(np.float32))
    assert g.dtype == np.float32
    np.testing.assert_allclose(g, [[-1 / 6, 0.5, 0.5], [1 / 6, -0.5, -0.5]], rtol=1e-7)


@pytest.mark.parametrize(
    ("call", "error", "message"),
    [
        (lambda x: snp.var(x, ddof=1.5), shax.ShaxTypeError, "var: ddof must be an int, got 1.5"),
        (lambda x: snp.std(x, ddof=None), shax.ShaxTypeError, "std: ddof must be an int, got None"),
        (lambda x: snp.std(x, ddof=1, correction=1), shax.ShaxValueError, "std: ddof=1 and correction=1 given"),
        (lambda x: snp.mean(x, dtype=np.int32), shax.ShaxTypeError, "mean: dtype=.*int32.* is not a float dtype"),
        (lambda x: snp.var(x, dtype="nonsense"), shax.ShaxTypeError, "var: dtype='nonsense' is not a dtype"),
        (lambda x: snp.std(x, out=np.zeros(())), shax.ShaxValueError, "std: out=array.* is not supported"),
    ],
)
@typeguard.suppress_type_checks  # their annotations forbid what is tested
def test_bad_ddof_and_dtype_are_shax_errors(call: Callable[[Any], Any], error: type[Exception], message: str) -> None:
    for run in (call, shax.jit(call)):
        with pytest.raises(error, match=message):
            run(SAMPLES["f64"])

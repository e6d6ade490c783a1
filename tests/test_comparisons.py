"""Comparisons on traced values are elementwise, as numpy's: `x == y`, `x != y`, `x < y`
build boolean tensors (through every transform), and Python control flow on one is a
`ShaxError` naming the user's line, never a silent identity comparison."""

from __future__ import annotations

import operator
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import shax
import shax.numpy as snp
from shax import f32
from typeclasses import reduce_sum, select

COMPARISONS = [operator.eq, operator.ne, operator.lt, operator.le, operator.gt, operator.ge]
X = np.array([-1.0, 0.0, 1.0, 2.0], np.float32)
Y = np.array([0.0, 0.0, 2.0, 1.0], np.float32)


def line_of(marker: str) -> str:
    lines = Path(__file__).read_text().splitlines()
    (number,) = [k for k, line in enumerate(lines, 1) if line.rstrip().endswith(f"# {marker}")]
    return f"{Path(__file__).name}:{number}"


@pytest.mark.parametrize("compare", COMPARISONS, ids=lambda c: c.__name__)
def test_a_traced_comparison_is_numpys(compare: Callable[[Any, Any], Any]) -> None:
    def f(x: Any, y: Any) -> Any:
        return select(compare(x, y), x, y)

    expected = np.where(compare(X, Y), X, Y)
    np.testing.assert_array_equal(shax.jit(f)(X, Y), expected)
    np.testing.assert_array_equal(shax.vmap(f)(X, Y), expected)
    np.testing.assert_array_equal(shax.jit(compare)(X, Y), compare(X, Y))


@pytest.mark.parametrize("compare", COMPARISONS, ids=lambda c: c.__name__)
def test_comparing_with_numbers_and_arrays_on_either_side(compare: Callable[[Any, Any], Any]) -> None:
    # `ndarray < tracer` reaches the tracer's reflected comparison, as `ndarray * tracer` does.
    def f(x: Any) -> Any:
        return select(compare(x, 0.0), 1.0, 0.0) + select(compare(Y, x), 10.0, 0.0)

    expected = np.where(compare(X, 0.0), 1.0, 0.0) + np.where(compare(Y, X), 10.0, 0.0)
    np.testing.assert_array_equal(shax.jit(f)(X), expected.astype(np.float32))


def test_gradients_flow_through_the_chosen_branch_only() -> None:
    # d/dx Σ select(x > 0, x², -x) = 2x where x > 0, else -1
    grad = shax.grad(lambda x: reduce_sum(select(x > 0.0, x * x, -x), [0]))(X)
    np.testing.assert_array_equal(grad, np.where(X > 0.0, 2 * X, -1.0))


def test_a_comparison_with_what_is_no_tensor_is_pythons() -> None:
    # As numpy and JAX: `x == None` is False, `x != "a"` True.
    def f(x: Any) -> Any:
        assert (x == None) is False  # noqa: E711
        assert (x != "a") is True
        return x

    shax.trace(f, f32[3])


def branch_on(x: Any) -> Any:
    if x > 0.0:  # python-if-on-comparison
        return x
    return -x


def test_branching_on_a_traced_comparison_says_to_use_select() -> None:
    with pytest.raises(shax.ShaxError) as info:
        shax.grad(branch_on)(1.0)
    assert isinstance(info.value, TypeError)
    message = str(info.value)
    assert "bool[]" in message and "select(" in message and line_of("python-if-on-comparison") in message


def test_a_tracer_is_not_hashable() -> None:
    def f(x: Any) -> Any:
        return {x: 1}  # hash-a-tracer

    with pytest.raises(shax.ShaxError) as info:
        shax.trace(f, f32[3])
    assert isinstance(info.value, TypeError) and line_of("hash-a-tracer") in str(info.value)


def test_bitwise_operators_on_booleans_are_the_logical_functions() -> None:
    x = np.array([-1.0, 0.5, 2.0, 0.7])

    def f(x: Any) -> Any:
        return snp.where(((x > 0) & (x < 1)) | ~(x < 2), x, 0.0), (x > 0) ^ (x > 1), True & (x > 0)

    result = shax.jit(f)(x)
    np.testing.assert_array_equal(result[0], np.where(((x > 0) & (x < 1)) | ~(x < 2), x, 0.0))
    np.testing.assert_array_equal(result[1], (x > 0) ^ (x > 1))
    np.testing.assert_array_equal(result[2], x > 0)


@pytest.mark.parametrize(
    ("f", "message"),
    [
        (lambda x: x & 1, "booleans only"),
        (lambda x: ~x, "booleans only"),
    ],
)
def test_bitwise_operators_on_numbers_are_shax_errors(f: Any, message: str) -> None:
    with pytest.raises(shax.ShaxError, match=message):
        shax.jit(f)(np.ones(3))


def test_floor_division_and_remainder_are_numpys() -> None:
    x = np.array([1.0, -7.5, 7.5, 5.0, 2.9, -3.0, 0.3])
    y = np.array([0.1, 2.0, -2.0, -2.5, 0.7, np.inf, -0.2])
    np.testing.assert_array_equal(shax.jit(lambda x, y: x // y)(x, y), x // y)  # 1 // 0.1 is 9
    np.testing.assert_array_equal(shax.jit(lambda x, y: x % y)(x, y), x % y)
    np.testing.assert_array_equal(shax.jit(lambda x: 7.0 % x)(y), 7.0 % y)
    quotient, remainder = shax.jit(lambda x, y: divmod(x, y))(x, y)
    np.testing.assert_array_equal(quotient, np.floor_divide(x, y))
    np.testing.assert_array_equal(remainder, np.remainder(x, y))
    # d(x mod y) = dx − floor(x / y) dy away from the jumps (JAX's)
    grads = shax.grad(lambda x, y: snp.sum(x % y))(x[1:5], y[1:5])
    np.testing.assert_array_equal(grads[0], np.ones(4))
    np.testing.assert_array_equal(grads[1], -np.floor_divide(x[1:5], y[1:5]))
    n = np.arange(-3, 4, dtype=np.int32)  # integers floor too (issue 28: they were refused)
    np.testing.assert_array_equal(shax.jit(lambda n: n // 2)(n), n // 2)
    assert shax.jit(lambda n: n // 2)(n).dtype == np.int32

"""The finite-difference checker (tests/numeric.py): its estimates and their errors on
functions whose derivatives are known, a wrong derivative failing, and points where
finite differences cannot tell (NotSmooth), not failing."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from shax.testing.numeric import NotSmooth, check_directional_derivative, directional_derivative

X = np.array([-1.5, -0.25, 0.0, 0.7, 2.0])
U = np.array([0.3, -1.2, 0.8, 1.0, -0.4])

KNOWN = [
    pytest.param(np.sin, np.cos, id="sin"),
    pytest.param(np.exp, np.exp, id="exp"),
    pytest.param(lambda x: x**3 - 2 * x, lambda x: 3 * x**2 - 2, id="cubic"),
    pytest.param(lambda x: np.tanh(4 * x), lambda x: 4 / np.cosh(4 * x) ** 2, id="steep_tanh"),
    pytest.param(lambda x: np.sin(40 * x), lambda x: 40 * np.cos(40 * x), id="fast_oscillation"),
]


@pytest.mark.parametrize(("f", "derivative"), KNOWN)
def test_estimates_are_within_their_error(f: Any, derivative: Any) -> None:
    (estimate,) = directional_derivative(f, [X], [U])
    exact = derivative(X) * U
    assert np.all(np.abs(estimate.value - exact) <= estimate.error)
    assert np.all(estimate.error <= 1e-8 * np.max(np.abs(exact)))


@pytest.mark.parametrize(("f", "derivative"), KNOWN)
def test_a_slightly_wrong_derivative_fails(f: Any, derivative: Any) -> None:
    exact = derivative(X) * U
    check_directional_derivative(f, [X], [U], [exact])
    wrong = exact.copy()
    wrong[3] *= 1 + 1e-6
    with pytest.raises(AssertionError, match=r"at \[\[3\]\]"):
        check_directional_derivative(f, [X], [U], [wrong])


def test_round_off_limits_the_estimate_of_a_small_change_of_a_large_value() -> None:
    """1e8 + 1e-3 sin x changes by 1e-5 over a step of 0.01, while its values are
    rounded to 1.5e-8: the estimate is good to a few percent, and its error says so."""
    (estimate,) = directional_derivative(lambda x: 1e8 + 1e-3 * np.sin(x), [X], [U])
    exact = 1e-3 * np.cos(X) * U
    assert np.all(np.abs(estimate.value - exact) <= estimate.error)
    assert np.all(estimate.error == estimate.roundoff)
    check_directional_derivative(lambda x: 1e8 + 1e-3 * np.sin(x), [X], [U], [exact])


def test_two_entries_agreeing_by_accident_do_not_end_the_search() -> None:
    """Along u = −1.73 from x = 0.5, sin(sinh(x)²)'s central differences at the first two
    steps (0.029 and 0.021) agree to 2e-7 where the h² and h⁴ terms cancel, 1e-5 off the
    derivative; judged by those two alone, that estimate looked good to 3e-7."""
    u = np.array([-1.7264972])
    (estimate,) = directional_derivative(lambda x: np.sin(np.sinh(x) ** 2), [np.array([0.5])], [u], step=0.05)
    exact = 2 * np.sinh(0.5) * np.cosh(0.5) * np.cos(np.sinh(0.5) ** 2) * u
    assert abs(estimate.value[0] - exact[0]) <= estimate.error[0] <= 1e-9


def test_several_outputs_and_arguments() -> None:
    def f(x: Any, y: Any) -> tuple[Any, Any]:
        return x * y, np.sum(np.sin(x))

    x, y, u, v = np.array([[1.0, 2.0]]), np.array([3.0, -1.0]), np.array([[0.5, -1.0]]), np.array([2.0, 1.0])
    derivatives = [u * y + x * v, np.sum(np.cos(x) * u)]
    check_directional_derivative(f, [x, y], [u, v], derivatives)
    with pytest.raises(AssertionError, match="output 1"):
        check_directional_derivative(f, [x, y], [u, v], [derivatives[0], derivatives[1] + 1e-6])


def test_values_that_round_alike_leave_a_derivative_unresolved_not_wrong() -> None:
    """(eᵗ − e⁻ᵗ)/2 is exactly 0 for |t| < 1e-17, so the differences are too; the
    derivative, 1e-30 here, is below what the function's values resolve."""

    def sinh_by_exp(x: Any) -> Any:
        t = 1e-30 * x
        return (np.exp(t) - np.exp(-t)) / 2

    check_directional_derivative(sinh_by_exp, [np.array(1.0)], [np.array(1.0)], [np.array(1e-30)])


def test_a_jump_between_the_steps_is_not_smooth() -> None:
    """A jump 1e-9 from the point: every step straddles it, so the differences never
    settle; nothing is known about the derivative there (0)."""
    with pytest.raises(NotSmooth):
        check_directional_derivative(lambda x: np.sign(x - 1e-9), [np.array(0.0)], [np.array(1.0)], [np.array(0.0)])


def test_no_direction_gives_zero_exactly() -> None:
    (estimate,) = directional_derivative(np.sin, [X], [np.zeros_like(X)])
    assert not np.any(estimate.value) and not np.any(estimate.error)

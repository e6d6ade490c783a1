"""A custom_jvp rule must be linear in the tangents (JAX's contract): one returning a
nonzero constant tangent, a nonlinear function of a tangent or a product of two is a
ShaxError naming the rule and where it is defined, not zeros without a word; linear
rules (zeros, `cos(x) * t`, `t * 2`, `t1 + t2`, stop_gradient inside) keep working."""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import shax
import shax.numpy as snp

HERE = re.escape(Path(__file__).name)
X = np.float32(0.5)


def with_rule(rule: Callable[..., Any]) -> Any:
    f = shax.custom_jvp(lambda x: snp.sin(x))
    f.defjvp(rule)
    return f


def constant_one(p: Any, t: Any) -> Any:
    return snp.sin(p[0]), 1.0


def ones_like(p: Any, t: Any) -> Any:
    return snp.sin(p[0]), snp.ones_like(p[0])


def forgot_the_tangent(p: Any, t: Any) -> Any:
    return snp.sin(p[0]), snp.cos(p[0])


def squared(p: Any, t: Any) -> Any:
    return snp.sin(p[0]), t[0] * t[0]


def sine_of_tangent(p: Any, t: Any) -> Any:
    return snp.sin(p[0]), snp.sin(t[0])


DIFFERENTIATE: list[Callable[[Any], Any]] = [
    lambda f: shax.grad(f)(X),
    lambda f: shax.jvp(f, (X,), (np.float32(1.0),)),
    lambda f: shax.jit(shax.grad(f))(X),
]


@pytest.mark.parametrize("how", range(len(DIFFERENTIATE)))
@pytest.mark.parametrize(
    ("rule", "why"),
    [
        (constant_one, "output tangent 0 does not depend on the tangents and is not zero"),
        (ones_like, "output tangent 0 does not depend on the tangents and is not zero"),
        (forgot_the_tangent, "output tangent 0 does not depend on the tangents and is not zero"),
        (squared, "multiplies two tangents (mul)"),
        (sine_of_tangent, "applies sin to a tangent"),
    ],
)
def test_a_rule_not_linear_in_the_tangents(rule: Callable[..., Any], why: str, how: int) -> None:
    line = rule.__code__.co_firstlineno
    pattern = (
        re.escape(f"custom_jvp: the jvp rule {rule.__name__} (defined at ")
        + rf".*{HERE}:{line}\) must return output tangents linear in the tangents, but .*"
        + re.escape(why)
    )
    with pytest.raises(shax.ShaxTypeError, match=pattern):
        DIFFERENTIATE[how](with_rule(rule))


@pytest.mark.parametrize(
    ("rule", "derivative"),
    [
        (lambda p, t: (snp.sin(p[0]), snp.zeros_like(p[0])), 0.0),
        (lambda p, t: (snp.sin(p[0]), p[0] * 0.0), 0.0),
        (lambda p, t: (snp.sin(p[0]), snp.cos(p[0]) * t[0]), float(np.cos(X))),
        (lambda p, t: (snp.sin(p[0]), t[0] * 2.0), 2.0),
        (lambda p, t: (snp.sin(p[0]), shax.stop_gradient(snp.cos(p[0])) * t[0]), float(np.cos(X))),
        (lambda p, t: (snp.sin(p[0]), -(t[0] / p[0]) + t[0]), float(1.0 - 1.0 / X)),
    ],
)
def test_linear_rules_keep_working(rule: Callable[..., Any], derivative: float) -> None:
    f = with_rule(rule)
    np.testing.assert_allclose(shax.grad(f)(X), derivative, rtol=1e-6)
    np.testing.assert_allclose(shax.jvp(f, (X,), (np.float32(3.0),))[1], 3.0 * derivative, rtol=1e-6)


def test_a_rule_adding_two_tangents() -> None:
    f = shax.custom_jvp(lambda x, y: x + y)
    f.defjvp(lambda p, t: (p[0] + p[1], t[0] + t[1]))
    assert shax.grad(f, wrt=(0, 1))(X, np.float32(2.0)) == (1.0, 1.0)

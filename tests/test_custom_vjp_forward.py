"""Forward mode through a custom_vjp function transposes its bwd. A bwd holding a call
some of whose outputs no cotangent reaches is linear all the same: the call's transpose
runs the callee without those outputs, rather than feeding it a zero cotangent that its
transpose would multiply by primal values (0 · cos x, a constant the linearity check
rightly refuses next to a cotangent)."""

from __future__ import annotations

import numpy as np

import shax
import typeclasses as tc

swap = shax.subgraph(lambda v0, v1: (v1, v0))


def inner(x):
    return swap(tc.sin(tc.sin(x)), tc.sin(x))[0]  # sin x: the call's other output is dropped


def with_vjp():
    f = shax.custom_vjp(inner)
    f.defvjp(lambda *xs: (inner(*xs), xs), lambda xs, cts: shax.vjp(inner, *xs)[1](cts))
    return f


def test_jvp_through_a_custom_vjp_whose_bwd_calls_a_callee_partly() -> None:
    primal, tangent = shax.jvp(with_vjp(), (np.float64(0.3),), (np.float64(1.0),))
    np.testing.assert_allclose(primal, np.sin(0.3), rtol=1e-15)
    np.testing.assert_allclose(tangent, np.cos(0.3), rtol=1e-15)


def test_the_transposed_call_computes_without_the_unreached_output() -> None:
    program = str(shax.xpr(lambda x, ct: shax.vjp(inner, x)[1](ct), 0.3, 1.0))
    assert "fromList [] [0.0]" not in program, program


def custom(fn):
    f = shax.custom_vjp(fn)
    f.defvjp(lambda *xs: (fn(*xs), xs), lambda xs, cts: shax.vjp(fn, *xs)[1](cts))
    return f


def test_jvp_through_a_custom_vjp_whose_bwd_calls_another_ones_bwd() -> None:
    """g1's bwd calls g0's bwd as a plain call, linear in its cotangent operand, which is
    not its first: transposed for forward mode with that operand moved first (not a zero)."""
    g0 = custom(lambda v: tc.sin(v))
    g1 = custom(lambda v: g0(tc.sin(tc.sin(v))))
    x = np.float64(0.7)
    _, tangent = shax.jvp(g1, (x,), (np.float64(1.0),))
    expected = np.cos(np.sin(np.sin(x))) * np.cos(np.sin(x)) * np.cos(x)
    np.testing.assert_allclose(tangent, expected, rtol=1e-14)
    np.testing.assert_allclose(shax.grad(g1)(x), expected, rtol=1e-14)


def test_jvp_through_a_custom_vjp_calling_one_with_an_unread_output() -> None:
    """g0 returns (sin v, v); g1 reads its first: g0's bwd gets a zero cotangent for the
    other, which g1's bwd passes to the call of g0's bwd. Transposed for forward mode, that
    zero operand is linear (zero is), so the call is transposed in it too."""
    g0 = custom(lambda v: (tc.sin(v), v))
    g1 = custom(lambda v0, v1: g0(v1)[0])
    x = np.float64(0.3)
    _, tangent = shax.jvp(lambda v: g1(v, v), (x,), (np.float64(1.0),))
    np.testing.assert_allclose(tangent, np.cos(x), rtol=1e-14)

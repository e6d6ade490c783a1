"""User callbacks of the wrong arity (a loop's body, a cond's branches, a custom derivative's
rules) are a ShaxTypeError naming the operation, the callback, its signature, how many
arguments it is given and the user's line, on numpy values as traced; a TypeError raised
inside a callback of the right arity stays the user's own."""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import shax

HERE = re.escape(Path(__file__).name)
XS = np.arange(3.0, dtype=np.float32)
# A function of each arity (its body never runs when its arity is wrong).
OF_ARITY: list[Callable[..., Any]] = [
    lambda: 0.0,
    lambda a: a,
    lambda a, b: a,
    lambda a, b, c: a,
    lambda a, b, c, d: a,
]


def located(*fragments: str) -> str:
    """A pattern for a message holding the fragments in order, then this file's line."""
    return ".*".join(map(re.escape, fragments)) + rf".* \(at .*{HERE}:\d+\)"


def test_scan_body_of_one_argument_on_values() -> None:
    with pytest.raises(shax.ShaxTypeError, match=located("scan: f <lambda>(c)", "2 argument(s) (carry, x)")):
        shax.scan(lambda c: (c, c), 0.0, XS)


def test_scan_body_of_one_argument_traced() -> None:
    with pytest.raises(shax.ShaxTypeError, match=located("scan: f <lambda>(c)", "2 argument(s) (carry, x)")):
        shax.jit(lambda xs: shax.scan(lambda c: (c, c), 0.0, xs))(XS)


def test_fori_loop_body_of_one_argument() -> None:
    pattern = located("fori_loop: body_fun <lambda>(i)", "2 argument(s) (i, val)", "too many")
    with pytest.raises(shax.ShaxTypeError, match=pattern):
        shax.fori_loop(0, 3, lambda i: i, 0.0)
    with pytest.raises(shax.ShaxTypeError, match=pattern):  # traced bounds: a while loop inside
        shax.jit(lambda n: shax.fori_loop(0, n, lambda i: i, 0.0))(np.int32(3))


def test_while_loop_cond_and_body_of_two_arguments() -> None:
    cond_pattern = located("while_loop: cond_fun <lambda>(a, b)", "1 argument(s) (val)", "'b'")
    with pytest.raises(shax.ShaxTypeError, match=cond_pattern):
        shax.while_loop(lambda a, b: True, lambda c: c, 0.0)
    body_pattern = located("while_loop: body_fun <lambda>(a, b)", "1 argument(s) (val)", "'b'")
    with pytest.raises(shax.ShaxTypeError, match=body_pattern):
        shax.jit(lambda x: shax.while_loop(lambda c: c < 3.0, lambda a, b: a, x))(np.float32(0.0))


def test_cond_and_switch_branches() -> None:
    with pytest.raises(shax.ShaxTypeError, match=located("cond: true_fun <lambda>(a, b)", "1 argument(s)")):
        shax.cond(True, lambda a, b: a, lambda a: a, 1.0)
    with pytest.raises(shax.ShaxTypeError, match=located("cond: false_fun <lambda>()", "1 argument(s)")):
        shax.cond(True, lambda a: a, lambda: 0.0, 1.0)  # the branch not taken too, as JAX
    with pytest.raises(
        shax.ShaxTypeError, match=located("switch: branches[1] <lambda>(a, b, c)", "2 argument(s)", "'c'")
    ):
        shax.jit(lambda x: shax.switch(0, [lambda a, b: a, lambda a, b, c: a], x, x))(np.float32(1.0))


def test_a_custom_jvp_rule_of_one_argument() -> None:
    @shax.custom_jvp
    def double(x: Any) -> Any:
        return x * 2.0

    pattern = located("custom_jvp double: the jvp rule <lambda>(p)", "2 argument(s) (primals, tangents)")
    with pytest.raises(shax.ShaxTypeError, match=pattern):
        double.defjvp(lambda p: p)
    with pytest.raises(shax.ShaxTypeError, match=located("custom_jvp double: the jvp rule one(p", "2 argument(s)")):

        @double.defjvp
        def one(p: Any) -> Any:
            return p


def test_a_custom_jvp_rule_with_nondiff_arguments_takes_them_first() -> None:
    power = shax.custom_jvp(lambda n, x: x**n, nondiff_argnums=(0,))
    pattern = located("the jvp rule <lambda>(primals, tangents)", "3 argument(s) (args[0], primals, tangents)")
    with pytest.raises(shax.ShaxTypeError, match=pattern):
        power.defjvp(lambda primals, tangents: (primals, tangents))


def test_custom_vjp_fwd_and_bwd() -> None:
    @shax.custom_vjp
    def double(x: Any) -> Any:
        return x * 2.0

    pattern = located("custom_vjp double: bwd <lambda>(ct)", "2 argument(s) (residuals, cotangents)")
    with pytest.raises(shax.ShaxTypeError, match=pattern):
        double.defvjp(lambda x: (x * 2.0, None), lambda ct: (ct,))
    double.defvjp(lambda x, y: (x * 2.0, None), lambda r, ct: (ct * 2.0,))
    with pytest.raises(shax.ShaxTypeError, match=located("custom_vjp double: fwd <lambda>(x, y)", "1 argument(s)")):
        shax.grad(double)(1.0)


def test_a_type_error_inside_a_callback_of_the_right_arity_is_the_users() -> None:
    def body(i: Any, val: Any) -> Any:
        raise TypeError("the user's own")

    with pytest.raises(TypeError, match="the user's own") as info:
        shax.fori_loop(0, 3, body, 0.0)
    assert not isinstance(info.value, shax.ShaxError)


def test_a_callback_taking_any_arguments_is_accepted() -> None:
    carry, ys = shax.scan(lambda *args: (args[0] + args[1], args[1]), np.float32(0.0), XS)
    assert carry == 3.0 and list(ys) == [0.0, 1.0, 2.0]
    assert shax.fori_loop(0, 3, lambda i, val, scale=2.0: val * scale, 1.0) == 8.0


# -- wording: messages show the user's callbacks and values, not shax's internal carry


def test_fori_loop_errors_show_the_users_carry_not_the_index() -> None:
    for run in (
        lambda: shax.fori_loop(0, 3, lambda i, v: (v, v), 0.0),
        lambda: shax.jit(lambda n: shax.fori_loop(0, n, lambda i, v: (v, v), 0.0))(np.int32(3)),
    ):
        with pytest.raises(shax.ShaxTypeError) as info:
            run()
        message = str(info.value)
        assert message.startswith("fori_loop: body_fun returned a carry of structure (*, *), but init_val is *")
        assert re.search(rf"\(at .*{HERE}:\d+\)$", message)


def test_fori_loop_type_error_names_init_val() -> None:
    pattern = located("fori_loop: body_fun returned a carry whose leaf init_val is i32[], but it entered as f32[]")
    with pytest.raises(shax.ShaxTypeError, match=pattern):
        shax.fori_loop(0, 3, lambda i, v: i, 0.0)


def test_has_aux_error_says_what_the_function_returns() -> None:
    with pytest.raises(shax.ShaxTypeError, match=located("has_aux=True requires f", "but it returns a single value")):
        shax.grad(lambda x: x, has_aux=True)(1.0)


def test_cond_branches_whose_outputs_differ() -> None:
    pattern = located("cond: the branches' outputs differ: i32[] in f_false, f32[] in f_true")
    with pytest.raises(shax.ShaxTypeError, match=pattern):
        shax.jit(lambda p, x: shax.cond(p, lambda a: a, lambda a: a.astype(np.int32), x))(True, np.float32(1.0))


# -- fuzz: every callback-taking API, each callback given too few or too many parameters


def _scan(callbacks: dict[str, Any], x: Any) -> Any:
    return shax.scan(callbacks["f"], x, XS)[0]


def _fori(callbacks: dict[str, Any], x: Any) -> Any:
    return shax.fori_loop(0, 3, callbacks["body_fun"], x)


def _while(callbacks: dict[str, Any], x: Any) -> Any:
    return shax.while_loop(callbacks["cond_fun"], callbacks["body_fun"], x)


def _cond(callbacks: dict[str, Any], x: Any) -> Any:
    return shax.cond(True, callbacks["true_fun"], callbacks["false_fun"], x)


def _switch(callbacks: dict[str, Any], x: Any) -> Any:
    return shax.switch(1, [callbacks["branches[0]"], callbacks["branches[1]"]], x, x)


def _custom_jvp(callbacks: dict[str, Any], x: Any) -> Any:
    f = shax.custom_jvp(lambda x: x * 2.0)
    f.defjvp(callbacks["the jvp rule"])
    return shax.grad(f)(x)


def _custom_vjp(callbacks: dict[str, Any], x: Any) -> Any:
    f = shax.custom_vjp(lambda x: x * 2.0)
    f.defvjp(callbacks["fwd"], callbacks["bwd"])
    return shax.grad(f)(x)


Callbacks = dict[str, tuple[int, Callable[..., Any]]]
# (operation, run, {callback: its arity and a correct one}, the result at X with the correct ones)
APIS: list[tuple[str, Callable[..., Any], Callbacks, float]] = [
    ("scan", _scan, {"f": (2, lambda c, x: (c + x, x))}, 4.5),
    ("fori_loop", _fori, {"body_fun": (2, lambda i, v: v * 2.0)}, 12.0),
    ("while_loop", _while, {"cond_fun": (1, lambda v: v < 3.0), "body_fun": (1, lambda v: v + 1.0)}, 3.5),
    ("cond", _cond, {"true_fun": (1, lambda a: a), "false_fun": (1, lambda a: a * 2.0)}, 1.5),
    ("switch", _switch, {"branches[0]": (2, lambda a, b: a), "branches[1]": (2, lambda a, b: a * b)}, 2.25),
    ("custom_jvp", _custom_jvp, {"the jvp rule": (2, lambda p, t: (p[0] * 2.0, t[0] * 2.0))}, 2.0),
    ("custom_vjp", _custom_vjp, {"fwd": (1, lambda x: (x * 2.0, None)), "bwd": (2, lambda r, ct: (ct * 2.0,))}, 2.0),
]
X = 1.5


@given(
    api=st.sampled_from(APIS),
    which=st.integers(0, 1),
    change=st.sampled_from([-1, 1, 2]),
    traced=st.booleans(),
)
def test_fuzz_a_callback_of_the_wrong_arity(
    api: tuple[str, Callable[..., Any], Callbacks, float], which: int, change: int, traced: bool
) -> None:
    operation, run, callbacks, expected = api
    role = list(callbacks)[which % len(callbacks)]
    arity = callbacks[role][0] + change
    chosen = {name: fn for name, (_, fn) in callbacks.items()}
    chosen[role] = OF_ARITY[max(arity, 0)]
    pattern = located(operation, role, f"{callbacks[role][0]} argument(s)")
    with pytest.raises(shax.ShaxTypeError, match=pattern):
        if traced:
            shax.jit(lambda x: run(chosen, x))(np.float32(X))
        else:
            run(chosen, X)
    # and with the right arity the same call computes the right value
    fine = {name: fn for name, (_, fn) in callbacks.items()}
    result = shax.jit(lambda x: run(fine, x))(np.float32(X)) if traced else run(fine, X)
    assert float(result) == expected

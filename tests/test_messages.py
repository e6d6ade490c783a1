"""Errors on bad input name the operation and the user's line, never an internal error:
check_grads' options and results, passes and stages handed malformed definitions,
non-callables where a function is expected, deeply nested arguments, and the wording of
messages."""

from __future__ import annotations

import re
from typing import Any

import attrs
import numpy as np
import pytest
import typeguard

import shax
import typeclasses as tc
from shax import optimizers, passes, stages
from shax.core.ir import Binding, Definition, Var
from shax.primitives import Arg, Exp, Sin
from shax.testing import NotSmooth, check_grads

HERE = "test_messages.py:"


# check_grads: what f returns, and its options


@pytest.mark.parametrize("returned", [None, (), {}, [None]])
def test_check_grads_refuses_a_function_without_outputs(returned: Any) -> None:
    with pytest.raises(shax.ShaxValueError, match=rf"check_grads: f returned .*no outputs.*{HERE}"):
        check_grads(lambda x: returned, (1.0,))


@pytest.mark.parametrize(
    ("x", "eps"), [(1.0, 1e300), (np.float32(1.0), 1e39), (np.ones(3, np.float32), 1e300), (np.float64(1e308), 1e308)]
)
def test_check_grads_refuses_an_eps_beyond_the_arguments_range(x: Any, eps: float) -> None:
    shown = re.escape(f"{eps:g}")
    with pytest.raises(shax.ShaxValueError, match=rf"check_grads: eps={shown} is too large: argument 0 .*{HERE}"):
        check_grads(lambda x: x * x, (x,), eps=eps)


def test_check_grads_blames_an_eps_at_which_f_overflows_not_f() -> None:
    # x ± eps is a float64, but x² there is not: the step is too large, f is smooth.
    with pytest.raises(NotSmooth, match=rf"check_grads: eps=1e\+200 is too large .*smaller eps.*{HERE}") as caught:
        check_grads(lambda x: x * x, (np.float64(1.0),), eps=1e200)
    assert "not smooth" not in str(caught.value)


def test_check_grads_still_passes_with_a_large_eps_f_takes() -> None:
    check_grads(lambda x: x * x, (np.float64(1.0),), eps=1e10)


@pytest.mark.parametrize(
    ("option", "value"),
    [
        ("order", 0), ("order", 1.0), ("order", True), ("modes", "fwd"), ("modes", ()), ("modes", ("fwd", "bwd")),
        ("atol", float("nan")), ("atol", -1.0), ("rtol", float("inf")), ("rtol", "0.1"), ("eps", 0.0),
        ("eps", -1e-3), ("eps", float("inf")), ("eps", True),
    ],
)  # fmt: skip
@typeguard.suppress_type_checks
def test_check_grads_checks_its_options(option: str, value: Any) -> None:
    with pytest.raises(shax.ShaxValueError, match=rf"check_grads: {option} must be .*{HERE}"):
        check_grads(lambda x: x * x, (1.0,), **{option: value})


# Passes and stages handed a malformed definition: named, at the line calling them

T = shax.f32[3]


def _hand_built(*bindings: Binding, outputs: tuple[Var, ...] = (Var(1),)) -> Definition:
    """A definition of `bindings` with no line of their own (none wrote them through tracing)."""
    return Definition("h", (T,), bindings, outputs)


ARG = Binding(Var(0, T), Arg(0), ())
MALFORMED = {
    "untyped": (shax.trace(lambda x: tc.sin(x) * x, T), "untyped"),
    "annotated wrongly": (_hand_built(ARG, Binding(Var(1, shax.f32[2]), Sin(), (Var(0),))), r"f32\[2\]"),
    "too many operands": (_hand_built(ARG, Binding(Var(1, T), Sin(), (Var(0), Var(0)))), "takes 1 operand"),
    "bound twice": (_hand_built(ARG, ARG, Binding(Var(1, T), Sin(), (Var(0),))), "x0 is bound twice"),
    "no such argument": (_hand_built(Binding(Var(0, T), Arg(3), ()), outputs=(Var(0),)), "has 1 argument"),
    "output annotated wrongly": (_hand_built(ARG, outputs=(Var(0, shax.f64[3]),)), "returns x0 annotated f64"),
}


def _run_stage(name: str, defn: Definition) -> Any:
    if name == "batch":
        return stages.batch(defn, 0, 2)
    if name == "bind_arguments":
        return passes.bind_arguments(defn, {0: np.ones(3, np.float32)})
    if name in passes.PASSES or name == "cleanup":
        return getattr(passes, name)(defn)
    return getattr(stages, name)(defn)


@pytest.mark.parametrize("case", MALFORMED)
@pytest.mark.parametrize("name", [*passes.PASSES, "cleanup", "bind_arguments", "linearize", "batch", "check_types"])
def test_a_malformed_definition_is_an_error_of_the_callee_at_the_callers_line(name: str, case: str) -> None:
    defn, problem = MALFORMED[case]
    if name == "bind_arguments" and case == "untyped":
        np.testing.assert_array_equal(
            shax.evaluate(_run_stage(name, defn)), shax.evaluate(defn, np.ones(3, np.float32))
        )
        return
    with pytest.raises(shax.ShaxError, match=rf"^{name}: .*{problem}.*\(at .*{HERE}\d+\)$"):
        _run_stage(name, defn)


def test_transposing_a_nonlinear_hand_built_definition_names_the_callers_line() -> None:
    lin = stages.linearize(stages.infer_types(shax.trace(lambda x: tc.sin(x), T)))
    exp = Binding(Var(2, T), Exp(), (Var(0),))
    linear = Definition("dh", (T, T), (ARG, Binding(Var(1, T), Arg(1), ()), exp), (Var(2),))
    with pytest.raises(shax.ShaxTypeError, match=rf"^transpose: in `x2 :: f32\[3\] = exp x0`: .*\(at .*{HERE}\d+\)$"):
        stages.transpose(attrs.evolve(lin, linear=linear))


# A non-callable where a function is expected: a ShaxTypeError naming the function taking it

X = np.float32(0.5)
TAKES_A_FUNCTION = {
    "grad": lambda f: shax.grad(f), "value_and_grad": lambda f: shax.value_and_grad(f), "jit": lambda f: shax.jit(f),
    "vmap": lambda f: shax.vmap(f), "jvp": lambda f: shax.jvp(f, (X,), (X,)), "vjp": lambda f: shax.vjp(f, X),
    "linearize": lambda f: shax.linearize(f, X), "trace": lambda f: shax.trace(f, T), "xpr": lambda f: shax.xpr(f, X),
    "explain": lambda f: shax.explain(f, T), "subgraph": lambda f: shax.subgraph(f),
    "custom_jvp": lambda f: shax.custom_jvp(f), "custom_vjp": lambda f: shax.custom_vjp(f),
    "hessian": lambda f: shax.hessian(f), "jacfwd": lambda f: shax.jacfwd(f), "jacrev": lambda f: shax.jacrev(f),
    "scan": lambda f: shax.scan(f, X, np.ones(3, np.float32)), "fori_loop": lambda f: shax.fori_loop(0, 3, f, X),
    "while_loop": lambda f: shax.while_loop(f, lambda v: v, X), "cond": lambda f: shax.cond(True, f, lambda v: v, X),
    "switch": lambda f: shax.switch(0, [f], X), "check_grads": lambda f: check_grads(f, (X,)),
    "gradient_descent": lambda f: optimizers.gradient_descent(f, X, 0.1, 1),
    "momentum": lambda f: optimizers.momentum(f, X, 0.1, 1), "adam": lambda f: optimizers.adam(f, X, 0.1, 1),
}  # fmt: skip


@pytest.mark.parametrize("not_a_function", [3, "f", None])
@pytest.mark.parametrize("name", TAKES_A_FUNCTION)
@typeguard.suppress_type_checks
def test_a_non_callable_is_refused_by_name(name: str, not_a_function: Any) -> None:
    with pytest.raises(shax.ShaxTypeError, match=rf"^{name}: expected a function, got .*{HERE}"):
        TAKES_A_FUNCTION[name](not_a_function)


# Deeply nested arguments: flattened by loops, on both backends


def _nested(depth: int, leaf: Any, as_dict: bool) -> Any:
    for _ in range(depth):
        leaf = {"a": leaf} if as_dict else [leaf]
    return leaf


def _innermost(tree: Any) -> Any:
    while isinstance(tree, (list, dict)):
        tree = tree["a"] if isinstance(tree, dict) else tree[0]
    return tree


def _sum_of_squares(tree: Any) -> Any:
    x = _innermost(tree)
    return (x * x).sum()


DEEP = 10_000
XS = np.arange(3, dtype=np.float32)


@pytest.mark.parametrize("as_dict", [False, True])
def test_jit_grad_and_vmap_take_a_deeply_nested_argument(as_dict: bool) -> None:
    tree = _nested(DEEP, XS, as_dict)
    assert shax.jit(_sum_of_squares)(tree) == np.float32(5.0)
    np.testing.assert_array_equal(_innermost(shax.grad(_sum_of_squares)(tree)), 2 * XS)
    batched = shax.vmap(_sum_of_squares)(_nested(DEEP, np.stack([XS, XS + 1]), as_dict))
    np.testing.assert_array_equal(batched, [5.0, 14.0])


@pytest.mark.parametrize("as_dict", [False, True])
def test_the_xla_jit_takes_a_deeply_nested_argument(as_dict: bool) -> None:
    pytest.importorskip("jax")
    assert float(shax.jit(_sum_of_squares, backend="xla")(_nested(DEEP, XS, as_dict))) == 5.0


def test_vmap_refuses_in_axes_nested_beyond_its_limit() -> None:
    from shax.transforms.vmap import MAX_AXES_DEPTH

    shax.vmap(_sum_of_squares, in_axes=(_nested(MAX_AXES_DEPTH - 1, 0, False),))
    with pytest.raises(shax.ShaxValueError, match=rf"^vmap: in_axes nests .* {MAX_AXES_DEPTH} deep.*{HERE}"):
        shax.vmap(_sum_of_squares, in_axes=(_nested(DEEP, 0, False),))


# Wording: a class named in a message takes its article


@typeguard.suppress_type_checks
def test_a_message_names_a_class_with_its_article() -> None:
    with pytest.raises(shax.ShaxTypeError, match=rf"^cse: expected a Definition, got an int \(3\) .*{HERE}"):
        passes.cse(3)  # type: ignore[arg-type]
    with pytest.raises(shax.ShaxTypeError, match=r"got an ellipsis"):
        shax.evaluate(stages.infer_types(shax.trace(lambda x: x, T)), ...)


def test_a_message_saying_at_least_is_still_located() -> None:
    """`at` appends the user's line once; "(at least two axes)" in a message is no location."""
    error = shax.core.errors.at(shax.ShaxValueError("op: needs a matrix (at least two axes)"), "user.py:3")
    assert str(error) == "op: needs a matrix (at least two axes) (at user.py:3)"
    assert shax.core.errors.at(error, "other.py:4") is error
    spaced = shax.core.errors.at(shax.ShaxValueError("op: bad"), "/my dir/user.py:5")
    assert shax.core.errors.at(spaced, "other.py:4") is spaced

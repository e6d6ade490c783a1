"""`shax.testing`: `check_grads` passes on correct derivatives (generated programs, f32
and f64, orders 1 and 2) and names the mode, order, argument and element of a wrong one
(user primitives whose derivative rules are off); its arguments are checked. The public
strategies draw what they promise, and `import shax` needs no hypothesis."""

from __future__ import annotations

import re
import subprocess
import sys
from typing import Any

import numpy as np
import pytest
import typeguard
from hypothesis import given, reject, settings
from hypothesis import strategies as st

import shax
import typeclasses as tc
from shax import f32, f64, i32
from shax.core.types import TensorType
from shax.extend import elementwise_primitive
from shax.testing import NotSmooth, check_grads
from shax.testing.strategies import (
    ARG_BOUND,
    FAMILIES,
    Program,
    Value,
    arrays,
    compile_program,
    dtypes,
    programs,
    tensor_types,
)

# Derivative rules off by 1e-3 relative where x > 1 (so at one known element), of the
# wrong sign, and right but written with a primitive whose own derivative is wrong (so
# only the second derivative is).
sin_off_above_1 = elementwise_primitive(
    "sin_off_above_1",
    numpy=np.sin,
    derivative=lambda x, out: tc.select(tc.gt(x, 1.0), tc.cos(x) * (1.0 + 1e-3), tc.cos(x)),
)
sin_wrong_sign = elementwise_primitive("sin_wrong_sign", numpy=np.sin, derivative=lambda x, out: -tc.cos(x))
cos_wrong_derivative = elementwise_primitive("cos_wrong_derivative", numpy=np.cos, derivative=lambda x, out: tc.sin(x))
sin_wrong_second = elementwise_primitive(
    "sin_wrong_second", numpy=np.sin, derivative=lambda x, out: cos_wrong_derivative(x)
)

X = np.array([0.5, -2.0, 1.5, 0.7])
Y = np.array([0.5, -0.3, 1.2, 0.1])  # only Y[2] > 1


def scaled(x: Any, y: Any) -> Any:
    return x * sin_off_above_1(y)


# Correct derivatives pass ------------------------------------------------------------------
# (A share of the profile's examples: each check differentiates the program ~2^order times
# and runs it ~50 times per finite-difference estimate; ci: 10 and 5 programs, 3-6 s a test.)


@pytest.mark.parametrize("dtype", [f32, f64], ids=str)
@settings(max_examples=max(1, settings.default.max_examples // 4))
@given(data=st.data())
def test_check_grads_passes_on_generated_programs_at_order_1(dtype: shax.DType, data: st.DataObject) -> None:
    program = data.draw(programs(dtype, smooth=True), label="program")
    try:
        check_grads(program.fn, program.args, order=1)
    except NotSmooth:
        reject()


@pytest.mark.parametrize("dtype", [f32, f64], ids=str)
@settings(max_examples=max(1, settings.default.max_examples // 8))
@given(data=st.data())
def test_check_grads_passes_on_generated_programs_at_order_2(dtype: shax.DType, data: st.DataObject) -> None:
    program = data.draw(programs(dtype, smooth=True, max_steps=6), label="program")
    try:
        check_grads(program.fn, program.args, order=2)
    except NotSmooth:
        reject()


def test_check_grads_takes_pytrees_python_numbers_and_one_mode() -> None:
    def f(params: dict[str, Any], scale: Any) -> Any:
        return tc.reduce_sum(tc.tanh(params["w"] * params["b"]) * scale, [0])

    check_grads(f, ({"w": X, "b": Y}, 2.0), order=3, modes=["rev"])
    check_grads(tc.sin, (np.float32(0.3),), modes=("fwd",), atol=1e-3, rtol=1e-3, eps=1e-3)


# Wrong derivatives are named ----------------------------------------------------------------


@pytest.mark.parametrize("mode", ["fwd", "rev"])
def test_a_derivative_off_by_1e_3_is_caught_at_its_element(mode: str) -> None:
    with pytest.raises(AssertionError) as failure:
        check_grads(scaled, (X, Y), modes=(mode,))
    message = str(failure.value)
    assert f"mode {mode!r}" in message and "order 1" in message and "argument 1" in message, message
    assert re.search(r"(output 0|cotangent) at \[2\] is .*, but finite differences give .*tolerance", message), message


def test_a_derivative_off_by_1e_3_is_named_in_a_pytree() -> None:
    with pytest.raises(AssertionError, match=r"argument 0\['b'\]: the cotangent at \[2\]"):
        check_grads(lambda p: p["w"] * sin_off_above_1(p["b"]), ({"w": X, "b": Y},), modes=("rev",))


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("mode", ["fwd", "rev"])
def test_a_derivative_of_the_wrong_sign_is_caught(dtype: Any, mode: str) -> None:
    with pytest.raises(AssertionError, match=f"mode {mode!r}.*order 1, argument 0"):
        check_grads(lambda x, y: sin_wrong_sign(x) * y, (X.astype(dtype), Y.astype(dtype)), modes=(mode,))


def test_a_wrong_second_derivative_passes_order_1_and_fails_order_2() -> None:
    check_grads(sin_wrong_second, (X,), order=1)
    with pytest.raises(AssertionError, match="of the jvp of sin_wrong_second: mode 'fwd' .*order 2"):
        check_grads(sin_wrong_second, (X,), order=2)
    with pytest.raises(AssertionError, match="of the vjp of sin_wrong_second: .*order 2"):
        check_grads(sin_wrong_second, (X,), order=2, modes=("rev",))


def test_at_a_kink_finite_differences_cannot_tell() -> None:
    with pytest.raises(NotSmooth, match="check_grads: .* did not settle .*test_testing.py"):
        check_grads(lambda x: tc.max(x, 0.0), (np.array([1e-7, 1.0]),))


# Bad arguments ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"modes": "fwd"}, "modes must be a non-empty tuple of 'fwd' and 'rev'"),
        ({"modes": ("fwd", "sideways")}, "modes must be"),
        ({"modes": ()}, "modes must be"),
        ({"order": 0}, r"order must be an int ≥ 1"),
        ({"order": -1}, "order must be"),
        ({"order": 1.5}, "order must be"),
        ({"order": True}, "order must be"),
        ({"atol": -1.0}, "atol must be None or a finite number ≥ 0"),
        ({"rtol": float("nan")}, "rtol must be"),
        ({"eps": 0.0}, "eps must be None or a finite number > 0"),
    ],
)
@typeguard.suppress_type_checks  # shax's own checks, as users meet them
def test_bad_options_are_shax_errors(kwargs: dict[str, Any], message: str) -> None:
    with pytest.raises(shax.ShaxValueError, match=f"check_grads: {message}.*test_testing.py"):
        check_grads(tc.sin, (X,), **kwargs)


@typeguard.suppress_type_checks
@pytest.mark.filterwarnings("ignore:invalid value encountered in log:RuntimeWarning")  # log(-1), the user's f
def test_bad_functions_and_arguments_are_shax_errors() -> None:
    with pytest.raises(shax.ShaxTypeError, match="check_grads: expected a function"):
        check_grads("sin", (X,))  # type: ignore[arg-type]
    with pytest.raises(shax.ShaxValueError, match="args must be a tuple"):
        check_grads(tc.sin, X)
    with pytest.raises(shax.ShaxTypeError, match="argument 1 is i32.*float arrays.*test_testing.py"):
        check_grads(lambda x, n: x, (X, np.arange(3, dtype=np.int32)))
    with pytest.raises(shax.ShaxValueError, match="argument 0 has elements that are not finite"):
        check_grads(tc.sin, (np.array([1.0, np.nan]),))
    with pytest.raises(shax.ShaxTypeError, match="output 0 of f is bool"):
        check_grads(lambda x: tc.gt(x, 0.0), (X,))
    with pytest.raises(shax.ShaxValueError, match="output 0 of log is not finite"):
        check_grads(tc.log, (np.array([-1.0]),))


# The strategies ---------------------------------------------------------------------------


@given(dtypes(), st.data())
def test_arrays_have_their_type_and_stay_within_the_bound(dtype: shax.DType, data: st.DataObject) -> None:
    t = data.draw(tensor_types(dtype, min_rank=1, max_rank=2, max_side=4), label="type")
    assert t.dtype == dtype and 1 <= t.rank <= 2 and all(1 <= n <= 4 for n in t.shape)
    bound = data.draw(st.sampled_from([0.1, 1.0, 3.5]), label="bound")
    x = data.draw(arrays(t, bound=bound), label="x")
    assert TensorType.of(x) == t
    assert np.isfinite(x).all() and (np.abs(x) <= bound).all()


@given(tensor_types(i32).flatmap(lambda t: st.tuples(st.just(t), arrays(t, bound=5))))
def test_arrays_of_integers(drawn: tuple[TensorType, np.ndarray]) -> None:
    t, x = drawn
    assert TensorType.of(x) == t and (np.abs(x) <= 5).all()


@settings(max_examples=10)
@given(programs(f32, max_args=1, max_outputs=1, max_steps=3, calls=False))
def test_programs_take_their_types_and_return_one_value(program: Program) -> None:
    assert len(program.arg_types) == 1 and all(t.dtype == f32 for t in program.arg_types)
    assert isinstance(program.fn(*program.args), np.ndarray | np.generic)
    assert "v0" in repr(program)


# The steps of issue 28: where with a constant mask, .at updates, integer % and //, float remainders.
ISSUE_28_STEPS = [
    ("update", "where_mask"),
    ("update", "at"),
    ("nonsmooth", "integer"),
    ("nonsmooth", "float_remainder"),
]


@pytest.mark.parametrize("dtype", [f32, f64], ids=["f32", "f64"])
@pytest.mark.parametrize("family, name", ISSUE_28_STEPS, ids=[name for _, name in ISSUE_28_STEPS])
@given(data=st.data())
def test_masks_updates_and_remainders_are_drawn_and_run_the_same_on_numpy_and_traced(
    family: str, name: str, dtype: shax.DType, data: st.DataObject
) -> None:
    """Each is a step `programs()` draws (its family's table), and a program of it gives
    numpy's values, dtypes and shapes traced too."""
    values = [Value((2, 3), ARG_BOUND), Value((3,), ARG_BOUND)]
    made = FAMILIES[family][name](data.draw, values, dtype)
    if made is None:
        reject()
    step, value = made
    fn = compile_program(2, [step], [2])
    args = [data.draw(arrays(TensorType(dtype, v.shape)), label=f"v{k}") for k, v in enumerate(values[:2])]
    expected = np.asarray(fn(*args))
    (got,) = shax.evaluate(shax.trace(fn, *(TensorType.of(a) for a in args)), *args)
    assert (got.shape, got.dtype) == (expected.shape, expected.dtype) == (value.shape, np.dtype(dtype.numpy))
    np.testing.assert_array_equal(got, expected)
    np.testing.assert_array_equal(shax.jit(fn)(*args), expected)


@typeguard.suppress_type_checks
def test_bad_strategy_arguments_are_shax_errors() -> None:
    with pytest.raises(shax.ShaxValueError, match="programs: dtype must be f32 or f64.*test_testing.py"):
        programs(i32)
    with pytest.raises(shax.ShaxValueError, match="programs: max_steps must be an int from 1 to 64"):
        programs(max_steps=0)
    with pytest.raises(shax.ShaxValueError, match=r"tensor_types: max_rank must be at least min_rank \(3\)"):
        tensor_types(min_rank=3, max_rank=2)
    with pytest.raises(shax.ShaxValueError, match="arrays: bound must be a finite number > 0"):
        arrays(f32[2], bound=0.0)
    with pytest.raises(shax.ShaxError, match="arrays: TensorType.parse"):
        arrays("f33[2]")


def test_import_shax_needs_no_hypothesis() -> None:
    code = "import sys; sys.modules['hypothesis'] = None; import shax; print(shax.testing.check_grads.__name__)"
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert result.stdout.strip() == "check_grads"


@shax.custom_jvp
def cube(x: Any) -> Any:
    return x * x * x


@cube.defjvp
def cube_jvp(primals: Any, tangents: Any) -> Any:  # deliberately wrong: 2x² where 3x² belongs
    (x,), (dx,) = primals, tangents
    return cube(x), 2.0 * x * x * dx


@pytest.mark.parametrize("mode", ["fwd", "rev"])
def test_a_wrong_custom_jvp_rule_is_caught(mode: str) -> None:
    with pytest.raises(AssertionError, match=f"mode {mode!r}.*order 1, argument 0"):
        check_grads(cube, (X,), modes=(mode,))

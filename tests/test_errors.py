"""Bad input raises a `shax.ShaxError` that is also a TypeError or ValueError, whose
message names the operation, the types involved and the file:line of the user's code
that wrote it: on tracers and on numpy values alike (shax's numpy instance checks by the
same type rules). Hand-built bad definitions never surface as internal errors.

The user's line of each case is marked with a `# <name>` comment at its end.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import typeguard

import shax
import typeclasses as tc
from shax import bool_, f32, f64, i32
from shax import primitives as P
from shax.core.ir import Binding, Definition, Var
from shax.core.types import TensorType
from shax.extend import elementwise_primitive
from shax.stages import check_types, infer_types
from typeclasses import (
    add,
    broadcast,
    dot_general,
    eq,
    max,
    pad,
    reduce_sum,
    reshape,
    select,
    sin,
    slice,
    transpose,
)

SOURCE = Path(__file__).read_text().splitlines()


def where(marker: str) -> str:
    """`test_errors.py:<line>` of the line ending in `# <marker>`."""
    lines = [k for k, line in enumerate(SOURCE, 1) if line.rstrip().endswith(f"# {marker}")]
    assert len(lines) == 1, f"marker {marker!r} must mark exactly one line"
    return f"{Path(__file__).name}:{lines[0]}"


def check(error: BaseException, kind: type | tuple[type, ...], fragments: tuple[str, ...], marker: str | None) -> None:
    assert isinstance(error, shax.ShaxError), f"{type(error).__name__}: {error}"
    assert isinstance(error, kind), f"expected a {kind.__name__}, got {type(error).__mro__}"
    message = str(error)
    for fragment in fragments:
        assert fragment in message, f"{fragment!r} not in {message!r}"
    if marker is not None:
        assert where(marker) in message, f"{where(marker)} not in {message!r}"


# Operations with bad operands or static parameters, each written on a marked line.


def bad_dot(x, y):
    return dot_general(x, y, ((1,), (0,), (), ()))  # bad-dot


def bad_matmul(x, y):
    return x @ y  # bad-matmul


def bad_dot_axes(x, y):
    return dot_general(x, y, ((2,), (0,), (), ()))  # bad-dot-axes


def bad_dot_batch(x, y):
    return dot_general(x, y, ((2,), (1,), (0,), (0,)))  # bad-dot-batch


def bad_broadcast(x):
    return broadcast(x, [0], [2, 4])  # bad-broadcast


def bad_broadcast_dims(x):
    return broadcast(x, [1, 0], [3, 2])  # bad-broadcast-dims


def bad_reshape(x):
    return reshape(x, [4, 2])  # bad-reshape


def bad_add(x, y):
    return x + y  # bad-add


def bad_mul(x, y):
    return sin(x) * y  # bad-mul


def bad_max(x, y):
    return max(x, y)  # bad-max


def bad_dtypes(x, y):
    # the typeclass functions are strict (operators promote, as numpy's: tests/test_promotion.py)
    return tc.sub(x, y)  # bad-dtypes


def bad_weak_float(x):
    return tc.mul(x, 1.5)  # bad-weak-float


def bad_select_shapes(p, a, b):
    return select(eq(p, p), a, b)  # bad-select-shapes


def bad_select_pred(p, a, b):
    return select(p, a, b)  # bad-select-pred


def bad_select_branches(p, a, b):
    return select(eq(p, p), a, b)  # bad-select-branches


def bad_perm(x):
    return transpose(x, [0, 0])  # bad-perm


def bad_perm_length(x):
    return transpose(x, [1, 0, 2])  # bad-perm-length


def bad_slice(x):
    return slice(x, [1], [5])  # bad-slice


def bad_slice_order(x):
    return slice(x, [2], [1])  # bad-slice-order


def bad_slice_rank(x):
    return slice(x, [0], [1])  # bad-slice-rank


def bad_pad(x):
    return pad(x, [(-1, 0)], 0.0)  # bad-pad


def bad_pad_rank(x):
    return pad(x, [(1, 0)], 0.0)  # bad-pad-rank


def bad_pad_pairs(x):
    return pad(x, [1, 2], 0.0)  # bad-pad-pairs


def bad_reduce_axes(x):
    return reduce_sum(x, [2])  # bad-reduce-axes


def bad_static_parameter(x):
    return reshape(x, ["a", 2])  # bad-static-parameter


T, V = TypeError, ValueError
OPERATIONS: list[tuple[Callable[..., Any], tuple[shax.TensorType, ...], type[Exception], tuple[str, ...]]] = [
    (bad_dot, (f32[2, 3], f32[4, 5]), T, ("dot_general", "f32[2, 3]", "f32[4, 5]")),
    (bad_matmul, (f32[2, 3], f32[2, 3]), T, ("dot_general", "f32[2, 3]")),
    (bad_dot_axes, (f32[2, 3], f32[3, 4]), V, ("dot_general", "f32[2, 3]", "f32[3, 4]")),
    (bad_dot_batch, (f32[2, 3, 4], f32[5, 4, 3]), T, ("dot_general", "f32[2, 3, 4]", "f32[5, 4, 3]")),
    (bad_broadcast, (f32[3],), T, ("broadcast", "f32[3]")),
    (bad_broadcast_dims, (f32[2, 3],), T, ("broadcast", "f32[2, 3]")),
    (bad_reshape, (f32[2, 3],), T, ("reshape", "f32[2, 3]", "[4, 2]")),
    (bad_add, (f32[2, 3], f32[4]), T, ("add", "f32[2, 3]", "f32[4]")),
    (bad_mul, (f32[2], f32[3]), T, ("mul", "f32[2]", "f32[3]")),
    (bad_max, (f32[2], f32[3]), T, ("max", "f32[2]", "f32[3]")),
    (bad_dtypes, (f32[2], f64[2]), T, ("sub", "f32[2]", "f64[2]")),
    (bad_weak_float, (i32[2],), T, ("mul", "1.5", "i32")),
    (bad_select_shapes, (f32[2], f32[3], f32[3]), T, ("select", "bool[2]", "f32[3]")),
    (bad_select_pred, (f32[2], f32[2], f32[2]), T, ("select", "f32[2]", "bool")),
    (bad_select_branches, (f32[2], f32[2], f64[2]), T, ("select", "f32[2]", "f64[2]")),
    (bad_perm, (f32[2, 3],), V, ("transpose", "f32[2, 3]", "[0, 0]")),
    (bad_perm_length, (f32[2, 3],), V, ("transpose", "f32[2, 3]")),
    (bad_slice, (f32[3],), V, ("slice", "f32[3]")),
    (bad_slice_order, (f32[3],), V, ("slice", "f32[3]")),
    (bad_slice_rank, (f32[3, 2],), T, ("slice", "f32[3, 2]")),
    (bad_pad, (f32[3],), V, ("pad", "f32[3]")),
    (bad_pad_rank, (f32[3, 2],), T, ("pad", "f32[3, 2]")),
    (bad_pad_pairs, (f32[2],), V, ("pad", "[1, 2]")),
    (bad_reduce_axes, (f32[2, 3],), V, ("reduce_sum", "f32[2, 3]")),
    (bad_static_parameter, (f32[2, 3],), V, ("reshape", "'a'")),
]
BREAK_ANNOTATIONS = {bad_pad_pairs, bad_static_parameter}


# On numpy arrays Python's operators (`x + y`, `x @ y`) are numpy's own, not typeclass
# functions, and numpy's promotions hold (the numpy instance checks HNP functions by the
# type rules, not Floating ones: f32 - f64 is f64, i32 * 1.5 is f64).
TRACER_ONLY = {bad_add, bad_mul, bad_matmul, bad_dtypes, bad_weak_float}


def zeros(t: TensorType) -> np.ndarray:
    return np.zeros(t.shape, t.dtype.numpy)


def run(mode: str, function: Callable[..., Any], types: tuple[TensorType, ...]) -> Any:
    """`function` traced at `types`, or run on numpy values of those types."""
    if mode == "tracer":
        return shax.trace(function, *types)
    return function(*map(zeros, types))


MODES = ["tracer", "numpy"]


@pytest.mark.parametrize(
    ("mode", "function", "types", "kind", "fragments"),
    [
        pytest.param(mode, *case, id=f"{case[0].__name__}-{mode}")
        for case in OPERATIONS
        for mode in MODES
        if mode == "tracer" or case[0] not in TRACER_ONLY
    ],
)
def test_bad_operation(
    mode: str,
    function: Callable[..., Any],
    types: tuple[shax.TensorType, ...],
    kind: type[Exception],
    fragments: tuple[str, ...],
) -> None:
    # These break the typeclass functions' annotations, which typeguard (on in this test
    # suite only) would report before shax's own checks.
    unguarded = typeguard.suppress_type_checks() if function in BREAK_ANNOTATIONS else contextlib.nullcontext()
    with unguarded, pytest.raises(shax.ShaxError) as info:
        run(mode, function, types)
    check(info.value, kind, fragments, function.__name__.replace("_", "-"))


# Values no instance takes, calls a signature does not take, bad static parameters, values
# a dtype cannot hold: each on a tracer and on numpy values of the type listed.


def no_instance_none(x):
    return sin(None)  # no-instance-none


def no_instance_str(x):
    return add("a", x)  # no-instance-str


def no_instance_list(x):
    return reshape([1, 2], [2])  # no-instance-list


def missing_argument(x):
    return reshape(x)  # missing-argument


def extra_argument(x):
    return sin(x, x)  # extra-argument


def unknown_keyword(x):
    return broadcast(x, dims=[0], size=[3])  # unknown-keyword


def perm_of_letters(x):
    return transpose(x, "ab")  # perm-of-letters


def shape_of_an_int(x):
    return broadcast(x, dims=[0], shape=-1)  # shape-of-an-int


def shape_of_bytes(x):
    return reshape(x, b"\x03")  # shape-of-bytes


def reshape_to_minus_one(x):
    return reshape(x, [-1])  # reshape-to-minus-one


def negative_broadcast_size(x):
    return broadcast(x, [0], [3, -2])  # negative-broadcast-size


def dims_of_an_int(x):
    return dot_general(x, x, 5)  # dims-of-an-int


def end_of_none(x):
    return slice(x, [0], None)  # end-of-none


def pad_with_a_str(x):
    return pad(x, [(1, 0)], "a")  # pad-with-a-str


def pad_i32_with_a_half(x):
    return pad(x, [(1, 0)], 0.5)  # pad-i32-with-a-half


def pad_i32_beyond_its_range(x):
    return pad(x, [(1, 0)], 2**40)  # pad-i32-beyond-its-range


def pad_bool_with_two(x):
    return pad(x, [(1, 0)], 2.0)  # pad-bool-with-two


def int_beyond_i32(x):
    return add(x, 2**40)  # int-beyond-i32


def int_below_i32(x):
    return add(x, -(2**31) - 1)  # int-below-i32


def int_beyond_floats(x):
    return add(x, 10**400)  # int-beyond-floats


def int16_constant(x):
    return select(eq(x, x), x, np.arange(3, dtype=np.int16))  # int16-constant


def reshape_past_int64(x):
    # 2^32 · 2^32 = 2^64 elements, 0 in int64 arithmetic: as many as x has, there.
    return reshape(x, [2**32, 2**32])  # reshape-past-int64


NoInstance, Arguments = tc.NoInstanceError, tc.ArgumentsError
CALLS: list[tuple[Callable[..., Any], tuple[TensorType, ...], type[Exception], tuple[str, ...]]] = [
    (no_instance_none, (f32[3],), NoInstance, ("sin", "NoneType")),
    (no_instance_str, (f32[3],), NoInstance, ("add", "str, f32[3]")),
    (no_instance_list, (f32[3],), NoInstance, ("reshape", "list")),
    (missing_argument, (f32[3],), Arguments, ("reshape", "missing", "'shape'", "f32[3]")),
    (extra_argument, (f32[3],), Arguments, ("sin", "2 were given", "f32[3], f32[3]")),
    (unknown_keyword, (f32[3],), Arguments, ("broadcast", "'size'", "f32[3]")),
    (perm_of_letters, (f32[2, 2],), V, ("transpose", "'ab'")),
    (shape_of_an_int, (f32[3],), V, ("broadcast", "-1")),
    (shape_of_bytes, (f32[3],), V, ("reshape", "b'\\x03'")),
    (reshape_to_minus_one, (f32[3],), V, ("reshape", "[-1]")),
    (negative_broadcast_size, (f32[3],), V, ("broadcast", "[3, -2]")),
    (dims_of_an_int, (f32[3],), T, ("dot_general", "5")),
    (end_of_none, (f32[3],), V, ("slice", "None")),
    (pad_with_a_str, (f32[3],), V, ("pad", "'a'")),
    (pad_i32_with_a_half, (i32[3],), V, ("pad", "i32[3]", "0.5")),
    (pad_i32_beyond_its_range, (i32[3],), V, ("pad", "i32[3]", "1099511627776")),
    (pad_bool_with_two, (bool_[3],), V, ("pad", "bool[3]", "2.0")),
    (int_beyond_i32, (i32[3],), V, ("add", "1099511627776", "i32")),
    (int_below_i32, (i32[3],), V, ("add", "-2147483649", "i32")),
    (int_beyond_floats, (f32[3],), V, ("add", "f32")),
    (int16_constant, (f32[3],), T, ("select", "int16")),
    (reshape_past_int64, (f32[0],), T, ("reshape", "f32[0]", "[4294967296, 4294967296]")),
]


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize(
    ("function", "types", "kind", "fragments"), [pytest.param(*case, id=case[0].__name__) for case in CALLS]
)
@typeguard.suppress_type_checks  # they break the typeclass functions' annotations, which typeguard would report
def test_bad_call(
    mode: str,
    function: Callable[..., Any],
    types: tuple[TensorType, ...],
    kind: type[Exception],
    fragments: tuple[str, ...],
) -> None:
    with pytest.raises(shax.ShaxError) as info:
        run(mode, function, types)
    check(info.value, kind, fragments, function.__name__.replace("_", "-"))


@pytest.mark.parametrize("mode", MODES)
def test_ints_at_the_edges_of_i32_are_i32(mode: str) -> None:
    def edges(x):
        return add(x, 2**31 - 1), add(x, -(2**31))

    result = run(mode, edges, (i32[2],))
    if mode == "numpy":
        np.testing.assert_array_equal(result, [[2**31 - 1] * 2, [-(2**31)] * 2])
    else:
        assert [str(t) for t in infer_types(result).output_types()] == ["i32[2]", "i32[2]"]


@pytest.mark.parametrize("mode", MODES)
def test_pad_with_a_value_of_the_dtype(mode: str) -> None:
    def padded(x, b):
        return pad(x, [(1, 0)], 3), pad(x, [(0, 1)], -(2**31)), pad(b, [(1, 0)], 1.0)

    x, b = np.array([1, 2], np.int32), np.array([False])
    if mode == "tracer":
        result = shax.evaluate(infer_types(shax.trace(padded, i32[2], bool_[1])), x, b)
    else:
        result = padded(x, b)
    expected = (np.array([3, 1, 2], np.int32), np.array([1, 2, -(2**31)], np.int32), np.array([True, False]))
    for got, want in zip(result, expected):
        assert got.dtype == want.dtype
        np.testing.assert_array_equal(got, want)


double = elementwise_primitive("double", numpy=lambda x: 2.0 * x, derivative=lambda x, out: 2.0 + 0.0 * x)


def double_twice_over(x):
    return double(x, x)  # double-twice-over


def double_with_a_keyword(x):
    return double(x, axis=0)  # double-with-a-keyword


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize(
    ("function", "fragment"),
    [(double_twice_over, "takes 1 argument(s), got 2"), (double_with_a_keyword, "unexpected keyword argument")],
)
def test_a_declared_function_called_with_bad_arguments(mode: str, function: Callable[..., Any], fragment: str) -> None:
    with pytest.raises(shax.ShaxError) as info:
        run(mode, function, (f32[3],))
    check(info.value, tc.ArgumentsError, ("double", fragment, "f32[3]"), function.__name__.replace("_", "-"))


def test_an_instance_lacking_a_method() -> None:
    class Partial(tc.Instance):
        def level(self, value: object) -> int:
            return 0

    with pytest.raises(shax.ShaxError) as info:
        Partial().sin(np.float32(1.0))  # missing-method
    check(info.value, (tc.MissingMethodError, AttributeError), ("sin", "Partial"), "missing-method")


# Tensor types.


def bytes_shape():
    return TensorType(f32, b"2")  # bytes-shape


def str_shape():
    return TensorType(f32, "2")  # str-shape


def float_size():
    return f32[2.0]  # float-size


def bool_size():
    return TensorType(f32, (True,))  # bool-size


def numpy_bool_size():
    return TensorType(f32, (np.bool_(True),))  # numpy-bool-size


def negative_size():
    return f32[3, -1]  # negative-size


def shape_of_none():
    return TensorType(f32, None)  # shape-of-none


def dtype_of_a_str():
    return TensorType("f32", (2,))  # dtype-of-a-str


def numpy_dtype():
    return TensorType(np.float32, (2,))  # numpy-dtype


def parse_a_number():
    return TensorType.parse(3)  # parse-a-number


def parse_empty_size():
    return TensorType.parse("f32[2,,3]")  # parse-empty-size


def parse_no_comma():
    return TensorType.parse("f32[2 3]")  # parse-no-comma


def parse_negative():
    return TensorType.parse("f32[-1]")  # parse-negative


def parse_unknown_dtype():
    return TensorType.parse("f16[2]")  # parse-unknown-dtype


def parse_unclosed():
    return TensorType.parse("f32[2")  # parse-unclosed


BAD_TYPES: list[tuple[Callable[[], Any], type[Exception], tuple[str, ...]]] = [
    (bytes_shape, V, ("TensorType", "b'2'")),
    (str_shape, V, ("TensorType", "'2'")),
    (float_size, V, ("TensorType", "2.0")),
    (bool_size, V, ("TensorType", "True")),
    (numpy_bool_size, V, ("TensorType", "True")),
    (negative_size, V, ("TensorType", "-1")),
    (shape_of_none, V, ("TensorType", "None")),
    (dtype_of_a_str, T, ("TensorType", "dtype", "'f32'")),
    (numpy_dtype, T, ("TensorType", "dtype", "float32")),
    (parse_a_number, T, ("TensorType.parse", "3")),
    (parse_empty_size, V, ("TensorType.parse", "f32[2,,3]")),
    (parse_no_comma, V, ("TensorType.parse", "f32[2 3]")),
    (parse_negative, V, ("TensorType.parse", "f32[-1]")),
    (parse_unknown_dtype, V, ("TensorType.parse", "f16[2]")),
    (parse_unclosed, V, ("TensorType.parse", "f32[2")),
]


@pytest.mark.parametrize(("build", "kind", "fragments"), [pytest.param(*c, id=c[0].__name__) for c in BAD_TYPES])
@typeguard.suppress_type_checks  # some break the annotations of DType.__getitem__ and TensorType.parse
def test_bad_tensor_type(build: Callable[[], Any], kind: type[Exception], fragments: tuple[str, ...]) -> None:
    with pytest.raises(shax.ShaxError) as info:
        build()
    check(info.value, kind, fragments, build.__name__.replace("_", "-"))


def test_tensor_types_read_and_size_exactly() -> None:
    assert TensorType(f32, (np.int64(2), 3)).shape == (2, 3)
    assert all(type(d) is int for d in TensorType(f32, np.array([2, 3])).shape)
    assert [TensorType.parse(text) for text in ("f32[]", " f32 [ 2 , 6 ] ", "bool[1,2]")] == [
        f32[()],
        f32[2, 6],
        bool_[1, 2],
    ]
    # 2**82 bytes, beyond int64, counted exactly; too large to be a type (tests/test_sizes.py)
    with pytest.raises(shax.ShaxValueError, match=r"f32\[1099511627776, 1099511627776\] would take 4194304.00 EiB"):
        f32[2**40, 2**40]


# Arguments.


def two_args(x, y):  # two-args
    return x + y


def test_trace_with_too_few_argument_types() -> None:
    with pytest.raises(shax.ShaxError) as info:
        shax.trace(two_args, f32[2])
    check(info.value, TypeError, ("two_args", "f32[2]", "1 argument"), "two-args")


def test_trace_with_too_many_argument_types() -> None:
    with pytest.raises(shax.ShaxError) as info:
        shax.trace(two_args, f32[2], f32[2], f32[2])
    check(info.value, TypeError, ("two_args", "f32[2]", "3 argument"), "two-args")


def test_trace_with_a_non_type() -> None:
    with pytest.raises(shax.ShaxError) as info:
        shax.trace(two_args, f32[2], 3)  # trace-non-type
    check(info.value, TypeError, ("trace", "two_args", "3"), "trace-non-type")


def test_trace_with_an_unreadable_type() -> None:
    with pytest.raises(shax.ShaxError) as info:
        shax.trace(two_args, f32[2], "f32[2, x]")  # trace-unreadable-type
    check(info.value, ValueError, ("trace", "two_args", "f32[2, x]"), "trace-unreadable-type")


@pytest.fixture
def add_defn() -> Definition:
    return infer_types(shax.trace(two_args, f32[2], f32[2]))


def test_evaluate_with_the_wrong_number_of_arguments(add_defn: Definition) -> None:
    x = np.zeros(2, np.float32)
    with pytest.raises(shax.ShaxError) as info:
        shax.evaluate(add_defn, x)  # evaluate-arity
    check(info.value, TypeError, ("evaluate", "two_args", "f32[2]", "got 1"), "evaluate-arity")


def test_evaluate_with_a_non_tensor(add_defn: Definition) -> None:
    x = np.zeros(2, np.float32)
    with pytest.raises(shax.ShaxError) as info:
        shax.evaluate(add_defn, x, "a")  # evaluate-non-tensor
    check(info.value, TypeError, ("evaluate", "two_args", "f32[2]", "str"), "evaluate-non-tensor")


def test_evaluate_with_an_int_beyond_i32() -> None:
    defn = infer_types(shax.trace(lambda n: n + 1, i32[()]))
    with pytest.raises(shax.ShaxError) as info:
        shax.evaluate(defn, 2**40)  # evaluate-int-beyond-i32
    check(info.value, ValueError, ("evaluate", "argument 0", "1099511627776", "i32"), "evaluate-int-beyond-i32")


def test_transforming_an_int_beyond_i32() -> None:
    with pytest.raises(shax.ShaxError) as info:
        shax.jit(lambda n: n + 1)(2**40)  # jit-int-beyond-i32
    check(info.value, (TypeError, ValueError), ("1099511627776", "i32"), "jit-int-beyond-i32")


def test_evaluate_with_the_wrong_type(add_defn: Definition) -> None:
    x = np.zeros(2, np.float32)
    with pytest.raises(shax.ShaxError) as info:
        shax.evaluate(add_defn, x, np.zeros(3, np.float64))  # evaluate-wrong-type
    check(info.value, TypeError, ("evaluate", "two_args", "f32[2]", "f64[3]"), "evaluate-wrong-type")


def returns_a_string(x):  # returns-a-string
    return "a"


def returns_none(x):  # returns-none
    sin(x)


def test_returning_a_non_tensor() -> None:
    with pytest.raises(shax.ShaxError) as info:
        shax.trace(returns_a_string, f32[2])
    check(info.value, TypeError, ("returns_a_string", "str"), "returns-a-string")


def test_returning_nothing() -> None:
    with pytest.raises(shax.ShaxError) as info:
        shax.trace(returns_none, f32[2])
    check(info.value, TypeError, ("returns_none", "NoneType"), "returns-none")


# Tracers used where they cannot be.


def branches(x):
    if x:  # python-if
        return x
    return -x


def test_python_if_on_a_tracer() -> None:
    with pytest.raises(shax.ShaxError) as info:
        shax.trace(branches, f32[2])
    check(info.value, TypeError, ("bool()", "f32[2]"), "python-if")


def test_float_of_a_tracer() -> None:
    with pytest.raises(shax.ShaxError) as info:
        shax.trace(lambda x: float(x), f32[()])  # float-of-tracer
    check(info.value, TypeError, ("float()", "f32[]"), "float-of-tracer")


def leak(store: list[Any]) -> Any:
    def keep(x):
        store.append(sin(x))
        return x

    shax.trace(keep, f32[2])
    return store[0]


def test_escaped_tracer_used_in_another_trace() -> None:
    escaped = leak([])

    def use(y):
        return escaped + y  # escaped-in-trace

    with pytest.raises(shax.ShaxError) as info:
        shax.trace(use, f32[2])
    check(info.value, TypeError, ("escaped", "f32[2]"), "escaped-in-trace")


def test_escaped_tracer_used_outside_any_trace() -> None:
    escaped = leak([])
    with pytest.raises(shax.ShaxError) as info:
        escaped * 2.0  # escaped-outside
    check(info.value, TypeError, ("escaped", "f32[2]"), "escaped-outside")


def test_escaped_tracer_returned_from_another_trace() -> None:
    escaped = leak([])
    with pytest.raises(shax.ShaxError) as info:
        shax.trace(lambda y: escaped, f32[2])
    check(info.value, TypeError, ("escaped", "f32[2]"), None)


# Hand-built bad definitions: only ShaxErrors, never internal errors.

X = [Var(k) for k in range(4)]
ARG = Binding(X[0], P.Arg(0), ())
BAD_DEFINITIONS: dict[str, Definition] = {
    "unbound_var": Definition("f", (f32[2],), (ARG, Binding(X[1], P.Sin(), (X[3],))), (X[1],)),
    "arg_out_of_range": Definition("f", (f32[2],), (Binding(X[0], P.Arg(3), ()),), (X[0],)),
    "negative_arg": Definition("f", (f32[2],), (Binding(X[0], P.Arg(-1), ()),), (X[0],)),
    "too_many_operands": Definition("f", (f32[2],), (ARG, Binding(X[1], P.Sin(), (X[0], X[0]))), (X[1],)),
    "too_few_operands": Definition("f", (f32[2],), (ARG, Binding(X[1], P.Add(), (X[0],))), (X[1],)),
    "unbound_output": Definition("f", (f32[2],), (ARG,), (X[2],)),
    "bound_twice": Definition("f", (f32[2],), (ARG, Binding(X[0], P.Sin(), (X[0],))), (X[0],)),
    "operand_bound_later": Definition(
        "f", (f32[2],), (ARG, Binding(X[1], P.Sin(), (X[2],)), Binding(X[2], P.Cos(), (X[0],))), (X[1],)
    ),
    "ill_typed": Definition("f", (f32[2],), (ARG, Binding(X[1], P.Reshape((3,)), (X[0],))), (X[1],)),
    "unsupported_constant": Definition(
        "f", (f32[2],), (ARG, Binding(X[1], P.Constant(np.arange(2, dtype=np.int16)), ())), (X[1],)
    ),
}
# What names the binding (or the returned var) at fault, in each case's error.
AT_FAULT = {
    "unbound_var": "sin x3",
    "arg_out_of_range": "arg3",
    "negative_arg": "arg-1",
    "too_many_operands": "sin x0 x0",
    "too_few_operands": "add x0",
    "unbound_output": "x2",
    "bound_twice": "sin x0",
    "operand_bound_later": "sin x2",
    "ill_typed": "reshape [3] x0",
    "unsupported_constant": "fromList [2] [0,1]",
}


def annotated(defn: Definition) -> Definition:
    """The definition with every var annotated f32[2] (for check_types)."""
    bindings = tuple(
        Binding(Var(b.var.id, f32[2]), b.prim, tuple(Var(a.id, f32[2]) for a in b.args), b.source)
        for b in defn.bindings
    )
    return Definition(defn.name, defn.arg_types, bindings, defn.outputs)


STAGES: dict[str, Callable[[Definition], Any]] = {
    "infer_types": infer_types,
    "check_types": lambda defn: check_types(annotated(defn)),
    "evaluate": lambda defn: shax.evaluate(defn, np.zeros(2, np.float32)),
}


@pytest.mark.parametrize("stage", sorted(STAGES))
@pytest.mark.parametrize("bad", sorted(BAD_DEFINITIONS))
def test_bad_definition(stage: str, bad: str) -> None:
    with pytest.raises(shax.ShaxError) as info:
        STAGES[stage](BAD_DEFINITIONS[bad])
    check(info.value, (TypeError, ValueError), (stage, AT_FAULT[bad]), None)


# Definitions not built of IR parts, each with what its error names (their vars typed, so
# that check_types meets the malformed part, not a missing annotation).
SIN = P.Sin()
TX = [Var(k, f32[2]) for k in range(2)]
TARG = Binding(TX[0], P.Arg(0), ())
MALFORMED: dict[str, tuple[Definition, str]] = {
    "not_a_binding": (Definition("f", (f32[2],), (TARG, (TX[1], SIN, (TX[0],))), (TX[1],)), "binding 1 is a tuple"),
    "var_not_a_var": (Definition("f", (f32[2],), (TARG, Binding(3, SIN, (TX[0],))), (TX[0],)), "binding 1 binds 3"),
    "var_id_not_an_int": (
        Definition("f", (f32[2],), (TARG, Binding(Var(None, f32[2]), SIN, (TX[0],))), (TX[0],)),  # type: ignore[arg-type]
        "numbered None",
    ),
    "var_type_not_a_type": (
        Definition("f", (f32[2],), (TARG, Binding(Var(1, "f32[2]"), SIN, (TX[0],))), (TX[1],)),  # type: ignore[arg-type]
        "annotated 'f32[2]'",
    ),
    "prim_not_a_primitive": (
        Definition("f", (f32[2],), (TARG, Binding(TX[1], "sin", (TX[0],))), (TX[1],)),
        "binding 1 applies 'sin'",
    ),
    "operand_not_a_var": (Definition("f", (f32[2],), (TARG, Binding(TX[1], SIN, (0,))), (TX[1],)), "binding 1 has"),
    "operands_not_a_tuple": (Definition("f", (f32[2],), (TARG, Binding(TX[1], SIN, TX[0])), (TX[1],)), "binding 1 has"),
    "arg_index_not_an_int": (
        Definition("f", (f32[2],), (Binding(TX[0], P.Arg("0"), ()),), (TX[0],)),
        "binding 0 reads argument '0'",
    ),
    "arg_type_not_a_type": (Definition("f", ("f32[2]",), (TARG,), (TX[0],)), "argument type 0"),
    "output_not_a_var": (Definition("f", (f32[2],), (TARG,), (0,)), "returns 0"),
}


@pytest.mark.parametrize(
    ("stage", "bad"),
    # infer_types replaces the annotations it is given, whatever they are
    [
        (stage, bad)
        for bad in sorted(MALFORMED)
        for stage in sorted(STAGES)
        if (bad, stage) != ("var_type_not_a_type", "infer_types")
    ],
)
@typeguard.suppress_type_checks  # the parts break the IR classes' annotations
def test_malformed_definition(stage: str, bad: str) -> None:
    defn, fragment = MALFORMED[bad]
    run_stage = shax.evaluate if stage == "evaluate" else check_types if stage == "check_types" else infer_types
    arguments = [np.zeros(2, np.float32)] if stage == "evaluate" else []
    with pytest.raises(shax.ShaxError) as info:
        run_stage(defn, *arguments)
    check(info.value, TypeError, (stage, fragment), None)


def static_parameters_of_the_wrong_type() -> list[Callable[[], Any]]:
    return [
        lambda: P.Reshape("ab"),  # type: ignore[arg-type]
        lambda: P.Transpose(b"\x01\x00"),  # type: ignore[arg-type]
        lambda: P.Pad([(1, 0)], "a"),  # type: ignore[arg-type]
        lambda: P.Pad([(1, 0)], None),  # type: ignore[arg-type]
        lambda: P.Pad([1, 0], 0.0),  # type: ignore[arg-type]
        lambda: P.DotGeneral(1, 2, 3, 4),  # type: ignore[arg-type]
    ]


@pytest.mark.parametrize("build", static_parameters_of_the_wrong_type())
@typeguard.suppress_type_checks
def test_a_primitive_built_with_bad_static_parameters(build: Callable[[], Any]) -> None:
    with pytest.raises(shax.ShaxValueError):
        build()


def test_check_types_rejects_a_wrong_annotation() -> None:
    typed = infer_types(shax.trace(lambda x: reduce_sum(x, [0]), f32[2, 3]))
    *rest, last = typed.bindings
    wrong = Definition(
        typed.name, typed.arg_types, (*rest, Binding(Var(last.var.id, f32[2]), last.prim, last.args)), typed.outputs
    )
    with pytest.raises(shax.ShaxError) as info:
        check_types(wrong)
    check(info.value, TypeError, ("check_types", "reduce_sum", "f32[2]", "f32[3]"), None)


def test_check_types_rejects_an_untyped_definition() -> None:
    with pytest.raises(shax.ShaxError) as info:
        check_types(shax.trace(sin, f32[2]))
    check(info.value, TypeError, ("check_types", "f32[2]"), None)


# ------------------------------------------------------------------------------------------
# Entry points handed what they do not take (branch errors-api): stages, passes, evaluate
# and codegen given no Definition or the other kind, transforms given no function, vjp_fn
# and f_jvp called wrongly, bad wrt / in_axes / out_axes, optimizers and explain with bad
# settings, the command with bad arguments. Each case is a call on its own marked line.


def loss(x):
    return reduce_sum(sin(x) * x, [0])


def pair(x, y):
    return sin(x) * y


X3 = np.array([0.5, 1.0, 2.0], np.float32)
TYPED = infer_types(shax.trace(loss, f32[3]))
LIN = shax.stages.linearize(TYPED)
VJP_FN = shax.vjp(pair, X3, X3)[1]
F_JVP = shax.linearize(pair, X3, X3)[1]


def with_a_count(x):
    return sin(x), np.int32(3)


def optimizer(name: str) -> Callable[..., Any]:
    """An optimizer, for the case to call on its own line."""
    from shax import optimizers

    return getattr(optimizers, name)


A_FUNCTION = "shax.trace(f, *arg_types) makes a Definition"
NOT_A_DEFINITION = "shax.stages.linearize makes a LinearizedDefinition"
HALVES = "its halves are .primal and .linear"

ENTRY_POINTS: list[tuple[str, type[Exception], tuple[str, ...], Callable[[], Any]]] = [
    ("linearize-lin", T, ("linearize", "LinearizedDefinition", HALVES),
     lambda: shax.stages.linearize(LIN)),  # linearize-lin
    ("transpose-defn", T, ("transpose", "'loss'", NOT_A_DEFINITION),
     lambda: shax.stages.transpose(TYPED)),  # transpose-defn
    ("zip-none", T, ("zip_definitions", "NoneType"),
     lambda: shax.stages.zip_definitions(None)),  # zip-none
    ("infer-types-str", T, ("infer_types", "str", "'loss'"),
     lambda: shax.stages.infer_types("loss")),  # infer-types-str
    ("check-types-fn", T, ("check_types", A_FUNCTION),
     lambda: shax.stages.check_types(loss)),  # check-types-fn
    ("batch-lin", T, ("batch", "LinearizedDefinition"),
     lambda: shax.stages.batch(LIN, 0, 2)),  # batch-lin
    ("dce-none", T, ("dce", "NoneType"),
     lambda: shax.passes.dce(None)),  # dce-none
    ("cleanup-lin", T, ("cleanup", "LinearizedDefinition"),
     lambda: shax.passes.cleanup(LIN)),  # cleanup-lin
    ("evaluate-lin", T, ("evaluate", "LinearizedDefinition", HALVES),
     lambda: shax.evaluate(LIN, X3)),  # evaluate-lin
    ("compile-list", T, ("compile_definition", "list"),
     lambda: shax.codegen.compile_definition([TYPED])),  # compile-list
    ("eval-lin-defn", T, ("evaluate_linearized", "'loss'"),
     lambda: shax.stages.evaluate_linearized(TYPED, [X3], [X3])),  # eval-lin-defn
    ("eval-lin-array", T, ("primals", "f32[3]", "ndarray"),
     lambda: shax.stages.evaluate_linearized(LIN, X3, [X3])),  # eval-lin-array
    ("eval-lin-count", T, ("linear_args", "1 value(s) (f32[3])"),
     lambda: shax.stages.evaluate_linearized(LIN, [X3], [])),  # eval-lin-count
    ("wrt-str", T, ("linearize", "wrt", "'0'"),
     lambda: shax.stages.linearize(TYPED, wrt="0")),  # wrt-str
    ("wrt-float", V, ("linearize", "no argument 0.0", "f32[3]"),
     lambda: shax.stages.linearize(TYPED, wrt=[0.0])),  # wrt-float
    ("apply-none", T, ("apply_passes", "NoneType"),
     lambda: shax.passes.apply_passes(None, [])),  # apply-none
    ("apply-str", T, ("apply_passes", "list of pass names", "'dce'"),
     lambda: shax.passes.apply_passes(TYPED, "dce")),  # apply-str
    ("apply-int", V, ("apply_passes", "unknown pass(es) 3"),
     lambda: shax.passes.apply_passes(TYPED, [3])),  # apply-int
    ("bind-list", T, ("bind_arguments", "dict", "list"),
     lambda: shax.passes.bind_arguments(TYPED, [X3])),  # bind-list
    ("bind-index", V, ("bind_arguments", "no argument 1"),
     lambda: shax.passes.bind_arguments(TYPED, {1: X3})),  # bind-index
    ("bind-type", T, ("argument 0 of loss", "f64[3]", "f32[3]"),
     lambda: shax.passes.bind_arguments(TYPED, {0: np.ones(3)})),  # bind-type
    ("trace-none", T, ("trace", "expected a function", "NoneType"),
     lambda: shax.trace(None, f32[3])),  # trace-none
    ("trace-name", V, ("trace", "name", "3"),
     lambda: shax.trace(loss, f32[3], name=3)),  # trace-name
    ("vjp-str", T, ("vjp", "expected a function", "str"),
     lambda: shax.vjp("loss", X3)),  # vjp-str
    ("jvp-int", T, ("jvp", "expected a function", "int"),
     lambda: shax.jvp(3, (X3,), (X3,))),  # jvp-int
    ("linearize-list", T, ("linearize", "expected a function", "list"),
     lambda: shax.linearize([loss], X3)),  # linearize-list
    ("xpr-none", T, ("xpr", "expected a function", "NoneType"),
     lambda: shax.xpr(None, X3)),  # xpr-none
    ("explain-defn", T, ("explain", "expected a function", "Definition"),
     lambda: shax.explain(TYPED, f32[3])),  # explain-defn
    ("grad-none", T, ("grad", "expected a function", "NoneType"),
     lambda: shax.grad(None)),  # grad-none
    ("vmap-str", T, ("vmap", "expected a function", "str"),
     lambda: shax.vmap("loss")),  # vmap-str
    ("jit-array", T, ("jit", "expected a function", "ndarray"),
     lambda: shax.jit(X3)),  # jit-array
    ("vjp-fn-none", T, ("vjp_fn", "one cotangent", "pair", "f32[3]", "0 arguments"),
     lambda: VJP_FN()),  # vjp-fn-none
    ("vjp-fn-two", T, ("vjp_fn", "one cotangent", "2 arguments"),
     lambda: VJP_FN(X3, X3)),  # vjp-fn-two
    ("vjp-fn-dtype", T, ("vjp_fn", "cotangent", "f64[3]", "f32[3]"),
     lambda: VJP_FN(X3.astype(np.float64))),  # vjp-fn-dtype
    ("vjp-fn-shape", T, ("vjp_fn", "cotangent", "f32[4]", "f32[3]"),
     lambda: VJP_FN(np.ones(4, np.float32))),  # vjp-fn-shape
    ("vjp-fn-tree", V, ("vjp_fn", "structure", "pair"),
     lambda: VJP_FN((X3,))),  # vjp-fn-tree
    ("f-jvp-none", V, ("f_jvp", "structure", "pair", "(*, *)"),
     lambda: F_JVP()),  # f-jvp-none
    ("f-jvp-dtype", T, ("f_jvp", "tangent leaf 1", "i32[3]", "f32[3]"),
     lambda: F_JVP(X3, X3.astype(np.int32))),  # f-jvp-dtype
    ("jvp-shape", T, ("jvp", "tangent leaf 1", "f32[2]", "f32[3]"),
     lambda: shax.jvp(pair, (X3, X3), (X3, X3[:2]))),  # jvp-shape
    ("wrt-array", T, ("grad", "wrt", "array([0])"),
     lambda: shax.grad(loss, wrt=np.array([0]))),  # wrt-array
    ("wrt-nested", T, ("value_and_grad", "wrt", "[0, [1]]"),
     lambda: shax.value_and_grad(pair, wrt=[0, [1]])),  # wrt-nested
    ("wrt-bool", T, ("grad", "wrt", "True"),
     lambda: shax.grad(loss, wrt=True)),  # wrt-bool
    ("in-axes-str", V, ("vmap", "in_axes", "'0'"),
     lambda: shax.vmap(loss, in_axes="0")),  # in-axes-str
    ("in-axes-range", V, ("vmap", "in_axes", "axis 2", "f32[1, 3]"),
     lambda: shax.vmap(loss, in_axes=2)(X3[None])),  # in-axes-range
    ("in-axes-tree", V, ("vmap", "in_axes=(0,)", "2 argument"),
     lambda: shax.vmap(pair, in_axes=(0,))(X3, X3)),  # in-axes-tree
    ("out-axes-range", V, ("batch", "out_axes", "3", "f32[3]"),
     lambda: shax.vmap(sin, out_axes=3)(X3[None])),  # out-axes-range
    ("out-axes-float", V, ("vmap", "out_axes", "0.5"),
     lambda: shax.vmap(sin, out_axes=0.5)),  # out-axes-float
    ("source-bytes", T, ("jit.source", "bytes"),
     lambda: shax.jit(loss).source(b"f32[3]")),  # source-bytes
    ("source-text", V, ("jit.source", "'f32[3'"),
     lambda: shax.jit(loss).source("f32[3")),  # source-text
    ("gd-iters", V, ("gradient_descent", "iters", "-1"),
     lambda: optimizer("gradient_descent")(loss, [X3], 0.1, -1, log=None)),  # gd-iters
    ("gd-iters-float", T, ("gradient_descent", "iters", "float"),
     lambda: optimizer("gradient_descent")(loss, [X3], 0.1, 2.0)),  # gd-iters-float
    ("gd-lr", T, ("gradient_descent", "lr", "str", "'0.1'"),
     lambda: optimizer("gradient_descent")(loss, [X3], "0.1", 2)),  # gd-lr
    ("gd-lr-nan", V, ("gradient_descent", "lr", "nan"),
     lambda: optimizer("gradient_descent")(loss, [X3], float("nan"), 2)),  # gd-lr-nan
    ("gd-log", T, ("log", "'stdout'"),
     lambda: optimizer("gradient_descent")(loss, [X3], 0.1, 2, log="stdout")),  # gd-log
    ("momentum-beta", T, ("momentum", "beta", "None"),
     lambda: optimizer("momentum")(loss, [X3], 0.1, 2, beta=None)),  # momentum-beta
    ("adam-eps", V, ("adam", "eps", "inf"),
     lambda: optimizer("adam")(loss, [X3], 0.1, 2, eps=float("inf"))),  # adam-eps
    ("adam-iters", T, ("adam", "b1", "list"),
     lambda: optimizer("adam")(loss, [X3], 0.1, 10**30, b1=[0.9])),  # adam-iters
    ("seed-negative", V, ("explain", "seed", "-1"),
     lambda: shax.explain(loss, f32[3], seed=-1)),  # seed-negative
    ("seed-str", V, ("explain", "seed", "'0'"),
     lambda: shax.explain(loss, f32[3], seed="0")),  # seed-str
    ("inputs-array", T, ("explain", "inputs", "list of 1", "ndarray"),
     lambda: shax.explain(loss, f32[3], inputs=X3)),  # inputs-array
    ("inputs-strings", T, ("inputs[0]", "<U1", "f32[3]"),
     lambda: shax.explain(loss, f32[3], inputs=[["1", "2", "3"]])),  # inputs-strings
    ("tangents-complex", T, ("tangents[0]", "complex64", "f32[3]"),
     lambda: shax.explain(loss, f32[3], tangents=[X3 * 1j])),  # tangents-complex
    ("inputs-ragged", T, ("inputs[0]", "not an array"),
     lambda: shax.explain(loss, f32[3], inputs=[[1, [2, 3]]])),  # inputs-ragged
    ("cotangents-float", T, ("cotangents", "f32[]", "float"),
     lambda: shax.explain(loss, f32[3], cotangents=2.0)),  # cotangents-float
    ("cotangents-int", V, ("cotangents[1]", "i32[]"),
     lambda: shax.explain(with_a_count, f32[2], cotangents=[X3[:2], 2**40])),  # cotangents-int
    ("show-str", T, ("explain", "show", "'vjp'"),
     lambda: shax.explain(loss, f32[3]).show("vjp")),  # show-str
]  # fmt: skip


@pytest.mark.parametrize(
    ("marker", "kind", "fragments", "call"), [pytest.param(*case, id=case[0]) for case in ENTRY_POINTS]
)
def test_an_entry_point_refuses_what_it_does_not_take(
    marker: str, kind: type[Exception], fragments: tuple[str, ...], call: Callable[[], Any]
) -> None:
    # Bad input breaks the entry points' annotations, which typeguard (on in this test
    # suite only) would report before shax's own checks.
    with typeguard.suppress_type_checks(), pytest.raises(shax.ShaxError) as info:
        call()
    check(info.value, kind, fragments, marker)


MEDIUM = f"{Path(__file__).resolve().parents[1] / 'examples' / 'medium.py'}:medium"
X = "[1, 2, 3, 4, 5, 6]"


@pytest.mark.parametrize(
    ("argv", "fragments"),
    [
        (["explain", MEDIUM, "f32[6]", "f32[2,2]", "--seed", "-1"], ("explain", "seed", "-1")),
        (
            ["explain", MEDIUM, "f32[6]", "f32[2,2]", "--inputs", f'[{X}, [["a", "b"], [1, 2]]]'],
            ("inputs[1]", "f32[2, 2]"),
        ),
        (
            ["explain", MEDIUM, "f32[6]", "f32[2,2]", "--tangents", f"[{X}, [[1, 2], [3]]]"],
            ("tangents[1]", "not an array"),
        ),
        (["explain", MEDIUM, "f32[6]", "f32[2,2]", "--cotangents", "[[1, 2, 3]]"], ("cotangents[0]", "[3]", "f32[2]")),
        (["trace", f"{MEDIUM.rpartition(':')[0]}:A", "f32[6]"], ("medium.py", "no function 'A'")),
    ],
    ids=["seed", "strings", "ragged", "cotangent-shape", "not-a-function"],
)
def test_the_command_reports_bad_arguments_in_one_line(
    argv: list[str], fragments: tuple[str, ...], capsys: pytest.CaptureFixture[str]
) -> None:
    from shax.tools.cli import main

    assert main(argv) == 1
    out, err = capsys.readouterr()
    assert out == "" and "Traceback" not in err and err.startswith("shax: "), err
    for fragment in fragments:
        assert fragment in err, err


def test_a_dtype_is_no_list() -> None:
    # `f32[k]` is a tensor type for every k: iterating f32 by indexing would never end.
    with typeguard.suppress_type_checks(), pytest.raises(shax.ShaxError) as info:
        shax.trace(lambda x: reduce_sum(x, f32), f32[3])  # dtype-axes
    check(info.value, ValueError, ("reduce_sum", "f32"), "dtype-axes")

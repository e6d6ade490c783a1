"""The machinery of the fuzz (tests/test_fuzz.py): good values to start from, the bad
values put in their place (`BAD`), an entry point's good call (`Call`), and what a call
may do (`attempt`): return, or raise a `shax.ShaxError` naming the caller's line (a line
of one of the fuzz's files), leaving its arguments as they were.

Calls run with typeguard's checks off: the test suite turns them on for shax, and they
would report an annotation broken before shax's own checks run, which users never see.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import attrs
import numpy as np
import typeguard
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import shax
from shax import bool_, f32, f64, i32, stages
from shax.codegen import compile_definition
from typeclasses import add, mul, reduce_sum, sin

ROOT = Path(__file__).resolve().parents[1]
# The user's line a ShaxError names is one of these files': the calls are made, and the
# traced functions written, in them.
USER_LINE = re.compile(r"(fuzzing|test_fuzz|fuzz_numpy|fuzz_trees)\.py:\d+")

# Good values ------------------------------------------------------------------------------


# Written with the typeclass functions, not operators: bad arguments reach them, not
# Python's own `*` (on two lists, say), whose errors are this file's and not shax's.
def loss(x):
    return reduce_sum(mul(sin(x), x), [0])


def energy(x, y):
    return reduce_sum(pair(x, y), [0])


def pair(x, y):
    return add(mul(x, y), sin(x))


X = np.array([0.5, 1.0, 2.0], np.float32)
Y = np.array([1.5, -1.0, 0.25], np.float32)
XS = np.arange(6, dtype=np.float32).reshape(2, 3)


def integers(n, flags):
    return n, flags


DEFN = shax.trace(loss, f32[3])
TYPED = stages.infer_types(DEFN)
PAIR = stages.infer_types(shax.trace(pair, f32[3], f32[3]))
INTEGERS = stages.infer_types(shax.trace(integers, i32[()], bool_[2]))
FLAGS = np.array([True, False])
LIN = stages.linearize(TYPED)
TRANSPOSED = stages.transpose(LIN)
VJP_FN = shax.vjp(pair, X, Y)[1]
F_JVP = shax.linearize(pair, X, Y)[1]
EXPLANATION = shax.explain(loss, f32[3])
COMPILED = compile_definition(PAIR)
MEDIUM = f"{ROOT / 'examples' / 'medium.py'}:medium"
# A call site of PAIR on values, and PAIR's gradient graph (PopXL's autodiff) called there.
PAIR_ARGS = [b.var for b in PAIR.bindings if b.prim.name == "arg"]  # x, then y
CALL_INFO = shax.call_with_info(PAIR, X, Y)
GRAD_INFO = shax.autodiff(PAIR)
GRAD_CALL_INFO = shax.call_with_info(GRAD_INFO.graph, Y, inputs_dict=GRAD_INFO.inputs_dict(CALL_INFO))


# Bad values -------------------------------------------------------------------------------

# Ints are small (axes, sizes: negative and out of range for every rank used here) or
# beyond i32 and too large for any array. Never in between: a valid request for a huge
# array (numpy's pad by 2**31) would take the machine's memory, not test anything.
AXES = st.integers(-5, 6)
HUGE_INTS = st.sampled_from([2**62, 2**63, -(2**31) - 1, 10**30])
SHAPES = hnp.array_shapes(min_dims=0, max_dims=3, min_side=0, max_side=3)
ARRAYS = st.one_of(
    # NaN and infinities among the floats
    hnp.arrays(st.sampled_from([np.float32, np.float64, np.float16, np.complex128, np.bool_]), SHAPES),
    hnp.arrays(np.int64, SHAPES, elements=AXES | st.just(2**62)),
    hnp.arrays(np.int32, SHAPES, elements=AXES | st.just(-(2**31))),
    hnp.arrays(np.uint8, SHAPES),
    hnp.arrays(np.float32, st.sampled_from([(3,), (2, 3), (3, 1), ()])),  # the right dtype, a shape near
    st.builds(lambda n: np.array([None] * n, dtype=object), st.integers(0, 3)),
)
SCALARS = st.one_of(
    st.none(),
    st.booleans(),
    AXES,
    HUGE_INTS,
    st.floats(),
    st.complex_numbers(max_magnitude=10),
    st.text(max_size=4),
    st.binary(max_size=4),
    st.builds(object),
    st.sampled_from([np.int64(3), np.float16(1.5), np.complex64(1j), np.bool_(True), np.float32(np.nan)]),
)
SHAX_VALUES = st.sampled_from(
    [f32[3], f64[2, 3], i32[()], "f32[3]", "f32[", DEFN, TYPED, LIN, TRANSPOSED, shax.f32, lambda *args: None]
    + [PAIR_ARGS[0], CALL_INFO, GRAD_INFO, GRAD_INFO.graph]
)
LEAVES = st.one_of(SCALARS, ARRAYS, SHAX_VALUES)
BAD = st.recursive(
    LEAVES,
    lambda children: st.one_of(
        st.lists(children, max_size=3),
        st.tuples(children),
        st.tuples(children, children),
        st.dictionaries(st.one_of(st.text(max_size=2), st.integers(0, 3)), children, max_size=3),
    ),
    max_leaves=6,
)
# For an optimizer's iters: a count of 2**62 is valid, and would run for ever.
SMALL_COUNTS = BAD.filter(lambda v: not (isinstance(v, (int, np.integer)) and v > 5))


# Entry points -----------------------------------------------------------------------------


@attrs.frozen
class Call:
    """A good call of an entry point. `variadic`: the number of positional arguments is
    data (the fuzz drops or adds one); `bad` overrides `BAD` for some parameters;
    `variants` are other ways of calling it with the same arguments (the fuzz picks one)."""

    function: Callable[..., Any]
    args: tuple[Any, ...] = ()
    kwargs: dict[str, Any] = attrs.field(factory=dict)
    variadic: bool = False
    bad: dict[int | str, st.SearchStrategy[Any]] = attrs.field(factory=dict)
    variants: tuple[Callable[..., Any], ...] = ()


def traceable(value: Any) -> bool:
    return isinstance(value, np.ndarray) and value.dtype in (np.float32, np.float64, np.int32, np.bool_)


# What a call may do ---------------------------------------------------------------------


def contents(value: Any) -> Any:
    """What `value` holds now, deeply: the same before and after a call that left it alone."""
    if isinstance(value, np.ndarray):
        held = tuple(map(id, value.flat)) if value.dtype == object else value.tobytes()
        return (np.ndarray, value.dtype.str, value.shape, held)
    if isinstance(value, (list, tuple)):
        return (type(value), tuple(contents(v) for v in value))
    if isinstance(value, dict):
        return (dict, tuple((id(k), contents(v)) for k, v in value.items()))
    return id(value)  # numbers, strings, definitions, functions: immutable, or not shax's to change


def attempt(entry: str, function: Callable[..., Any], args: tuple[Any, ...], kwargs: dict[str, Any]) -> None:
    """Run the call; fail unless it returns, or raises a ShaxError naming a line of the
    fuzz's files (the user's), leaving its arguments as they were."""
    before = contents((args, kwargs))
    try:
        with typeguard.suppress_type_checks():
            function(*args, **kwargs)
    except shax.ShaxError as error:
        assert USER_LINE.search(str(error)), f"{entry}: no line of the fuzz's files in: {error}"
    except Exception as error:
        raise AssertionError(f"{entry} raised {type(error).__name__}, not a ShaxError: {error}") from error
    assert contents((args, kwargs)) == before, f"{entry} changed its arguments"

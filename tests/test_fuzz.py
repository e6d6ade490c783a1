"""Bad input at every public entry point: each call returns normally or raises a
`shax.ShaxError` naming the caller's line (this file's); nothing else escapes, and no
call changes the values it was given.

Each entry point has a good call (`Call`), which must succeed. The fuzz replaces some
of its arguments with generated bad values (`BAD`: None, strings, bytes, lists, dicts,
objects, arrays of other dtypes, ranks and shapes, NaN and infinities, huge ints,
negative and out-of-range axes, wrong pytree structures, definitions of the other
kind), and, where the number of arguments is data (`evaluate`'s, a transformed
function's, `vjp_fn`'s), drops or adds one. The entry points are read off `shax.__all__`,
`shax.stages`, `shax.passes`, `shax.optimizers` and the typeclass functions of
`typeclasses.__all__` (on numpy values and inside a traced function);
`test_every_public_name_is_fuzzed` fails when a new public name has no driver here.

Calls run with typeguard's checks off: the test suite turns them on for shax, and they
would report an annotation broken before shax's own checks run, which users never see.
A call that Python's own signature binding refuses (a required parameter of a shax
function left out) stays Python's TypeError, as in numpy and JAX, so the fuzz varies
the number of arguments only where it is data.
"""

from __future__ import annotations

import inspect
import typing
from collections.abc import Callable
from pathlib import Path
from typing import Any

import attrs
import numpy as np
import pytest
import typeguard
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import shax
import typeclasses
from shax import bool_, f32, f64, i32, optimizers, passes, stages
from shax.cli import main
from shax.codegen import compile_definition
from shax.ir import Definition, LinearizedDefinition
from typeclasses import add, mul, reduce_sum, sin

ROOT = Path(__file__).resolve().parents[1]


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


def transformed(transform: Callable[..., Any], arity: int = 1) -> Callable[..., Any]:
    """`transform(*its_args)(*call_args)`, the first `arity` arguments the transform's."""
    return lambda *args: transform(*args[:arity])(*args[arity:])


def vmap_with_axis(fn: Any, axis: Any, *args: Any) -> Any:
    return shax.vmap(fn, axis=axis)(*args)


def jit_source(fn: Any, *args: Any) -> Any:
    return shax.jit(fn).source(*args)


def hand_built_definition(name: Any, arg_types: Any, bindings: Any, outputs: Any) -> Any:
    return stages.infer_types(Definition(name, arg_types, bindings, outputs))


def hand_built_linearized(primal: Any, linear: Any, num_residuals: Any) -> Any:
    return stages.transpose(LinearizedDefinition(primal, linear, num_residuals))


def dtype_indexed(dtype: shax.DType) -> Callable[[Any], Any]:
    return lambda shape: dtype[shape]


def run_cli(*argv: str) -> int:
    try:
        return main(list(argv))
    except SystemExit as stopped:  # argparse's usage errors: a message, status 2, no traceback
        assert stopped.code == 2, stopped
        return 2


CLI_ARGUMENTS = st.one_of(
    st.sampled_from(["trace", "types", "explain", MEDIUM, "f32[6]", "f32[2,2]", "--inputs", "--seed", "--stages"]),
    st.text(max_size=6),
    st.sampled_from(["[1", "[[1, 2]]", '[["a"]]', "[[1, 2, 3, 4, 5, 6], [[1, 2], [3, 4]]]", "-1", "f,dft", "{}"]),
)

SHAX: dict[str, Call] = {
    "evaluate": Call(shax.evaluate, (TYPED, X), variadic=True),
    "evaluate (i32, bool)": Call(shax.evaluate, (INTEGERS, 3, FLAGS), variadic=True),
    "explain": Call(
        shax.explain, (loss, f32[3]), {"inputs": [X], "tangents": [Y], "cotangents": [2.0], "seed": 3}, variadic=True
    ),
    "Explanation": Call(EXPLANATION.show, (["f", "vjp"],)),
    "grad": Call(transformed(shax.grad, 2), (energy, (0, "y"), X, Y), variadic=True),
    "value_and_grad": Call(transformed(shax.value_and_grad, 2), (energy, None, X, Y), variadic=True),
    "vjp": Call(shax.vjp, (pair, X, Y), variadic=True),
    "vjp_fn": Call(VJP_FN, (X,), variadic=True),
    "jvp": Call(shax.jvp, (pair, (X, Y), (Y, X))),
    "linearize": Call(shax.linearize, (pair, X, Y), variadic=True),
    "f_jvp": Call(F_JVP, (Y, X), variadic=True),
    "vmap": Call(transformed(shax.vmap, 3), (pair, (0, None), 0, XS, X), variadic=True),
    "vmap(axis=)": Call(vmap_with_axis, (pair, 1, XS.T, XS.T), variadic=True),
    "jit": Call(transformed(shax.jit), (pair, X, Y), variadic=True),
    "jit (i32, bool)": Call(transformed(shax.jit), (integers, 3, FLAGS), variadic=True),
    "jit.source": Call(jit_source, (pair, X, f32[3]), variadic=True),
    "trace": Call(shax.trace, (pair, f32[3], "f32[3]"), {"name": "pair"}, variadic=True),
    "xpr": Call(shax.xpr, (pair, X, f32[3]), variadic=True),
    "TensorType": Call(shax.TensorType, (f32, (2, 3))),
    "TensorType.parse": Call(shax.TensorType.parse, ("f32[2, 3]",)),
    "Definition": Call(hand_built_definition, (DEFN.name, DEFN.arg_types, DEFN.bindings, DEFN.outputs)),
    "LinearizedDefinition": Call(hand_built_linearized, (LIN.primal, LIN.linear, LIN.num_residuals)),
    **{
        name: Call(dtype_indexed(getattr(shax, name)), ((2, 3),))
        for name in ("f32", "f64", "i32", "i64", "u8", "bool_")
    },
}
STAGES: dict[str, Call] = {
    "batch": Call(stages.batch, (TYPED, 0, 2, 0)),
    "check_types": Call(stages.check_types, (TYPED,)),
    "evaluate_linearized": Call(stages.evaluate_linearized, (LIN, [X], [Y])),
    "infer_types": Call(stages.infer_types, (DEFN,)),
    "linearize": Call(stages.linearize, (PAIR,), {"wrt": [1]}),
    "transpose": Call(stages.transpose, (LIN,)),
    "zip_definitions": Call(stages.zip_definitions, (TRANSPOSED,)),
}
PASSES: dict[str, Call] = {
    **{name: Call(getattr(passes, name), (PAIR,)) for name in [*passes.PASSES, "cleanup"]},
    "apply_passes": Call(passes.apply_passes, (PAIR, ["cse", "dce"])),
    "bind_arguments": Call(passes.bind_arguments, (PAIR, {1: Y})),
}
OPTIMIZERS: dict[str, Call] = {
    name: Call(
        getattr(optimizers, name), (loss, [X]), {"lr": 0.1, "iters": 2, "log": None}, bad={"iters": SMALL_COUNTS}
    )
    for name in ("gradient_descent", "momentum", "adam")
}
OTHERS: dict[str, Call] = {
    "compile_definition": Call(compile_definition, (PAIR,)),
    "compiled": Call(COMPILED, (X, Y), variadic=True),
    "cli": Call(
        run_cli,
        ("explain", MEDIUM, "f32[6]", "f32[2,2]", "--seed", "1"),
        variadic=True,
        bad={k: CLI_ARGUMENTS for k in range(7)},
    ),
}
# Names of `shax.__all__` with no driver of their own, and why.
NOT_CALLED = {
    "ShaxError": "an exception class",
    "ShaxTypeError": "an exception class",
    "ShaxValueError": "an exception class",
    "Tracer": "made by tracing, never by users",
    "DType": "the dtypes are fixed values, indexed by the f32, ..., bool_ drivers",
    "Var": "a part of a Definition: the Definition driver builds bad ones",
    "Binding": "a part of a Definition: the Definition driver builds bad ones",
    "primitives": "primitive classes are parts of a Definition: stages check hand-built ones (test_errors.py)",
    "extend": "declares primitives for the whole process; tests/test_extend.py covers its errors",
    # Not fuzzed yet: their drivers are still to write (the numpy surface's own tests cover them).
    "nn": "not fuzzed yet: tests/test_nn.py",
    "numpy": "not fuzzed yet: tests/test_numpy_*.py",
}
NAMESPACES = {"stages": (stages, STAGES), "passes": (passes, PASSES), "optimizers": (optimizers, OPTIMIZERS)}

# Typeclass functions: operands are f32 arrays (or, traced, tracers of their types); the
# calls of the functions with static parameters, or particular operands, are spelled out.
A23 = np.arange(1, 7, dtype=np.float32).reshape(2, 3)
TYPECLASS_CALLS: dict[str, tuple[Any, ...]] = {
    "reshape": (A23, (3, 2)),
    "broadcast": (X, [1], [2, 3]),
    "transpose": (A23, [1, 0]),
    "slice": (A23, [0, 1], [2, 3]),
    "pad": (A23, [(1, 0), (0, 2)], 0.0),
    "concatenate": (A23, A23, 1),
    "convert_element_type": (A23, np.float64),
    "rev": (A23, [1]),
    "reduce_sum": (A23, [1]),
    **{name: (A23, [1]) for name in ("reduce_max", "reduce_min", "reduce_prod", "mean", "var")},
    **{name: (A23, 1) for name in ("argmax", "argmin")},
    "select": (A23 > 2, A23, -A23),
    "dot_general": (A23, A23, ((1,), (1,), (), ())),
    "dot": (A23, A23.T),
    "matmul": (A23, A23.T),
    **{name: (A23 / 8,) for name in ("arccos", "arcsin", "arctanh")},
    "logical_and": (A23 > 2, A23 > 4),
    "logical_or": (A23 > 2, A23 > 4),
    "logical_not": (A23 > 2,),
    "where": (A23 > 2, A23, -A23),
    "gather": (A23, np.array([2, 0], np.int32), 1, 0),
    **{name: (A23, np.array([2, 0], np.int32), A23[:, :2], 1, 0) for name in ("scatter", "scatter_add")},
}


def typeclass_functions() -> dict[str, Callable[..., Any]]:
    return {name: typeclasses.FUNCTIONS[name][0] for name in typeclasses.__all__ if name in typeclasses.FUNCTIONS}


def operand_positions(function: Callable[..., Any]) -> list[int]:
    """The positions of the parameters a typeclass function dispatches on (typed by a TypeVar)."""
    hints = typing.get_type_hints(function)
    parameters = inspect.signature(function).parameters
    return [k for k, name in enumerate(parameters) if isinstance(hints.get(name), typing.TypeVar)]


def typeclass_call(function: Callable[..., Any]) -> tuple[Any, ...]:
    name = function.__name__
    if name in TYPECLASS_CALLS:
        return TYPECLASS_CALLS[name]
    positions = operand_positions(function)
    assert len(positions) == len(inspect.signature(function).parameters), f"{name}: spell out its call"
    return tuple(A23 + 0.5 for _ in positions)


def traced(function: Callable[..., Any]) -> Callable[..., Any]:
    """`function` run inside a trace: its operands that are arrays of a shax dtype become
    tracers of their types, everything else is passed on as it is."""
    positions = operand_positions(function)

    def call(*args: Any) -> Any:
        arrays = [k for k in positions if k < len(args) and _traceable(args[k])]

        def f(*tracers: Any) -> Any:
            given = list(args)
            for k, tracer in zip(arrays, tracers):
                given[k] = tracer
            return function(*given)

        return shax.trace(f, *(shax.TensorType.of(args[k]) for k in arrays))

    return call


def _traceable(value: Any) -> bool:
    return isinstance(value, np.ndarray) and value.dtype in (np.float32, np.float64, np.int32, np.bool_)


TYPECLASSES: dict[str, Call] = {
    f"tc.{name}": Call(fn, typeclass_call(fn), variants=(traced(fn),)) for name, fn in typeclass_functions().items()
}

ENTRY_POINTS: dict[str, Call] = {
    **SHAX,
    **{f"stages.{k}": c for k, c in STAGES.items()},
    **{f"passes.{k}": c for k, c in PASSES.items()},
    **{f"optimizers.{k}": c for k, c in OPTIMIZERS.items()},
    **OTHERS,
    **TYPECLASSES,
}


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
    """Run the call; fail unless it returns, or raises a ShaxError naming this file's line
    (the user's), leaving its arguments as they were."""
    before = contents((args, kwargs))
    try:
        with typeguard.suppress_type_checks():
            function(*args, **kwargs)
    except shax.ShaxError as error:
        assert f"{Path(__file__).name}:" in str(error), f"{entry}: no line of {Path(__file__).name} in: {error}"
    except Exception as error:
        raise AssertionError(f"{entry} raised {type(error).__name__}, not a ShaxError: {error}") from error
    assert contents((args, kwargs)) == before, f"{entry} changed its arguments"


# Tests ----------------------------------------------------------------------------------


def public_callables(module: Any) -> set[str]:
    """The callables a module exports: in its `__all__`, or else the public functions it defines."""
    if hasattr(module, "__all__"):
        return {n for n in module.__all__ if callable(getattr(module, n))}
    return {
        n
        for n, v in vars(module).items()
        if not n.startswith("_") and inspect.isfunction(v) and v.__module__ == module.__name__
    }


def test_every_public_name_is_fuzzed() -> None:
    missing = set(shax.__all__) - set(SHAX) - set(NOT_CALLED) - set(NAMESPACES)
    assert not missing, f"no fuzz driver for shax.{', shax.'.join(sorted(missing))}"
    for name, (module, calls) in NAMESPACES.items():
        missing = public_callables(module) - set(calls)
        assert not missing, f"no fuzz driver for shax.{name}.{', '.join(sorted(missing))}"
    missing = {f"tc.{n}" for n in typeclass_functions()} - set(TYPECLASSES)
    assert not missing, f"no fuzz driver for {', '.join(sorted(missing))}"


@pytest.mark.parametrize("entry", sorted(ENTRY_POINTS))
def test_the_good_call_succeeds(entry: str) -> None:
    # So that the fuzz below starts from calls that reach each entry point's work.
    call = ENTRY_POINTS[entry]
    for function in (call.function, *call.variants):
        result = function(*call.args, **call.kwargs)
        if entry == "cli":
            assert result == 0


# A share of the profile's examples for each of the many entry points (ci: 13 each, the
# whole test in about 15 s).
@pytest.mark.parametrize("entry", sorted(ENTRY_POINTS))
@pytest.mark.filterwarnings("ignore::RuntimeWarning")  # numpy's, on extreme values (exp overflowing): its own way
@settings(max_examples=max(1, settings.default.max_examples // 3))
@given(data=st.data())
def test_bad_input_raises_a_shax_error(entry: str, data: st.DataObject) -> None:
    call = ENTRY_POINTS[entry]
    function = data.draw(st.sampled_from((call.function, *call.variants)), label="function")
    args, kwargs = list(call.args), dict(call.kwargs)
    slots: list[int | str] = [*range(len(args)), *kwargs]
    chosen = data.draw(st.sets(st.sampled_from(slots), min_size=1) if slots else st.just(set()), label="bad")
    for slot in sorted(chosen, key=str):
        strategy = call.bad.get(slot, BAD)
        if isinstance(slot, int):
            args[slot] = data.draw(strategy, label=f"argument {slot}")
        else:
            kwargs[slot] = data.draw(strategy, label=slot)
    if call.variadic:
        change = data.draw(st.sampled_from([0, 0, -1, 1]), label="arity")
        if change < 0:
            args.pop()
        elif change > 0:
            args.append(data.draw(call.bad.get(len(args), BAD), label="extra argument"))
    attempt(entry, function, tuple(args), kwargs)

"""Hypothesis strategies for shax (needs hypothesis: `pip install 'shax[testing]'`).

The public ones: `dtypes()` (f32, f64), `tensor_types(dtype=None, ...)` (a dtype and a
small shape), `arrays(tensor_type, bound=ARG_BOUND)` (numpy arrays of that type, finite
elements within the bound) and `programs(dtype=f64, smooth=False, ...)`: well-typed
random programs over the whole vocabulary, each a `Program` (`fn`, `arg_types`, `args`),
shrinking to small programs. A property test to copy:

    import numpy as np
    from hypothesis import given, reject

    import shax
    from shax.testing import NotSmooth, check_grads
    from shax.testing.strategies import Program, arrays, programs, tensor_types

    @given(programs(smooth=True))      # float64; programs(shax.f32, ...) for float32
    def test_derivatives_match_finite_differences(program: Program) -> None:
        try:
            check_grads(program.fn, program.args, order=2)
        except NotSmooth:               # finite differences cannot tell there: draw again
            reject()

    def softplus(x):
        return np.logaddexp(0.0, x)     # numpy's functions run on shax's tracers too

    @given(tensor_types(shax.f64).flatmap(lambda t: arrays(t, bound=3.0)))
    def test_jit_agrees_with_numpy(x: np.ndarray) -> None:
        np.testing.assert_allclose(shax.jit(softplus)(x), softplus(x), rtol=1e-12)

A `Program` is a straight-line sequence of steps over values `v0, v1, ...`: first
its 1-3 arguments, then one value per step. Steps use only typeclass functions and
operators: pointwise Floating and Ord functions (with numpy broadcasting), Python
and numpy constants on either side, `broadcast`, `reshape`, `transpose`, `slice`,
`pad`, `reduce_sum`, `reduce_prod`, `reduce_max`, `reduce_min`, `dot`/`@` and
`dot_general` (batch and contracting axes, or none), `select` on predicates built
with `eq`, `argmax`/`argmin`/`argsort` cast back to the float dtype, `sort`, `gather`, `scatter_add`,
`scatter` and `x[...]` at constant index arrays, `snp.where` with a constant numpy mask
and a number branch, `snp.asarray(x).at[i].set(u)` and `.add(u)`, integer `%` and `//`
(of an `argmax`), floor division and remainders by float constants (`%`, `//`,
`remainder`, `floor_divide`, `fmod`), `shax.cond` on a reduced predicate (of one result, and of two: one binding),
loops (`shax.scan`, `shax.fori_loop`, `shax.while_loop`), the steps of
`shax.testing.structured_steps` (linear algebra on well-conditioned matrices, convolutions,
window reductions, slices at traced starts, checkpoint names, bitcasts), a step derived
for every elementwise primitive (`shax.testing.derived_steps`), and calls (below). It
returns 1-2 of its values (a tuple when two). Shapes are small (at most `MAX_SIZE`
elements, axes of size 1-3).

A call step reads one output of a `Callee`: a generated sub-program of 1-2 values of
the program, returning 1-2 of its values (maybe an argument, unchanged), run as a
`@shax.subgraph` function, by `shax.call` of its traced definition (typed, or
untyped), or as a `shax.custom_jvp` or `shax.custom_vjp` function whose rules are shax's
derivatives of it. A callee may be called again at later steps, on the same values (another of
its outputs: the same call) or on others of the same shapes, and a callee's steps may
call callees themselves (nesting, up to `MAX_CALL_DEPTH`).

Values stay finite and moderate: each value carries a bound on its magnitude,
functions with restricted domains only see safe arguments (`log(v * v + 1.0)`,
`tan(tanh(v))`, `v / (w * w + 1.0)`), and `exp` and products are only applied
while the bound stays under `MAX_BOUND`. With `smooth=True` only differentiable
operations are used (no `abs`, `signum`, `min`, `max`, `reduce_max`, `reduce_min`,
`select`/`eq`), for
comparisons against finite differences.

`repr(program)` lists the callees, then the steps, e.g.

    Program(f64[2, 3], f64[3]) with args drawn
      subgraph g0(v0 :: f64[2, 3]) =
        v1 = sin(v0)
        return v1, v0
      v2 = g0(v0)[0]
      v3 = broadcast(v1, dims=[1], shape=[2, 3])
      v4 = v2 * v3
      return v4
"""

from __future__ import annotations

import builtins
import inspect
import math
import reprlib
from collections.abc import Callable, Sequence
from typing import Any, overload

import attrs
import numpy as np
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import shax
import shax.numpy as snp
from shax.core.errors import ShaxError, ShaxValueError, at
from shax.core.location import current_source
from shax.core.types import DType, TensorType, bool_, f32, f64
from shax.stages import infer_types
from typeclasses import (
    arccos,
    arcsin,
    arcsinh,
    arctan,
    arctan2,
    arctanh,
    argmax,
    argmin,
    argsort,
    broadcast,
    clip,
    concatenate,
    convert_element_type,
    cos,
    cosh,
    dot,
    dot_general,
    eq,
    erf,
    exp,
    expm1,
    gather,
    ge,
    gt,
    le,
    log,
    log1p,
    logaddexp,
    logical_and,
    logical_not,
    logistic,
    lt,
    max,
    min,
    ne,
    pad,
    reciprocal,
    reduce_max,
    reduce_min,
    reduce_prod,
    reduce_sum,
    rem,
    reshape,
    rev,
    round,
    rsqrt,
    scatter,
    scatter_add,
    select,
    signum,
    sin,
    sinh,
    slice,
    sqrt,
    square,
    stop_gradient,
    tan,
    tanh,
    transpose,
    where,
)

Shape = tuple[int, ...]

MAX_SIZE = 36  # elements per value
MAX_BOUND = 1e4  # on |element| of every value
ARG_BOUND = 2.0  # arguments are drawn from [-ARG_BOUND, ARG_BOUND]
MAX_CALL_DEPTH = 2  # a program calls callees, whose steps call callees, whose steps call none
MAX_CALLEE_STEPS = 4


@attrs.frozen
class Step:
    """One value: `apply(*operand values)`, shown as `text` with `{0}`, `{1}`, ...
    standing for the operands `v{operands[0]}`, ..."""

    text: str
    operands: tuple[int, ...]
    apply: Callable[..., Any] = attrs.field(eq=False)

    def show(self) -> str:
        return self.text.format(*(f"v{k}" for k in self.operands))


@attrs.frozen(repr=False)
class Program:
    """A generated well-typed program.

    `fn(*args)` runs it: positional arguments of types `arg_types`, typeclass functions
    only, so it runs on numpy values and on tracers alike. `args` are drawn values of
    those types. `steps[k]` computes value `v{len(arg_types) + k}`; `outputs` are the
    indices of the returned values (one value, or a tuple of two)."""

    fn: Callable[..., Any] = attrs.field(eq=False)
    arg_types: tuple[TensorType, ...]
    args: tuple[np.ndarray, ...] = attrs.field(eq=False)
    steps: tuple[Step, ...]
    outputs: tuple[int, ...]
    callees: tuple[Callee, ...] = ()  # every callee its steps (or its callees' steps) call

    def __repr__(self) -> str:
        lines = [f"Program({', '.join(map(str, self.arg_types))}) with args {[a.tolist() for a in self.args]}"]
        lines += [line for callee in self.callees for line in callee.show()]
        lines += _show_steps(len(self.arg_types), self.steps, self.outputs, "  ")
        return "\n".join(lines)

    def _repr_pretty_(self, printer: Any, cycle: bool) -> None:
        """Hypothesis shows falsifying examples with this (it would list the attrs fields)."""
        printer.text(repr(self))


def _show_steps(num_args: int, steps: Sequence[Step], outputs: Sequence[int], indent: str) -> list[str]:
    lines = [f"{indent}v{num_args + k} = {step.show()}" for k, step in enumerate(steps)]
    return [*lines, f"{indent}return " + ", ".join(f"v{k}" for k in outputs)]


def compile_program(
    num_args: int, steps: Sequence[Step], outputs: Sequence[int], name: str = "program"
) -> Callable[..., Any]:
    """The plain Python function that runs `steps` on `num_args` positional arguments."""
    steps, outputs = tuple(steps), tuple(outputs)

    def program(*args: Any) -> Any:
        if len(args) != num_args:
            raise TypeError(f"program takes {num_args} arguments, got {len(args)}")
        values = list(args)
        for step in steps:
            values.append(step.apply(*(values[k] for k in step.operands)))
        results = tuple(values[k] for k in outputs)
        return results[0] if len(results) == 1 else results

    parameters = [inspect.Parameter(f"v{k}", inspect.Parameter.POSITIONAL_ONLY) for k in range(num_args)]
    program.__signature__ = inspect.Signature(parameters)  # type: ignore[attr-defined]
    program.__name__ = program.__qualname__ = name
    return program


@attrs.frozen
class Value:
    """What the generator knows of a value: its shape and a bound on |element|."""

    shape: Shape
    bound: float

    @property
    def rank(self) -> int:
        return len(self.shape)

    @property
    def size(self) -> int:
        return math.prod(self.shape)


Draw = Callable[[st.SearchStrategy[Any]], Any]
# A generator of one step from the values so far: (step, the new value), or None if it does not apply.
StepMaker = Callable[[Draw, list[Value], DType], "tuple[Step, Value] | None"]


def _fits(shape: Shape, bound: float) -> bool:
    return math.prod(shape) <= MAX_SIZE and bound <= MAX_BOUND


NONZERO = (0.5, 1.5, 2.0, -1.0, -0.25)


def _constant(draw: Draw, dtype: DType, shape: Shape, nonzero: bool) -> tuple[Any, str]:
    """A constant of `dtype` that broadcasts against `shape`: a Python float, a numpy
    scalar or a numpy array (of a trailing part of `shape`, some axes 1)."""
    kind = draw(st.sampled_from(["float", "numpy_scalar", "array"]))
    number = draw(st.sampled_from(NONZERO))
    if kind == "float":
        return number, repr(number)
    if kind == "numpy_scalar":
        return dtype.numpy(number), f"np.{np.dtype(dtype.numpy).name}({number})"
    rank = draw(st.integers(0, len(shape)))
    sub = tuple(draw(st.sampled_from([1, n])) for n in shape[len(shape) - rank :])
    elements = st.sampled_from(NONZERO) if nonzero else _elements(dtype)
    value = draw(hnp.arrays(dtype.numpy, sub, elements=elements))
    return value, f"np.array({value.tolist()}, {np.dtype(dtype.numpy).name})"


def _elements(dtype: DType) -> st.SearchStrategy[float]:
    return st.floats(-ARG_BOUND, ARG_BOUND, width=32 if dtype == f32 else 64, allow_subnormal=False)


@overload
def _pick(draw: Draw, values: list[Value]) -> int: ...
@overload
def _pick(draw: Draw, values: list[Value], accept: Callable[[Value], bool]) -> int | None: ...
def _pick(draw: Draw, values: list[Value], accept: Callable[[Value], bool] = lambda v: True) -> int | None:
    """The index of one of `values` that `accept` accepts (any, without `accept`: there is
    always one), or None if none does."""
    candidates = [k for k, v in enumerate(values) if accept(v)]
    if not candidates:
        return None
    # Half the time the newest value, so that programs are chains more than independent branches.
    if draw(st.booleans()):
        return candidates[-1]
    return draw(st.sampled_from(candidates[::-1]))


def _unary(
    text: str,
    apply: Callable[[Any], Any],
    bound: Callable[[float], float],
    applies: Callable[[float], bool] = lambda b: True,
) -> StepMaker:
    def make(draw: Draw, values: list[Value], dtype: DType) -> tuple[Step, Value] | None:
        k = _pick(draw, values, lambda v: applies(v.bound))
        if k is None:
            return None
        result = Value(values[k].shape, bound(values[k].bound))
        return (Step(text, (k,), apply), result) if _fits(result.shape, result.bound) else None

    return make


def _broadcast_shape(a: Shape, b: Shape) -> Shape | None:
    try:
        return tuple(np.broadcast_shapes(a, b))
    except ValueError:
        return None


def _binary(text: str, apply: Callable[[Any, Any], Any], bound: Callable[[float, float], float]) -> StepMaker:
    """`text` on two values whose shapes broadcast together."""

    def make(draw: Draw, values: list[Value], dtype: DType) -> tuple[Step, Value] | None:
        k = _pick(draw, values)
        j = _pick(draw, values, lambda v: _broadcast_shape(values[k].shape, v.shape) is not None)
        assert j is not None  # values[k] itself qualifies
        if draw(st.booleans()):
            k, j = j, k
        shape = _broadcast_shape(values[k].shape, values[j].shape)
        assert shape is not None  # as j was picked
        result = Value(shape, bound(values[k].bound, values[j].bound))
        return (Step(text, (k, j), apply), result) if _fits(shape, result.bound) else None

    return make


def _with_constant(draw: Draw, values: list[Value], dtype: DType) -> tuple[Step, Value] | None:
    """A value and a constant, the constant on either side of +, - and *, or dividing."""
    k = _pick(draw, values)
    v = values[k]
    op = draw(st.sampled_from(["+", "-", "*", "/"]))
    c, shown = _constant(draw, dtype, v.shape, nonzero=op == "/")
    shape = _broadcast_shape(v.shape, np.shape(c))
    assert shape is not None  # the constant is drawn to broadcast against v
    c_bound = float(np.max(np.abs(c), initial=0.0))
    operations: dict[str, tuple[Callable[[Any, Any], Any], float]] = {
        "+": (lambda x, y: x + y, v.bound + c_bound),
        "-": (lambda x, y: x - y, v.bound + c_bound),
        "*": (lambda x, y: x * y, v.bound * c_bound),
        "/": (lambda x, y: x / y, v.bound / builtins.min(abs(n) for n in NONZERO)),
    }
    function, bound = operations[op]
    if op != "/" and draw(st.booleans()):
        step = Step(f"{shown} {op} {{0}}", (k,), lambda x, _c=c, _f=function: _f(_c, x))
    else:
        step = Step(f"{{0}} {op} {shown}", (k,), lambda x, _c=c, _f=function: _f(x, _c))
    result = Value(shape, bound)
    return (step, result) if _fits(shape, bound) else None


def _broadcast(draw: Draw, values: list[Value], dtype: DType) -> tuple[Step, Value] | None:
    """Insert 0-2 new axes and stretch some size-1 axes."""
    k = _pick(draw, values)
    v = values[k]
    out_rank = v.rank + draw(st.integers(0, 2))
    dims = sorted(draw(st.permutations(range(out_rank)))[: v.rank])
    shape = [draw(st.integers(1, 3)) for _ in range(out_rank)]
    for axis, d in enumerate(dims):
        shape[d] = draw(st.integers(1, 3)) if v.shape[axis] == 1 else v.shape[axis]
    if not _fits(tuple(shape), v.bound):
        return None
    step = Step(
        f"broadcast({{0}}, dims={dims}, shape={shape})", (k,), lambda x, _d=dims, _s=shape: broadcast(x, _d, _s)
    )
    return step, Value(tuple(shape), v.bound)


def _prime_factors(n: int) -> list[int]:
    factors, p = [], 2
    while n > 1:
        while n % p == 0:
            factors.append(p)
            n //= p
        p += 1
    return factors


def _reshape(draw: Draw, values: list[Value], dtype: DType) -> tuple[Step, Value] | None:
    """Group the shuffled prime factors of the size into 0-3 axes, adding some 1s."""
    k = _pick(draw, values)
    v = values[k]
    factors = draw(st.permutations(_prime_factors(v.size)))
    rank = draw(st.integers(1 if factors else 0, 3))
    if rank == 0:
        shape = []
    else:
        cuts = sorted(draw(st.lists(st.integers(0, len(factors)), min_size=rank - 1, max_size=rank - 1)))
        ends = [0, *cuts, len(factors)]
        shape = [math.prod(factors[a:b]) for a, b in zip(ends, ends[1:])]
    step = Step(f"reshape({{0}}, {shape})", (k,), lambda x, _s=shape: reshape(x, _s))
    return step, Value(tuple(shape), v.bound)


def _transpose(draw: Draw, values: list[Value], dtype: DType) -> tuple[Step, Value] | None:
    k = _pick(draw, values)
    v = values[k]
    perm = list(draw(st.permutations(range(len(v.shape)))))
    step = Step(f"transpose({{0}}, {perm})", (k,), lambda x, _p=perm: transpose(x, _p))
    return step, Value(tuple(v.shape[p] for p in perm), v.bound)


def _slice(draw: Draw, values: list[Value], dtype: DType) -> tuple[Step, Value] | None:
    k = _pick(draw, values)
    v = values[k]
    start = [draw(st.integers(0, n - 1)) for n in v.shape]
    end = [draw(st.integers(s + 1, n)) for s, n in zip(start, v.shape)]
    step = Step(f"slice({{0}}, {start}, {end})", (k,), lambda x, _s=start, _e=end: slice(x, _s, _e))
    return step, Value(tuple(e - s for s, e in zip(start, end)), v.bound)


def _pad(draw: Draw, values: list[Value], dtype: DType) -> tuple[Step, Value] | None:
    k = _pick(draw, values)
    v = values[k]
    lohi = [(draw(st.integers(0, 2)), draw(st.integers(0, 2))) for _ in v.shape]
    value = draw(st.sampled_from([0.0, 1.0, -0.5]))
    shape = tuple(n + lo + hi for n, (lo, hi) in zip(v.shape, lohi))
    result = Value(shape, builtins.max(v.bound, abs(value)))
    if not _fits(shape, result.bound):
        return None
    step = Step(f"pad({{0}}, {lohi}, {value})", (k,), lambda x, _p=lohi, _v=value: pad(x, _p, _v))
    return step, result


def _rev(draw: Draw, values: list[Value], dtype: DType) -> tuple[Step, Value] | None:
    k = _pick(draw, values)
    v = values[k]
    axes = sorted(draw(st.sets(st.integers(0, len(v.shape) - 1))) if v.shape else [])
    return Step(f"rev({{0}}, {axes})", (k,), lambda x, _a=axes: rev(x, _a)), v


def _concatenate(draw: Draw, values: list[Value], dtype: DType) -> tuple[Step, Value] | None:
    k = _pick(draw, values, lambda v: len(v.shape) > 0)
    if k is None:
        return None
    v = values[k]
    axis = draw(st.integers(0, len(v.shape) - 1))
    rest = v.shape[:axis] + v.shape[axis + 1 :]
    j = _pick(draw, values, lambda w: len(w.shape) == len(v.shape) and w.shape[:axis] + w.shape[axis + 1 :] == rest)
    assert j is not None  # v itself qualifies
    shape = list(v.shape)
    shape[axis] += values[j].shape[axis]
    result = Value(tuple(shape), builtins.max(v.bound, values[j].bound))
    if not _fits(result.shape, result.bound):
        return None
    step = Step(f"concatenate({{0}}, {{1}}, {axis})", (k, j), lambda x, y, _a=axis: concatenate(x, y, _a))
    return step, result


def _reduction(name: str, f: Callable[[Any, list[int]], Any], bound: Callable[[float, int], float]) -> StepMaker:
    """A step reducing some axes of a value (maybe none, maybe all) with `f`; `bound(b, n)`
    bounds the result of reducing n elements bounded by b."""

    def draw_step(draw: Draw, values: list[Value], dtype: DType) -> tuple[Step, Value] | None:
        k = _pick(draw, values)
        v = values[k]
        axes = list(draw(st.permutations(range(len(v.shape)))))[: draw(st.integers(0, len(v.shape)))]
        shape = tuple(n for a, n in enumerate(v.shape) if a not in axes)
        result = Value(shape, bound(v.bound, math.prod(v.shape[a] for a in axes)))
        if not _fits(shape, result.bound):
            return None
        return Step(f"{name}({{0}}, {axes})", (k,), lambda x, _a=axes: f(x, _a)), result

    return draw_step


def _arg_reduction(name: str, f: Callable[[Any, int], Any]) -> StepMaker:
    """The index (i32) of the largest or smallest element along an axis, cast back to the
    value's float dtype, so that outputs stay float: piecewise constant, derivative 0."""

    def draw_step(draw: Draw, values: list[Value], dtype: DType) -> tuple[Step, Value] | None:
        k = _pick(draw, values, lambda v: len(v.shape) > 0)
        if k is None:
            return None
        v = values[k]
        axis = draw(st.integers(0, len(v.shape) - 1))
        shape = tuple(n for a, n in enumerate(v.shape) if a != axis)

        def apply(x: Any, _a: int = axis) -> Any:
            return convert_element_type(f(x, _a), getattr(x.dtype, "numpy", x.dtype))

        return Step(f"{name}({{0}}, {axis}) as its dtype", (k,), apply), Value(shape, float(v.shape[axis] - 1))

    return draw_step


def _sort(draw: Draw, values: list[Value], dtype: DType) -> tuple[Step, Value] | None:
    """A value sorted along an axis (`take_along_axis` at `argsort`), or its `argsort` cast
    back to the float dtype."""
    k = _pick(draw, values, lambda v: len(v.shape) > 0)
    if k is None:
        return None
    v = values[k]
    axis = draw(st.integers(0, len(v.shape) - 1))
    if draw(st.booleans()):
        return Step(f"sort({{0}}, {axis})", (k,), lambda x, _a=axis: snp.sort(x, axis=_a)), v

    def apply(x: Any, _a: int = axis) -> Any:
        return convert_element_type(argsort(x, _a), getattr(x.dtype, "numpy", x.dtype))

    return Step(f"argsort({{0}}, {axis}) as its dtype", (k,), apply), Value(v.shape, float(v.shape[axis] - 1))


def _dot_general(draw: Draw, values: list[Value], dtype: DType) -> tuple[Step, Value] | None:
    """Pair up equal-sized axes of two values (maybe the same value), some as
    contracting and some as batch axes; none at all is an outer product."""
    k = _pick(draw, values)
    j = _pick(draw, values)
    x, y = values[k], values[j]
    pairs = [(a, b) for a in range(len(x.shape)) for b in range(len(y.shape)) if x.shape[a] == y.shape[b]]
    chosen: list[tuple[int, int]] = []
    for a, b in draw(st.permutations(pairs)):
        if len(chosen) < 3 and all(a != c and b != d for c, d in chosen) and draw(st.booleans()):
            chosen.append((a, b))
    batch_count = draw(st.integers(0, len(chosen)))
    batch, contracting = chosen[:batch_count], chosen[batch_count:]
    dims = ([a for a, _ in contracting], [b for _, b in contracting], [a for a, _ in batch], [b for _, b in batch])
    used_x = {a for a, _ in chosen}
    used_y = {b for _, b in chosen}
    shape = (
        *(x.shape[a] for a, _ in batch),
        *(n for a, n in enumerate(x.shape) if a not in used_x),
        *(n for b, n in enumerate(y.shape) if b not in used_y),
    )
    bound = x.bound * y.bound * math.prod(x.shape[a] for a, _ in contracting)
    if not _fits(shape, bound):
        return None
    step = Step(f"dot_general({{0}}, {{1}}, {dims})", (k, j), lambda a, b, _d=dims: dot_general(a, b, _d))
    return step, Value(shape, bound)


def _dot(draw: Draw, values: list[Value], dtype: DType) -> tuple[Step, Value] | None:
    """`dot(x, y)` or `x @ y` on vectors and matrices."""
    k = _pick(draw, values, lambda v: len(v.shape) in (1, 2))
    if k is None:
        return None
    x = values[k]

    def fits(v: Value) -> bool:
        return len(v.shape) in (1, 2) and v.shape[builtins.max(len(v.shape) - 2, 0)] == x.shape[-1]

    j = _pick(draw, values, fits)
    if j is None:
        return None
    y = values[j]
    shape = (*x.shape[:-1], *(y.shape[1:] if len(y.shape) == 2 else ()))
    bound = x.bound * y.bound * x.shape[-1]
    if not _fits(shape, bound):
        return None
    if draw(st.booleans()):
        step = Step("{0} @ {1}", (k, j), lambda a, b: a @ b)
    else:
        step = Step("dot({0}, {1})", (k, j), dot)
    return step, Value(shape, bound)


COMPARISONS = (eq, ne, lt, le, gt, ge)


def _select(draw: Draw, values: list[Value], dtype: DType) -> tuple[Step, Value] | None:
    """`select` on a predicate from a comparison, between values of the predicate's shape (or a number)."""
    k = _pick(draw, values)
    same = [j for j, v in enumerate(values) if v.shape == values[k].shape]
    on_true = draw(st.sampled_from(same))
    operands: tuple[int, ...]
    if draw(st.booleans()):
        pred_text, operands, pred = "eq(signum({0}), 1.0)", (k,), lambda p: eq(signum(p), 1.0)
    else:
        compare = draw(st.sampled_from(COMPARISONS))
        pred_text, operands, pred = f"{compare.__name__}({{0}}, {{1}})", (k, on_true), compare
    n = len(operands)
    bound = values[on_true].bound
    if draw(st.booleans()):
        on_false = draw(st.sampled_from(same))
        text, operands = f"select({pred_text}, {{{n}}}, {{{n + 1}}})", (*operands, on_true, on_false)
        bound = builtins.max(bound, values[on_false].bound)

        def apply(*o: Any) -> Any:
            return select(pred(*o[:n]), o[n], o[n + 1])
    else:
        number = draw(st.sampled_from([0.0, 1.0]))
        text, operands = f"select({pred_text}, {{{n}}}, {number})", (*operands, on_true)
        bound = builtins.max(bound, number)

        def apply(*o: Any) -> Any:
            return select(pred(*o[:n]), o[n], number)

    return Step(text, operands, apply), Value(values[k].shape, bound)


def _indices(draw: Draw, n: int) -> np.ndarray:
    """An index array (rank 0 to 2) into an axis of n elements: negative ones, repeats,
    and ones beyond the axis (clamped), as the gather family reads them."""
    shape = draw(st.lists(st.integers(1, 3), max_size=2).map(tuple))
    return np.asarray(draw(hnp.arrays(np.int32, shape, elements=st.integers(-n - 1, n))), np.int32)


def _gather(draw: Draw, values: list[Value], dtype: DType) -> tuple[Step, Value] | None:
    """`gather` along one axis at constant indices, or `x[key]` with an index array."""
    k = _pick(draw, values, lambda v: v.rank > 0)
    if k is None:
        return None
    v = values[k]
    axis = draw(st.integers(0, v.rank - 1))
    i = _indices(draw, v.shape[axis])
    shape = (*v.shape[:axis], *i.shape, *v.shape[axis + 1 :])
    if not _fits(shape, v.bound):
        return None
    if draw(st.booleans()):
        key = (*(builtins.slice(None),) * axis, np.mod(i, v.shape[axis]))  # numpy's indexing: in range
        shown = ", ".join([":"] * axis + [str(key[-1].tolist())])
        return Step(f"{{0}}[{shown}]", (k,), lambda x, _k=key: x[_k]), Value(shape, v.bound)
    return Step(f"gather({{0}}, {i.tolist()}, {axis}, 0)", (k,), lambda x, _i=i, _a=axis: gather(x, _i, _a, 0)), Value(
        shape, v.bound
    )


def _scatter(draw: Draw, values: list[Value], dtype: DType) -> tuple[Step, Value] | None:
    """`scatter_add` or `scatter` into a value, of updates gathered from a value of its shape."""
    k = _pick(draw, values, lambda v: v.rank > 0)
    if k is None:
        return None
    x = values[k]
    j = _pick(draw, values, lambda w: w.shape == x.shape)
    assert j is not None  # x itself qualifies
    axis = draw(st.integers(0, x.rank - 1))
    i = _indices(draw, x.shape[axis])
    n = x.shape[axis]
    source = np.asarray(draw(hnp.arrays(np.int32, i.shape, elements=st.integers(-n - 1, n))), np.int32)
    if draw(st.booleans()):
        name, f, bound = "scatter_add", scatter_add, x.bound + i.size * values[j].bound
    else:
        name, f, bound = "scatter", scatter, builtins.max(x.bound, values[j].bound)
    if not _fits(x.shape, bound):
        return None
    text = f"{name}({{0}}, {i.tolist()}, gather({{1}}, {source.tolist()}, {axis}, 0), {axis}, 0)"

    def apply(x: Any, y: Any, _i: np.ndarray = i, _s: np.ndarray = source, _a: int = axis) -> Any:
        return f(x, _i, gather(y, _s, _a, 0), _a, 0)

    return Step(text, (k, j), apply), Value(x.shape, bound)


def _masked(draw: Draw, values: list[Value], dtype: DType) -> tuple[Step, Value] | None:
    """`snp.where` of a constant mask (a numpy bool array whose shape broadcasts with the
    value's, maybe with a new leading axis, or a numpy bool) between a value and a number,
    either way round: the causal mask's pattern. Linear in the value, so smooth."""
    k = _pick(draw, values)
    v = values[k]
    rank = draw(st.integers(0, v.rank + 1))
    if rank == 0 and draw(st.booleans()):
        mask: Any = np.bool_(draw(st.booleans()))
        shown = f"np.{mask!r}"
    else:
        lead = (draw(st.integers(1, 3)),) if rank > v.rank else ()
        sub = lead + tuple(draw(st.sampled_from([1, n])) for n in v.shape[v.rank - rank + len(lead) :])
        mask = draw(hnp.arrays(np.bool_, sub))
        shown = f"np.array({mask.tolist()})"
    shape = _broadcast_shape(np.shape(mask), v.shape)
    assert shape is not None  # the mask is drawn to broadcast against v
    number = draw(st.sampled_from([0.0, -3.0, 1.5]))
    result = Value(shape, builtins.max(v.bound, abs(number)))
    if not _fits(shape, result.bound):
        return None
    if draw(st.booleans()):
        step = Step(f"where({shown}, {{0}}, {number})", (k,), lambda x, _m=mask, _n=number: snp.where(_m, x, _n))
    else:
        step = Step(f"where({shown}, {number}, {{0}})", (k,), lambda x, _m=mask, _n=number: snp.where(_m, _n, x))
    return step, result


def _at_update(draw: Draw, values: list[Value], dtype: DType) -> tuple[Step, Value] | None:
    """`snp.asarray(x).at[i].set(u)` or `.add(u)` at constant indices along the first axis
    (an int, or a list: distinct ones for set, repeats accumulating for add; negative ones
    from the end), u another value that broadcasts to the indexed shape, or a number."""
    k = _pick(draw, values, lambda v: v.rank > 0)
    if k is None:
        return None
    x = values[k]
    n = x.shape[0]
    method = draw(st.sampled_from(["set", "add"]))
    key: Any
    if draw(st.booleans()):
        key = draw(st.integers(-n, n - 1))
        target = x.shape[1:]
    else:
        unique = (lambda j: j % n) if method == "set" else (lambda j: object())
        key = draw(st.lists(st.integers(-n, n - 1), min_size=1, max_size=3, unique_by=unique))
        target = (len(key), *x.shape[1:])
    j = _pick(draw, values, lambda w: _broadcast_shape(w.shape, target) == target)
    number = draw(st.sampled_from([0.0, 2.0, -0.5]))
    operands: tuple[int, ...]
    if j is None or draw(st.booleans()):
        operands, u_bound, shown = (k,), abs(number), repr(number)
    else:
        operands, u_bound, shown = (k, j), values[j].bound, "{1}"
    count = 1 if isinstance(key, int) else len(key)
    bound = builtins.max(x.bound, u_bound) if method == "set" else x.bound + count * u_bound
    if not _fits(x.shape, bound):
        return None
    index = np.asarray(key) if isinstance(key, list) else key

    def apply(x: Any, *u: Any) -> Any:
        return getattr(snp.asarray(x).at[index], method)(u[0] if u else number)

    return Step(f"{{0}}.at[{key}].{method}({shown})", operands, apply), Value(x.shape, bound)


def _integer_arithmetic(draw: Draw, values: list[Value], dtype: DType) -> tuple[Step, Value] | None:
    """Integer `%` and `//` (numpy's floor semantics, negative operands and divisors too)
    of the index of a value's largest element along an axis, cast back to the float dtype."""
    k = _pick(draw, values, lambda v: v.rank > 0)
    if k is None:
        return None
    v = values[k]
    axis = draw(st.integers(0, v.rank - 1))
    scale, shift = draw(st.sampled_from([1, 2, -3])), draw(st.sampled_from([-2, 0, 1]))
    modulus, divisor = draw(st.sampled_from([2, 3, -2])), draw(st.sampled_from([2, -3, 4]))
    shape = tuple(n for a, n in enumerate(v.shape) if a != axis)

    def apply(x: Any, _a: int = axis) -> Any:
        i = snp.argmax(x, axis=_a)
        return convert_element_type((i * scale + shift) % modulus + (i - shift) // divisor, dtype.numpy)

    text = f"(argmax({{0}}, {axis}) * {scale} + {shift}) % {modulus} + (argmax - {shift}) // {divisor} as its dtype"
    return Step(text, (k,), apply), Value(shape, 3.0 + (v.shape[axis] + 2) / 2 + 1)


def _float_remainder(draw: Draw, values: list[Value], dtype: DType) -> tuple[Step, Value] | None:
    """A value's floor division or remainder by a constant of either sign (a Python float
    or a numpy scalar of the value's dtype): `%`, `//`, `remainder`, `floor_divide`, `fmod`."""
    k = _pick(draw, values)
    v = values[k]
    number = draw(st.sampled_from([0.75, 1.5, 2.25, -1.25]))
    c: Any = number
    shown = repr(number)
    if draw(st.booleans()):
        c, shown = dtype.numpy(number), f"np.{np.dtype(dtype.numpy).name}({number})"
    functions: dict[str, tuple[Callable[[Any, Any], Any], float]] = {
        "{0} % " + shown: (lambda x, c: x % c, abs(number)),
        "{0} // " + shown: (lambda x, c: x // c, v.bound / 0.75 + 1.0),
        f"remainder({{0}}, {shown})": (snp.remainder, abs(number)),
        f"floor_divide({{0}}, {shown})": (snp.floor_divide, v.bound / 0.75 + 1.0),
        f"fmod({{0}}, {shown})": (snp.fmod, abs(number)),
    }
    text = draw(st.sampled_from(sorted(functions)))
    function, bound = functions[text]
    if not _fits(v.shape, bound):
        return None
    return Step(text, (k,), lambda x, _f=function, _c=c: _f(x, _c)), Value(v.shape, bound)


# Steps by family; a step is drawn by family first, so that no family crowds out the others.
def _sin_in_f64(x: Any) -> Any:
    """sin computed in f64, cast back to x's dtype (a numpy dtype, or a tracer's shax dtype)."""
    dtype = getattr(x.dtype, "numpy", x.dtype)
    return convert_element_type(sin(convert_element_type(x, np.float64)), dtype)


def _cond_step(x: Any, y: Any) -> Any:
    return shax.cond(lt(snp.sum(x), 0.0), lambda x, y: x * tanh(y), lambda x, y: x - y, x, y)


def _cond_pair_step(x: Any, y: Any) -> Any:
    """A cond of two results (one binding defining both), then their difference."""
    u, v = shax.cond(
        lt(snp.sum(x), 0.0), lambda x, y: (x * tanh(y), (x + y) * 0.5), lambda x, y: (x - y, (y - x) * 0.5), x, y
    )
    return u - v


FAMILIES: dict[str, dict[str, StepMaker]] = {
    "unary": {
        "sin": _unary("sin({0})", sin, lambda b: 1.0),
        "cos": _unary("cos({0})", cos, lambda b: 1.0),
        "tanh": _unary("tanh({0})", tanh, lambda b: 1.0),
        "tan": _unary("tan(tanh({0}))", lambda x: tan(tanh(x)), lambda b: 1.6),
        "exp": _unary("exp({0})", exp, math.exp, lambda b: b <= 4.0),
        "sinh": _unary("sinh({0})", sinh, math.sinh, lambda b: b <= 4.0),
        "cosh": _unary("cosh({0})", cosh, math.cosh, lambda b: b <= 4.0),
        "log": _unary("log({0} * {0} + 1.0)", lambda x: log(x * x + 1.0), lambda b: math.log(b * b + 1.0)),
        "sqrt": _unary("sqrt({0} * {0} + 1.0)", lambda x: sqrt(x * x + 1.0), lambda b: math.sqrt(b * b + 1.0)),
        "neg": _unary("-{0}", lambda x: -x, lambda b: b),
        "square": _unary("{0} ** 2.0", lambda x: x**2.0, lambda b: b * b),
        "cube": _unary("{0} ** 3.0", lambda x: x**3.0, lambda b: b**3),
        "rsqrt": _unary("({0} * {0} + 1.0) ** -0.5", lambda x: (x * x + 1.0) ** -0.5, lambda b: 1.0),
        "log1p": _unary("log1p({0} * {0})", lambda x: log1p(x * x), lambda b: math.log1p(b * b)),
        "expm1": _unary("expm1({0})", expm1, math.expm1, lambda b: b <= 4.0),
        "logistic": _unary("logistic({0})", logistic, lambda b: 1.0),
        # Inside (-1, 1) by 0.9 · tanh, away from the poles of the derivatives
        "arcsin": _unary("arcsin(0.9 * tanh({0}))", lambda x: arcsin(0.9 * tanh(x)), lambda b: 1.2),
        "arccos": _unary("arccos(0.9 * tanh({0}))", lambda x: arccos(0.9 * tanh(x)), lambda b: 2.7),
        "arctanh": _unary("arctanh(0.9 * tanh({0}))", lambda x: arctanh(0.9 * tanh(x)), lambda b: 1.5),
        "arctan": _unary("arctan({0})", arctan, lambda b: 1.6),
        "arcsinh": _unary("arcsinh({0})", arcsinh, math.asinh),
        "erf": _unary("erf({0})", erf, lambda b: 1.0),
        "square_fn": _unary("square({0})", square, lambda b: b * b),
        "reciprocal": _unary("reciprocal({0} * {0} + 1.0)", lambda x: reciprocal(x * x + 1.0), lambda b: 1.0),
        "rsqrt_fn": _unary("rsqrt({0} * {0} + 1.0)", lambda x: rsqrt(x * x + 1.0), lambda b: 1.0),
        "cast": _unary("sin({0} as f64) as its dtype", _sin_in_f64, lambda b: 1.0),
    },
    "binary": {
        "add": _binary("{0} + {1}", lambda x, y: x + y, lambda a, b: a + b),
        "sub": _binary("{0} - {1}", lambda x, y: x - y, lambda a, b: a + b),
        "mul": _binary("{0} * {1}", lambda x, y: x * y, lambda a, b: a * b),
        "div": _binary("{0} / ({1} * {1} + 1.0)", lambda x, y: x / (y * y + 1.0), lambda a, b: a),
        "pow": _binary("({0} * {0} + 1.0) ** sin({1})", lambda x, y: (x * x + 1.0) ** sin(y), lambda a, b: a * a + 1.0),
        "logaddexp": _binary("logaddexp({0}, {1})", logaddexp, lambda a, b: builtins.max(a, b) + 0.7),
        # x ≥ 1: away from arctan2's branch cut and its pole at the origin
        "arctan2": _binary("arctan2({0}, {1} * {1} + 1.0)", lambda y, x: arctan2(y, x * x + 1.0), lambda a, b: 1.6),
    },
    "constant": {"constant": _with_constant},
    "shape": {
        "broadcast": _broadcast,
        "reshape": _reshape,
        "transpose": _transpose,
        "slice": _slice,
        "pad": _pad,
        "concatenate": _concatenate,
        "rev": _rev,
        "reduce_sum": _reduction("reduce_sum", reduce_sum, lambda b, n: b * n),
        "reduce_prod": _reduction("reduce_prod", reduce_prod, lambda b, n: b**n),
    },
    "dot": {"dot_general": _dot_general, "dot": _dot},
    "index": {"gather": _gather, "scatter": _scatter},
    # Constant masks and `.at` updates: linear in the values they take.
    "update": {"where_mask": _masked, "at": _at_update},
    # Not differentiable everywhere: left out by `smooth=True`.
    "nonsmooth": {
        "abs": _unary("abs({0})", lambda x: abs(x), lambda b: b),
        "signum": _unary("signum({0})", signum, lambda b: 1.0),
        "min": _binary("min({0}, {1})", min, builtins.max),
        "max": _binary("max({0}, {1})", max, builtins.max),
        "reduce_max": _reduction("reduce_max", reduce_max, lambda b, n: b),
        "reduce_min": _reduction("reduce_min", reduce_min, lambda b, n: b),
        "argmax": _arg_reduction("argmax", argmax),
        "argmin": _arg_reduction("argmin", argmin),
        "sort": _sort,
        "select": _select,
        "round": _unary("round({0})", round, lambda b: b + 1.0),
        "rem": _binary("rem({0}, {1} * {1} + 0.5)", lambda x, y: rem(x, y * y + 0.5), lambda a, b: a),
        "float_remainder": _float_remainder,
        "integer": _integer_arithmetic,
        "clip": _unary("clip({0}, -1.0, 0.5)", lambda x: clip(x, -1.0, 0.5), lambda b: 1.0),
        "where": _binary("where(lt({0}, {1}), {0}, {1})", lambda x, y: where(lt(x, y), x, y), builtins.max),
        "logical": _binary(
            "where(logical_and(lt({0}, 0.5), logical_not(lt({1}, 0.0))), {0}, 0.0)",
            lambda x, y: where(logical_and(lt(x, 0.5), logical_not(lt(y, 0.0))), x, 0.0),
            lambda a, b: a,
        ),
        # x · x with one factor a constant of differentiation: half the derivative of x²
        "stop_gradient": _unary("stop_gradient({0}) * {0}", lambda x: stop_gradient(x) * x, lambda b: b * b),
        # A cond on a reduced predicate: x·tanh(y) where sum(x) < 0, else x − y
        "cond": _binary("cond(sum({0}) < 0, {0} * tanh({1}), {0} - {1})", _cond_step, lambda a, b: a + b),
        # a cond of two results: (x·tanh y, (x + y)/2) where sum(x) < 0, else (x − y, (y − x)/2); u − v
        "cond_pair": _binary(
            "u - v where (u, v) = cond(sum({0}) < 0, ({0} * tanh({1}), ({0} + {1}) / 2), ({0} - {1}, ({1} - {0}) / 2))",
            _cond_pair_step,
            lambda a, b: 1.5 * (a + b),
        ),
    },
}


def step_families() -> dict[str, dict[str, StepMaker]]:
    """Every family of steps `programs()` draws from, by name: `FAMILIES`, those of
    `shax.testing.structured_steps` (linear algebra, windows, ...) and the steps derived for the
    elementwise primitives (`shax.testing.derived_steps`). Those modules build on this
    one's `Step` and `Value`, so they are imported here, when drawing, not at the top.
    The families whose names start with "nonsmooth" are left out of smooth programs."""
    from shax.testing import derived_steps, structured_steps

    return {**FAMILIES, **structured_steps.FAMILIES, **derived_steps.families()}


# Calls --------------------------------------------------------------------------------


@attrs.frozen(repr=False)
class Callee:
    """A generated sub-program that programs call: over values like `params` (each call's
    operands have their shapes and bounds at most theirs), computing `steps`, returning
    the values `outputs` (bounded by `results`). `function(*operands)` is the tuple of its
    outputs: as a `@shax.subgraph` function (`kind` "subgraph") or `shax.call` of its
    traced definition ("call": typed, "untyped"), or a custom_jvp function whose rule is
    its jvp ("custom_jvp"), or a custom_vjp one whose bwd is its vjp ("custom_vjp")."""

    name: str
    kind: str
    params: tuple[Value, ...]
    steps: tuple[Step, ...]
    outputs: tuple[int, ...]
    results: tuple[Value, ...]
    function: Callable[..., tuple[Any, ...]] = attrs.field(eq=False)

    def show(self) -> list[str]:
        params = ", ".join(f"v{k} :: {list(p.shape)}" for k, p in enumerate(self.params))
        return [
            f"  {self.kind} {self.name}({params}) =",
            *_show_steps(len(self.params), self.steps, self.outputs, "    "),
        ]


@attrs.frozen
class _Scope:
    """What drawing a program's steps needs besides its values: the families to draw from,
    the callees drawn so far (at any depth: any step may call them) and the call depth."""

    dtype: DType
    families: tuple[str, ...]
    callees: list[Callee]
    depth: int = 0


def _as_tuple(result: Any) -> tuple[Any, ...]:
    return result if isinstance(result, tuple) else (result,)


def _callee(draw: Draw, values: list[Value], scope: _Scope) -> Callee:
    """A new callee over 1-2 of `values` (repeats allowed), returning 1-2 of its values."""
    # Bounded by at least twice the arguments' bound: other values may be passed too.
    picked = [values[_pick(draw, values)] for _ in range(draw(st.integers(1, 2)))]
    params = tuple(Value(v.shape, builtins.max(v.bound, 2 * ARG_BOUND)) for v in picked)
    inner = list(params)
    kinds = ["subgraph", "call", "untyped"] + (["custom_jvp", "custom_vjp"] if scope.dtype.is_float else [])
    kind = draw(st.sampled_from(kinds))
    steps = _draw_steps(draw, inner, attrs.evolve(scope, depth=scope.depth + 1), MAX_CALLEE_STEPS)
    outputs = [len(inner) - 1]
    if draw(st.booleans()):
        outputs.append(draw(st.integers(0, len(inner) - 1)))  # maybe an argument, passed on unchanged
    name = f"g{len(scope.callees)}"
    fn = compile_program(len(params), steps, outputs, name)
    if kind == "subgraph":
        sub = shax.subgraph(fn)
        function: Callable[..., tuple[Any, ...]] = lambda *xs: _as_tuple(sub(*xs))  # noqa: E731
    elif kind in ("custom_jvp", "custom_vjp"):
        custom = _with_rule(fn, kind)
        function = lambda *xs: _as_tuple(custom(*xs))  # noqa: E731
    else:
        defn = shax.trace(fn, *(TensorType(scope.dtype, p.shape) for p in params))
        called = infer_types(defn) if kind == "call" else defn
        function = lambda *xs: shax.call(called, *xs)  # noqa: E731
    callee = Callee(name, kind, params, tuple(steps), tuple(outputs), tuple(inner[k] for k in outputs), function)
    scope.callees.append(callee)
    return callee


def _with_rule(fn: Callable[..., Any], kind: str) -> Any:
    """`fn` with a derivative rule of its own, shax's derivative of it (so the rule is right,
    and every stage meets the custom operation): a custom_jvp rule of its jvp, or a
    custom_vjp pair whose fwd keeps the arguments and whose bwd is their vjp."""
    if kind == "custom_jvp":
        with_jvp = shax.custom_jvp(fn)
        with_jvp.defjvp(lambda primals, tangents: shax.jvp(fn, tuple(primals), tuple(tangents)))
        return with_jvp
    with_vjp = shax.custom_vjp(fn)
    with_vjp.defvjp(lambda *xs: (fn(*xs), xs), lambda xs, cts: shax.vjp(fn, *xs)[1](cts))
    return with_vjp


def _call(draw: Draw, values: list[Value], scope: _Scope) -> tuple[Step, Value] | None:
    """One output of a call of a callee drawn before (half the time, if one fits) or of a
    new one; or the sum of two reads: that output at another call site (the callee shared),
    or another output of the same call."""

    def fits(callee: Callee) -> bool:
        return all(any(v.shape == p.shape and v.bound <= p.bound for v in values) for p in callee.params)

    def operand(p: Value) -> int:
        k = _pick(draw, values, lambda v: v.shape == p.shape and v.bound <= p.bound)
        assert k is not None, f"no value fits {p}"  # the callee fits, or was drawn over these values
        return k

    def operands() -> tuple[int, ...]:
        return tuple(operand(p) for p in callee.params)

    earlier = [c for c in scope.callees if fits(c)]
    callee = draw(st.sampled_from(earlier)) if earlier and draw(st.booleans()) else _callee(draw, values, scope)
    k = draw(st.integers(0, len(callee.outputs) - 1))
    reads = [(operands(), k)]
    result = callee.results[k]
    other = draw(st.sampled_from(["none", "site", "output"]))
    if other == "site":
        reads.append((operands(), k))
        result = Value(result.shape, 2 * result.bound)
    elif other == "output" and len(callee.outputs) == 2:
        shape = _broadcast_shape(callee.results[0].shape, callee.results[1].shape)
        if shape is not None:
            reads.append((reads[0][0], 1 - k))
            result = Value(shape, callee.results[0].bound + callee.results[1].bound)
    if not _fits(result.shape, result.bound):
        return None
    n = len(callee.params)
    shown = [
        f"{callee.name}({', '.join(f'{{{r * n + j}}}' for j in range(n))})[{out}]" for r, (_, out) in enumerate(reads)
    ]

    def apply(*xs: Any, _f: Callable[..., tuple[Any, ...]] = callee.function) -> Any:
        results = [_f(*xs[r * n : (r + 1) * n])[out] for r, (_, out) in enumerate(reads)]
        return results[0] if len(results) == 1 else results[0] + results[1]

    return Step(" + ".join(shown), tuple(k for ops, _ in reads for k in ops), apply), result


# Loops --------------------------------------------------------------------------------


def _loop(draw: Draw, values: list[Value], scope: _Scope) -> tuple[Step, Value] | None:
    """A loop over a generated body: `shax.scan` (maybe reversed) over the leading axis of a
    value, or `shax.fori_loop` of 1-3 steps, carrying a value c of the program and closing
    over another (a loop-invariant const). The body's steps compute r from (c, x, const);
    its carry c·½ + tanh(Σ r)·½ stays within max(bound of c, 1) however long it runs; the
    scan's ys are the rs, stacked. The step reads the final carry or the stacked ys.

    Outside smooth programs also `shax.while_loop` over (i, c), while i < 1-3 (and, maybe,
    Σ c < a threshold: a trip count the values decide), its final c under `stop_gradient`:
    reverse mode cannot differentiate a while loop (JAX's cannot either), its trip count
    known only when it runs."""
    carried_value = _pick(draw, values)
    c = values[carried_value]
    kinds = ["scan", "scan reverse", "fori_loop"] + (["while"] if "nonsmooth" in scope.families else [])
    kind = draw(st.sampled_from(kinds))
    threshold = draw(st.sampled_from([None, 0.0, 1.0])) if kind == "while" else None
    xs: int | None = None
    if kind.startswith("scan"):
        xs = _pick(draw, values, lambda v: v.rank >= 1)
        if xs is None:
            return None
    const = _pick(draw, values)
    carry = Value(c.shape, builtins.max(c.bound, 1.0))
    params = [carry, *([] if xs is None else [Value(values[xs].shape[1:], values[xs].bound)]), values[const]]
    inner = list(params)
    steps = _draw_steps(draw, inner, attrs.evolve(scope, depth=scope.depth + 1), MAX_CALLEE_STEPS)
    body = compile_program(len(params), steps, [len(inner) - 1], "loop_body")
    r = inner[-1]
    length = values[xs].shape[0] if xs is not None else draw(st.integers(1, 3))
    read = draw(st.sampled_from(["carry", "ys"])) if xs is not None else "carry"
    result = carry if read == "carry" else Value((length, *r.shape), r.bound)
    if not _fits(result.shape, result.bound):
        return None

    def step(h: Any, x: Any, k: Any) -> Any:
        out = body(h, k) if x is None else body(h, x, k)
        return h * 0.5 + tanh(reduce_sum(out, list(range(len(r.shape))))) * 0.5, out

    def going(carried: tuple[Any, Any]) -> Any:
        counting = lt(carried[0], length)
        if threshold is None:
            return counting
        return logical_and(counting, lt(reduce_sum(carried[1], list(range(c.rank))), threshold))

    def apply(h: Any, *rest: Any) -> Any:
        k = rest[-1]
        if kind == "while":
            advance = lambda carried: (carried[0] + 1, step(carried[1], None, k)[0])  # noqa: E731
            return stop_gradient(shax.while_loop(going, advance, (np.int32(0), h))[1])
        if xs is None:
            return shax.fori_loop(0, length, lambda i, v: step(v, None, k)[0], h)
        carried, ys = shax.scan(lambda v, x: step(v, x, k), h, rest[0], reverse=kind == "scan reverse")
        return carried if read == "carry" else ys

    shown = "; ".join(_show_steps(len(params), steps, [len(inner) - 1], ""))
    operands = (carried_value, *([] if xs is None else [xs]), const)
    shown = shown.replace("{", "{{").replace("}", "}}")  # the text is a format string of the operands
    name = kind
    if kind == "while":
        name = f"stop_gradient of while[i < {length}{'' if threshold is None else f' and sum(c) < {threshold}'}]"
    text = f"{name}[{read}](body < {shown} >, {', '.join(f'{{{j}}}' for j in range(len(operands)))})"
    return Step(text, operands, apply), result


def _draw_steps(draw: Draw, values: list[Value], scope: _Scope, max_steps: int) -> list[Step]:
    """1 to `max_steps` steps (fewer where a drawn step does not apply), their values appended to `values`."""
    families = [f for f in scope.families if f not in ("call", "loop") or scope.depth < MAX_CALL_DEPTH]
    steps: list[Step] = []
    for _ in range(draw(st.integers(1, max_steps))):
        name = draw(st.sampled_from(families))
        if name == "call":
            made = _call(draw, values, scope)
        elif name == "loop":
            made = _loop(draw, values, scope)
        else:
            family = step_families()[name]
            made = family[draw(st.sampled_from(list(family)))](draw, values, scope.dtype)
        if made is not None:
            steps.append(made[0])
            values.append(made[1])
    return steps


def _shapes() -> st.SearchStrategy[Shape]:
    return st.lists(st.integers(1, 3), max_size=3).map(tuple)


@st.composite
def _programs(
    draw: Draw, dtype: DType, smooth: bool, calls: bool, max_args: int, max_outputs: int, max_steps: int
) -> Program:
    shapes = draw(st.lists(_shapes(), min_size=1, max_size=max_args))
    arg_types = tuple(TensorType(dtype, s) for s in shapes)
    args = tuple(draw(hnp.arrays(dtype.numpy, s, elements=_elements(dtype))) for s in shapes)
    values = [Value(s, ARG_BOUND) for s in shapes]
    # Calls drawn three times as often as a family: many programs call, some twice or more.
    drawn = [f for f in step_families() if not (smooth and f.startswith("nonsmooth"))]
    families = drawn + (["call"] * 3 + ["loop"] if calls else [])
    scope = _Scope(dtype, tuple(families), [])
    steps = _draw_steps(draw, values, scope, max_steps)
    last = len(values) - 1
    outputs = [last]
    if max_outputs > 1 and draw(st.booleans()):
        outputs.append(draw(st.integers(0, last)))
    fn = compile_program(len(shapes), steps, outputs)
    return Program(fn, arg_types, args, tuple(steps), tuple(outputs), tuple(scope.callees))


def programs(
    dtype: DType = f64,
    *,
    smooth: bool = False,
    calls: bool = True,
    max_args: int = 3,
    max_outputs: int = 2,
    max_steps: int = 12,
) -> st.SearchStrategy[Program]:
    """Well-typed random programs over the whole vocabulary (see the module docstring) at
    float `dtype` (f32 or f64), each a `Program`: `fn` the function, `arg_types` its
    arguments' types, `args` drawn arguments. They shrink to fewer, simpler steps.

    `smooth=True` leaves out the operations that are not differentiable everywhere (abs,
    signum, min, max, select, sort, while loops, ...: the families named "nonsmooth...");
    `calls=False` the calls and loops. Programs take 1 to `max_args` arguments, run 1 to
    `max_steps` steps and return 1 to `max_outputs` (1 or 2) values."""
    _expect("programs", "dtype", dtype, isinstance(dtype, DType) and dtype in (f32, f64), "f32 or f64")
    for name, flag in (("smooth", smooth), ("calls", calls)):
        _expect("programs", name, flag, isinstance(flag, bool), "a bool")
    for name, count, most in (("max_args", max_args, 8), ("max_outputs", max_outputs, 2), ("max_steps", max_steps, 64)):
        _expect("programs", name, count, _is_int(count) and 1 <= count <= most, f"an int from 1 to {most}")
    return _programs(dtype, smooth, calls, max_args, max_outputs, max_steps)


# The public strategies besides `programs`: dtypes, tensor types and arrays ----------------

__all__ = ["Program", "arrays", "dtypes", "programs", "tensor_types"]


def _is_int(value: Any) -> bool:
    return isinstance(value, (int, np.integer)) and not isinstance(value, (bool, np.bool_))


def _expect(what: str, name: str, value: Any, ok: bool, expected: str) -> None:
    """Nothing if `ok`; else a ShaxValueError at the caller's line: `name` must be `expected`."""
    if not ok:
        message = f"{what}: {name} must be {expected}, got {type(value).__name__} {reprlib.repr(value)}"
        raise at(ShaxValueError(message), current_source())


def dtypes() -> st.SearchStrategy[DType]:
    """The float dtypes shax differentiates, `f32` and `f64` (shrinking to f32)."""
    return st.sampled_from([f32, f64])


def tensor_types(
    dtype: DType | None = None, *, min_rank: int = 0, max_rank: int = 3, min_side: int = 1, max_side: int = 3
) -> st.SearchStrategy[TensorType]:
    """Tensor types of `dtype` (any shax dtype; None draws one from `dtypes()`) with
    `min_rank` to `max_rank` axes of `min_side` to `max_side` elements each, shrinking
    to fewer and smaller axes."""
    _expect(
        "tensor_types", "dtype", dtype, dtype is None or isinstance(dtype, DType), "None or a shax DType (f32, ...)"
    )
    for (low, lo), (high, hi), most in (
        (("min_rank", min_rank), ("max_rank", max_rank), 8),
        (("min_side", min_side), ("max_side", max_side), 64),
    ):
        for name, count in ((low, lo), (high, hi)):
            _expect("tensor_types", name, count, _is_int(count) and 0 <= count <= most, f"an int from 0 to {most}")
        _expect("tensor_types", high, hi, lo <= hi, f"at least {low} ({lo})")
    kinds = dtypes() if dtype is None else st.just(dtype)
    sides = st.integers(int(min_side), int(max_side))
    shapes = st.lists(sides, min_size=int(min_rank), max_size=int(max_rank)).map(tuple)
    return st.builds(TensorType, kinds, shapes)


def arrays(tensor_type: TensorType, *, bound: float = ARG_BOUND) -> st.SearchStrategy[np.ndarray]:
    """numpy arrays of `tensor_type` (a `TensorType`, or its printed form "f32[2, 3]")
    with finite elements in [-bound, bound] (floats without subnormals; ints in the
    dtype's range too; bools either), shrinking towards 0."""
    if isinstance(tensor_type, str):
        try:
            tensor_type = TensorType.parse(tensor_type)
        except ShaxError as error:
            raise at(type(error)(f"arrays: {error}"), current_source()) from None
    _expect("arrays", "tensor_type", tensor_type, isinstance(tensor_type, TensorType), "a TensorType (f32[2, 3])")
    number = isinstance(bound, (int, float, np.integer, np.floating)) and not isinstance(bound, (bool, np.bool_))
    _expect("arrays", "bound", bound, number and math.isfinite(bound) and bound > 0, "a finite number > 0")
    dtype = tensor_type.dtype
    elements: st.SearchStrategy[Any]
    if dtype.is_float:
        # hypothesis wants bounds the width represents: the float32 nearest, moved inside
        limit = float(np.float32(bound)) if dtype == f32 else float(bound)
        if limit > bound:
            limit = float(np.nextafter(np.float32(limit), np.float32(0)))
        elements = st.floats(-limit, limit, width=32 if dtype == f32 else 64, allow_subnormal=False)
    elif dtype == bool_:
        elements = st.booleans()
    else:
        info = np.iinfo(np.dtype(dtype.numpy))
        least, most = builtins.max(int(info.min), -math.floor(bound)), builtins.min(int(info.max), math.floor(bound))
        elements = st.integers(least, most)
    return hnp.arrays(dtype.numpy, tensor_type.shape, elements=elements)

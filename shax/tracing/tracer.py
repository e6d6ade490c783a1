"""Tracers: the typeclass instance that records operations instead of running them.

Each tracer is a node of an expression DAG: a primitive, its operand tracers, its
type (computed eagerly by the type rules, so a shape error points at the user's
line) and the user's file:line. Nodes are hash-consed when created, so the same
operation on the same operands is the same node: implicit sharing is found here,
explicit sharing is object identity (Kiselyov). `shax.tracing.sharing` turns the DAG into
let-bindings.

Traces nest: each has a level, and a typeclass function runs in the trace of its
highest-level operand. Values from an enclosing trace are captured as extra
arguments of the inner one (constants of the inner transform).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any

import numpy as np

import typeclasses as tc
from shax.core.errors import ShaxError, ShaxTypeError, a_type, at, named
from shax.core.location import current_attribution, current_source
from shax.core.primitive import Arg, DerivedInstance, Primitive, from_user_args, primitive_method
from shax.core.types import DType, TensorType, bool_, dtype_of_numpy, reference_dtype, weak_dtype
from shax.primitives import Broadcast, Constant, ConvertElementType, Select
from shax.primitives.constant import uniform_value
from shax.rules.evaluate import install_recorder
from shax.rules.types import result_type, result_types
from shax.tracing import numpy_dispatch
from shax.tracing.array_methods import ArrayMethods
from shax.tracing.array_methods_reductions import ReductionMethods
from shax.tracing.array_protocols import ArrayProtocols
from shax.tracing.promotion import PromotedOperators


class Trace:
    """One tracing context: its level, its hash-consing table, its arguments."""

    def __init__(self, level: int, arg_types: Sequence[TensorType]) -> None:
        self.level = level
        self.active = True
        # (primitive's cons key, operand ids) -> the node for that operation
        self.table: dict[tuple[Any, ...], Tracer] = {}
        self.args = [self.node(Arg(k), (), t, None) for k, t in enumerate(arg_types)]
        # Tracers of enclosing traces used here, each read through an extra argument.
        self.captured: list[Tracer] = []
        self._captured_nodes: dict[int, Tracer] = {}
        # (dtype, bytes) -> the constant node of a Python number: rules and loops lift the
        # same few literals over and over, and building a Constant to look one up costs more.
        self.numbers: dict[tuple[str, bytes], Tracer] = {}
        # The nodes of effectful operations (`Primitive.has_effect`), in the order they ran:
        # a definition binds them though no output reads them (`recover_sharing`'s effects).
        self.effects: list[Tracer] = []

    def node(self, prim: Primitive, args: tuple[Tracer, ...], type: TensorType, source: str | None) -> Tracer:
        node = Tracer(self, prim, args, type, source)
        self.table[cons_key(prim, args)] = node
        return node

    def close(self) -> None:
        """End the trace: no operation may be recorded in it any more."""
        self.active = False
        # Its nodes refer to it (node.owner): dropping its references to them leaves no
        # cycle, so reference counting frees a large trace's nodes as soon as the stage
        # drops them, instead of the cyclic collector traversing them all. What was
        # captured (outer tracers) stays: stages read it after the trace.
        self.table = {}
        self.args = []
        self._captured_nodes = {}
        self.numbers = {}

    def capture(self, outer: Tracer) -> Tracer:
        node = self._captured_nodes.get(id(outer))
        if node is None:
            index = len(self.args) + len(self.captured)
            node = self.node(Arg(index), (), outer.type, None)
            self.captured.append(outer)
            self._captured_nodes[id(outer)] = node
        return node


# How many traces are open in this thread (or task): a trace's level is its nesting depth
# in its own thread, so traces opened by other threads at the same time do not count.
_depth: ContextVar[int] = ContextVar("shax_trace_depth", default=0)
# The trace opened last in this thread (or task), if one is open.
_innermost: ContextVar[Trace | None] = ContextVar("shax_innermost_trace", default=None)


@contextmanager
def new_trace(arg_types: Sequence[TensorType]) -> Iterator[Trace]:
    trace = Trace(_depth.get() + 1, arg_types)
    opened, innermost = _depth.set(trace.level), _innermost.set(trace)
    try:
        yield trace
    finally:
        _innermost.reset(innermost)
        _depth.reset(opened)
        trace.close()


def innermost_trace() -> Trace | None:
    """The trace opened last and still open in this thread (or task), if any: where an
    effect with no traced operand is recorded (`shax.debug.print("step")` inside `jit`)."""
    return _innermost.get()


def tracing() -> bool:
    """Whether a trace is open in this thread (or task): a function running now may be traced."""
    return _depth.get() > 0


class Tracer(ArrayMethods, ArrayProtocols, ReductionMethods, PromotedOperators):
    __slots__ = ("owner", "prim", "args", "type", "source", "origin", "siblings")

    def __init__(
        self,
        trace: Trace,
        prim: Primitive,
        args: tuple[Tracer, ...],
        type: TensorType,
        source: str | None,
        origin: str | None = None,
    ) -> None:
        self.owner = trace
        self.prim = prim
        self.args = args
        self.type = type
        self.source = source
        self.origin = origin  # what recorded it (Binding.origin)
        # A result of a `multi_result` operation: every result of it, in order, each a
        # tracer of the same primitive on the same operands (one binding defines them all).
        self.siblings: tuple[Tracer, ...] | None = None

    @property
    def shape(self) -> tuple[int, ...]:
        return self.type.shape

    @property
    def dtype(self) -> DType:
        return self.type.dtype

    @property
    def ndim(self) -> int:
        return self.type.rank

    def __repr__(self) -> str:
        return f"Tracer({self.type})"

    # numpy's functions and ufuncs on a tracer run shax.numpy's (`ndarray * tracer` too,
    # numpy's operator calling its ufunc, which comes here).
    def __array_ufunc__(self, ufunc: Any, method: str, *inputs: Any, **kwargs: Any) -> Any:
        return numpy_dispatch.array_ufunc(ufunc, method, inputs, kwargs)

    def __array_function__(self, func: Any, types: Any, args: Any, kwargs: Any) -> Any:
        return numpy_dispatch.array_function(func, args, kwargs)


def _reference_dtype(operands: Sequence[Any]) -> DType | None:
    """The dtype weak numbers adopt among these operands (`shax.core.types.reference_dtype`)."""
    first = operands[0]
    if isinstance(first, Tracer) and first.type.dtype != bool_:  # the common case, first
        return first.type.dtype
    return reference_dtype(
        [
            o.type.dtype if isinstance(o, Tracer) else dtype_of_numpy(o.dtype)
            for o in operands
            if isinstance(o, (Tracer, np.ndarray, np.generic))
        ]
    )


def lift(trace: Trace, value: Any, reference: DType | None, op: str) -> Tracer:
    """`value` as a node of `trace`: its own tracer, a captured outer tracer, or a constant."""
    if isinstance(value, Tracer):
        # Checked first: `trace` itself is dead when every tracer operand escaped.
        if not value.owner.active:
            raise ShaxTypeError(
                f"{op}: a tracer of type {value.type} escaped the function that was traced "
                f"(created at {value.source or 'an argument'}); return it instead of storing it"
            )
        if value.owner is trace:
            return value
        return trace.capture(value)
    if isinstance(value, (np.ndarray, np.generic)):  # first: np.float64 is a Python float too
        dtype_of_numpy(value.dtype)
        one = uniform_value(value) if isinstance(value, np.ndarray) else None
        if one is not None:  # `snp.zeros(n)` inside jit: no copy of n zeros in the program
            return emit(trace, Broadcast((), value.shape), (emit(trace, Constant(one), ()),))
        return emit(trace, Constant(value), ())
    if isinstance(value, (bool, int, float)):
        array = np.asarray(value, weak_dtype(value, reference, op).numpy)
        key = (array.dtype.str, array.tobytes())  # by bytes: 0.0 and -0.0 are different constants
        node = trace.numbers.get(key)
        if node is None:
            node = trace.numbers[key] = emit(trace, Constant(array), ())
        return node
    raise ShaxTypeError(f"{op}: cannot use {a_type(value)} as a tensor")


def cons_key(prim: Primitive, args: tuple[Tracer, ...]) -> tuple[Any, ...]:
    """What identifies the operation `prim` on `args` in its trace's table."""
    return (prim.cons_key(), *map(id, args))


def emit(trace: Trace, prim: Primitive, args: tuple[Tracer, ...]) -> Tracer:
    """The node for `prim` on `args`: an existing one (hash-consing) or a new, typed one."""
    if prim.multi_result:
        raise prim.fail(f"has several results: record it with emit_all (operands: {[a.type for a in args]})")
    key = (prim.cons_key(), *map(id, args))  # cons_key(prim, args), inline: every operation comes here
    found = trace.table.get(key)
    if found is not None:
        return found
    source, origin = current_attribution()
    try:
        out_type = result_type(prim, *[a.type for a in args])
    except ShaxError as error:
        raise at(error, source) from None
    node = trace.table[key] = Tracer(trace, prim, args, out_type, source, origin)
    if prim.has_effect():
        trace.effects.append(node)
    return node


def emit_all(trace: Trace, prim: Primitive, args: tuple[Tracer, ...]) -> list[Tracer]:
    """The nodes of every result of `prim` on `args` (one for most primitives)."""
    if not prim.multi_result:
        return [emit(trace, prim, args)]
    key = (prim.cons_key(), *map(id, args))
    found = trace.table.get(key)
    if found is not None:
        return list(found.siblings or ())
    source, origin = current_attribution()
    try:
        types = result_types(prim, *[a.type for a in args])
    except ShaxError as error:
        raise at(error, source) from None
    results = tuple(Tracer(trace, prim, args, t, source, origin) for t in types)
    for node in results:
        node.siblings = results
    # No result: a node standing for the operation (its siblings none), which only an
    # effect needs, to be bound though nothing reads it.
    node = results[0] if results else Tracer(trace, prim, args, TensorType(bool_, ()), source, origin)
    node.siblings = node.siblings or ()
    trace.table[key] = node
    if prim.has_effect():
        trace.effects.append(node)
    return list(results)


def _innermost_trace(operands: Sequence[Any]) -> tuple[Trace, bool]:
    """The trace of the highest level among the operands' and whether every operand
    is already one of its nodes (the common case: nothing to lift)."""
    innermost = None
    all_nodes = True
    for o in operands:
        if isinstance(o, Tracer):
            if innermost is None or o.owner.level > innermost.level:
                all_nodes = all_nodes and innermost is None
                innermost = o.owner
            elif o.owner is not innermost:
                all_nodes = False
        else:
            all_nodes = False
    assert innermost is not None, "the tracer instance runs only when an operand is a tracer"
    return innermost, all_nodes


def apply(prim: Primitive, *operands: Any) -> Tracer:
    """Record `prim` on operands that may mix tracers, numpy values and numbers."""
    trace, all_nodes = _innermost_trace(operands)
    args = operands if all_nodes and trace.active else _lifted(trace, prim, operands)
    if prim.booleans_as_numbers:
        args = _booleans_as_numbers(trace, args)
    return emit(trace, prim, args)


def _lifted(trace: Trace, prim: Primitive, operands: Sequence[Any]) -> tuple[Tracer, ...]:
    """The operands as nodes of `trace`, lifted once each."""
    try:
        reference = _reference_dtype(operands)
        return tuple(lift(trace, o, reference, prim.name) for o in operands)
    except ShaxError as error:  # a constant shax cannot type (an int64 array, 2**40 as i32)
        raise at(named(error, prim.name), current_source()) from None


def apply_all(prim: Primitive, *operands: Any) -> list[Tracer]:
    """Record `prim`, an operation with several results, on operands that may mix
    tracers, numpy values and numbers: its results (`apply`, for any number of them)."""
    trace, all_nodes = _innermost_trace(operands)
    args = operands if all_nodes and trace.active else _lifted(trace, prim, operands)
    return emit_all(trace, prim, args)


def re_record(results: Sequence[Tracer], prim: Primitive, *operands: Any) -> list[Tracer]:
    """Record `prim` on `operands`, an operation whose leading results stand for the same
    values as `results` (the results of one operation, which user code may hold): those
    tracers become its leading results, so that one operation computes them all."""
    recorded = apply_all(prim, *operands)
    if len(recorded) < len(results) or any(r.type != t.type for r, t in zip(results, recorded)):
        raise prim.fail(f"its results {[t.type for t in recorded]} do not begin with {[r.type for r in results]}")
    merged = (*results, *recorded[len(results) :])
    first = recorded[0]
    for node in merged:
        node.prim, node.args, node.siblings = prim, first.args, merged
    first.owner.table[cons_key(prim, first.args)] = merged[0]
    return list(merged)


def _booleans_as_numbers(trace: Trace, args: tuple[Any, ...]) -> tuple[Any, ...]:
    """In arithmetic on a boolean and a number, the boolean as 0 and 1 of the number's
    dtype (numpy's and JAX's promotion: `x * (x > 0)`); dtypes are otherwise never mixed."""
    dtypes = [a.type.dtype for a in args]
    if dtypes.count(dtypes[0]) == len(dtypes):  # one dtype (by identity first: no __eq__ call)
        return args
    number = next((d for d in dtypes if d != bool_), None)
    if number is None or bool_ not in dtypes:
        return args
    cast = ConvertElementType(number)
    return tuple(emit(trace, cast, (a,)) if d == bool_ else a for a, d in zip(args, dtypes))


class TracerInstance(DerivedInstance):
    """The tracer's instance of Floating, Ord and HNP: every method records the primitive
    implementing its typeclass function. The methods are derived from the primitives
    (`shax.core.primitive.implementing`) on first use, not written one by one; the few that
    need more than recording one operation are written here."""

    def level(self, value: Any) -> int:
        return value.owner.level

    def shape(self, x: Any) -> tuple[int, ...]:
        return x.type.shape

    def select(self, pred: Any, on_true: Any, on_false: Any) -> Any:
        # A number (Python's, or a numpy scalar) as a branch stands for a tensor of the
        # predicate's shape, as in np.where, whether the predicate is traced or a numpy mask.
        trace, _ = _innermost_trace((pred, on_true, on_false))
        shape = tuple(np.shape(pred)) if not isinstance(pred, Tracer) else pred.shape
        on_true, on_false = (
            _fill(trace, shape, b, (on_true, on_false)) if _is_scalar(b) else b for b in (on_true, on_false)
        )
        return apply(Select(), pred, on_true, on_false)

    def derive(self, cls: type[Primitive], method: str) -> Callable[..., Any]:
        if cls.multi_result:  # one operation, a tuple of its results (`eigh`: (w, v))
            return primitive_method(
                cls, method, lambda prim, operands: tuple(apply_all(prim, *operands)), from_user_args(cls)
            )
        return primitive_method(cls, method, lambda prim, operands: apply(prim, *operands), from_user_args(cls))


def constant_like(x: Tracer, value: np.ndarray) -> Tracer:
    """The 0-d `value` (of the dtype it has) in x's shape, a constant of x's trace (`zeros_like`)."""
    return emit(x.owner, Broadcast((), x.shape), (lift(x.owner, value, None, "full_like"),))


def _is_scalar(value: Any) -> bool:
    return isinstance(value, (bool, int, float)) or (isinstance(value, (np.ndarray, np.generic)) and value.ndim == 0)


def _fill(trace: Trace, shape: tuple[int, ...], number: Any, branches: Sequence[Any]) -> Tracer:
    """`number` broadcast to `shape` in `trace`, weakly typed beside `branches`."""
    try:
        scalar = lift(trace, number, _reference_dtype(branches), "select")
    except ShaxError as error:
        raise at(named(error, "select"), current_source()) from None
    return emit(trace, Broadcast((), shape), (scalar,))


tracer_instance = TracerInstance()
tc.register_instance(tracer_instance, Tracer)


def _record(prim: Primitive, operands: Sequence[Any], open_trace: bool, /) -> Tracer | None:
    """`shax.rules.evaluate.record`: the rules of primitives without a typeclass function
    (`debug_print`, `checkpoint_name`) record through it, knowing no tracer."""
    if any(isinstance(o, Tracer) for o in operands):
        return apply(prim, *operands)
    trace = innermost_trace() if open_trace else None
    if trace is None:
        return None
    return emit(trace, prim, tuple(lift(trace, o, None, prim.name) for o in operands))


install_recorder(_record)

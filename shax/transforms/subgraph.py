"""Calls of definitions: `shax.call`, `shax.call_with_info` (PopXL's `ops.call` and
`ops.call_with_info`) and the `@shax.subgraph` decorator.

    y, = shax.call(linear_graph, x, w, b)               # one `call` binding per output read
    info = shax.call_with_info(linear_graph, x, inputs_dict={w_var: w, b_var: b})

    @shax.subgraph
    def layer(x, w): return tanh(x @ w)
    layer(h, w1); layer(h2, w2)     # traced: two calls of one definition, not two copies

On numpy values a call runs its definition (a subgraph runs its Python function); on
tracers it records `call` bindings (`shax.control.call`), so that every transform
sees a call, differentiates its callee once and reuses that at every call site.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

import attrs

from shax.control import Call
from shax.core.errors import ShaxError, ShaxTypeError, ShaxValueError, a_type, at
from shax.core.ir import Definition, Var
from shax.core.location import current_source
from shax.core.pytree import TreeDef, flatten, unflatten
from shax.core.types import TensorType
from shax.passes import cleanup
from shax.stages import check_types
from shax.tracing.evaluate import check_argument, evaluate
from shax.tracing.trace import function_name
from shax.tracing.tracer import Tracer, apply_all
from shax.tracing.validation import expect_definition
from shax.transforms.staging import stage
from shax.transforms.transformed import Transformed


def position_of(what: str, defn: Definition, key: Any, candidates: Sequence[Var | None]) -> int:
    """The position of `key` (an int, or one of the vars `candidates`), or a ShaxValueError."""
    if isinstance(key, int) and not isinstance(key, bool):
        if 0 <= key < len(candidates):
            return key
    elif isinstance(key, Var):
        for k, v in enumerate(candidates):
            if v is not None and v.id == key.id:
                return k
    shown = ", ".join("-" if v is None else f"x{v.id}" for v in candidates)
    raise ShaxValueError(f"{what}: {key!r} is none of {defn.name}'s [{shown}] (or their positions)")


def _operands(what: str, defn: Definition, args: Sequence[Any], inputs_dict: Mapping[Any, Any] | None) -> list[Any]:
    """The call's operands, one per argument of `defn`: `args` first, then `inputs_dict`'s
    (keyed by the argument's var or position), each checked against its declared type."""
    count = len(defn.arg_types)
    slots: list[Any] = [*args, *([_MISSING] * (count - len(args)))]
    if len(args) > count:
        raise ShaxTypeError(f"{what}: {defn.name} takes {count} argument(s), got {len(args)}")
    if inputs_dict is not None:
        if not isinstance(inputs_dict, Mapping):
            raise ShaxTypeError(f"{what}: inputs_dict must be a mapping, got {a_type(inputs_dict)}")
        arguments = defn.inputs
        for key, value in inputs_dict.items():
            k = position_of(f"{what}: inputs_dict", defn, key, arguments)
            if slots[k] is not _MISSING:
                raise ShaxValueError(f"{what}: argument {k} of {defn.name} is given twice")
            slots[k] = value
    missing = [k for k, s in enumerate(slots) if s is _MISSING]
    if missing:
        shown = ", ".join(f"{k} :: {defn.arg_types[k]}" for k in missing)
        raise ShaxTypeError(f"{what}: {defn.name}'s argument(s) {shown} are not given")
    return [
        value if isinstance(value, Tracer) else check_argument(f"{what}: argument {k} of {defn.name}", t, value)
        for k, (t, value) in enumerate(zip(defn.arg_types, slots))
    ]


_MISSING = object()


def typed_callee(what: str, defn: Any) -> Definition:
    """`defn` typed (the same definition if it is: a call holds its callee by identity)."""
    expect_definition(what, defn)
    if defn.is_typed:
        return check_types(defn)
    from shax.control.callees import typed

    return typed(defn)


def call(defn: Definition, *args: Any, inputs_dict: Mapping[Any, Any] | None = None) -> tuple[Any, ...]:
    """The outputs of `defn` on `args` (and `inputs_dict`, by argument var or position):
    computed on numpy values, recorded as `call` bindings on tracers."""
    return call_with_info(defn, *args, inputs_dict=inputs_dict).outputs


@attrs.frozen(eq=False)
class CallSiteInfo:
    """One call of a definition: what it called, its operands (one per argument, in order)
    and its outputs (PopXL's `CallSiteInfo`)."""

    called_graph: Definition
    inputs: tuple[Any, ...]
    outputs: tuple[Any, ...]

    def graph_to_parent(self, var: Var) -> Any:
        """The caller's value for an argument var or output var of the called definition."""
        if not isinstance(var, Var):
            message = f"graph_to_parent: expected a var of {self.called_graph.name}, got {type(var).__name__}"
            raise at(ShaxTypeError(message), current_source())
        for k, v in enumerate(self.called_graph.inputs):
            if v is not None and v.id == var.id:
                return self.inputs[k]
        for k, v in enumerate(self.called_graph.outputs):
            if v.id == var.id:
                return self.outputs[k]
        message = f"graph_to_parent: {var!r} is neither an argument nor an output of {self.called_graph.name}"
        raise at(ShaxValueError(message), current_source())


def call_with_info(defn: Definition, *args: Any, inputs_dict: Mapping[Any, Any] | None = None) -> CallSiteInfo:
    """`call`, returning the call site's information (`.outputs`, `.inputs`)."""
    try:
        callee = typed_callee("call", defn)
        operands = _operands("call", callee, args, inputs_dict)
        if any(isinstance(o, Tracer) for o in operands):
            outputs = tuple(apply_all(Call(callee), *operands))
        else:
            outputs = tuple(evaluate(callee, *operands))
    except ShaxError as error:
        raise at(error, current_source()) from None
    return CallSiteInfo(callee, tuple(operands), outputs)


class Subgraph(Transformed):
    """A Python function whose traced calls are calls of one definition per argument types."""

    kind = "subgraph"

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        leaves, _ = flatten((args, kwargs))
        if not any(isinstance(leaf, Tracer) for leaf in leaves):
            self._check_arguments(args, kwargs)
            return self.fn(*args, **kwargs)  # on values it just runs
        return super().__call__(*args, **kwargs)

    def _check_arguments(self, args: tuple[Any, ...], kwargs: dict[str, Any]) -> None:
        """Arguments fn's signature cannot take are a ShaxError, as they are when traced."""
        signature = getattr(self, "__signature__", None)
        if signature is None:
            return
        try:
            signature.bind(*args, **kwargs)
        except TypeError as error:
            message = f"subgraph: {function_name(self.fn)}{signature} cannot be called so: {error}"
            raise at(ShaxTypeError(message), current_source()) from None

    def build(self, in_tree: TreeDef, types: tuple[TensorType, ...]) -> _BuiltSubgraph:
        staging = stage(self.fn, in_tree, types)
        return _BuiltSubgraph(cleanup(staging.typed), staging.captured, staging.out_tree)

    def definition(self, *args: Any) -> Definition:
        """The definition the calls on arguments like `args` (values, or their types) run."""
        from shax.transforms.arguments import abstract_types

        in_tree, types = abstract_types("subgraph.definition", args)
        return self.built(in_tree, types).defn


@attrs.frozen
class _BuiltSubgraph:
    defn: Definition  # (argument leaves, captured) -> output leaves
    captured: tuple[Any, ...]
    out_tree: TreeDef

    def call(self, leaves: Sequence[Any]) -> Any:
        operands = [*leaves, *self.captured]
        if not any(isinstance(o, Tracer) for o in operands):
            return unflatten(self.out_tree, evaluate(self.defn, *operands))
        operands = _operands("subgraph", self.defn, operands, None)
        return unflatten(self.out_tree, apply_all(Call(self.defn), *operands))


def subgraph(fn: Callable[..., Any]) -> Subgraph:
    """`fn`, whose calls on tracers become calls of one shared definition per argument
    types (not inlined); on numpy values it runs as it is."""
    return Subgraph(fn)

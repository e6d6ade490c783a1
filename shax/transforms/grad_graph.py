"""`shax.autodiff`: PopXL's graph-level reverse mode (`popxl.transforms.autodiff`).

    fwd = shax.call_with_info(linear_graph, x, inputs_dict={w_var: w, b_var: b})
    info = shax.autodiff(linear_graph)                   # a GradGraphInfo
    activations = info.inputs_dict(fwd)
    dx, dw, db = shax.call(info.graph, seed, inputs_dict=activations)

`info.graph`, the gradient graph, takes the cotangents of the provided outputs first,
then `expected_inputs`: values of the forward graph its derivative reads (activations).
It returns the gradients of `expected_outputs`, the required arguments, in order.

PopXL mutates the forward graph so that it also outputs those activations. A shax
definition is a value, so `info.forward_graph` is the forward graph as autodiff leaves
it: a new definition returning the original's outputs, then the activations, whose
vars `expected_inputs` are. `inputs_dict(fwd_call_info)` re-points that call site to it
(so the forward pass runs once) and reads the activations off it.

A definition's gradient graph with every output provided and every float argument
required is the one its calls use (`shax.callees`): built once per definition, and
shared by every graph that calls it. `called_graphs_grad_info` makes autodiff use
gradient graphs built before for the definitions it calls; `return_all_grad_graphs`
returns those of every definition it differentiated.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, Sequence
from typing import Any

import attrs

from shax import callees
from shax.errors import ShaxError, ShaxTypeError, ShaxValueError, at
from shax.evaluate import evaluate
from shax.ir import Binding, Definition, LinearizedDefinition, Var
from shax.location import current_source
from shax.passes import cleanup
from shax.primitives import Arg, Call
from shax.printing import called_definitions
from shax.rules.linearize import Zero
from shax.stages import linearize, transpose
from shax.stages.linearize import definition_of, zeros_in
from shax.tracer import Tracer, apply, new_trace
from shax.transforms.subgraph import CallSiteInfo, argument_vars, position_of, typed_callee
from shax.well_typed import mark_well_typed


class ByIdentity(Mapping[Any, Any]):
    """A mapping keyed by objects themselves, not their value (tracers and arrays are unhashable)."""

    def __init__(self, items: Iterable[tuple[Any, Any]]) -> None:
        self._items = {id(k): (k, v) for k, v in items}

    def __getitem__(self, key: Any) -> Any:
        try:
            return self._items[id(key)][1]
        except KeyError:
            raise KeyError(key) from None

    def __iter__(self) -> Iterator[Any]:
        return (k for k, _ in self._items.values())

    def __len__(self) -> int:
        return len(self._items)


@attrs.frozen(eq=False)
class GradGraphInfo:
    """PopXL's `GradGraphInfo`: a gradient graph and how to call it."""

    graph: Definition
    forward_graph: Definition
    expected_inputs: tuple[Var, ...]  # vars of forward_graph, the gradient graph's inputs after the cotangents
    expected_outputs: tuple[Var, ...]  # argument vars of forward_graph whose gradients `graph` returns
    num_outputs: int  # of the original forward graph: forward_graph returns them, then the activations
    linearized: LinearizedDefinition | None = None  # its derivative, when `graph` serves calls too

    def inputs_dict(self, fwd_call_info: CallSiteInfo) -> dict[Any, Any]:
        """The gradient graph's expected inputs at that call site of the forward graph,
        keyed by the gradient graph's argument var (its position, if it does not read it)."""
        activations = self._activations(fwd_call_info)
        first = len(self.graph.arg_types) - len(self.expected_inputs)
        graph_args = argument_vars(self.graph)
        keys = [first + j if graph_args[first + j] is None else graph_args[first + j] for j in range(len(activations))]
        return dict(zip(keys, activations))

    def _activations(self, site: CallSiteInfo) -> list[Any]:
        forward, n = self.forward_graph, self.num_outputs
        _expect_site("inputs_dict", site, forward, n, "forward graph")
        tracers = [o for o in site.inputs if isinstance(o, Tracer)]
        if not tracers:
            return evaluate(forward, *site.inputs)[n:]
        # Re-point the call site to the forward graph returning the activations: its
        # outputs are the same values, and now one call computes them with the activations.
        for k, out in enumerate(site.outputs):
            if isinstance(out, Tracer) and isinstance(out.prim, Call) and out.prim.defn is site.called_graph:
                out.prim = Call(forward, k)
        return [apply(Call(forward, n + j), *site.inputs) for j in range(len(self.expected_inputs))]

    def fwd_graph_ins_to_grad_parent_outs(self, grad_call_info: CallSiteInfo) -> dict[Var, Any]:
        """Each required argument var of the forward graph -> its gradient at that call of `graph`."""
        what = "fwd_graph_ins_to_grad_parent_outs"
        _expect_site(what, grad_call_info, self.graph, len(self.expected_outputs), "gradient graph")
        return dict(zip(self.expected_outputs, grad_call_info.outputs, strict=True))

    def fwd_parent_ins_to_grad_parent_outs(
        self, fwd_call_info: CallSiteInfo, grad_call_info: CallSiteInfo
    ) -> ByIdentity:
        """Each of the forward call site's inputs that has a gradient -> that gradient at
        the gradient call site (keyed by the caller's tensors themselves)."""
        what = "fwd_parent_ins_to_grad_parent_outs"
        _expect_site(what, fwd_call_info, self.forward_graph, self.num_outputs, "forward graph")
        _expect_site(what, grad_call_info, self.graph, len(self.expected_outputs), "gradient graph")
        positions = [position_of("autodiff", self.forward_graph, v, argument_vars(self.forward_graph))
                     for v in self.expected_outputs]  # fmt: skip
        return ByIdentity((fwd_call_info.inputs[k], g) for k, g in zip(positions, grad_call_info.outputs, strict=True))


def _expect_site(what: str, site: Any, graph: Definition, num_outputs: int, role: str) -> None:
    """`site` is a CallSiteInfo of `graph` (or of a definition of its argument types and
    `num_outputs` outputs: the original of a forward graph), or a ShaxError at the user's line."""
    if not isinstance(site, CallSiteInfo):
        message = f"{what}: expected the CallSiteInfo of a call (shax.call_with_info), got {type(site).__name__}"
        raise at(ShaxTypeError(message), current_source())
    called = site.called_graph
    if called is not graph and (called.arg_types != graph.arg_types or len(called.outputs) != num_outputs):
        message = f"{what}: that call site calls {called.name}, not {graph.name}'s {role}"
        raise at(ShaxValueError(message), current_source())


def autodiff(
    graph: Definition,
    grads_provided: Iterable[Any] | None = None,
    grads_required: Iterable[Any] | None = None,
    called_graphs_grad_info: Mapping[Definition, GradGraphInfo] | None = None,
    return_all_grad_graphs: bool = False,
) -> GradGraphInfo | list[GradGraphInfo]:
    """The gradient graph of `graph` (PopXL's autodiff): for the outputs in `grads_provided`
    (output vars or positions; default all) and the arguments in `grads_required`
    (argument vars or positions; default every float one)."""
    try:
        defn = typed_callee("autodiff", graph)
        provided = _positions("grads_provided", defn, grads_provided, list(defn.outputs))
        required = _positions("grads_required", defn, grads_required, argument_vars(defn))
        for k in required or ():
            if not defn.arg_types[k].dtype.is_float:
                raise ShaxTypeError(f"autodiff: argument {k} of {defn.name} is a {defn.arg_types[k]}, not a float")
        if called_graphs_grad_info is not None and not isinstance(called_graphs_grad_info, Mapping):
            message = f"called_graphs_grad_info must map definitions to GradGraphInfos, got {called_graphs_grad_info!r}"
            raise ShaxTypeError(f"autodiff: {message}")
        for called, info in (called_graphs_grad_info or {}).items():
            _install("autodiff: called_graphs_grad_info", called, info)
        info = _grad_graph(defn, provided, required)
    except ShaxError as error:
        raise at(error, current_source()) from None
    if not return_all_grad_graphs:
        return info
    differentiated = [c for c in called_definitions(defn) if callees.is_differentiated(c)]
    return [info, *(_grad_graph(c, None, None) for c in differentiated)]


def _positions(
    what: str, defn: Definition, given: Iterable[Any] | None, vars: Sequence[Var | None]
) -> list[int] | None:
    if given is None:
        return None
    items = None
    if not isinstance(given, (str, bytes)):
        try:
            items = list(given)
        except TypeError:  # not iterable (a 0-d array's iterator says so only when asked)
            pass
    if items is None:
        raise ShaxTypeError(f"autodiff: {what} must be a list of vars or positions, got {given!r}")
    positions = [position_of(f"autodiff: {what}", defn, g, vars) for g in items]
    if len(set(positions)) != len(positions):
        raise ShaxValueError(f"autodiff: {what} lists a tensor twice: {items}")
    return positions


def _install(what: str, called: Any, info: Any) -> None:
    if not isinstance(info, GradGraphInfo) or info.linearized is None:
        raise ShaxTypeError(
            f"{what}: expected a GradGraphInfo of every output and float argument (from shax.autodiff), got {info!r}"
        )
    defn = typed_callee(what, called)
    if info.linearized.primal.arg_types != defn.arg_types or info.num_outputs != len(defn.outputs):
        raise ShaxValueError(f"{what}: that GradGraphInfo is for {info.forward_graph.name}, not for {defn.name}")
    callees.install(defn, info.linearized, info.graph)


def _grad_graph(defn: Definition, provided: list[int] | None, required: list[int] | None) -> GradGraphInfo:
    n = len(defn.outputs)
    everything = provided in (None, list(range(n))) and required in (None, list(callees.wrt(defn)))
    if everything:  # the derivative calls of defn use: built once
        lin = callees.derivative(defn)
        graph = callees.transposed(lin.linear, len(callees.wrt(defn)))
        wrt = list(callees.wrt(defn))
    else:
        wrt = list(callees.wrt(defn)) if required is None else required
        linearized = linearize(defn, wrt)
        lin = LinearizedDefinition(cleanup(linearized.primal), cleanup(linearized.linear), linearized.num_residuals)
        graph = cleanup(transpose(lin).linear)
        if provided is not None and provided != list(range(n)):
            graph = _provided_only(graph, provided, n)
    forward = _reading_every_argument(lin.primal)
    expected_inputs = tuple(forward.outputs[n:])
    forward_args = argument_vars(forward)
    expected_outputs = tuple(v for v in (forward_args[k] for k in wrt) if v is not None)
    return GradGraphInfo(graph, forward, expected_inputs, expected_outputs, n, lin if everything else None)


def _reading_every_argument(defn: Definition) -> Definition:
    """`defn` with an `arg` binding for each argument (a var to name it by, read or not)."""
    missing = [k for k, v in enumerate(argument_vars(defn)) if v is None]
    if not missing:
        return defn
    fresh = 1 + max((b.var.id for b in defn.bindings), default=-1)
    reads = tuple(Binding(Var(fresh + j, defn.arg_types[k]), Arg(k), ()) for j, k in enumerate(missing))
    return mark_well_typed(Definition(defn.name, defn.arg_types, reads + defn.bindings, defn.outputs))


def _provided_only(graph: Definition, provided: list[int], n: int) -> Definition:
    """`graph` taking the cotangents of the `provided` outputs only (the others zero)."""
    ct_types = graph.arg_types[:n]
    rest = graph.arg_types[n:]
    with new_trace([*(ct_types[k] for k in provided), *rest]) as trace:
        given = dict(zip(provided, trace.args))
        cts = [given[k] if k in given else zeros_in(trace, ct_types[k]) for k in range(n)]
        results = evaluate(graph, *cts, *trace.args[len(provided) :])
    assert not any(isinstance(r, Zero) for r in results)
    return cleanup(definition_of(graph.name, [*(ct_types[k] for k in provided), *rest], results))

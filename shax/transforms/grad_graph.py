"""`shax.autodiff`: PopXL's graph-level reverse mode (`popxl.transforms.autodiff`).

    fwd = shax.call_with_info(linear_graph, x, inputs_dict={w_var: w, b_var: b})
    info = shax.autodiff(linear_graph)                   # a GradGraphInfo
    activations = info.inputs_dict(fwd)
    dx, dw, db = shax.call(info.graph, seed, inputs_dict=activations)

`info.graph`, the gradient graph, takes the cotangents of the provided outputs first
(in the order `grads_provided` lists them), then `expected_inputs`: the values of the
forward graph its derivative reads (activations; only those it reads). It returns the
gradients of `expected_outputs`, the required arguments, in the order listed.

`info.forward_graph` is the definition autodiff was given, as PopXL's (the key of
`called_graphs_grad_info`). PopXL mutates it so that it also outputs the activations; a
shax definition is a value, so `info.forward_with_activations` is a new definition
returning the original's outputs, then the activations, whose vars `expected_inputs`
are (its argument vars are the original's). `inputs_dict(fwd_call_info)` re-points
that call site to it (so the forward pass runs once) and reads the activations off it.

A definition's gradient graph with every output provided and every float argument
required is the one its calls use (`shax.control.callees`): built once per definition, and
shared by every graph that calls it. `called_graphs_grad_info` makes autodiff use
gradient graphs built before for the definitions it calls; `return_all_grad_graphs`
returns those of every definition it differentiated.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from typing import Any, Literal, overload

import attrs
import numpy as np

from shax.control import Call, callees
from shax.core.errors import ShaxError, ShaxTypeError, ShaxValueError, at
from shax.core.ir import Binding, Definition, LinearizedDefinition, Var
from shax.core.location import current_source
from shax.core.printing import called_definitions
from shax.core.well_typed import mark_well_typed
from shax.passes import cleanup
from shax.primitives import Arg
from shax.stages import linearize, transpose
from shax.tracing.evaluate import evaluate
from shax.tracing.tracer import Tracer, apply_all, re_record
from shax.transforms.subgraph import CallSiteInfo, position_of, typed_callee


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
    forward_graph: Definition  # the definition autodiff was given, as it was given
    original_graph: Definition  # forward_graph typed (forward_graph itself if it was typed)
    forward_with_activations: Definition  # forward_graph's outputs, then the activations
    expected_inputs: tuple[
        Var, ...
    ]  # vars of forward_with_activations, the gradient graph's inputs after the cotangents
    expected_outputs: tuple[Var, ...]  # argument vars of forward_graph whose gradients `graph` returns
    num_outputs: int  # of forward_graph: forward_with_activations returns them, then the activations
    linearized: LinearizedDefinition | None = None  # its derivative, when `graph` serves calls too

    def inputs_dict(self, fwd_call_info: CallSiteInfo) -> dict[Any, Any]:
        """The gradient graph's expected inputs at that call site of the forward graph,
        keyed by the gradient graph's argument var (its position, if it does not read it)."""
        activations = self._activations(fwd_call_info)
        first = len(self.graph.arg_types) - len(self.expected_inputs)
        graph_args = self.graph.inputs
        keys = [first + j if graph_args[first + j] is None else graph_args[first + j] for j in range(len(activations))]
        return dict(zip(keys, activations))

    def _activations(self, site: CallSiteInfo) -> list[Any]:
        forward, n = self.forward_with_activations, self.num_outputs
        _expect_site("inputs_dict", site, (forward, self.original_graph), "the graph differentiated")
        tracers = [o for o in site.inputs if isinstance(o, Tracer)]
        if not tracers:
            return evaluate(forward, *site.inputs)[n:]
        # Re-point the call site to the forward graph returning the activations: its
        # outputs are the same values, and now one call computes them with the activations.
        outputs = list(site.outputs)
        if all(
            isinstance(o, Tracer) and isinstance(o.prim, Call) and o.prim.defn is site.called_graph for o in outputs
        ):
            return re_record(outputs, Call(forward), *site.inputs)[n:]
        return apply_all(Call(forward), *site.inputs)[n:]

    def fwd_graph_ins_to_grad_parent_outs(self, grad_call_info: CallSiteInfo) -> dict[Var, Any]:
        """Each required argument var of the forward graph -> its gradient at that call of `graph`."""
        what = "fwd_graph_ins_to_grad_parent_outs"
        _expect_site(what, grad_call_info, (self.graph,), "its gradient graph")
        return dict(zip(self.expected_outputs, grad_call_info.outputs, strict=True))

    def fwd_parent_ins_to_grad_parent_outs(
        self, fwd_call_info: CallSiteInfo, grad_call_info: CallSiteInfo
    ) -> ByIdentity:
        """Each of the forward call site's inputs that has a gradient -> that gradient at
        the gradient call site (keyed by the caller's tensors themselves; a tensor passed
        as several arguments gets the sum of their gradients)."""
        what = "fwd_parent_ins_to_grad_parent_outs"
        forward = self.forward_with_activations
        _expect_site(what, fwd_call_info, (forward, self.original_graph), "the graph differentiated")
        _expect_site(what, grad_call_info, (self.graph,), "its gradient graph")
        positions = [position_of("autodiff", forward, v, forward.inputs) for v in self.expected_outputs]
        found: dict[int, tuple[Any, Any]] = {}
        for k, g in zip(positions, grad_call_info.outputs, strict=True):
            tensor = fwd_call_info.inputs[k]
            found[id(tensor)] = (tensor, g + found[id(tensor)][1] if id(tensor) in found else g)
        return ByIdentity(found.values())


def _expect_site(what: str, site: Any, graphs: tuple[Definition, ...], role: str) -> None:
    """`site` is a CallSiteInfo of one of `graphs` (by identity), or a ShaxError at the user's line."""
    if not isinstance(site, CallSiteInfo):
        message = f"{what}: expected the CallSiteInfo of a call (shax.call_with_info), got {type(site).__name__}"
        raise at(ShaxTypeError(message), current_source())
    if not any(site.called_graph is g for g in graphs):
        message = f"{what}: that call site calls {site.called_graph.name}, not {graphs[0].name}, {role}"
        raise at(ShaxValueError(message), current_source())


@overload
def autodiff(
    graph: Definition,
    grads_provided: Iterable[Any] | None = None,
    grads_required: Iterable[Any] | None = None,
    called_graphs_grad_info: Mapping[Definition, GradGraphInfo] | None = None,
    return_all_grad_graphs: Literal[False] = False,
) -> GradGraphInfo: ...


@overload
def autodiff(
    graph: Definition,
    grads_provided: Iterable[Any] | None = None,
    grads_required: Iterable[Any] | None = None,
    called_graphs_grad_info: Mapping[Definition, GradGraphInfo] | None = None,
    *,
    return_all_grad_graphs: Literal[True],
) -> list[GradGraphInfo]: ...


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
        if not isinstance(return_all_grad_graphs, (bool, np.bool_)):
            message = f"return_all_grad_graphs must be True or False, got {type(return_all_grad_graphs).__name__}"
            raise ShaxTypeError(f"autodiff: {message}")
        defn = typed_callee("autodiff", graph)
        provided = _positions("grads_provided", defn, grads_provided, list(defn.outputs))
        required = _positions("grads_required", defn, grads_required, defn.inputs)
        for k in required or ():
            if not defn.arg_types[k].dtype.is_float:
                raise ShaxTypeError(f"autodiff: argument {k} of {defn.name} is a {defn.arg_types[k]}, not a float")
        output_types = defn.output_types()
        for k in provided or ():
            if not output_types[k].dtype.is_float:
                raise ShaxTypeError(f"autodiff: output {k} of {defn.name} is a {output_types[k]}, not a float")
        if called_graphs_grad_info is not None and not isinstance(called_graphs_grad_info, Mapping):
            message = f"called_graphs_grad_info must map definitions to GradGraphInfos, got {called_graphs_grad_info!r}"
            raise ShaxTypeError(f"autodiff: {message}")
        for called, info in (called_graphs_grad_info or {}).items():
            _install("autodiff: called_graphs_grad_info", called, info)
        info = _grad_graph(graph, defn, provided, required)
    except ShaxError as error:
        raise at(error, current_source()) from None
    if not return_all_grad_graphs:
        return info
    differentiated = [c for c in called_definitions(defn) if callees.is_differentiated(c)]
    return [info, *(_grad_graph(c, c, None, None) for c in differentiated)]


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
    if info.original_graph is not defn:
        other = "another definition named " if info.original_graph.name == defn.name else ""
        message = f"that GradGraphInfo is for {other}{info.original_graph.name}, not for {defn.name}"
        raise ShaxValueError(f"{what}: {message} (key it by its forward_graph)")
    callees.install(defn, info.linearized, info.graph)


def _grad_graph(
    given: Definition, defn: Definition, provided: list[int] | None, required: list[int] | None
) -> GradGraphInfo:
    """The GradGraphInfo of `given`, whose typed definition is `defn`."""
    n = len(defn.outputs)
    everything = provided in (None, list(range(n))) and required in (None, list(callees.wrt(defn)))
    if everything:  # the derivative calls of defn use: built once
        lin = callees.derivative(defn)
        graph = callees.transposed(lin.linear, len(callees.wrt(defn)))
        wrt = list(callees.wrt(defn))
        forward = _with_arguments_of(lin.primal, defn)
    else:
        wrt = list(callees.wrt(defn)) if required is None else required
        linearized = linearize(defn, wrt)
        linear = cleanup(linearized.linear)
        if provided is not None:  # the tangents of the provided outputs only: their cotangents, transposed
            outputs = tuple(linear.outputs[k] for k in provided)
            linear = cleanup(mark_well_typed(Definition(linear.name, linear.arg_types, linear.bindings, outputs)))
        lin = LinearizedDefinition(cleanup(linearized.primal), linear, linearized.num_residuals)
        graph = cleanup(transpose(lin).linear)
        cts = len(lin.linear.outputs)
        graph, read = _reading_only(graph, cts)
        primal = lin.primal
        kept = Definition(
            primal.name, primal.arg_types, primal.bindings, (*primal.outputs[:n], *read(primal.outputs[n:]))
        )
        forward = _with_arguments_of(cleanup(mark_well_typed(kept)), defn)
    expected_inputs = tuple(forward.outputs[n:])
    forward_args = forward.inputs
    expected_outputs = tuple(v for v in (forward_args[k] for k in wrt) if v is not None)  # every one
    served = lin if everything else None
    return GradGraphInfo(graph, given, defn, forward, expected_inputs, expected_outputs, n, served)


def _reading_only(graph: Definition, cts: int) -> tuple[Definition, Callable[[Sequence[Var]], list[Var]]]:
    """`graph` without the activations it does not read (its arguments after the `cts`
    cotangents), and which of a list of activations it still takes."""
    arguments = graph.inputs
    kept = [k for k in range(cts, len(arguments)) if arguments[k] is not None]
    if len(kept) == len(arguments) - cts:
        return graph, list
    index = {k: j for j, k in enumerate([*range(cts), *kept])}
    bindings = tuple(
        Binding(b.var, Arg(index[b.prim.index]), ()) if isinstance(b.prim, Arg) else b for b in graph.bindings
    )
    types = tuple(graph.arg_types[k] for k in index)
    pruned = mark_well_typed(Definition(graph.name, types, bindings, graph.outputs))
    return pruned, lambda activations: [activations[k - cts] for k in kept]


def _with_arguments_of(defn: Definition, original: Definition) -> Definition:
    """`defn` (the same arguments as `original`) reading each argument into the var
    `original` reads it into, and every argument into some var (to name it by)."""
    names, read = original.inputs, defn.inputs
    if all(v is not None and (name is None or v.id == name.id) for v, name in zip(read, names)):
        return defn
    fresh = itertools.count(1 + max((v.id for b in (*original.bindings, *defn.bindings) for v in b.vars), default=-1))
    chosen = [name.id if name is not None else next(fresh) for name in names]
    bindings = [
        Binding(Var(chosen[k], t), Arg(k), ()) for k, (t, v) in enumerate(zip(defn.arg_types, read)) if v is None
    ]
    renamed: dict[int, Var] = {}  # var id in defn -> its var in the result
    for b in defn.bindings:
        prim = b.prim
        first_read = isinstance(prim, Arg) and b.vars[0] is read[prim.index]
        for var in b.vars:
            renamed[var.id] = Var(chosen[prim.index] if isinstance(prim, Arg) and first_read else next(fresh), var.type)
        bindings.append(
            Binding(tuple(renamed[v.id] for v in b.vars), b.prim, tuple(renamed[a.id] for a in b.args), b.source)
        )
    outputs = tuple(Var(renamed[v.id].id, v.type) for v in defn.outputs)
    return mark_well_typed(Definition(defn.name, defn.arg_types, tuple(bindings), outputs))

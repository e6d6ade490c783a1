"""Unzip: a JVP Definition -> LinearizedDefinition, step (ii) of "You Only Linearize Once":
the primal and the linear parts of one forward-mode program pulled apart.

    jvp_medium(args, tangents)   -> outputs, output tangents       (`shax.stages.jvp`)
    medium(args)                 -> outputs, then residuals
    dmedium(tangents, residuals) -> output tangents

A binding is linear if it depends on a tangent argument, primal otherwise. A primal value
that a linear binding reads crosses into the linear program, in the order the JVP program
first reads it there, as one of three things:
    a constant (it depends on no argument): copied in, as linearize copies constants;
    a residual: an argument of the linear program, which the primal program returns;
    recomputed: its binding copied into the linear program, its operands crossing in turn.
Which values are residuals is the checkpoint `policy` (`shax.checkpoint_policies`), asked
`policy(prim, *operand_types)` for each crossing value; arguments are always saved. The
default saves everything: `unzip(jvp(f))` is `linearize(f)`, the same programs. A value
recomputed is computed again from the saved ones when the linear program runs (its
transpose recomputes it forward, before the backward pass). One pass: linear time.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from shax.core.errors import ShaxTypeError, ShaxValueError, at
from shax.core.gcpause import collector_paused
from shax.core.ir import RECOMPUTED, Binding, Definition, LinearizedDefinition, type_of
from shax.core.location import current_source
from shax.core.primitive import Arg
from shax.stages.linearize import first_uses, split
from shax.tracing.tracer import Trace, Tracer, emit_all, new_trace
from shax.tracing.validation import check_well_formed

Policy = Callable[..., bool]  # (prim, *operand types) -> whether its value is saved


@collector_paused()
def unzip(jvp_defn: Definition, policy: Policy | None = None, num_tangents: int | None = None) -> LinearizedDefinition:
    """The primal and linear programs of `jvp_defn`, which takes primals then
    `num_tangents` tangents (default: one per primal) and returns outputs then their tangents."""
    check_well_formed("unzip", jvp_defn)
    if policy is not None and not callable(policy):
        message = f"unzip: policy must be a function (prim, *operand_types) -> bool, got {policy!r:.60}"
        raise at(ShaxTypeError(message), current_source())
    if num_tangents is not None and (isinstance(num_tangents, bool) or not isinstance(num_tangents, int)):
        message = f"unzip: num_tangents must be an int, got {type(num_tangents).__name__} {num_tangents!r:.60}"
        raise at(ShaxTypeError(message), current_source())
    num_args, num_outputs = len(jvp_defn.arg_types), len(jvp_defn.outputs)
    m = num_args // 2 if num_tangents is None else num_tangents
    if num_outputs % 2 or not 0 <= m <= num_args or (num_tangents is None and num_args % 2):
        message = f"{jvp_defn.name} takes {num_args} argument(s) and returns {num_outputs}: not primals then tangents"
        raise at(ShaxValueError(f"unzip: {message}"), current_source())
    n = num_args - m
    name = jvp_defn.name.removeprefix("jvp_")
    with new_trace(jvp_defn.arg_types[:n]) as primal, new_trace(jvp_defn.arg_types[n:]) as linear:
        state = _Unzipping(jvp_defn, n, primal, linear, policy)
        for b in jvp_defn.bindings:
            state.step(b)
        outputs = [state.primal_value[v.id] for v in jvp_defn.outputs[: num_outputs // 2]]
        output_tangents = [state.linear_value(v.id) for v in jvp_defn.outputs[num_outputs // 2 :]]
        order = first_uses(linear, output_tangents)
    arg_types = jvp_defn.arg_types
    return split(name, arg_types[:n], arg_types[n:], outputs, output_tangents, linear.captured, order, primal.effects)


class _Unzipping:
    def __init__(self, defn: Definition, n: int, primal: Trace, linear: Trace, policy: Policy | None) -> None:
        self.n = n
        self.primal = primal
        self.linear = linear
        self.policy = policy
        self.binding: dict[int, Binding] = {v.id: b for b in defn.bindings for v in b.vars}  # var id -> its binding
        self.constant: set[int] = set()  # var ids of primal values that depend on no argument
        self.primal_value: dict[int, Tracer] = {}  # var id of a primal value -> it, in the primal trace
        self.linear_values: dict[int, Tracer] = {}  # var id -> its value in the linear trace

    def step(self, b: Binding) -> None:
        prim, args = b.prim, b.args
        if isinstance(prim, Arg):
            if prim.index < self.n:
                self.primal_value[b.vars[0].id] = self.primal.args[prim.index]
            else:
                self.linear_values[b.vars[0].id] = self.linear.args[prim.index - self.n]
            return
        if any(a.id in self.linear_values and a.id not in self.primal_value for a in args):
            operands = [self.linear_value(a.id) for a in args]
            self.linear_values.update(zip([v.id for v in b.vars], _copy(self.linear, b, operands)))
            return
        if all(a.id in self.constant for a in args):
            self.constant.update(v.id for v in b.vars)
        values = _copy(self.primal, b, [self.primal_value[a.id] for a in args])
        self.primal_value.update(zip([v.id for v in b.vars], values))

    def linear_value(self, var_id: int) -> Tracer:
        """The value of `var_id` in the linear program; a primal value crosses (once)."""
        stack = [var_id]  # the values crossing, each after the operands it waits for
        while stack:
            top = stack[-1]
            if top in self.linear_values:
                stack.pop()
                continue
            b = self.binding[top]
            if self._saved(b, top):
                self.linear_values[top] = self.linear.capture(self.primal_value[top])
                continue
            waiting = [a.id for a in b.args if a.id not in self.linear_values]
            if waiting:
                stack.extend(reversed(waiting))
                continue
            recomputed = None if top in self.constant else f"{RECOMPUTED}: {b.origin or 'user code'}"
            values = _copy(self.linear, b, [self.linear_values[a.id] for a in b.args], recomputed)
            self.linear_values.update(zip([v.id for v in b.vars], values))
        return self.linear_values[var_id]

    def _saved(self, b: Binding, var_id: int) -> bool:
        if var_id in self.constant:
            return False
        if isinstance(b.prim, Arg) or self.policy is None:
            return True
        types = [type_of(next(v for v in self.binding[a.id].vars if v.id == a.id)) for a in b.args]
        return bool(self.policy(b.prim, *types))


def _copy(trace: Trace, b: Binding, operands: Sequence[Tracer], origin: str | None = None) -> list[Tracer]:
    """`b` on `operands` in `trace`, from where `b` came from (or from `origin`): its results."""
    nodes = emit_all(trace, b.prim, tuple(operands))
    for node in nodes:
        node.source, node.origin = b.source, origin or b.origin
    return nodes

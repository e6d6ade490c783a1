"""What the stages make of a called definition, built once per callee and shared by every
call site: its derivative (`derivative`), the transpose of a linear callee
(`transposed`), its batched form per batch layout (`batched`), its form without the
outputs no caller reads (`pruned`) and its compiled function (`compiled`; a loop body's
without argument tests, `compiled_body`).

Kept by the callee's identity while it lives (`shax.core.derived`).

A checkpointed callee (`checkpointed`) has its derivative unzipped by its policy.

    derivative(f) = LinearizedDefinition(
        f's forward:  f(args)                  -> outputs, then the activations,
        df:           df(tangents, activations) -> output tangents)
    transposed(df, n) = dft(output cotangents, activations) -> tangent input cotangents

The tangents are those of f's float arguments, all of them, whichever a call site
perturbs: a derivative built once serves every call site (zero tangents are zeros, and
the cotangents of arguments a caller does not differentiate go unread, so `dce` prunes
them from the transposed call).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import attrs
import numpy as np

from shax.codegen import Compiled, compile_definition
from shax.core.derived import derived, known, replace
from shax.core.ir import Binding, Definition, LinearizedDefinition, Var
from shax.core.primitive import Arg
from shax.core.types import TensorType
from shax.core.well_typed import mark_well_typed
from shax.passes import bind_arguments, cleanup
from shax.stages import batch, check_types, infer_types, linearize, transpose
from shax.stages.jvp import jvp
from shax.stages.linearize import definition_of
from shax.stages.unzip import Policy, unzip
from shax.tracing import measure
from shax.tracing.rule_linearity import check_linear_rule
from shax.tracing.tracer import Tracer, lift, new_trace


def typed(defn: Definition) -> Definition:
    """An untyped callee, typed (once: every call of it calls the same typed definition)."""
    return derived(defn, "typed", lambda: infer_types(defn))


def derivative(defn: Definition) -> LinearizedDefinition:
    """f's forward definition (outputs, then activations) and its linear definition."""
    return derived(defn, "derivative", lambda: _linearized(defn))


def is_differentiated(defn: Definition) -> bool:
    """Whether `defn`'s derivative was built (a call of it was differentiated)."""
    return known(defn, "derivative") is not None


def wrt(defn: Definition) -> tuple[int, ...]:
    """The arguments a callee's derivative takes tangents of: its float ones."""
    return tuple(k for k, t in enumerate(defn.arg_types) if t.dtype.is_float)


def _linearized(defn: Definition) -> LinearizedDefinition:
    policy = known(defn, "policy")
    if policy is None:
        lin = linearize(defn, wrt(defn))
    else:  # a checkpointed callee: what the policy does not save, its linear part recomputes
        lin = unzip(jvp(defn, wrt(defn)), policy, len(wrt(defn)))
    return LinearizedDefinition(cleanup(lin.primal), cleanup(lin.linear), lin.num_residuals)


def checkpointed(defn: Definition, policy: Policy) -> Definition:
    """`defn`, whose derivative (built when a call of it is differentiated) saves what
    `policy` saves (`shax.checkpoint`), and so does its batched form's."""
    derived(defn, "policy", lambda: policy)
    return defn


def install(defn: Definition, lin: LinearizedDefinition, grad: Definition) -> None:
    """Use `lin` as `defn`'s derivative and `grad` as its linear part's transpose (a
    gradient graph built before: `shax.autodiff(..., called_graphs_grad_info=)`)."""
    replace(defn, "derivative", lin)
    replace(lin.linear, ("transposed", len(wrt(defn))), grad)


def transposed(defn: Definition, linear: int) -> Definition:
    """The transpose of `defn`, linear in its first `linear` arguments (the rest held
    fixed): it takes the output cotangents, then those other arguments."""
    return derived(defn, ("transposed", linear), lambda: _transposed(defn, linear))


def _transposed(defn: Definition, linear: int) -> Definition:
    fixed = defn.arg_types[linear:]
    # The linear definition's residuals are its fixed arguments: a primal passing them on.
    bindings = tuple(Binding(Var(k, t), Arg(k), ()) for k, t in enumerate(fixed))
    passing = mark_well_typed(Definition(defn.name, fixed, bindings, tuple(b.vars[0] for b in bindings)))
    return cleanup(transpose(LinearizedDefinition(passing, defn, len(fixed))).linear)


def batched(defn: Definition, dims: tuple[int | None, ...], size: int) -> Definition:
    """`defn` over a batch of `size`, its arguments batched at `dims`, outputs at axis 0."""
    return derived(defn, ("batched", dims, size), lambda: _batched(defn, dims, size))


def _batched(defn: Definition, dims: tuple[int | None, ...], size: int) -> Definition:
    vdefn = cleanup(batch(defn, list(dims), size, 0))
    policy = known(defn, "policy")
    return vdefn if policy is None else checkpointed(vdefn, policy)


def custom_derivative(defn: Definition, rule: Definition, shown: str) -> LinearizedDefinition:
    """A custom_jvp function's derivative from its rule, `rule(primals, tangents) ->
    (outputs, output tangents)`, linear in the tangents (else a ShaxTypeError naming the
    rule as `shown`): linearized in its float tangents, its primal at zero tangents is the
    forward definition (the outputs, then the activations), its linear part's output
    tangents the linear definition."""
    return derived(rule, ("custom_derivative", id(defn)), lambda: _custom_derivative(defn, rule, shown))


def _custom_derivative(defn: Definition, rule: Definition, shown: str) -> LinearizedDefinition:
    n, m = len(defn.arg_types), len(defn.outputs)
    tangents = [n + k for k in wrt(defn)]
    lin = linearize(rule, tangents)
    check_linear_rule(rule, lin, set(tangents), shown)
    zeros = {n + k: np.zeros(t.shape, t.dtype.numpy) for k, t in enumerate(defn.arg_types)}
    primal = bind_arguments(lin.primal, zeros)
    outputs = (*primal.outputs[:m], *primal.outputs[2 * m :])  # not the output tangents (zeros)
    forward = cleanup(attrs.evolve(primal, name=rule.name, outputs=outputs))
    linear = cleanup(attrs.evolve(lin.linear, name="d" + rule.name, outputs=lin.linear.outputs[m:]))
    return LinearizedDefinition(mark_well_typed(forward), mark_well_typed(linear), lin.num_residuals)


def batched_cotangents(
    bwd: Definition, in_dims: tuple[int | None, ...], out_dims: tuple[int | None, ...], size: int
) -> Definition:
    """A custom_vjp function's bwd over a batch of `size`: its residuals and output
    cotangents batched at `in_dims`, its argument cotangents at `out_dims`, the
    arguments' batch axes (summed over the batch for an argument not batched)."""
    key = ("batched_cotangents", in_dims, out_dims, size)
    return derived(bwd, key, lambda: _batched_cotangents(bwd, in_dims, out_dims, size))


def _batched_cotangents(
    bwd: Definition, in_dims: tuple[int | None, ...], out_dims: tuple[int | None, ...], size: int
) -> Definition:
    import typeclasses as tc
    from shax.tracing.evaluate import evaluate
    from shax.tracing.trace import trace

    inner = batched(bwd, in_dims, size)

    def moved(*leaves: Any) -> list[Any]:
        cotangents = evaluate(inner, *leaves)
        return [_at_axis(tc, ct, d) for ct, d in zip(cotangents, out_dims)]

    return cleanup(infer_types(trace(moved, *inner.arg_types, name=bwd.name)))


def custom_vjp_jvp(bwd: Definition, num_residuals: int) -> Definition:
    """The forward derivative a custom_vjp function's bwd implies, where bwd is linear in
    the cotangents: its transpose, taking one tangent per bwd output (per argument of the
    function), then the residuals, and returning the output tangents."""
    return derived(bwd, ("custom_vjp_jvp", num_residuals), lambda: _custom_vjp_jvp(bwd, num_residuals))


def _custom_vjp_jvp(bwd: Definition, num_residuals: int) -> Definition:
    from shax.tracing.evaluate import evaluate
    from shax.tracing.trace import trace

    r = num_residuals
    m = len(bwd.arg_types) - r

    def cotangents_first(*args: Any) -> list[Any]:
        return evaluate(bwd, *args[m:], *args[:m])

    reordered = cleanup(infer_types(trace(cotangents_first, *bwd.arg_types[r:], *bwd.arg_types[:r], name=bwd.name)))
    return transposed(reordered, m)


def _at_axis(tc: Any, ct: Any, axis: int | None) -> Any:
    """`ct`, batched at axis 0, summed over the batch (None) or moved to `axis`."""
    if axis is None:
        return tc.reduce_sum(ct, [0])
    if axis == 0:
        return ct
    perm = [*range(1, axis + 1), 0, *range(axis + 1, ct.type.rank)]
    return tc.transpose(ct, perm)


def build(name: str, arg_types: Sequence[TensorType], fn: Callable[[list[Tracer]], Sequence[Any]]) -> Definition:
    """The typed definition of `fn` on tracers of `arg_types` (it runs definitions on
    them: what the loop and cond rules derive from their bodies and branches)."""
    with new_trace(arg_types) as trace:
        # An output computed without the arguments (a constant, a zero slot) is a number: lifted.
        outputs = [o if isinstance(o, Tracer) else lift(trace, o, None, "return") for o in fn(list(trace.args))]
    return cleanup(definition_of(name, arg_types, outputs, trace.effects))


def rearranged(defn: Definition, arg_types: Sequence[TensorType], positions: Sequence[int]) -> Definition:
    """`defn` taking `arg_types`, its argument k being the new argument `positions[k]`
    (arguments it does not read may be added)."""
    bindings = tuple(
        Binding(b.var, Arg(positions[b.prim.index]), b.args, b.source, b.origin) if isinstance(b.prim, Arg) else b
        for b in defn.bindings
    )
    return check_types(Definition(defn.name, tuple(arg_types), bindings, defn.outputs))


def reordered(defn: Definition, order: tuple[int, ...]) -> Definition:
    """`defn` taking its arguments in `order` (its argument order[j] as argument j)."""

    def build() -> Definition:
        positions = [order.index(k) for k in range(len(order))]
        return rearranged(defn, [defn.arg_types[k] for k in order], positions)

    return derived(defn, ("reordered", order), build)


def pruned(defn: Definition, outputs: tuple[int, ...]) -> Definition:
    """`defn` returning only the outputs at positions `outputs`, without what only the
    others needed."""
    return derived(defn, ("pruned", outputs), lambda: _pruned(defn, outputs))


def _pruned(defn: Definition, outputs: tuple[int, ...]) -> Definition:
    kept = Definition(defn.name, defn.arg_types, defn.bindings, tuple(defn.outputs[k] for k in outputs))
    return cleanup(mark_well_typed(kept))


def read_arguments(defn: Definition) -> tuple[bool, ...]:
    """Per argument, whether anything reads it (a cleaned definition: whether an output
    depends on it)."""
    return derived(defn, "read arguments", lambda: _read_arguments(defn))


def _read_arguments(defn: Definition) -> tuple[bool, ...]:
    read = {v.id for v in defn.outputs} | {a.id for b in defn.bindings for a in b.args}
    flags = [False] * len(defn.arg_types)
    for b in defn.bindings:
        if isinstance(b.prim, Arg):
            flags[b.prim.index] = b.vars[0].id in read
    return tuple(flags)


def without_prints(defn: Definition) -> Definition:
    """`defn` without its effectful bindings (`debug_print`: nothing reads them), for a part
    of a computation run elsewhere than where its effects belong (a scan's invariant part)."""

    def build() -> Definition:
        kept = tuple(b for b in defn.bindings if not b.prim.effectful)
        return Definition(defn.name, defn.arg_types, kept, defn.outputs)

    return derived(defn, "without prints", build)


def passed_on(defn: Definition) -> tuple[int | None, ...]:
    """Per output of `defn`, the argument it returns unchanged (None: a computed value)."""
    return derived(defn, "passed_on", lambda: _passed_on(defn))


def _passed_on(defn: Definition) -> tuple[int | None, ...]:
    argument = {b.var.id: b.prim.index for b in defn.bindings if isinstance(b.prim, Arg)}
    return tuple(argument.get(v.id) for v in defn.outputs)


def compiled(defn: Definition) -> Compiled:
    """`defn`'s compiled function (`shax.codegen`)."""
    return derived(defn, "compiled", lambda: compile_definition(defn))


def compiled_fresh(defn: Definition) -> Compiled:
    """`defn`'s compiled function returning new arrays only (an output that is, or views, an
    argument copied, `fresh_outputs`): a call's results, which its caller may then return
    or overwrite as its own without copying them again."""
    return derived(defn, "compiled fresh", lambda: compile_definition(defn, fresh_outputs=True))


def compiled_body(defn: Definition) -> Compiled:
    """`defn`'s compiled function without argument tests: a loop's body, called by the
    loop's generated code with values of its declared types, once per iteration."""
    return derived(defn, "compiled body", lambda: compile_definition(defn, checked=False))


def flops(defn: Definition) -> int:
    """The flops of one run of `defn` (`shax.tracing.measure`), or of its recomputation
    while `measure.recomputed_flops` counts."""
    if measure.counting_recomputed():
        return derived(defn, "recomputed flops", lambda: measure.recomputed_flops(defn))
    return derived(defn, "flops", lambda: measure.flops(defn))

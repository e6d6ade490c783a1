"""`shax.stats`: what a definition costs, for teaching and for a first look at where the
time and memory go.

    print(shax.stats(shax.xpr(model, x, w)))

counts the bindings per primitive (arguments aside) and their flops (`shax.rules.cost`:
one per element of an elementwise result, 2·batch·M·N·K for a `dot_general`, the input's
size for a reduction, the callee's for a call, nothing for moving data), the bytes of the
arguments and outputs, and the peak of the bytes live at once in program order (a value
lives from its binding to its last use, the arguments throughout). A
LinearizedDefinition counts both its parts, run one after the other: its primal
outputs beyond the original ones are the residuals; while the linear part runs, the
primal's arguments and outputs are still held (the caller has them) and the residuals
are its arguments. `residual_argument_bytes` are those of residuals that are the primal's
own arguments passed on (no memory of their own), so `saved_bytes`, the rest, is what a
checkpoint policy saves. Of the flops, `recomputed_flops` are those the backward pass
spends recomputing what a checkpoint policy did not save (`shax.checkpoint`,
`shax.stages.unzip`), in callees and loop bodies too.

`policy_stats(f, *args)` sets the policies side by side: per checkpoint policy, the stats
of `f`'s gradient with `f` checkpointed by it (its forward and backward programs):

    print(shax.policy_stats(layer, x, w))
    policy                            residuals  residual bytes  saved bytes  flops  recomputed flops  peak live bytes
    nothing_saveable                          2             ...
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

import attrs

from shax.core.errors import ShaxTypeError, at
from shax.core.ir import Definition, LinearizedDefinition
from shax.core.location import current_source
from shax.passes import cleanup
from shax.stages import check_types, transpose
from shax.stages import checkpoint_policies as cp
from shax.stages.jvp import jvp
from shax.stages.unzip import Policy, unzip
from shax.tracing.measure import flops_by_primitive, nbytes, peak_bytes, recomputed_flops
from shax.tracing.trace import check_function, function_name
from shax.transforms import staging
from shax.transforms.arguments import abstract_types
from shax.transforms.saved_residuals import residual_arguments

if TYPE_CHECKING:
    from shax.tools.explain import Explanation


@attrs.frozen
class Stats:
    """The costs of one definition (or of both parts of a linearized one)."""

    name: str
    bindings: Mapping[str, int]  # primitive name -> its bindings (arguments aside)
    flops_by_primitive: Mapping[str, int]  # primitive name -> the flops of its bindings
    argument_bytes: int
    output_bytes: int
    residuals: int  # 0 for a Definition
    residual_bytes: int
    peak_bytes: int
    # of residual_bytes, those of residuals that are the primal's own arguments passed on
    # (the caller holds them: no memory of their own; `saved_residuals`' `argument`)
    residual_argument_bytes: int = 0
    # of the flops, those recomputing values a checkpoint policy did not save
    recomputed_flops: int = 0

    @property
    def saved_bytes(self) -> int:
        """The bytes the residuals add to what the caller holds: what a checkpoint policy
        (`shax.stages.unzip(jvp, policy)`, `shax.checkpoint`) saves, beyond the arguments."""
        return self.residual_bytes - self.residual_argument_bytes

    @property
    def num_bindings(self) -> int:
        return sum(self.bindings.values())

    @property
    def flops(self) -> int:
        return sum(self.flops_by_primitive.values())

    def __str__(self) -> str:
        rows = [(name, self.bindings[name], self.flops_by_primitive.get(name, 0)) for name in sorted(self.bindings)]
        rows.append(("total", self.num_bindings, self.flops))
        width = max(len(self.name), *(len(r[0]) + 2 for r in rows))
        lines = [f"{self.name:<{width}}  bindings  flops"]
        lines += [f"  {name:<{width - 2}}  {count:>8}  {flops:>5}" for name, count, flops in rows]
        residuals = f", residuals {self.residuals} ({self.residual_bytes} bytes)" if self.residuals else ""
        lines.append(
            f"arguments {self.argument_bytes} bytes, outputs {self.output_bytes} bytes{residuals},"
            f" peak live {self.peak_bytes} bytes"
        )
        if self.recomputed_flops:
            lines.append(f"of the flops, {self.recomputed_flops} recompute what a checkpoint policy did not save")
        return "\n".join(lines)

    def _repr_html_(self) -> str:  # Jupyter: a table
        from shax.tools.html import stats_html

        return stats_html(self)


def stats(defn: Definition | LinearizedDefinition) -> Stats:
    """The bindings per primitive, flops, bytes and peak live bytes of a typed definition."""
    if isinstance(defn, LinearizedDefinition):
        return _linearized_stats(defn)
    if not isinstance(defn, Definition):
        message = f"stats: expected a Definition or LinearizedDefinition, got {type(defn).__name__}"
        raise at(ShaxTypeError(message), current_source())
    _check(defn)
    outputs = sum(map(nbytes, defn.output_types()))
    return Stats(
        defn.name, _bindings(defn), flops_by_primitive(defn), sum(map(nbytes, defn.arg_types)), outputs, 0, 0,
        peak_bytes(defn), recomputed_flops=recomputed_flops(defn),
    )  # fmt: skip


def _check(defn: Definition) -> None:
    if not defn.is_typed:
        message = f"stats: {defn.name} is untyped; run shax.stages.infer_types on it first"
        raise at(ShaxTypeError(message), current_source())
    check_types(defn, "stats")


def _bindings(defn: Definition) -> Counter[str]:
    return Counter(b.prim.name for b in defn.bindings if not b.prim.structural)


def _linearized_stats(lin: LinearizedDefinition) -> Stats:
    primal, linear, r = lin.primal, lin.linear, lin.num_residuals
    _check(primal)
    _check(linear)
    out_types = primal.output_types()
    kept = out_types[: len(out_types) - r]  # the original's outputs; the rest are residuals
    residual_bytes = sum(map(nbytes, out_types[len(kept) :]))
    passed = residual_arguments(lin)
    argument_bytes = sum(nbytes(t) for t, k in zip(out_types[len(kept) :], passed) if k is not None)
    primal_arguments = sum(map(nbytes, primal.arg_types))
    tangents = sum(map(nbytes, linear.arg_types[: len(linear.arg_types) - r]))
    outputs = sum(map(nbytes, kept))
    # the primal runs, then the linear part, while the caller holds the primal's arguments and outputs
    peak = max(peak_bytes(primal), primal_arguments + outputs + peak_bytes(linear))
    return Stats(
        primal.name, _bindings(primal) + _bindings(linear), flops_by_primitive(primal) + flops_by_primitive(linear),
        primal_arguments + tangents, outputs + sum(map(nbytes, linear.output_types())), r, residual_bytes, peak,
        argument_bytes, recomputed_flops(primal) + recomputed_flops(linear),
    )  # fmt: skip


@attrs.frozen
class PipelineStats:
    """Per stage of `shax.explain`: the stats of what it made, and the residuals."""

    stages: Mapping[str, Stats]  # stage -> the stats of the definition(s) it made

    def __str__(self) -> str:
        width = max(map(len, self.stages))
        lines = [f"{'stage':<{width}}  bindings  flops  residuals (bytes)  peak live bytes"]
        for stage, s in self.stages.items():
            residuals = f"{s.residuals} ({s.residual_bytes})" if s.residuals else "-"
            lines.append(f"{stage:<{width}}  {s.num_bindings:>8}  {s.flops:>5}  {residuals:>17}  {s.peak_bytes:>15}")
        return "\n".join(lines)

    def _repr_html_(self) -> str:  # Jupyter: a table
        from shax.tools.html import pipeline_stats_html

        return pipeline_stats_html(self)


def pipeline_stats(e: Explanation) -> PipelineStats:
    """The stats of each stage `e` ran: tracing (typed), the rewrites, linearize (primal and
    linear parts), transpose (primal and transposed parts) and zip."""
    yolo = {} if e.jvp is None or e.unzipped is None else {"jvp": stats(e.jvp), "unzip": stats(e.unzipped)}
    return PipelineStats(
        {
            "tracing": stats(e.typed),
            "rewrites": stats(e.rewritten),
            **yolo,
            "linearize": stats(e.linearized),
            "transpose": stats(e.transposed),
            "zip": stats(e.zipped),
        }
    )


@attrs.frozen
class PolicyStats:
    """Per checkpoint policy, the stats of a function's gradient with the function
    checkpointed by that policy: its forward program (outputs and the residuals the
    policy saves) run, then its backward program (the transposed linear part, which
    recomputes what the policy did not save)."""

    name: str
    policies: Mapping[str, Stats]  # policy name -> the stats of the forward and backward programs

    HEADER = ("policy", "residuals", "residual bytes", "saved bytes", "flops", "recomputed flops", "peak live bytes")

    def rows(self) -> list[tuple[str, int, int, int, int, int, int]]:
        return [
            (name, s.residuals, s.residual_bytes, s.saved_bytes, s.flops, s.recomputed_flops, s.peak_bytes)
            for name, s in self.policies.items()
        ]

    def __str__(self) -> str:
        rows = self.rows()
        first = max([len(self.HEADER[0]), *(len(r[0]) for r in rows)])
        widths = [len(h) for h in self.HEADER[1:]]
        lines = [f"{self.HEADER[0]:<{first}}  " + "  ".join(self.HEADER[1:])]
        lines += [f"{r[0]:<{first}}  " + "  ".join(f"{c:>{w}}" for c, w in zip(r[1:], widths)) for r in rows]
        return "\n".join(lines)

    def _repr_html_(self) -> str:  # Jupyter: a table
        from shax.tools.html import policy_stats_html

        return policy_stats_html(self)


JAX_POLICIES = (cp.nothing_saveable, cp.dots_saveable, cp.dots_with_no_batch_dims_saveable, cp.everything_saveable)


def policy_stats(
    f: Callable[..., Any], *args: Any, policies: Mapping[str, Policy] | Sequence[Policy] | None = None
) -> PolicyStats:
    """Per checkpoint policy (default: JAX's four without parameters; a mapping names
    them, a sequence is named by their `__name__`), the stats of `f`'s gradient with `f`
    checkpointed by it, at arguments like `args` (values, or their types): the gradient
    with respect to the float arguments, of every output (any shape: its cotangent is an
    argument of the backward program)."""
    check_function("policy_stats", f)
    chosen = _named_policies(policies)
    in_tree, types = abstract_types("policy_stats", args)
    defn = staging.stage(f, in_tree, types).typed
    wrt = [k for k, t in enumerate(defn.arg_types) if t.dtype.is_float]
    jvp_defn = jvp(defn, wrt)
    table = {}
    for name, policy in chosen.items():
        lin = unzip(jvp_defn, policy, len(wrt))
        backward = transpose(LinearizedDefinition(cleanup(lin.primal), cleanup(lin.linear), lin.num_residuals))
        table[name] = stats(LinearizedDefinition(backward.primal, cleanup(backward.linear), backward.num_residuals))
    return PolicyStats(function_name(f), table)


def _named_policies(policies: Mapping[str, Policy] | Sequence[Policy] | None) -> dict[str, Policy]:
    if policies is None:
        return {p.__name__: p for p in JAX_POLICIES}
    if isinstance(policies, Mapping):
        named = dict(policies)
    elif isinstance(policies, Sequence) and not isinstance(policies, str):
        named = {}
        for k, p in enumerate(policies):
            name = function_name(p, f"policy {k}")
            named[f"{name} {k}" if name in named else name] = p  # two `save_only_these_names`'"policy"
    else:
        named = {"": policies}  # refused below
    for name, policy in named.items():
        if not isinstance(name, str) or not callable(policy):
            message = (
                "policy_stats: policies are checkpoint policies (functions (prim, *operand_types) -> bool),"
                f" a sequence of them or a mapping of names to them, got {policies!r:.80}"
            )
            raise at(ShaxTypeError(message), current_source())
    return named

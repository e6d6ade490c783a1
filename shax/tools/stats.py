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
checkpoint policy saves: compare `stats(unzip(jvp(defn), policy))` across policies.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from typing import TYPE_CHECKING

import attrs

from shax.core.errors import ShaxTypeError, at
from shax.core.ir import Definition, LinearizedDefinition
from shax.core.location import current_source
from shax.stages import check_types
from shax.tracing.cost import flops_by_primitive, nbytes, peak_bytes
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
        peak_bytes(defn),
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
        argument_bytes,
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

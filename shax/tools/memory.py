"""The memory picture of reverse mode, for the explain page (`shax.tools.html`): the bytes live at
each step of the primal program and then of the transposed one, the residuals as bars
from where the primal saves them to where the backward pass last reads them, the peak
marked.

Liveness is `shax.stats`' (`cost.peak_bytes`): a value lives from its binding to its last
use, an output to the end of its program, the arguments throughout; while the backward
program runs, the caller still holds the primal's arguments and outputs, and the
residuals are the backward program's arguments. So the highest point of the timeline is
`stats(transposed).peak_bytes`.
"""

from __future__ import annotations

import html
from typing import TYPE_CHECKING

import attrs

from shax.core.ir import LinearizedDefinition
from shax.primitives import Arg
from shax.tracing.measure import live_bytes, nbytes

if TYPE_CHECKING:
    from shax.tools.explain import Explanation

POINTS = 600  # steps drawn at most: beyond, each point is the highest of its stretch of steps
BARS = 40  # residual bars drawn at most: the largest


@attrs.frozen
class Residual:
    name: str  # the primal's var it saves (`x21`)
    saved: int  # the step that computes it, in the primal program
    last_used: int  # the last step reading it, in the backward program (counted after the primal's)
    bytes: int


@attrs.frozen
class Timeline:
    live: tuple[int, ...]  # bytes live after each step: the primal's, then the backward program's
    forward_steps: int  # how many of them are the primal's
    residuals: tuple[Residual, ...]

    @property
    def peak(self) -> int:
        """The step where the most bytes are live (the first such)."""
        return max(range(len(self.live)), key=self.live.__getitem__)


def timeline(lin: LinearizedDefinition) -> Timeline:
    """Reverse mode's live bytes: `lin` (a transposed LinearizedDefinition) primal, then backward."""
    primal, backward, r = lin.primal, lin.linear, lin.num_residuals
    kept = len(primal.outputs) - r
    types = primal.output_types()
    held = sum(map(nbytes, primal.arg_types)) + sum(map(nbytes, types[:kept]))
    forward = live_bytes(primal)
    steps = len(forward)
    position = {v.id: i for i, b in enumerate(primal.bindings) for v in b.vars}
    first_residual = len(backward.arg_types) - r
    arg_var = {b.prim.index: b.vars[0].id for b in backward.bindings if isinstance(b.prim, Arg)}  # argument -> its var
    last_use = {a.id: i for i, b in enumerate(backward.bindings) for a in b.args}
    residuals = []
    for k, saved in enumerate(primal.outputs[kept:]):
        used = last_use.get(arg_var.get(first_residual + k, -1), 0)
        residuals.append(Residual(f"x{saved.id}", position.get(saved.id, 0), steps + used, nbytes(types[kept + k])))
    return Timeline(tuple(forward + live_bytes(backward, held)), steps, tuple(residuals))


def memory_svg(e: Explanation) -> str:
    """The picture, as inline SVG: live bytes over the steps, the residuals' bars under it."""
    t = timeline(e.transposed)
    n, top = len(t.live), max(t.live) or 1
    width, height = 900, 160
    shown = sorted(sorted(t.residuals, key=lambda r: -r.bytes)[:BARS], key=lambda r: r.saved)
    bar = 6
    total = height + 30 + bar * len(shown) + 20
    stretch = max(1, -(-n // POINTS))
    x = lambda step: 40 + (width - 50) * step / max(1, n - 1)  # noqa: E731
    y = lambda b: 10 + (height - 10) * (1 - b / top)  # noqa: E731
    points = []
    for start in range(0, n, stretch):
        chunk = t.live[start : start + stretch]
        high = start + max(range(len(chunk)), key=chunk.__getitem__)
        points.append(f"{x(high):.1f},{y(t.live[high]):.1f}")
    peak = t.peak
    parts = [
        f'<svg class="memory-picture" xmlns="http://www.w3.org/2000/svg" width="{width}" height="{total}" '
        f'viewBox="0 0 {width} {total}" fill="currentColor" font-size="11" font-family="system-ui, sans-serif">',
        f'<line x1="{x(t.forward_steps - 0.5):.1f}" y1="0" x2="{x(t.forward_steps - 0.5):.1f}" y2="{total}" '
        'stroke="currentColor" stroke-dasharray="3 3" opacity="0.5"/>',
        f'<text x="42" y="{height + 22}">primal ({t.forward_steps} steps) →</text>',
        f'<text x="{x(t.forward_steps) + 4:.1f}" y="{height + 22}">backward ({n - t.forward_steps} steps) →</text>',
        f'<polyline class="live" fill="none" stroke="#0969da" stroke-width="1.5" points="{" ".join(points)}"/>',
        f'<circle class="peak" cx="{x(peak):.1f}" cy="{y(t.live[peak]):.1f}" r="4" fill="#cf222e">'
        f"<title>peak: {t.live[peak]} bytes live at step {peak + 1}</title></circle>",
        f'<text x="{x(peak) + (8 if x(peak) < width / 2 else -8):.1f}" y="{max(y(t.live[peak]) + 4, 12):.1f}" '
        f'text-anchor="{"start" if x(peak) < width / 2 else "end"}" fill="#cf222e">peak {t.live[peak]} bytes</text>',
        f'<text x="2" y="12">{top}</text><text x="2" y="{height}">0</text><text x="2" y="26">bytes</text>',
    ]
    for k, res in enumerate(shown):
        top_y = height + 30 + k * bar
        about = f"{res.name}: a residual of {res.bytes} bytes, saved at step {res.saved + 1}, last read at step "
        span = max(1.0, x(res.last_used) - x(res.saved))
        parts.append(
            f'<rect class="residual" x="{x(res.saved):.1f}" y="{top_y}" width="{span:.1f}" height="{bar - 1}" '
            f'fill="#bf8700" opacity="0.8"><title>{html.escape(about)}{res.last_used + 1}</title></rect>'
        )
    note = "residuals, saved → last read"
    if len(t.residuals) > len(shown):
        note += f" (the {len(shown)} largest of {len(t.residuals)})"
    parts.append(f'<text x="42" y="{total - 4}">{html.escape(note)}</text></svg>')
    return "".join(parts)

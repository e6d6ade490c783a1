"""The memory picture of reverse mode (issue 33, item 5): live bytes over the primal then
the backward program, by `shax.stats`' liveness, residual bars, the peak marked; in
headless Chromium, and bounded in size for a large program."""

from __future__ import annotations

import re
import shutil
from pathlib import Path
from typing import Any

import pytest

import shax
import shax.numpy as jnp
from shax import f32
from shax.tools.cli import load_function
from shax.tools.memory import BARS, POINTS, memory_svg, timeline
from shax.tracing.measure import live_bytes, peak_bytes

ROOT = Path(__file__).resolve().parents[1]
MEDIUM = str(ROOT / "examples" / "medium.py") + ":medium"


def model(x: Any, w: Any) -> Any:
    hidden = jnp.tanh(x * w)
    return jnp.sum(hidden * hidden)


def chain(x: Any, n: int = 3) -> Any:
    for _ in range(n):
        x = jnp.sin(x) * 0.5 + x
    return jnp.sum(x)


@pytest.mark.parametrize(
    ("f", "types"),
    [(load_function(MEDIUM), (f32[6], f32[2, 2])), (model, (f32[3], f32[3])), (chain, (f32[4],))],
    ids=["medium", "model", "chain"],
)
def test_the_timeline_peaks_where_stats_says_and_its_residuals_cross_over(f: Any, types: Any) -> None:
    e = shax.explain(f, *types)
    t = timeline(e.transposed)
    assert max(t.live) == shax.stats(e.transposed).peak_bytes == t.live[t.peak]
    assert max(live_bytes(e.typed)) == peak_bytes(e.typed)
    assert t.forward_steps == len(e.transposed.primal.bindings)
    assert len(t.live) == t.forward_steps + len(e.transposed.linear.bindings)
    assert len(t.residuals) == e.transposed.num_residuals
    for r in t.residuals:  # saved in the primal, last read in the backward program
        assert r.saved < t.forward_steps <= r.last_used < len(t.live) and r.bytes > 0


def test_medium_saves_cos_x1_and_reads_it_at_the_end_of_the_backward_pass() -> None:
    e = shax.explain(load_function(MEDIUM), f32[6], f32[2, 2])
    t = timeline(e.transposed)
    cos = next(r for r in t.residuals if r.name == "x21")  # x21 = cos x1: the linearize rule of sin's
    assert cos.bytes == 2 * 6 * 4 and cos.saved == 21
    # the backward program receives it as x0 = arg1; its one reader is `x32 = mul x0 x31`, near the end
    backward = e.transposed.linear
    assert str(backward.bindings[0]).endswith("x0 :: f32[2, 6] = arg1")
    readers = [i for i, b in enumerate(backward.bindings) if 0 in [a.id for a in b.args]]
    assert readers == [32] and cos.last_used == t.forward_steps + 32


def test_a_large_programs_picture_stays_small() -> None:
    e = shax.explain(lambda x: chain(x, 400), f32[3])
    svg = memory_svg(e)
    points = re.search(r'<polyline class="live"[^>]* points="([^"]*)"', svg)
    assert points is not None and len(points.group(1).split()) <= POINTS
    assert svg.count('<rect class="residual"') == BARS and f"the {BARS} largest of " in svg
    assert len(svg) < 60_000


@pytest.mark.slow
def test_the_page_shows_the_picture_in_chromium(tmp_path: Path) -> None:
    sync_api = pytest.importorskip("playwright.sync_api", reason="the test extra brings playwright")
    found = next(filter(None, map(shutil.which, ("chromium", "chromium-browser", "google-chrome"))), None)
    if found is None:
        pytest.skip("no Chromium on this machine (.ci/run installs Debian's chromium)")
    e = shax.explain(load_function(MEDIUM), f32[6], f32[2, 2])
    path = tmp_path / "medium.html"
    path.write_text(e.to_html(), encoding="utf-8")
    with sync_api.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=found, args=["--no-sandbox", "--disable-gpu"], headless=True)
        try:
            page = browser.new_page()
            page.goto(path.as_uri())
            box = page.locator("details.memory svg.memory-picture").bounding_box()
            assert box is not None and box["width"] > 500 and box["height"] > 150
            assert page.locator("details.memory rect.residual").count() == e.transposed.num_residuals
            peak = shax.stats(e.transposed).peak_bytes
            title = page.text_content("details.memory circle.peak title")
            assert title is not None and title.startswith(f"peak: {peak} bytes live")
            assert f"peak {peak} bytes" in page.inner_text("details.memory")
        finally:
            browser.close()

"""The diffs reach into branches and bodies (issue 33): a pass that rewrites inside a
cond's branch or a scan's body shows the holder changed and, under it, the held
definition's own diff; the stepping view gets a step per changed branch or body."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from test_learner_view import table
from test_passes_nested import cond_in_a_scan

import shax
import shax.numpy as jnp
from shax import f32, lax
from shax.passes import cleanup, lower_reductions_to_sums_of_slices
from shax.stages import infer_types


def f(x: Any, p: Any) -> Any:
    y = lax.cond(p > 0, lambda a: jnp.sin(a) * jnp.sum(a), lambda a: a * 2.0, x)
    c, ys = lax.scan(lambda c, xi: (c + jnp.sum(xi), xi * c), 0.0, jnp.reshape(y, (2, 2)))
    return c + jnp.sum(ys)


def test_a_changed_branch_is_diffed_under_its_cond_at_every_depth() -> None:
    before = cond_in_a_scan()  # a cond with a wasteful branch, in a scan body
    d = shax.diff(before, cleanup(before))
    lines = [f"{mark} {text}" for mark, text in d.lines]
    holders = [line for line in lines if line.startswith("~") and "(changed inside)" in line]
    assert len(holders) == 2 and "= scan body" in holders[0] and "= cond [f_false,f_true]" in holders[1]
    assert [text for mark, text in d.lines if mark == ":"] == ["  in body:", "      in f_true:"]
    assert "-         x1 :: f32[3] = cos x0" in lines  # the dead cos, two levels down
    assert d.counts()["removed"] == 4 and d.counts()["changed"] == 3
    assert "\n        in f_true:\n" in str(d)


def test_explain_shows_a_pass_inside_a_branch_and_a_body() -> None:
    e = shax.explain(f, f32[4], f32[()], diff=True)
    rewrites = e.sections()["rewrites"]
    assert "~ x5 :: f32[4] = cond [f_false,f_true] x3 x4    (changed inside)\n    in f_true:" in rewrites
    assert "-     x2 :: f32[] = reduce_sum [0] x0\n+     x2 :: f32[2] = slice [0] [2] x0" in rewrites
    assert "\n    in f:\n" in rewrites  # the scan's body
    typed = infer_types(shax.trace(f, f32[4], f32[()]))
    assert shax.diff(typed, lower_reductions_to_sums_of_slices(typed)).counts()["added"] == 18


@pytest.fixture(scope="module")
def page(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    sync_api = pytest.importorskip("playwright.sync_api", reason="the test extra brings playwright")
    found = next(filter(None, map(shutil.which, ("chromium", "chromium-browser", "google-chrome"))), None)
    if found is None:
        pytest.skip("no Chromium on this machine (.ci/run installs Debian's chromium)")
    path: Path = tmp_path_factory.mktemp("inside") / "f.html"
    path.write_text(shax.explain(f, f32[4], f32[()]).to_html(), encoding="utf-8")
    with sync_api.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=found, args=["--no-sandbox", "--disable-gpu"], headless=True)
        try:
            opened = browser.new_page(viewport={"width": 1400, "height": 900})
            opened.set_default_timeout(5000)
            errors: list[str] = []
            opened.on("pageerror", lambda error: errors.append(str(error)))
            opened.goto(path.as_uri())
            yield opened
            assert errors == []
        finally:
            browser.close()


def test_the_stepping_view_steps_into_a_changed_branch_and_body(page: Any) -> None:
    steps = [s["t"] for s in table(page.content())["steps"]]
    lowered = "pass lower_reductions_to_sums_of_slices"
    assert steps[3:6] == [lowered, f"{lowered}: inside f_true", f"{lowered}: inside f"]
    page.click('.views button[data-view="steps"]')
    page.click(f".steplist li >> text={lowered}: inside f_true")
    assert page.inner_text(".steplist li.current") == f"{lowered}: inside f_true (+7 −1 ~1)"
    text = page.eval_on_selector(".stepdiff", "p => p.textContent")
    assert "as a diff from f_true" in text and "+ x2 :: f32[2] = slice [0] [2] x0" in text
    page.keyboard.press("ArrowUp")  # the pass's own step: the cond changed inside
    assert page.inner_text(".steplist li.current").startswith(f"{lowered} (")
    # its text, laid out or not (a block off screen has no innerText)
    text = page.eval_on_selector(".stepdiff pre", "p => p.textContent")
    assert "~ x5 :: f32[4] = cond [f_false,f_true] x3 x4" in text

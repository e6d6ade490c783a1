"""The aligned and stepping views of the explain page (issue 33, items 3 and 4), in
headless Chromium: the three programs side by side with a family per row and the
transposed one reversed, a toggle back to the stacked view, and the stage list stepped
through with the arrow keys, each step a diff from the one before."""

from __future__ import annotations

import re
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from test_learner_view import table

import shax
from shax import f32
from shax.tools.cli import load_function
from shax.tools.diff import diff, matched
from shax.tools.html_views import compact

ROOT = Path(__file__).resolve().parents[1]
MEDIUM = str(ROOT / "examples" / "medium.py") + ":medium"


def medium() -> shax.Explanation:
    return shax.explain(load_function(MEDIUM), f32[6], f32[2, 2])


def test_a_step_holds_its_diff_as_numbers_and_matched_agrees_with_diff() -> None:
    e = medium()
    pairs = matched(e.typed, e.rewritten)
    assert [m for m, _, _ in pairs].count("+") == 8 == diff(e.typed, e.rewritten).counts()["added"]
    numbers = compact([(" ", 0, 0), (" ", 1, 1), ("~", 2, 2), ("-", 3, -1), ("+", -1, 3), (" ", 4, 4)])
    assert numbers == [0, 2, 0, 0, 1, 2, 2, 2, 3, 3, 3, 0, 1, 4, 4]
    # type inference types every binding: each is changed in its step
    assert {m for m, _, _ in matched(e.traced, e.typed)} == {"~"}
    steps = table(e.to_html())["steps"]
    assert [s["t"] for s in steps] == [
        "tracing", "type inference", "pass canonicalize_dot_general", "pass lower_reductions_to_sums_of_slices",
        "linearize: the primal program", "linearize: the linear program", "transpose: the transposed program",
        "zip: primal and transposed in one",
    ]  # fmt: skip


@pytest.fixture(scope="module")
def page(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    sync_api = pytest.importorskip("playwright.sync_api", reason="the test extra brings playwright")
    found = next(filter(None, map(shutil.which, ("chromium", "chromium-browser", "google-chrome"))), None)
    if found is None:
        pytest.skip("no Chromium on this machine (.ci/run installs Debian's chromium)")
    path = tmp_path_factory.mktemp("aligned") / "medium.html"
    path.write_text(medium().to_html(), encoding="utf-8")
    with sync_api.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=found, args=["--no-sandbox", "--disable-gpu"], headless=True)
        try:
            opened = browser.new_page(viewport={"width": 1600, "height": 1000})
            opened.set_default_timeout(5000)
            errors: list[str] = []
            opened.on("pageerror", lambda error: errors.append(str(error)))
            opened.goto(path.as_uri())
            yield opened
            assert errors == []
        finally:
            browser.close()


def test_the_aligned_view_puts_a_family_on_a_row_and_reverses_the_transposed_column(page: Any) -> None:
    page.click('.views button[data-view="aligned"]')
    assert page.is_hidden(".stacked") and page.is_visible(".aligned")
    rows = page.eval_on_selector_all(
        ".aligned .row:not(.head)",
        "rs => rs.map(r => [r.querySelector('.where').textContent, ...[...r.querySelectorAll('pre')]"
        ".map(p => p.innerText)])",
    )
    sin = next(r for r in rows if r[0] == "medium.py:22 sin")
    primal, linear, transposed = sin[1:]
    # the user's sin, what its linearize rule made (cos x1, saved, and the mul by the tangent),
    # and what transpose made of that mul
    assert primal.splitlines() == ["x2 :: f32[2, 6] = sin x1", "x21 :: f32[2, 6] = cos x1"]
    assert linear.splitlines() == ["x5 :: f32[2, 6] = arg2", "x8 :: f32[2, 6] = mul x5 x7"]
    assert transposed.splitlines()[-1] == "33 x32 :: f32[2, 6] = mul x0 x31"
    # Down the rows of the user's operations, the transposed program's steps count down:
    # it runs from the last row up.
    numbers = [
        [int(n) for n, op in re.findall(r"^(\d+) \S+ :: \S+(?: \S+)* = (\w+)", r[3], re.M) if not op.startswith("arg")]
        for r in rows
    ]
    firsts = [min(ns) for ns in numbers if ns]  # where the transposed program enters each row
    assert firsts[0] == max(firsts) and firsts[-1] < firsts[0] and len(firsts) >= 10
    assert sum(a > b for a, b in zip(firsts, firsts[1:])) >= 0.7 * (len(firsts) - 1)
    # bindings there are live: a click lights the copies in the other columns
    page.locator('.aligned .b:has-text("= sin x1")').first.click()
    assert page.eval_on_selector_all(".aligned .arg", "es => es.map(e => e.textContent)") == [
        "x1 :: f32[2, 6] = broadcast [1] [2,6] x0"
    ]
    page.click('.views button[data-view="stacked"]')
    assert page.is_visible(".stacked") and page.is_hidden(".aligned")


def shown(page: Any) -> list[str]:
    """The lines of the step's diff that show (its blocks may not be laid out yet: no innerText)."""
    lines: list[str] = page.evaluate(
        """() => { const pre = document.querySelector(".stepdiff pre").cloneNode(true);
        pre.querySelectorAll("[hidden]").forEach(e => e.remove()); return pre.textContent.split("\\n"); }"""
    )
    return lines


def test_the_arrow_keys_step_through_the_stages_each_a_diff_from_the_one_before(page: Any) -> None:
    page.click('.views button[data-view="steps"]')
    current = lambda: page.inner_text(".steplist li.current")  # noqa: E731
    assert current() == "tracing (new)"
    page.keyboard.press("ArrowDown")
    assert current() == "type inference (+0 −0 ~15)"
    assert shown(page)[0] == "~ x0 :: f32[6] = arg0  (was: x0 = arg0)"  # typed now
    page.keyboard.press("ArrowDown")
    assert current() == "pass canonicalize_dot_general (+4 −1 ~2)"
    assert shown(page)[:3] == ["... 7 unchanged (click to unfold)", "- x7 :: f32[2, 2] = dot x5 x6",
                         "+ x7 :: f32[1, 2, 6] = reshape [1,2,6] x5"]  # fmt: skip
    assert "~ x12 :: f32[2, 2] = mul x10 x11  (was: x9 :: f32[2, 2] = mul x7 x8)" in shown(page)
    page.click(".stepdiff .fold")  # unfolds the kept bindings
    assert shown(page)[:2] == [
        "  x0 :: f32[6] = arg0",
        "  x1 :: f32[2, 6] = broadcast [1] [2,6] x0",
    ]
    for _ in range(10):  # past the end: stays on the last
        page.keyboard.press("ArrowRight")
    assert current() == "zip: primal and transposed in one (+28 −0 ~0)"
    page.keyboard.press("ArrowUp")
    page.keyboard.press("ArrowLeft")
    assert current() == "linearize: the linear program (new)"
    assert shown(page)[-1] == "  x37 :: f32[2] = reshape [2] x36"
    page.click(".steplist li >> text=type inference")
    assert current().startswith("type inference")


def test_a_step_that_changes_nothing_is_marked(tmp_path: Path) -> None:
    e = shax.explain(lambda a: (a * a).sum(), f32[3])  # no dot: the first pass changes nothing
    steps = table(e.to_html())["steps"]
    unchanged = next(s for s in steps if s["t"] == "pass canonicalize_dot_general")
    assert unchanged["m"] == [0, len(e.typed.bindings), 0, 0] and unchanged["d"] == unchanged["p"]


def loop(x: Any) -> Any:
    for _ in range(3):
        x = shax.numpy.sin(x) * 0.5 + x
    return shax.numpy.sum(x)


def test_a_loops_line_gets_a_row_per_run_the_transposed_one_from_the_end(page: Any, tmp_path: Path) -> None:
    path = tmp_path / "loop.html"
    path.write_text(shax.explain(loop, f32[3]).to_html(), encoding="utf-8")
    page.goto(path.as_uri())
    page.click('.views button[data-view="aligned"]')
    rows = page.eval_on_selector_all(
        ".aligned .row:not(.head)", "rs => rs.map(r => [...r.children].map(c => c.innerText))"
    )
    sins = [r for r in rows if r[0].endswith(" sin")]
    assert [r[1].split(" = ")[1].splitlines()[0] for r in sins] == ["sin x0", "sin x4", "sin x7"]
    muls = [r for r in rows if r[0].endswith(" mul")]
    steps = [min(int(n) for n in re.findall(r"^(\d+) ", r[3], re.M)) for r in muls]
    assert len(steps) == 3 and steps == sorted(steps, reverse=True)  # the backward pass meets them last first

"""The HTML views: `_repr_html_` of definitions, explanations and diffs, and the page
`shax explain --html` writes, driven in a real headless Chromium (Debian's `chromium`,
which `.ci/run` installs): every stage is there, and a click on a binding highlights its
copies in the other stages, its operands and its uses."""

from __future__ import annotations

import html
import json
import re
import shutil
from pathlib import Path
from typing import Any

import pytest

import shax
from shax import f32
from shax.tools.cli import load_function, main
from shax.tools.explain import HEADERS

ROOT = Path(__file__).resolve().parents[1]
MEDIUM = str(ROOT / "examples" / "medium.py") + ":medium"


def medium_explained() -> shax.Explanation:
    return shax.explain(load_function(MEDIUM), f32[6], f32[2, 2])


def table(fragment: str) -> dict[str, Any]:
    """The data table a view's script draws from."""
    found = re.search(r'<script type="application/json" class="shax-data">(.*?)</script>', fragment, re.S)
    assert found is not None
    data: dict[str, Any] = json.loads(found.group(1))
    return data


def test_a_definitions_html_has_a_row_per_binding_with_its_provenance() -> None:
    typed = medium_explained().typed
    fragment = typed._repr_html_()
    data = table(fragment)
    (defn,) = data["d"]
    assert len(defn["b"]) == len(typed.bindings)
    sin = next(row for row in defn["b"] if row[0] == 2)
    assert row_args(sin) == [1]
    assert data["s"][sin[3]].endswith("medium.py:22, traced") and data["s"][data["ops"][sin[2]][0]] == "sin"
    assert data["s"][sin[1]] == "f32[2, 6]"
    assert html.escape(str(typed)) in fragment  # shown as text where no script runs
    lin = medium_explained().linearized
    assert len(table(lin._repr_html_())["d"]) == 2


def row_args(row: list[int]) -> list[int]:
    return [row[0] - delta for delta in row[6:]]


def test_the_page_is_self_contained_and_has_every_stage() -> None:
    page = medium_explained().to_html()
    assert page.startswith("<!DOCTYPE html>")
    assert not re.search(r"<(script|link|img)[^>]+(src|href)=", page)  # nothing fetched
    assert re.findall(r'data-stage="(\w+)"', page) == list(HEADERS)


def test_a_diffs_html_marks_its_lines() -> None:
    e = medium_explained()
    fragment = shax.diff(e.typed, e.rewritten)._repr_html_()
    assert fragment.count('class="add"') == 8 and fragment.count('class="del"') == 2


def test_the_cli_writes_the_page(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "medium.html"
    assert main(["explain", MEDIUM, "f32[6]", "f32[2,2]", "--stages", "f", "--html", str(out)]) == 0
    capsys.readouterr()
    assert re.findall(r'data-stage="(\w+)"', out.read_text()) == list(HEADERS)


def chromium() -> str:
    for name in ("chromium", "chromium-browser", "google-chrome"):
        found = shutil.which(name)
        if found:
            return found
    pytest.skip("no Chromium on this machine (.ci/run installs Debian's chromium)")


@pytest.mark.slow
def test_a_click_in_chromium_highlights_the_bindings_provenance(tmp_path: Path) -> None:
    sync_api = pytest.importorskip("playwright.sync_api", reason="the test extra brings playwright")
    page_file = tmp_path / "medium.html"
    page_file.write_text(medium_explained().to_html(), encoding="utf-8")
    flags = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
             "--disable-sync", "--no-first-run", "--disable-quic"]  # fmt: skip
    with sync_api.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=chromium(), args=flags, headless=True)
        try:
            page = browser.new_page()
            page.set_default_timeout(5000)
            page.goto(page_file.as_uri())
            page.eval_on_selector_all("details.stage", "es => es.forEach(e => { e.open = true; })")
            stages = page.eval_on_selector_all("details.stage", "es => es.map(e => e.dataset.stage)")
            assert stages == list(HEADERS)
            # The user's `sin` in the traced stage: x2 = sin x1.
            page.click('details[data-stage="trace"] .b[data-i="2"]')
            counts = page.evaluate(
                "() => Object.fromEntries(['selected', 'same', 'line', 'arg', 'use'].map("
                "c => [c, document.querySelectorAll('.' + c).length]))"
            )
            # Copies of it: types, rewrites, the primal of linearized and transposed, zipped.
            assert counts["selected"] == 1 and counts["same"] >= 6, counts
            assert counts["arg"] == 1 and counts["use"] == 2, counts  # x1; cos x2 and add x2 x3
            assert counts["line"] > counts["same"], counts  # sin's derivative came from its line too
            page.screenshot(path=str(tmp_path / "explain.png"), full_page=True)
            assert (tmp_path / "explain.png").stat().st_size > 10_000
        finally:
            browser.close()

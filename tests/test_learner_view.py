"""The learner's view (issue 33): the page under `names="source"`, the stats tables, dark
themes, a bounded "same line" highlight, the size of a large page, the header and the
stage descriptions, notebook cells in provenance, and the random values the CLI chose."""

from __future__ import annotations

import json
import re
import shutil
import sys
import types
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import typeguard

import shax
import shax.numpy as jnp
from shax import f32, lax
from shax.core.ir import Binding, Var
from shax.core.printing import show_provenance
from shax.primitives import Arg
from shax.tools.binding_values import dot_products, summary
from shax.tools.cli import load_function, main
from shax.tools.explain import EVERY_HEADER, HEADERS
from shax.tools.html import ABOUT, OPEN_STAGES
from shax.tools.html_assets import FAMILY_LIMIT, SCRIPT

ROOT = Path(__file__).resolve().parents[1]
MEDIUM = str(ROOT / "examples" / "medium.py") + ":medium"


def model(x: Any, w: Any) -> Any:
    hidden = jnp.tanh(x * w)
    return jnp.sum(hidden * hidden)


def branchy(x: Any, p: Any) -> Any:
    y = jnp.sin(x) * jnp.cos(x)
    z = lax.cond(p > 0, lambda a: jnp.tanh(jnp.exp(a) * a + jnp.sin(a)), lambda a: jnp.cos(a) * jnp.log1p(a * a), y)
    return jnp.sum(z * z)


def chain(x: Any) -> Any:
    for _ in range(250):
        x = jnp.sin(x) * 0.5 + x
    return jnp.sum(x)


def table(page: str) -> dict[str, Any]:
    found = re.search(r'<script type="application/json" class="shax-data">(.*?)</script>', page, re.S)
    assert found is not None
    data: dict[str, Any] = json.loads(found.group(1))
    return data


def test_the_page_names_values_as_the_text_does_and_so_does_provenance() -> None:
    e = shax.explain(model, f32[3], f32[3], names="source", provenance=True)
    data = table(e.to_html())
    traced = data["d"][0]
    assert {data["s"][k] for k in traced["v"].values()} == {"x", "w", "hidden"}
    assert any(s.endswith("residual: saves hidden of model") for s in data["s"])
    assert not any(re.search(r"saves x[0-9]+ of", s) and "saves x12" not in s for s in data["s"])
    text = e.show(["linearized"])
    assert "residual: saves hidden of model" in text and "residual: saves x of model" in text
    plain = shax.explain(model, f32[3], f32[3], provenance=True).show(["linearized"])
    assert "residual: saves x3 of model" in plain and "hidden" not in plain


def test_stats_show_as_tables_in_a_notebook_and_on_the_page(tmp_path: Path) -> None:
    e = shax.explain(load_function(MEDIUM), f32[6], f32[2, 2], stats=True)
    one = shax.stats(e.typed)._repr_html_()
    rows = re.findall(r"<tr><td>(\w+)</td><td>(\d+)</td><td>(\d+)</td></tr>", one)
    assert ("sin", "1", "12") in rows and rows[-1] == ("total", "13", "120")
    pipeline = e.stats()._repr_html_()
    assert re.findall(r"<tr><td>(\w+)</td>", pipeline) == ["tracing", "rewrites", "linearize", "transpose", "zip"]
    assert "<td>9 (304)</td>" in pipeline
    out = tmp_path / "medium.html"
    assert main(["explain", MEDIUM, "f32[6]", "f32[2,2]", "--stages", "f", "--stats", "--html", str(out)]) == 0
    assert "<td>tracing</td><td>13</td><td>120</td>" in out.read_text()
    assert "<td>tracing</td>" not in shax.explain(load_function(MEDIUM), f32[6], f32[2, 2]).to_html()


def test_the_page_has_a_header_descriptions_and_closes_later_stages() -> None:
    page = shax.explain(load_function(MEDIUM), f32[6], f32[2, 2]).to_html()
    assert "<h1>explain medium(f32[6], f32[2, 2]) -&gt; f32[2]</h1>" in page
    assert "Click any binding" in page and '<span class="t-f32">f32</span>' in page
    opened = re.findall(r'<details( open)? class="stage" data-stage="(\w+)"', page)
    assert [key for _, key in opened] == list(HEADERS)
    assert [key for is_open, key in opened if is_open] == list(HEADERS)[:OPEN_STAGES]
    assert page.count('<div class="about">') == len(HEADERS) and set(ABOUT) == set(EVERY_HEADER)
    assert '<pre class="given">x = [' in page and '<pre class="given">ct = [' in page
    assert "@media (prefers-color-scheme: dark)" in page and 'body[data-jp-theme-light="false"] .shax' in page


def test_provenance_is_relative_to_the_working_directory(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(ROOT)
    strings = table(shax.explain(load_function(MEDIUM), f32[6], f32[2, 2]).to_html())["s"]
    assert "examples/medium.py:22, traced" in strings
    assert not any(s.startswith(str(ROOT)) for s in strings)


def test_a_notebook_cells_line_shows_as_the_cell(monkeypatch: pytest.MonkeyPatch) -> None:
    cell = "/tmp/ipykernel_4242/1234567.py"
    shell = types.SimpleNamespace(compile=types.SimpleNamespace(_filename_map={cell: 3}))
    monkeypatch.setitem(sys.modules, "IPython", types.SimpleNamespace(get_ipython=lambda: shell))
    binding = Binding(Var(1, None), Arg(0), (), source=f"{cell}:5", origin="linearize rule of sin")
    assert show_provenance(binding) == "In[3]:5, linearize rule of sin"
    assert (
        show_provenance(Binding(Var(1, None), Arg(0), (), source="/elsewhere/f.py:5")) == "/elsewhere/f.py:5, argument"
    )


# A page's size is this test's subject, not annotations: typeguard's plugin would make
# its 750 bindings' trip through every stage take half a minute.
@typeguard.suppress_type_checks
def test_a_large_page_holds_a_few_dozen_bytes_per_binding() -> None:
    e = shax.explain(chain, f32[3])
    page = e.to_html()
    data = table(page)
    rows = sum(len(d["b"]) for d in data["d"])
    shown = sum(len(d.bindings) for d in (e.traced, e.typed, e.rewritten, e.linearized.primal, e.linearized.linear))
    assert rows == shown + len(e.transposed.linear.bindings) + len(e.zipped.bindings)  # the shared primal once
    assert len(e.traced.bindings) >= 750
    # 10,000 operations: at most 5 MB, the budget of issue 33
    assert len(page.encode()) <= 5_000_000 * len(e.traced.bindings) / 10_000
    assert '<span class="b"' not in page.replace(SCRIPT, "")  # no binding written out as HTML


def test_the_cli_prints_the_random_values_it_chose(capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["explain", MEDIUM, "f32[6]", "f32[2,2]", "--stages", "f,dft", "--cotangents", "[[5, 9]]"]
    assert main(argv) == 0
    out, err = capsys.readouterr()
    chosen = dict(re.findall(r"shax explain: random --(\w+) \(--seed 0\): (.*)", err))
    assert set(chosen) == {"inputs", "tangents"}
    e = shax.explain(load_function(MEDIUM), f32[6], f32[2, 2], cotangents=[[5, 9]])
    assert np.array_equal(np.asarray(json.loads(chosen["inputs"])[1], np.float32), e.inputs[1])
    assert main([*argv, "--inputs", chosen["inputs"], "--tangents", chosen["tangents"]]) == 0
    again, quiet = capsys.readouterr()
    assert again == out and quiet == ""


def test_the_page_holds_every_bindings_value_and_the_dot_product_test() -> None:
    e = shax.explain(load_function(MEDIUM), f32[6], f32[2, 2])
    page = e.to_html()
    data = table(page)
    traced, strings = data["d"][0], data["s"]
    sin = np.sin(np.broadcast_to(e.inputs[0], (2, 6)))
    assert strings[traced["x"][2]] == summary(sin) == np.array2string(sin, precision=6, separator=" ").replace("\n", "")
    zipped = next(d for d in data["d"] if strings[d["n"]] == e.zipped.name)
    assert strings[zipped["x"][-1]] == summary(e.vjp[-1])  # the last binding: a cotangent of an input
    assert summary(np.arange(40, dtype=np.float32).reshape(8, 5)) == "f32[8, 5] min 0 max 39 mean 19.5"
    forward, backward = dot_products(e)
    assert forward == pytest.approx(backward, rel=1e-5)
    assert f"⟨ct, J·dx⟩ = ⟨ct, df(dx)⟩ = {forward:.8g}" in page and f"⟨dft(ct), dx⟩ = {backward:.8g}" in page


# In a real browser: one Chromium for the tests below.


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    sync_api = pytest.importorskip("playwright.sync_api", reason="the test extra brings playwright")
    flags = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--no-first-run"]
    with sync_api.sync_playwright() as p:
        found = next(filter(None, map(shutil.which, ("chromium", "chromium-browser", "google-chrome"))), None)
        if found is None:
            pytest.skip("no Chromium on this machine (.ci/run installs Debian's chromium)")
        launched = p.chromium.launch(executable_path=found, args=flags, headless=True)
        try:
            yield launched
        finally:
            launched.close()


def opened(browser: Any, tmp_path: Path, page_text: str, scheme: str = "light") -> Any:
    path = tmp_path / "page.html"
    path.write_text(page_text, encoding="utf-8")
    page = browser.new_page(color_scheme=scheme)
    page.set_default_timeout(5000)
    page.goto(path.as_uri())
    return page


def test_the_same_line_highlight_is_bounded_on_a_cond_page(browser: Any, tmp_path: Path) -> None:
    page = opened(browser, tmp_path, shax.explain(branchy, f32[3], f32[()]).to_html())
    assert page.evaluate("() => document.querySelectorAll('.b').length") == 0 + page.evaluate(
        "() => document.querySelectorAll('details[open] .b').length"
    )  # closed stages are drawn when opened
    page.eval_on_selector_all("details.stage", "es => es.forEach(e => { e.open = true; })")
    total, worst = page.evaluate(
        """() => { const all = [...document.querySelectorAll('.b')];
        const lit = all.map(b => { b.click(); return document.querySelectorAll('.line').length; });
        return [all.length, Math.max(...lit)]; }"""
    )
    assert total > 300 and worst <= 2 * FAMILY_LIMIT  # a definition shown in two stages lights twice
    page.close()


def test_a_dark_theme_keeps_highlighted_bindings_readable(browser: Any, tmp_path: Path) -> None:
    ones = [np.ones(6, np.float32), np.ones((2, 2), np.float32)]
    e = shax.explain(load_function(MEDIUM), f32[6], f32[2, 2], inputs=ones)
    page = opened(browser, tmp_path, e.to_html(), "dark")
    page.click('details[data-stage="trace"] .b[data-i="2"]')
    colours = page.evaluate(
        """() => ['selected', 'same', 'arg', 'use'].map(c => { const e = document.querySelector('.' + c);
        const t = e.querySelector('span') || e;
        return [getComputedStyle(t).color, getComputedStyle(e).backgroundColor]; })"""
    )
    for text, background in colours:
        assert contrast(text, background) >= 4.5, (text, background)
    status = page.inner_text(".status")
    assert status.startswith("x2 = sin x1 -- examples/medium.py:22, traced; ") and status.endswith(
        "; value " + summary(np.sin(np.ones((2, 6))))
    )
    page.hover('details[data-stage="types"] .b[data-i="17"]')  # x2 of the typed program
    assert page.get_attribute('details[data-stage="types"] .b[data-i="17"]', "title") == summary(
        np.sin(np.ones((2, 6)))
    )
    page.close()


def contrast(a: str, b: str) -> float:
    """The WCAG contrast ratio of two CSS `rgb(...)` colours."""

    def luminance(colour: str) -> float:
        channels = [int(c) / 255 for c in re.findall(r"\d+", colour)[:3]]
        r, g, b = (c / 12.92 if c <= 0.03928 else ((c + 0.055) / 1.055) ** 2.4 for c in channels)
        return 0.2126 * r + 0.7152 * g + 0.0722 * b

    light, dark = sorted([luminance(a), luminance(b)], reverse=True)
    return (light + 0.05) / (dark + 0.05)


# Pictures ---------------------------------------------------------------------------------


def test_the_picture_has_a_legend_and_residual_edges_that_do_not_constrain() -> None:
    e = shax.explain(load_function(MEDIUM), f32[6], f32[2, 2])
    dot = e.to_dot()
    legend = re.search(r"label=<(<table.*</table>)>;", dot)
    assert legend is not None
    assert re.findall(r"<td bgcolor=\"#\w+\">(\w+)</td>", legend.group(1)) == [
        "argument", "primal", "residual", "linear", "transposed",
    ]  # fmt: skip
    residual_edges = re.findall(r"-> d\d+_x\d+ \[style=dashed, constraint=false\];", dot)
    assert len(residual_edges) == e.linearized.num_residuals + e.transposed.num_residuals
    assert "  {rank=same; d0_x0; d1_x0; d2_x0;}" in dot and "  d0_x0 -> d1_x0 -> d2_x0 [style=invis];" in dot


def test_a_conds_branches_are_linked_to_it() -> None:
    typed = shax.xpr(branchy, f32[3], f32[()])
    dot = shax.to_dot(typed)
    links = re.findall(r"(d\d+)_x\d+ -> (d\d+_x\d+) \[style=dotted, ltail=cluster_(\d+), label=runs\];", dot)
    cond = next(b for b in typed.bindings if b.prim.name == "cond")
    assert [(f"d{k}", to) for _, to, k in links] == [(f"d{k}", f"d2_x{cond.var.id}") for k in ("0", "1")]


@pytest.mark.skipif(shutil.which("dot") is None, reason="Graphviz's dot is not installed")
def test_forward_is_drawn_left_of_backward(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "medium.svg"
    assert main(["explain", MEDIUM, "f32[6]", "f32[2,2]", "--stages", "f", "--svg", str(out)]) == 0
    clusters = re.findall(
        r'class="cluster">\s*<title>cluster_(\d)</title>\s*<polygon[^>]*points="([^"]*)"', out.read_text()
    )
    left = {int(k): min(float(p.split(",")[0]) for p in points.split()) for k, points in clusters}
    assert left[0] < left[1] < left[2]  # primal, linear, transposed


def test_the_cli_refuses_a_picture_graphviz_would_take_minutes_on(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "branchy.py"
    path.write_text(
        "import shax.numpy as jnp\nfrom shax import lax\n\n\ndef branchy(x, p):\n"
        "    y = jnp.sin(x) * jnp.cos(x)\n"
        "    z = lax.cond(p > 0, lambda a: jnp.tanh(jnp.exp(a) * a + jnp.sin(a)),\n"
        "                 lambda a: jnp.cos(a) * jnp.log1p(a * a), y)\n"
        "    z = lax.cond(p < 1, lambda a: jnp.sinh(jnp.exp(a) * a + jnp.cos(a)),\n"
        "                 lambda a: jnp.sin(a) * jnp.log1p(a * a), z * y)\n"
        "    return jnp.sum(z * z)\n"
    )
    out = tmp_path / "branchy.svg"
    assert main(["explain", f"{path}:branchy", "f32[3]", "f32[]", "--svg", str(out)]) == 1
    printed, err = capsys.readouterr()
    assert printed == "" and not out.exists()
    assert re.search(r"--svg: the picture has \d{3} bindings, and Graphviz's dot can take minutes", err)

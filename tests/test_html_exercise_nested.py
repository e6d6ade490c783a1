"""The exercise checker reads nested expressions and evaluates concatenate, gather,
scatter_add and reduce_prod (issue 33, item 8), in headless Chromium: for each blank, the
true binding, and the true binding nested in an identity, are accepted, a nested wrong
one is refused, and an operation the checker does not evaluate gets no verdict, never a
wrong one."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from test_html_exercise import MEDIUM, answer, loaded, truth
from test_learner_view import table

import shax
import shax.numpy as jnp
from shax import f32, lax
from shax.tools.cli import load_function


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    sync_api = pytest.importorskip("playwright.sync_api", reason="the test extra brings playwright")
    found = next(filter(None, map(shutil.which, ("chromium", "chromium-browser", "google-chrome"))), None)
    if found is None:
        pytest.skip("no Chromium on this machine (.ci/run installs Debian's chromium)")
    with sync_api.sync_playwright() as p:
        launched = p.chromium.launch(executable_path=found, args=["--no-sandbox", "--disable-gpu"], headless=True)
        try:
            yield launched
        finally:
            launched.close()


def joined(x: Any, y: Any) -> Any:
    return jnp.sum(jnp.sin(jnp.concatenate([x, y], axis=0)) * 2.0)


def picked(x: Any) -> Any:
    return jnp.sum(jnp.sin(x[jnp.array([2, 0, 2])]))


def reduced(x: Any) -> Any:
    return jnp.sum(jnp.sin(jnp.max(x, axis=0))) * jnp.sum(jnp.prod(x, axis=1))


def sliced(x: Any) -> Any:
    return jnp.sum(jnp.sin(lax.dynamic_slice(x, (1,), (2,))))


def truths(e: shax.Explanation, text: str, page: Any) -> list[str]:
    """The true binding of each blank box of the page, in order, as it prints."""
    parts = (e.linearized.primal, e.linearized.linear, e.transposed.linear)
    by_name = {d.name: d for d in parts}
    data, where = table(text), {}
    for d in data["d"]:
        for k in range(len(d["b"])):
            where[len(where)] = (by_name.get(data["s"][d["n"]]), k)
    blanks = page.eval_on_selector_all("input.answer", "bs => bs.map(b => +b.dataset.i)")
    return [truth(*where[i]) for i in blanks]  # type: ignore[arg-type]


def test_a_nested_answer_is_checked_as_the_binding_it_spells(browser: Any, tmp_path: Path) -> None:
    e = shax.explain(load_function(MEDIUM), f32[6], f32[2, 2])
    page = loaded(browser, tmp_path / "sin.html", e.exercise("sin").to_html())
    assert "<code>mul (cos x1) x6</code>" in page.content()  # the grammar, in the page
    primal, linear = page.locator('details[data-stage="linearized"] input.answer').all()
    assert answer(page, primal, "sin (add x1 (fromList [] [1.5]))").startswith(" ✗ not yet: its element 0 is ")
    assert answer(page, primal, "sin (add x1 (fromList [] [1.5707963267948966]))") == " ✓ right"  # cos x = sin(x + π/2)
    assert answer(page, linear, "x8 = mul (negate (negate x5)) x7") == " ✓ right"
    assert answer(page, linear, "mul x5 (negate x7)").startswith(" ✗ not yet: its element 0 is ")
    assert answer(page, linear, "reduce_sum [0] (mul x5 x7)") == " ✗ not yet: its shape is [6], the binding's [2, 6]"
    assert answer(page, linear, "mul x5 (erf x7)").startswith(" ? cannot check: the checker does not evaluate erf")
    assert answer(page, linear, "mul x5 (cos x9)") == " ✗ not yet: no value named x9 before x8"
    assert page.inner_text(".score") == "1 of 2 blanks right"
    assert page.errors == []
    page.close()


# Each rule's blanks, and an operation among them: reduce_prod's rule multiplies a tree
# of pairs (slices, products, and each pair's halves swapped by a concatenate).
RULES = [
    (joined, [f32[2, 3], f32[1, 3]], "concatenate", "concatenate"),
    (picked, [f32[4, 2]], "gather", "gather"),
    (reduced, [f32[3, 2]], "reduce_prod", "concatenate"),
]


@pytest.mark.parametrize(("f", "types", "rule", "emitted"), RULES)
def test_concatenate_gather_and_scatter_add_are_checked(
    browser: Any, tmp_path: Path, f: Any, types: list[Any], rule: str, emitted: str
) -> None:
    e = shax.explain(f, *types)
    text = e.exercise(rule).to_html()
    page = loaded(browser, tmp_path / f"{rule}.html", text)
    answers = truths(e, text, page)
    assert any(a.startswith(emitted) for a in answers), answers
    if rule == "gather":  # its transpose rule scatters the cotangent back
        assert any(a.startswith("scatter_add") for a in answers), answers
    boxes = page.locator("input.answer").all()
    assert page.locator(".unchecked").count() == 0  # every blank's operation is one the checker evaluates
    for box, truth_ in zip(boxes, answers, strict=True):
        op, *rest = truth_.split(" ")
        assert answer(page, box, truth_) == " ✓ right", truth_
        assert answer(page, box, f"negate (negate ({truth_}))") == " ✓ right", truth_
        assert answer(page, box, f"add ({truth_}) (fromList [] [1.0])").startswith(" ✗ not yet: its element "), truth_
    if rule == "concatenate":  # the operands swapped: the same shape, other values
        op, axis, x, y = answers[0].split(" ")
        assert answer(page, boxes[0], f"{op} {axis} {y} {x}").startswith(" ✗ not yet: its element ")
        assert answer(page, boxes[0], f"{op} {axis} {x}") == " ✗ not yet: concatenate takes 2 or more operand(s), got 1"
    assert page.errors == []
    page.close()


def test_a_blank_the_checker_cannot_evaluate_says_so_and_gets_no_verdict(browser: Any, tmp_path: Path) -> None:
    e = shax.explain(sliced, f32[4])
    text = e.exercise("dynamic_slice").to_html()
    page = loaded(browser, tmp_path / "dynamic_slice.html", text)
    answers = truths(e, text, page)
    unchecked = [k for k, a in enumerate(answers) if a.startswith("dynamic_")]
    assert [answers[k].split()[0] for k in unchecked] == ["dynamic_slice", "dynamic_update_slice"], answers
    boxes = page.locator("input.answer").all()
    notes = [
        box.evaluate("b => !!b.nextElementSibling.nextElementSibling.nextElementSibling?.matches('.unchecked')")
        for box in boxes
    ]
    assert [k for k, note in enumerate(notes) if note] == unchecked
    assert "does not evaluate" in page.inner_text(".unchecked >> nth=0")
    verdict = answer(page, boxes[unchecked[0]], answers[unchecked[0]])
    assert verdict.startswith(" ? cannot check: the checker does not evaluate dynamic_slice"), verdict
    assert page.inner_text(".score") == f"0 of {len(answers)} blanks right"
    assert page.errors == []
    page.close()

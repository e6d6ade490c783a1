"""Exercise mode (issue 33, item 8): the bindings one rule emitted are blank in the page,
and the page checks what the learner types, in headless Chromium: every true binding of
every rule of two functions' programs is accepted, wrong ones are refused with the reason."""

from __future__ import annotations

import re
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import typeguard
from test_learner_view import table

import shax
import shax.numpy as jnp
import shax.tools.html
from shax import f32
from shax.core.ir import Definition
from shax.core.printing import show_primitive
from shax.tools.cli import load_function, main

ROOT = Path(__file__).resolve().parents[1]
MEDIUM = str(ROOT / "examples" / "medium.py") + ":medium"


def medium() -> shax.Explanation:
    return shax.explain(load_function(MEDIUM), f32[6], f32[2, 2], provenance=True)


def rules(e: shax.Explanation) -> list[str]:
    """Every rule that emitted a binding of the linearized or transposed programs."""
    parts = (e.linearized.primal, e.linearized.linear, e.transposed.linear)
    return sorted({b.origin for d in parts for b in d.bindings if b.origin and " rule of " in b.origin})


def test_the_rules_bindings_are_blank_and_their_answers_are_not_in_the_page() -> None:
    e = medium()
    task = e.exercise("sin")
    assert task.origins == {"linearize rule of sin"} and task.num_blanks == 2  # cos x1; mul x5 x7
    data = table(task.to_html())
    blank_op = data["ops"].index([data["s"].index("?"), data["s"].index("?")])
    blanks = [(d, row) for d in data["d"] for row in d["b"] if row[2] == blank_op]
    # in the primal (shown once for two stages), the linear program and the zipped one
    assert len(blanks) == 3 and all(len(row) == 6 for _, row in blanks)  # no operands
    answered = [d for d in data["d"] if "e" in d]  # the exact values the checker evaluates with
    assert len(answered) == 2 and all(len(d["e"]) == len(d["b"]) for d in answered)
    assert "<pre>def " not in task.to_html()  # no text view
    assert "mul x5 x7" in str(e) and "mul x5 x7" not in task.to_html()


def test_a_page_too_large_for_every_value_still_holds_those_the_checker_needs(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(shax.tools.html, "VALUES_LIMIT", 10)
    e = medium()
    assert not any("x" in d for d in table(e.to_html())["d"])  # no values on hover
    data = table(e.exercise("sin").to_html())
    assert sum("e" in d for d in data["d"]) == 2


def test_a_rule_that_emitted_nothing_is_an_error_listing_those_that_did() -> None:
    with pytest.raises(shax.ShaxValueError, match=r"exercise: .*rules linearize rule of tan or transpose rule of tan; "
                       r"the rules there are of add, broadcast, cos, .*test_html_exercise.py:\d+"):  # fmt: skip
        medium().exercise("tan")


@typeguard.suppress_type_checks
def test_a_rule_must_be_a_string() -> None:
    with pytest.raises(shax.ShaxTypeError, match=r"exercise: the rule must be a str"):
        medium().exercise(3)  # type: ignore[arg-type]


def test_a_program_too_large_to_hold_its_values_is_refused() -> None:
    e = shax.explain(lambda a: jnp.sum(jnp.sin(a)), "f32[300, 300]")
    with pytest.raises(shax.ShaxValueError, match=r"exercise: the program .* holds \d+ elements, more than"):
        e.exercise("sin")


def test_the_cli_writes_the_exercise_page_and_no_transcript(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "sin.html"
    assert main(["explain", MEDIUM, "f32[6]", "f32[2,2]", "--exercise", "sin", "--html", str(out)]) == 0
    printed, err = capsys.readouterr()
    assert printed == "" and f"wrote the exercise (2 blanks) to {out}" in err
    assert "<h1>exercise: the linearize rule of sin, in explain medium" in out.read_text()
    assert main(["explain", MEDIUM, "f32[6]", "f32[2,2]", "--exercise", "sin"]) == 1
    assert "--exercise writes an exercise page: give --html OUT too" in capsys.readouterr().err


# In a real browser ------------------------------------------------------------------------


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


def loaded(browser: Any, path: Path, text: str) -> Any:
    path.write_text(text, encoding="utf-8")
    page = browser.new_page()
    page.set_default_timeout(5000)
    errors: list[str] = []
    page.on("pageerror", lambda error: errors.append(str(error)))
    page.goto(path.as_uri())
    page.errors = errors
    return page


def answer(page: Any, box: Any, text: str) -> str:
    box.fill(text)
    box.press("Enter")
    return str(box.evaluate("b => b.nextElementSibling.nextElementSibling.textContent"))


def test_typing_the_right_binding_is_accepted_and_a_wrong_one_refused(browser: Any, tmp_path: Path) -> None:
    page = loaded(browser, tmp_path / "sin.html", medium().exercise("sin").to_html())
    boxes = page.locator('details[data-stage="linearized"] input.answer')
    assert boxes.count() == 2  # the primal's cos x1, the linear program's mul x5 x7
    assert answer(page, boxes.nth(1), "mul x5 x7") == " ✓ right"
    assert answer(page, boxes.nth(1), "x8 :: f32[2, 6] = mul x7 x5") == " ✓ right"  # same values
    assert answer(page, boxes.nth(1), "add x5 x7").startswith(" ✗ not yet: its element 0 is ")
    assert answer(page, boxes.nth(1), "mul x5 x5").startswith(" ✗ not yet: its element 0 is ")
    assert answer(page, boxes.nth(1), "mul x1 x2") == " ✗ not yet: its shape is [2, 2], the binding's [2, 6]"
    assert answer(page, boxes.nth(1), "mul x5 x8") == " ✗ not yet: no value named x8 before x8"
    assert answer(page, boxes.nth(1), "x9 = mul x5 x7") == " ✗ not yet: this blank is x8, not x9"
    # an operation the checker does not evaluate gets no verdict, not a wrong one
    assert answer(page, boxes.nth(1), "erf x7").startswith(" ? cannot check: the checker does not evaluate erf (it")
    assert answer(page, boxes.nth(0), "cos x1") == " ✓ right"
    assert page.inner_text(".score") == "1 of 2 blanks right"  # the linear blank's last answer was wrong
    assert answer(page, boxes.nth(1), "mul x5 x7") == " ✓ right"
    assert page.inner_text(".score") == "2 of 2 blanks right"
    assert page.errors == []
    page.close()


def truth(defn: Definition, position: int) -> str:
    b = defn.bindings[position]
    return " ".join([show_primitive(b.prim), *(f"x{a.id}" for a in b.args)])


def wide(x: Any, w: Any) -> Any:
    """More primitives than medium: their rules' bindings are more for the checker to evaluate."""
    h = jnp.tanh(x @ w) / (1.0 + jnp.exp(-x @ w))
    g = jnp.sqrt(jnp.abs(h) + 1.0) ** 3.0 + jnp.log1p(h * h) - jnp.maximum(h, 0.1)
    k = jnp.where(h > 0, g, -g) + jnp.sin(jnp.flip(h, 1))
    return jnp.sum(k) + jnp.sum(jnp.transpose(h)[1:, :])


@pytest.mark.slow
def test_every_true_binding_of_every_rule_is_accepted(browser: Any, tmp_path: Path) -> None:
    e = medium()
    found = rules(e)
    assert len(found) >= 20 and "transpose rule of dot_general" in found and "transpose rule of slice" in found
    more = shax.explain(wide, f32[2, 3], f32[3, 4])
    new = [r for r in rules(more) if r not in found]
    assert {
        "linearize rule of pow",
        "transpose rule of rev",
        "transpose rule of select",
        "transpose rule of div",
    } <= set(new)
    page = loaded(browser, tmp_path / "start.html", "")  # one page for all: a new one costs up to a second
    for n, (explained, rule) in enumerate([*((e, r) for r in found), *((more, r) for r in new)]):
        parts = (explained.linearized.primal, explained.linearized.linear, explained.transposed.linear)
        by_name = {d.name: d for d in parts}
        text = explained.exercise(rule).to_html()
        data = table(text)
        where = {}  # a row's page index -> (its definition, its position there)
        for d in data["d"]:
            for k in range(len(d["b"])):
                where[len(where)] = (by_name.get(data["s"][d["n"]]), k)
        (tmp_path / f"{n}.html").write_text(text, encoding="utf-8")
        page.goto((tmp_path / f"{n}.html").as_uri())
        blanks = page.eval_on_selector_all("input.answer", "bs => bs.map(b => +b.dataset.i)")
        assert blanks, rule
        answers = [truth(*where[i]) for i in blanks]  # type: ignore[arg-type]
        verdicts = page.evaluate(
            """answers => [...document.querySelectorAll("input.answer")].map((b, k) => { b.value = answers[k];
            b.dispatchEvent(new KeyboardEvent("keydown", {key: "Enter", bubbles: true}));
            return b.nextElementSibling.nextElementSibling.textContent; })""",
            answers,
        )
        assert verdicts == [" ✓ right"] * len(blanks), (rule, answers, verdicts)
        assert re.fullmatch(r"(\d+) of \1 blanks right", page.inner_text(".score")), rule
        assert page.errors == [], rule
    page.close()

"""`shax.diff` and `explain(..., diff=True)`: what a pass or stage changed, its bindings
matched by provenance and operation, not by number."""

from __future__ import annotations

import pytest
import typeguard

import shax
from shax import f32, f64
from shax.passes import dce, materialize_broadcasts
from shax.stages import infer_types
from typeclasses import cos, reduce_sum, sin


def broadcasting(x, y):
    return sin(x * y)  # f32[3] times f32[2, 3]


def typed_broadcasting() -> shax.Definition:
    return infer_types(shax.trace(broadcasting, f32[3], f32[2, 3]))


def marks(d: shax.Diff) -> list[tuple[str, str]]:
    return [(mark, text.split(" = ")[1] if " = " in text else text) for mark, text in d.lines]


def test_a_definition_against_itself_is_all_unchanged_and_folded() -> None:
    typed = typed_broadcasting()
    same = shax.diff(typed, typed)
    assert not same.changed
    assert same.counts() == {"added": 0, "removed": 0, "changed": 0, "unchanged": len(typed.bindings)}
    assert marks(same) == [(".", f"... {len(typed.bindings)} unchanged")]


def test_a_pass_adding_a_binding_shows_it_added_and_its_user_changed() -> None:
    typed = typed_broadcasting()
    d = shax.diff(typed, materialize_broadcasts(typed), context=5)
    assert d.counts()["added"] == 1 and d.counts()["changed"] == 1 and d.counts()["removed"] == 0
    assert ("+", "broadcast [1] [2,3] x0") in marks(d)
    changed = next(text for mark, text in d.lines if mark == "~")
    assert "x3 :: f32[2, 3] = mul x2 x1" in changed and "(was: x2 :: f32[2, 3] = mul x0 x1)" in changed
    text = str(d)
    assert text.startswith("--- broadcasting\n+++ broadcasting  (1 added, 0 removed, 1 changed")


def test_renumbering_alone_is_no_change() -> None:
    def g(x):
        unused = cos(x)  # dead: dce removes it, and renumbers what follows
        del unused
        return sin(x) * 2.0

    def h(x):
        a = cos(x)
        return sin(x) * a

    typed = infer_types(shax.trace(g, f64[3]))
    d = shax.diff(typed, dce(typed))
    assert d.counts()["changed"] == 0 and d.counts()["added"] == 0
    typed_h = infer_types(shax.trace(h, f64[3]))
    assert not shax.diff(typed_h, dce(typed_h)).changed


def test_explain_shows_each_stage_as_a_diff_and_the_passes_that_changed_nothing() -> None:
    def f(x):
        return reduce_sum(sin(x), axes=[0])  # no dot: canonicalize_dot_general changes nothing

    shown = shax.explain(f, f32[3], diff=True)
    sections = shown.sections()
    assert sections["rewrites"].startswith("--- f\n+++ f")
    assert sections["rewrites"].endswith("passes that changed nothing: canonicalize_dot_general")
    assert "+ " in sections["linearized"] and "def df(" in sections["linearized"]
    assert sections["zipped"].startswith("--- f\n+++ f_dft")
    assert str(shax.explain(f, f32[3])) != str(shown)


@typeguard.suppress_type_checks  # as users run shax: diff's own checks
def test_diff_refuses_what_is_not_a_definition() -> None:
    typed = typed_broadcasting()
    with pytest.raises(shax.ShaxError, match="before must be a Definition"):
        shax.diff("typed", typed)  # type: ignore[arg-type]
    with pytest.raises(shax.ShaxError, match="context must be a non-negative int"):
        shax.diff(typed, typed, context=-1)
    with pytest.raises(shax.ShaxError, match="diff must be a bool"):
        shax.explain(broadcasting, f32[3], f32[2, 3], diff="yes")  # type: ignore[arg-type]

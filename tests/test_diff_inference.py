"""Type inference in the diff (issue 33): a stage that only adds types changes every
binding it types, and the diff shows the typed line beside the untyped one."""

from __future__ import annotations

import shax
from shax import f32
from shax.stages import infer_types
from shax.tools.diff import matched
from typeclasses import reduce_sum, sin


def f(x):
    return reduce_sum(sin(x) * 2.0, axes=[0])


def test_type_inference_changes_every_binding_it_types() -> None:
    traced = shax.trace(f, f32[3])
    typed = infer_types(traced)
    d = shax.diff(traced, typed)
    assert d.counts() == {"added": 0, "removed": 0, "changed": len(typed.bindings), "unchanged": 0}
    assert "x1 :: f32[3] = sin x0    (was: x1 = sin x0)" in [text for mark, text in d.lines if mark == "~"]
    assert {mark for mark, _, _ in matched(traced, typed)} == {"~"}
    # untyped against untyped, and typed against typed, compare as before
    assert not shax.diff(traced, traced).changed and not shax.diff(typed, typed).changed


def test_explain_with_diffs_shows_what_type_inference_added() -> None:
    e = shax.explain(f, f32[3], diff=True)
    assert f"({len(e.typed.bindings)} changed, 0 unchanged)" in e.sections()["types"].replace(
        "0 added, 0 removed, ", ""
    )
    assert "~ x1 :: f32[3] = sin x0" in e.sections()["types"]
    page = e.to_html()
    assert '<span class="chg">~ x1 :: f32[3] = sin x0' in page

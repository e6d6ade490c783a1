"""`shax.explain(..., stages="yolo")` (issue 34): the JVP and Unzipped sections, "You Only
Linearize Once"'s first two steps, printed after the rewrites (text, stats, HTML, CLI),
and the default transcript unchanged."""

from __future__ import annotations

from typing import Any

import pytest
import typeguard
from reverse_mode import X, medium

import shax
from shax import checkpoint_policies as cp
from shax import f32
from shax.stages import jvp, unzip
from shax.tools.cli import main

TYPES = (f32[6], f32[2, 2])


def test_default_transcript_is_unchanged() -> None:
    default = shax.explain(medium, *TYPES, inputs=X)
    assert "jvp" not in default.section_keys() and "JVP" not in str(default)
    assert str(shax.explain(medium, *TYPES, inputs=X, stages="default")) == str(default)


def test_yolo_shows_the_jvp_and_its_unzipping_after_the_rewrites() -> None:
    e = shax.explain(medium, *TYPES, inputs=X, stages="yolo")
    keys = e.section_keys()
    assert keys[keys.index("rewrites") + 1 : keys.index("linearized")] == ["jvp", "unzipped"]
    sections = e.sections(["jvp", "unzipped", "linearized"])
    assert sections["jvp"] == str(jvp(e.rewritten))
    # unzipping with the default policy gives linearize's programs
    assert sections["unzipped"] == str(unzip(jvp(e.rewritten))) == sections["linearized"]
    shown = str(e)
    assert (
        shown.index("After rewrites")
        < shown.index("JVP (forward mode")
        < shown.index("Unzipped (")
        < shown.index("Linearized definition(s):")
    )
    # the rest of the transcript is the default one
    default = shax.explain(medium, *TYPES, inputs=X)
    assert e.show(default.section_keys()) == str(default)


def test_a_policy_changes_what_the_unzipped_section_saves() -> None:
    e = shax.explain(medium, *TYPES, inputs=X, stages="yolo", policy=cp.nothing_saveable)
    assert e.unzipped is not None
    assert e.unzipped.num_residuals == 2 < e.linearized.num_residuals
    stages = e.stats().stages
    assert list(stages)[:4] == ["tracing", "rewrites", "jvp", "unzip"]
    assert stages["unzip"].saved_bytes == 0 < stages["linearize"].saved_bytes


def test_html_has_the_two_stages_only_when_asked() -> None:
    yolo = shax.explain(medium, *TYPES, inputs=X, stages="yolo").to_html()
    assert 'data-stage="jvp"' in yolo and 'data-stage="unzipped"' in yolo
    assert 'data-stage="jvp"' not in shax.explain(medium, *TYPES, inputs=X).to_html()


def test_cli_yolo(capsys: Any) -> None:
    main(["explain", "examples/medium.py:medium", "f32[6]", "f32[2, 2]", "--stages", "rewrites,jvp"])
    out = capsys.readouterr().out
    assert "JVP (forward mode" in out and "After rewrites" in out and "Linearized" not in out
    main(["explain", "examples/medium.py:medium", "f32[6]", "f32[2, 2]", "--yolo", "--stages", "unzipped"])
    assert "Unzipped (" in capsys.readouterr().out


@pytest.mark.parametrize(
    ("options", "error", "message"),
    [
        ({"stages": "all"}, shax.ShaxValueError, r"explain: stages must be 'default' or 'yolo'"),
        (
            {"policy": cp.nothing_saveable},
            shax.ShaxTypeError,
            r"explain: policy is .* for stages='yolo'",
        ),
        ({"stages": "yolo", "policy": "none"}, shax.ShaxTypeError, r"explain: policy is a checkpoint policy"),
    ],
)
@typeguard.suppress_type_checks
def test_bad_options_name_explain_and_the_line(options: dict[str, Any], error: type, message: str) -> None:
    with pytest.raises(error, match=message) as raised:
        shax.explain(medium, *TYPES, **options)
    assert "test_explain_yolo.py:" in str(raised.value)

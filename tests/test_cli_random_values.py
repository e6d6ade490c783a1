"""The random values `shax explain` chose are printed (issue 33): in full up to 64 values
(tests/test_learner_view.py), and beyond, each array summarised (shape, min, max, mean)
with the seed that draws them again, not only their count."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from shax.tools.cli import main


def test_large_random_values_are_summarised_with_their_seed(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    source = tmp_path / "wide.py"
    source.write_text("import shax.numpy as jnp\n\ndef f(x, w):\n    return jnp.sum(jnp.sin(x) * w)\n")
    assert main(["explain", f"{source}:f", "f32[100]", "f32[]", "--stages", "f", "--seed", "3"]) == 0
    err = capsys.readouterr().err
    inputs = re.search(r"shax explain: random --inputs \(--seed 3\): (.*)", err)
    assert inputs is not None, err
    summary = r"f32\[100\] min -?\d\S* max \d\S* mean -?\d\S*"
    assert re.fullmatch(summary + r"; -?\d\S* \(not in full: --seed 3 draws them again\)", inputs.group(1)), inputs[1]

"""The seed transcripts: the first stages of tests/golden/*.txt, line for line
(trailing spaces aside), and the seed's numbers."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import TypeVar

import numpy as np
import pytest

import shax
from shax import f32
from shax.optimizers import gradient_descent
from shax.stages import infer_types
from shax.tools.cli import load_function
from typeclasses import Floating, cos, sin

ROOT = Path(__file__).resolve().parents[1]
GOLDEN = ROOT / "tests" / "golden"
MEDIUM_ARGS = (np.arange(1, 7, dtype=np.float32), np.arange(1, 5, dtype=np.float32).reshape(2, 2))
MEDIUM_VALUE = [34.731194, 67.46239]

A = TypeVar("A", bound=Floating)


def f(x: A, y: A) -> A:
    return sin(x + y) * cos(x + y)


def lines(text: str) -> list[str]:
    return [line.rstrip() for line in text.splitlines()]


def golden_block(name: str, header: str) -> list[str]:
    """The lines under `header` in a golden file, up to the next header (a line
    that is neither indented nor the start of a definition)."""
    text = lines((GOLDEN / name).read_text())
    start = text.index(header) + 1
    end = next((k for k in range(start, len(text)) if not text[k].startswith((" ", "def "))), len(text))
    return text[start:end]


@pytest.fixture(scope="module")
def medium():
    return load_function(f"{ROOT / 'examples' / 'medium.py'}:medium")


def test_golden_blocks_are_found() -> None:
    traced = golden_block("medium_pipeline.txt", "After tracing:")
    assert traced[0].startswith("def medium(") and traced[-1] == "  in [x14]"
    assert len(traced) == 18


def test_after_tracing(medium) -> None:
    defn = shax.trace(medium, f32[6], f32[2, 2])
    assert lines(str(defn)) == golden_block("medium_pipeline.txt", "After tracing:")


def test_after_type_inference(medium) -> None:
    typed = infer_types(shax.trace(medium, f32[6], f32[2, 2]))
    assert lines(str(typed)) == golden_block("medium_pipeline.txt", "After type inference:")


def test_printing_is_print(medium, capsys: pytest.CaptureFixture[str]) -> None:
    print(shax.trace(medium, f32[6], f32[2, 2]))
    assert lines(capsys.readouterr().out) == golden_block("medium_pipeline.txt", "After tracing:")


def test_descent_head() -> None:
    typed = infer_types(shax.trace(f, f32[()], f32[()]))
    expected = lines((GOLDEN / "descent.txt").read_text())[:9]
    assert lines(str(typed.with_output_types())) == expected


def test_medium_on_numpy(medium) -> None:
    result = medium(*MEDIUM_ARGS)
    assert result.dtype == np.float32 and result.shape == (2,)
    np.testing.assert_allclose(result, MEDIUM_VALUE, rtol=1e-6)


def test_medium_evaluated(medium) -> None:
    typed = infer_types(shax.trace(medium, f32[6], f32[2, 2]))
    (result,) = shax.evaluate(typed, *MEDIUM_ARGS)
    assert result.dtype == np.float32 and result.shape == (2,)
    np.testing.assert_allclose(result, MEDIUM_VALUE, rtol=1e-6)
    np.testing.assert_array_equal(result, medium(*MEDIUM_ARGS))


def test_gradient_descent_prints_the_original_iterations(capsys: pytest.CaptureFixture[str]) -> None:
    params, value = gradient_descent(f, [0.5, -0.75], lr=0.05, iters=39, log=print)
    iterations = [line for line in lines((GOLDEN / "descent.txt").read_text()) if line.startswith("Iteration")]
    assert len(iterations) == 40
    assert capsys.readouterr().out.splitlines() == iterations  # exactly, digit for digit
    assert isinstance(params, list) and [np.asarray(p).dtype for p in params] == [np.float32] * 2
    np.testing.assert_array_equal(params, np.array([0.23235208, -1.0176479], np.float32))
    assert value == np.float32(-0.5)


def test_the_descent_example_prints_the_whole_transcript() -> None:
    """examples/descent.py: the golden transcript exactly, then the JVP definition."""
    out = subprocess.run(
        [sys.executable, str(ROOT / "examples" / "descent.py")], capture_output=True, text=True, check=True
    ).stdout
    golden = (GOLDEN / "descent.txt").read_text()
    assert out.startswith(golden)
    assert lines(out[len(golden) :])[0].startswith("def f_df(arg0 :: f32[],")

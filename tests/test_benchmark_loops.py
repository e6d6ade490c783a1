"""B6 (benchmarks/b6_loops.py) at a few steps: its hand-written gradients are the ones shax
computes, so the benchmark's agreement check compares like with like."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

import shax

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from benchmarks import b6_loops  # noqa: E402 - after the repository root is on the path


def test_rnn_hand_written_gradient_is_shax_gradient_at_three_steps() -> None:
    args = b6_loops.rnn_data(3)
    want = b6_loops.rnn_hand(*args)
    got = shax.jit(shax.grad(b6_loops.rnn_loss, argnums=(0, 1)))(*args)
    for a, b in zip(got, want):
        np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-14)


def test_fixed_point_hand_written_gradient_is_shax_gradient_at_three_iterations(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(b6_loops, "ITERATIONS", 3)
    args = b6_loops.fixed_point_data()
    want = b6_loops.fixed_point_hand(*args)
    got = shax.jit(shax.grad(b6_loops.fixed_point_loss, argnums=(0, 1)))(*args)
    for a, b in zip(got, want):
        np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-14)

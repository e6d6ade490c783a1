"""examples/digits_cnn.py, shortened: a few epochs on part of the digits take the held-out
accuracy far above chance (10%). Skipped without scikit-learn (the `examples` extra)."""

from __future__ import annotations

from pathlib import Path

import pytest

from shax.tools.cli import load_function

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"


@pytest.mark.slow
def test_digits_cnn_learns_the_digits_in_a_few_epochs() -> None:
    pytest.importorskip("sklearn")
    main = load_function(f"{EXAMPLES / 'digits_cnn.py'}:main")
    printed: list[str] = []
    accuracy = main(epochs=3, batch_size=32, train_limit=384, log=printed.append)
    assert len(printed) == 3 and all(line.startswith(f"epoch  {k}  loss ") for k, line in enumerate(printed, 1))
    assert all("steps/s" in line for line in printed)
    assert accuracy > 0.7  # 84% here (36 steps); chance is 10%

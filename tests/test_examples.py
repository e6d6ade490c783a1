"""The examples a user would write run, quickly, and learn what they set out to."""

from __future__ import annotations

import math
from pathlib import Path

from shax.cli import load_function

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"


def test_softmax_regression_separates_the_blobs() -> None:
    main = load_function(f"{EXAMPLES / 'softmax_regression.py'}:main")
    loss, accuracy = main(log=None)
    assert loss < 0.5 * math.log(3)  # from log 3, the loss of knowing nothing
    assert accuracy > 0.9


def test_embedding_mlp_learns_the_hidden_groups() -> None:
    main = load_function(f"{EXAMPLES / 'embedding_mlp.py'}:main")
    loss, accuracy = main(epochs=10, log=None)
    assert loss < 0.1 * math.log(3)
    assert accuracy > 0.95

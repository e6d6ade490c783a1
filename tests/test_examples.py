"""The examples a user would write run, quickly, and learn what they set out to."""

from __future__ import annotations

import math
from pathlib import Path

from shax.tools.cli import load_function

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


def test_popxl_linear_prints_the_graphs_and_the_main_program_calling_them() -> None:
    main = load_function(f"{EXAMPLES / 'popxl_linear.py'}:main")
    printed: list[str] = []
    y, grads_x, grads_w, grads_b = main(log=printed.append)
    text = "\n".join(printed)
    assert "def linear(" in text and "def dlineart(" in text
    assert "call linear x0 x1 x2" in text and "= call dlineart x4 x0 x1" in text
    assert (grads_b == 2).all()  # the bias's gradient: the seed of ones summed over the 2 rows


def test_property_tests_pass_their_properties() -> None:
    # The example's hypothesis tests, run as `main` runs them (pytest collects only tests/).
    main = load_function(f"{EXAMPLES / 'property_tests.py'}:main")
    printed: list[str] = []
    main(max_examples=5, log=printed.append)
    assert printed == [
        f"{name}: 5 examples passed"
        for name in (
            "test_gradients_match_finite_differences",
            "test_vmap_equals_a_loop",
            "test_the_rule_matches_finite_differences",
            "test_the_rule_matches_autodiff",
        )
    ]


def test_rnn_learns_to_add_the_previous_input() -> None:
    main = load_function(f"{EXAMPLES / 'rnn.py'}:main")
    printed: list[str] = []
    before, after = main(log=printed.append)
    assert after < 0.05 * before
    assert "Iteration 1:" in printed[0] and "bindings for 12 steps" in printed[-1]

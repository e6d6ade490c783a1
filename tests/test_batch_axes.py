"""The batch axes the batching tests try (tests/batch_axes.py): nothing batched, each
operand alone at each of its axes, every operand batched at seeded random axes; each once."""

from __future__ import annotations

import itertools

import numpy as np
from batch_axes import ALL_BATCHED_DRAWS, sampled_in_axes
from hypothesis import given
from hypothesis import strategies as st

from shax import f32

RANKS = st.lists(st.integers(0, 3), min_size=1, max_size=6)


@given(RANKS, st.integers(0, 2**32 - 1))
def test_the_sample_holds_each_kind_of_combination_once(ranks: list[int], seed: int) -> None:
    types = [f32[(2,) * r] for r in ranks]
    got = sampled_in_axes(types, np.random.default_rng(seed))
    n = len(ranks)
    assert len(got) == len(set(got)), "each combination once"
    assert set(got) <= set(itertools.product(*([None, *range(r + 1)] for r in ranks)))
    assert got[0] == (None,) * n
    alone = {c for c in got if sum(a is not None for a in c) == 1}
    assert alone == {tuple(a if j == k else None for j in range(n)) for k, r in enumerate(ranks) for a in range(r + 1)}
    # one operand batched alone is every operand batched: the draws add nothing new then
    everything = [c for c in got if None not in c and n > 1]
    assert (1 <= len(everything) <= ALL_BATCHED_DRAWS) == (n > 1)
    assert len(got) <= 1 + sum(r + 1 for r in ranks) + ALL_BATCHED_DRAWS


def test_a_seed_gives_the_same_sample() -> None:
    types = [f32[2, 3]] * 5
    first, again = (sampled_in_axes(types, np.random.default_rng(0)) for _ in range(2))
    assert first == again
    # five rank-2 operands: 1 + 5 * 3 alone + the draws, against 4 ** 5 = 1,024 in the product
    assert 16 < len(first) <= 16 + ALL_BATCHED_DRAWS

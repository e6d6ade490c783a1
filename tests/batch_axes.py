"""Which batch axes a batching test tries: a sample of the product of every operand's
choices (None, or an axis 0..rank), not the whole product, which grows as (rank + 2)
to the number of operands (1,024 combinations for five rank-2 operands).

The sample keeps each kind of combination: nothing batched; each operand batched alone,
at each of its axes (every rule's case of one batched operand); and every operand
batched, at axes drawn from the caller's seeded generator (the cases where the rule
lines up several batch axes)."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from shax import TensorType

# Draws of every operand batched at random axes: a few, so that operands of equal rank
# are lined up at different axes, not only at equal ones.
ALL_BATCHED_DRAWS = 3


def sampled_in_axes(types: Sequence[TensorType], rng: np.random.Generator) -> list[tuple[int | None, ...]]:
    """The in_axes to try for operands of `types`, each once, in a fixed order for a seeded `rng`."""
    n = len(types)
    chosen: list[tuple[int | None, ...]] = [(None,) * n]
    for k, t in enumerate(types):
        chosen += [tuple(a if j == k else None for j in range(n)) for a in range(t.rank + 1)]
    for _ in range(ALL_BATCHED_DRAWS):
        chosen.append(tuple(int(rng.integers(0, t.rank + 1)) for t in types))
    return list(dict.fromkeys(chosen))

"""`shax.random`: JAX's `jax.random` — keys as values and the distributions drawn from
them, the same bits as JAX's default generator (threefry-2x32) for the same key.
`shax.random._keys` has the generator, `shax.random._distributions` the distributions."""

from shax.random._distributions import (
    bernoulli,
    categorical,
    choice,
    gumbel,
    normal,
    permutation,
    randint,
    truncated_normal,
    uniform,
)
from shax.random._keys import PRNGKey, bits, fold_in, key, split

__all__ = [
    "PRNGKey", "bernoulli", "bits", "categorical", "choice", "fold_in", "gumbel", "key", "normal", "permutation",
    "randint", "split", "truncated_normal", "uniform",
]  # fmt: skip

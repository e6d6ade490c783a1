"""numpy's names and signatures over shax values, like `jax.numpy`: `import shax.numpy as snp`.
Each area is a private submodule listing its names in `__all__`."""

from shax.numpy import _reductions
from shax.numpy._reductions import *  # noqa: F403

__all__ = [*_reductions.__all__]

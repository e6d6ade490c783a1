"""numpy's names and signatures over shax (`import shax.numpy as snp`), like `jax.numpy`:
each function takes numpy values and tracers alike, one private submodule per area."""

from shax.numpy import _arrays, _einsum, _elementwise, _indexing, _reductions
from shax.numpy._arrays import *  # noqa: F403
from shax.numpy._einsum import *  # noqa: F403
from shax.numpy._elementwise import *  # noqa: F403
from shax.numpy._indexing import *  # noqa: F403
from shax.numpy._reductions import *  # noqa: F403

__all__ = [*_arrays.__all__, *_einsum.__all__, *_elementwise.__all__, *_indexing.__all__, *_reductions.__all__]

"""numpy's names and signatures over shax (`import shax.numpy as snp`), like `jax.numpy`:
each function runs on numpy values as numpy does and on tracers as one traced operation
or a few. One private submodule per area."""

from shax.numpy import _elementwise
from shax.numpy._elementwise import *  # noqa: F403

__all__ = [*_elementwise.__all__]

"""Tools for users' own tests of shax programs: `check_grads` (derivatives against
finite differences, as JAX's `jax.test_util.check_grads`; the checker is in `numeric`)
and hypothesis strategies for arrays and well-typed random programs (`strategies`,
which needs hypothesis: `pip install 'shax[testing]'`; `import shax` does not)."""

from shax.testing.grads import check_grads
from shax.testing.numeric import NotSmooth

__all__ = ["check_grads", "NotSmooth"]

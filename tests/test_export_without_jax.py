"""Without JAX (an optional dependency: the `xla` extra) shax imports and runs, and
`shax.export.to_jax` and `shax.jit(f, backend="xla")` say how to install it."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest

import shax
from typeclasses import sin


def test_importing_shax_does_not_import_jax() -> None:
    code = "import sys, shax, shax.export; assert 'jax' not in sys.modules, 'jax imported'"
    subprocess.run([sys.executable, "-c", code], check=True)


def test_without_jax_the_export_says_how_to_install_it(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "jax", None)  # `import jax` raises ImportError
    defn = shax.xpr(sin, np.zeros(3, np.float32))
    with pytest.raises(shax.ShaxError, match=r"to_jax needs JAX.*pip install 'shax\[xla\]'") as error:
        shax.export.to_jax(defn)
    assert __file__ in str(error.value)  # at the caller's line
    with pytest.raises(shax.ShaxError, match=r"pip install 'shax\[xla\]'"):
        shax.jit(sin, backend="xla")
    # the numpy backend, the default, needs no JAX
    np.testing.assert_array_equal(shax.jit(sin)(np.zeros(3, np.float32)), np.zeros(3, np.float32))


def test_an_unknown_backend_is_a_value_error() -> None:
    with pytest.raises(shax.ShaxValueError, match="jit: backend must be 'numpy' or 'xla', got 'tpu'"):
        shax.jit(sin, backend="tpu")

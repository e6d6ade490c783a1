"""The comparison packages (JAX, PyTorch, HIPS autograd), each optional, and the thread
count every implementation runs with.

Threads are set once, the same for all, before numpy or any framework is imported: the
BLAS libraries read their environment variables when they load. One thread is the
default because this machine has two cores that other processes share: a two-thread
BLAS waits on a busy core and its times scatter (B3's hand numpy went from 2 ms to
5-13 ms with a concurrent test run), and one thread gives every implementation the
same compute, so the ratios compare the implementations, not their thread pools.
"""

from __future__ import annotations

import importlib
import os
from types import ModuleType

THREAD_VARIABLES = ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "NUMEXPR_NUM_THREADS")
INSTALL_HINT = "pip install -e '.[bench]'"


def set_threads(count: int) -> str:
    """Ask numpy's BLAS, XLA and PyTorch for `count` threads; a line saying what was set.
    Must run before numpy is imported."""
    for name in THREAD_VARIABLES:
        os.environ[name] = str(count)
    os.environ.setdefault("JAX_PLATFORMS", "cpu")
    if count == 1:
        flags = "--xla_cpu_multi_thread_eigen=false intra_op_parallelism_threads=1"
        os.environ["XLA_FLAGS"] = f"{os.environ.get('XLA_FLAGS', '')} {flags}".strip()
    return f"threads: {count} ({', '.join(THREAD_VARIABLES)}={count}; torch.set_num_threads({count})" + (
        "; XLA single-threaded eigen)" if count == 1 else ")"
    )


class Frameworks:
    """The optional packages, imported on first use: `get("jax.numpy")` is the module or
    None, `missing("jax")` says why it is None."""

    def __init__(self, threads: int) -> None:
        self.threads = threads
        self._modules: dict[str, ModuleType | None] = {}

    def get(self, name: str) -> ModuleType | None:
        if name not in self._modules:
            self._modules[name] = self._load(name)
        return self._modules[name]

    def missing(self, name: str) -> str:
        return f"not installed ({name}; {INSTALL_HINT})"

    def _load(self, name: str) -> ModuleType | None:
        try:
            module = importlib.import_module(name)
        except ImportError:
            return None
        if name.partition(".")[0] == "torch" and "torch" not in self._modules:
            torch = importlib.import_module("torch")
            torch.set_num_threads(self.threads)
            torch.set_num_interop_threads(self.threads)
            self._modules["torch"] = torch
        return module

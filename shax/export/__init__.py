"""Export to JAX / XLA: a typed Definition as a function of JAX arrays built from
`jax.lax` operations, which `jax.jit` lowers to StableHLO and XLA compiles.

    fn = shax.export.to_jax(shax.xpr(shax.grad(loss), w, x))
    jax.jit(fn)(w, x)          # [gradient], what shax.evaluate returns
    shax.jit(f, backend="xla") # the same, cached per argument types

JAX is optional (`pip install 'shax[xla]'`): this package imports it only when a program
is exported, so `import shax` never does. The rules (`export_rules`, one per primitive)
sit under their primitives' declarations (`shax.rules.export`); the function they make,
in `shax.export.lowering`.
Importing this package registers the "xla" backend of `shax.jit` (in
`shax.transforms.jit.backends`: the transforms sit below the export).
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from types import ModuleType
from typing import Any

from shax.core.errors import ShaxError, ShaxValueError, at
from shax.core.ir import Definition
from shax.core.location import current_source
from shax.rules.export import ExportRule, export_rule, export_rules  # noqa: F401 - for rule authors
from shax.transforms.jit import Jit, backends
from shax.transforms.static import Statics

__all__ = ["to_jax"]  # also here: `export_rule`, `export_rules` (to add a rule), `require_jax`


def require_jax(what: str) -> ModuleType:
    """The jax module, or a ShaxError saying how to install it."""
    try:
        return importlib.import_module("jax")
    except ImportError:
        message = f"{what} needs JAX, an optional dependency of shax: pip install 'shax[xla]'"
        raise at(ShaxError(message), current_source()) from None


def to_jax(defn: Definition) -> Callable[..., list[Any]]:
    """`defn` as a Python function of JAX arrays (or numpy values) built from `jax.lax`
    operations, returning what `shax.evaluate(defn, *args)` returns: a list, one entry
    per output. 64-bit programs run with JAX's x64 mode on (see `lowering.JaxFunction`)."""
    require_jax("to_jax")
    from shax.export.lowering import exported

    return exported("to_jax", defn)


def _xla_jit(fn: Callable[..., Any], statics: Statics | None) -> Jit:
    """`shax.jit(fn, backend="xla")`: `xla_jit.XlaJit`, imported (and JAX with it) only now."""
    require_jax("jit(backend='xla')")
    if statics is not None:
        message = "jit: static arguments are not supported with backend='xla' yet; close over them instead"
        raise at(ShaxValueError(message), current_source())
    from shax.export.xla_jit import XlaJit

    return XlaJit(fn)


backends["xla"] = _xla_jit

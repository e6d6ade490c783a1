"""`shax.debug.print`: JAX's `jax.debug.print`, printing runtime values from inside traced
code. On numpy values it prints at once; traced, it records a `debug_print` binding
(`shax.primitives.debug`), which prints each time the program runs: under `evaluate`,
compiled code and XLA, once per loop iteration, once per batch element under `vmap`,
the primal values once under `grad`.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from shax.core.errors import ShaxError, ShaxTypeError, ShaxValueError, at, named
from shax.core.location import current_source
from shax.primitives.debug import DebugPrint
from shax.rules.evaluate import eval_rules
from shax.tracing.tracer import Tracer

__all__ = ["print"]


def print(fmt: str, *args: Any, ordered: bool = False, **kwargs: Any) -> None:  # noqa: A001 - JAX's name
    """Print `fmt.format(*args, **kwargs)` with the values `args` and `kwargs` have when the
    program runs. `ordered` is JAX's; shax's prints always run in program order."""
    if not isinstance(fmt, str):
        raise at(ShaxTypeError(f"debug.print: fmt must be a str, got {type(fmt).__name__} {fmt!r}"), current_source())
    names = tuple(kwargs)
    operands = [*args, *kwargs.values()]
    samples = [_sample(k, o) for k, o in enumerate(operands)]
    try:  # the format checked now, on zeros of the operands' types, not when the program runs
        fmt.format(*samples[: len(args)], **dict(zip(names, samples[len(args) :])))
    except (IndexError, KeyError, ValueError, TypeError, AttributeError) as error:
        message = f"debug.print: cannot format {fmt!r} with {len(args)} positional and keywords {list(names)}: {error}"
        raise at(ShaxValueError(message), current_source()) from None
    prim = DebugPrint(fmt, len(operands), names)
    try:
        eval_rules[prim](prim, operands)
    except ShaxError as error:  # an operand shax cannot trace (an int64 array, 2**40)
        raise at(named(error, "debug.print"), current_source()) from None


def _sample(k: int, operand: Any) -> np.ndarray:
    """Zeros of the operand's type (it may be a tracer): what `fmt` is checked on."""
    if isinstance(operand, Tracer):
        return np.zeros(operand.type.shape, operand.type.dtype.numpy)
    if isinstance(operand, (np.ndarray, np.generic, bool, int, float)):
        return np.zeros_like(np.asarray(operand))
    message = f"debug.print: argument {k} must be an array or a number, got {type(operand).__name__}"
    raise at(ShaxTypeError(message), current_source())

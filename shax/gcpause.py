"""Pausing CPython's cyclic garbage collector while a stage runs.

A stage allocates hundreds of thousands of small objects (tracers, vars, bindings) that
live until it returns; the collector would traverse them again and again as they pile
up, which costs about a third of a large linearize. Reference counting still frees what
a stage drops; garbage cycles wait until the stage returns.
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def collector_paused() -> Iterator[None]:
    """Within this block (or decorated function) the cyclic collector does not run."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()

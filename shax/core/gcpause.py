"""Pausing CPython's cyclic garbage collector while a stage runs.

A stage allocates hundreds of thousands of small objects (tracers, vars, bindings) that
live until it returns; the collector would traverse them again and again as they pile
up, which costs about a third of a large linearize. Reference counting still frees what
a stage drops; garbage cycles wait until the stage returns.

The collector is one for the whole process, so pauses are counted over every thread:
the first to begin records whether the collector was enabled and disables it, the last
to end enables it again if it was enabled then (and else leaves it alone: a collector
the user disabled stays disabled). A pause ending in one thread while another's goes on
leaves the collector paused.
"""

from __future__ import annotations

import gc
import threading
from collections.abc import Iterator
from contextlib import contextmanager

_lock = threading.Lock()  # guards the two below, and the collector's state with them
_pauses = 0  # pauses under way, in every thread
_was_enabled = False  # whether the collector was enabled when the first of them began


@contextmanager
def collector_paused() -> Iterator[None]:
    """Within this block (or decorated function) the cyclic collector does not run."""
    global _pauses, _was_enabled
    with _lock:
        if _pauses == 0:
            _was_enabled = gc.isenabled()
            gc.disable()
        _pauses += 1
    try:
        yield
    finally:
        with _lock:
            _pauses -= 1
            if _pauses == 0 and _was_enabled:
                gc.enable()

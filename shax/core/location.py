"""Find the user's file and line: the innermost frame outside shax and typeclasses.

Tracing calls this once per operation, so the check per frame is cached by code object.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar, Token
from types import CodeType, FrameType, TracebackType

import numpy

import typeclasses

# numpy's own Python code is a library's too: `np.ones(tracer)` reaches the tracer from
# there, and the user's line is the caller's.
_INTERNAL_DIRS = tuple(
    os.path.dirname(os.path.abspath(module_file)) + os.sep
    # shax's own directory is this module's folder's parent (shax/core/location.py)
    for module_file in (typeclasses.__file__, os.path.dirname(os.path.abspath(__file__)), numpy.__file__)
)
# Frames from these are library frames too: typeguard's instrumentation, attrs, and
# contextlib (whose frame runs a stage decorated with `collector_paused`).
_LIBRARY_PARTS = (os.sep + "typeguard" + os.sep, os.sep + "attr" + os.sep, "<attrs generated", os.sep + "contextlib.py")
# code object -> whether it is library code (threads may fill it at once: with the same answers)
_internal: dict[CodeType, bool] = {}


def is_library_code(code: CodeType) -> bool:
    try:
        return _internal[code]
    except KeyError:
        name = code.co_filename
        result = name.startswith(_INTERNAL_DIRS) or any(p in name for p in _LIBRARY_PARTS)
        _internal[code] = result
        return result


def user_location() -> tuple[str, int] | None:
    """(filename, line) of the innermost user frame, or None if there is none."""
    frame: FrameType | None = sys._getframe(1)
    while frame is not None:
        code = frame.f_code
        internal = _internal.get(code)  # the cache read inline: a trace walks ~7 frames per operation
        if internal is None:
            internal = is_library_code(code)
        if not internal:
            return code.co_filename, frame.f_lineno
        frame = frame.f_back
    return None


@contextmanager
def callers_hidden() -> Iterator[None]:
    """Within the block, the frames that entered it are library code: a command's callers
    (its console script, a test calling its `main`) are not where its input came from, so
    an error about that input names no line of theirs."""
    frame: FrameType | None = sys._getframe(1)
    saved: dict[CodeType, bool | None] = {}  # code object -> what the cache held before
    while frame is not None:
        saved.setdefault(frame.f_code, _internal.get(frame.f_code))
        _internal[frame.f_code] = True
        frame = frame.f_back
    try:
        yield
    finally:
        for code, before in saved.items():
            if before is None:
                _internal.pop(code, None)
            else:
                _internal[code] = before


def user_frame_of(trace: TracebackType | None) -> tuple[str, int] | None:
    """(filename, line) of the innermost user frame of an exception's traceback."""
    found = None
    while trace is not None:
        if not is_library_code(trace.tb_frame.f_code):
            found = trace.tb_frame.f_code.co_filename, trace.tb_lineno
        trace = trace.tb_next
    return found


# While a stage (not user code) records operations for a binding, they are attributed
# to that binding's source, the user's line that wrote it (None: no line), and to their
# origin, the rule recording them (`linearize rule of sin`; None: the user's code): the
# innermost stage's, in this thread (or task). The variable is None outside stages.
Attribution = tuple[str | None, str | None]  # (source, origin)
_stage_source: ContextVar[Attribution | None] = ContextVar("shax_stage_source", default=None)


def attribute(source: str | None, origin: str | None = None) -> Token[Attribution | None]:
    """From now on, operations recorded come from `source`, emitted by `origin`, until
    `restore` is given this token (or an earlier one of the same walk)."""
    return _stage_source.set((source, origin))


def restore(token: Token[Attribution | None]) -> None:
    """The attribution as it was before `attribute` gave `token`."""
    _stage_source.reset(token)


def current_source() -> str | None:
    """Where an operation recorded now comes from, as `file:line`."""
    attributed = _stage_source.get()
    if attributed is not None:
        return attributed[0]
    return show_location(user_location())


def current_attribution() -> tuple[str | None, str | None]:
    """(source, origin) of an operation recorded now: the user's line and no origin in
    the user's code; inside a stage, the binding's line and the rule recording it."""
    attributed = _stage_source.get()
    if attributed is not None:
        return attributed
    return show_location(user_location()), None


def show_location(location: tuple[str, int] | None) -> str | None:
    if location is None:
        return None
    return f"{location[0]}:{location[1]}"

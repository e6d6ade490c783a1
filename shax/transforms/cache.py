"""What transforms built, kept so that a transformed function is staged once per argument
structure: `cache`, the one `StagingCache`, keyed by (function, transform and its
parameters, argument types, tree structure), never by argument values.

An entry is stale once the function's closure cells hold other objects than when it was
built (a rebound variable): it is built again. A build that depends on an enclosing
trace (a staging that captured outer tracers) says it is not cacheable, and is not kept.

Threads share the cache without a lock: a build runs user code and nested transforms,
which reach the cache again, so holding a lock while building could deadlock. Threads
missing one entry at once each build it and use what they built (both right: a build
depends only on the key and the function); the last to finish is kept. Each step on the
dictionaries is one operation, atomic under the interpreter lock.
"""

from __future__ import annotations

import operator
import weakref
from collections.abc import Callable, Hashable
from typing import Any


class StagingCache:
    """What a transform built for a function, per key (argument types and tree
    structure, never values). Held weakly by function: a dropped function drops its
    entries. Functions that cannot be weakly referenced are staged on every call."""

    def __init__(self) -> None:
        # fn -> key -> (what was built, the objects in fn's closure cells when it was built)
        self._entries: weakref.WeakKeyDictionary[Any, dict[Hashable, tuple[Any, tuple[Any, ...]]]] = (
            weakref.WeakKeyDictionary()
        )

    def get(self, fn: Callable[..., Any], key: Hashable, build: Callable[[], tuple[Any, bool]]) -> Any:
        """The entry for (fn, key), built by `build() -> (entry, cacheable)` if missing or stale."""
        cells = closure_contents(fn)
        try:
            per_fn = self._entries.setdefault(fn, {})
        except TypeError:  # not weakly referenceable
            return build()[0]
        found = per_fn.get(key)
        if found is not None and same_contents(cells, found[1]):
            return found[0]
        entry, cacheable = build()
        if cacheable:
            per_fn[key] = (entry, cells)
        else:
            per_fn.pop(key, None)
        return entry


def closure_contents(fn: Callable[..., Any]) -> tuple[Any, ...]:
    """The objects in fn's closure cells (an empty cell as a marker of its own), to tell
    whether what was built for fn is stale."""
    cells = getattr(fn, "__closure__", None) or ()
    contents: list[Any] = []
    for cell in cells:
        try:
            contents.append(cell.cell_contents)
        except ValueError:  # an empty cell: a variable not yet assigned
            contents.append(_EMPTY)
    return tuple(contents)


def unchanged(fn: Callable[..., Any], contents: tuple[Any, ...]) -> bool:
    """Whether fn's closure cells hold the very objects `contents` (`closure_contents`
    of fn when something was built for it)."""
    return same_contents(closure_contents(fn), contents)


def same_contents(a: tuple[Any, ...], b: tuple[Any, ...]) -> bool:
    """The same objects, by identity: a variable rebound to an equal value is rebound all
    the same, and `==` of two arrays is no bool."""
    return len(a) == len(b) and all(map(operator.is_, a, b))


_EMPTY = object()
cache = StagingCache()

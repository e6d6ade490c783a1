"""The steps of a key path, JAX's four kinds: where a leaf sits in a pytree, one step per
container on the way down. `str` gives JAX's notation, so a path prints by joining them:
`[0]['w'].b[<flat index 1>]`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import attrs

from shax.core.errors import ShaxTypeError, at
from shax.core.location import current_source


@attrs.frozen
class SequenceKey:
    """The `idx`-th entry of a tuple or a list: `[0]`."""

    idx: int

    def __str__(self) -> str:
        return f"[{self.idx!r}]"


@attrs.frozen
class DictKey:
    """The entry of a dict under `key`: `['w']`."""

    key: Any

    def __str__(self) -> str:
        return f"[{self.key!r}]"


@attrs.frozen
class GetAttrKey:
    """The field `name` of a named tuple or a registered dataclass: `.w`."""

    name: str

    def __str__(self) -> str:
        return f".{self.name}"


@attrs.frozen
class FlattenedIndexKey:
    """The `key`-th child of a registered class that names no fields: `[<flat index 0>]`."""

    key: int

    def __str__(self) -> str:
        return f"[<flat index {self.key}>]"


KeyEntry = SequenceKey | DictKey | GetAttrKey | FlattenedIndexKey


def keystr(keys: Sequence[KeyEntry], *, simple: bool = False, separator: str = "") -> str:
    """A key path as text: JAX's `[0]['w'].b`, or with `simple` each step's bare value
    (`0`, `w`, `b`) joined by `separator`."""
    kinds = (SequenceKey, DictKey, GetAttrKey, FlattenedIndexKey)
    if not isinstance(keys, (tuple, list)) or not all(isinstance(k, kinds) for k in keys):
        message = f"keystr: keys must be a key path (a tuple of SequenceKey, DictKey, ...), got {keys!r}"
        raise at(ShaxTypeError(message), current_source())
    if not isinstance(separator, str) or not isinstance(simple, (bool, int)):
        raise at(ShaxTypeError("keystr: separator must be a str and simple a bool"), current_source())
    if simple:
        return separator.join(str(next(iter(attrs.astuple(k)))) for k in keys)
    return separator.join(map(str, keys))

"""`Transformed`, the base class of the transformed functions (`grad(f)`, `vmap(f)`,
`jit(f)`): calling one reads its arguments' types and structure
(`shax.transforms.arguments`), builds once per those what the transform makes of the
function (`shax.transforms.cache`), and runs it.

Arguments that are all arrays or numbers (no pytrees) take a faster path: a key read off
them directly finds what this object built before, unless the function's closure cells
changed since, or what was built captured outer tracers.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Hashable, Sequence
from typing import Any

import numpy as np

from shax.core.gcpause import collector_paused
from shax.core.pytree import TreeDef
from shax.core.types import TensorType
from shax.tracing.trace import check_function, function_name
from shax.transforms.arguments import abstract_arguments
from shax.transforms.cache import cache, closure_contents, unchanged
from shax.transforms.keywords import by_position


class Transformed:
    """A transformed function. Calling it reads its arguments' types and structure,
    builds (once per those, see `cache`) what the transform makes of `fn`, and runs it.
    Subclasses say what they build: `build(in_tree, types)` returns an object whose
    `call(leaves)` gives the result (and whose `plain(leaves)`, if it has one, gives it
    for leaves that are arrays and numbers: no tracers), and `key()` holds the
    transform's own parameters."""

    kind = "transform"

    def __init__(self, fn: Callable[..., Any]) -> None:
        check_function(self.kind, fn)
        self.fn = fn
        self.fn_closure = getattr(fn, "__closure__", None)
        # plain key (see plain_key) -> (how what was built runs on it, fn's closure contents then)
        self._plain: dict[tuple[Any, ...], tuple[Callable[[Sequence[Any]], Any], tuple[Any, ...]]] = {}
        self.__name__ = f"{self.kind}_{function_name(fn)}"
        self.__qualname__ = self.__name__
        self.__doc__ = getattr(fn, "__doc__", None)
        signature = _plain_signature(fn)
        if signature is not None:
            self.__signature__ = signature

    def key(self) -> Hashable:
        return ()

    def build(self, in_tree: TreeDef, types: tuple[TensorType, ...]) -> Any:
        raise NotImplementedError

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        if kwargs:  # each at its parameter's position (`shax.transforms.keywords`)
            args = by_position(self.kind, self.fn, args, kwargs)
        # The fast path, for arguments that are all arrays or numbers (no pytrees): a
        # key read off them directly, for what this object built before.
        key = plain_key(args)
        if key is not None:
            found = self._plain.get(key)
            if found is not None and (self.fn_closure is None or unchanged(self.fn, found[1])):
                return found[0](args)
        leaves, in_tree, types = abstract_arguments(self.kind, args)
        built = self.built(in_tree, types)
        if key is not None and not built.captured:
            self._plain[key] = (getattr(built, "plain", built.call), closure_contents(self.fn))
        return built.call(leaves)

    def built(self, in_tree: TreeDef, types: tuple[TensorType, ...]) -> Any:
        """What this transform builds of `fn` at these argument types (from the cache)."""

        def build() -> tuple[Any, bool]:
            with collector_paused():  # the stages' objects are not garbage (see shax.core.gcpause)
                built = self.build(in_tree, types)
            return built, not built.captured

        return cache.get(self.fn, (self.kind, self.key(), in_tree, types), build)

    def __repr__(self) -> str:
        return f"<{self.__name__}>"


# numpy's scalar classes of shax's dtypes: such a number's class decides its dtype (never
# byte-swapped).
NUMPY_SCALARS = frozenset(type(np.zeros((), d)[()]) for d in ("f4", "f8", "i4", "i8", "u1", "?"))
# A number's class decides its type: a numpy scalar's dtype, f32 for a float, and so on.
_NUMBERS = frozenset({float, int, bool, *NUMPY_SCALARS})


def plain_key(args: Sequence[Any]) -> tuple[Any, ...] | None:
    """What decides the types of `args` if each is an array, a numpy scalar or a Python
    number (a float is always f32): an array's dtype and shape, a number's class; None
    for anything else."""
    key: list[Any] = []
    for a in args:
        cls = a.__class__
        if cls is np.ndarray:
            key.append((a.dtype, a.shape))
        elif cls in _NUMBERS:
            key.append(cls)
        else:
            return None
    return tuple(key)


def _plain_signature(fn: Callable[..., Any]) -> inspect.Signature | None:
    """fn's signature without annotations: a transform keeps the parameters, not the types."""
    try:
        signature = inspect.signature(fn)
    except (TypeError, ValueError):
        return None
    parameters = [p.replace(annotation=inspect.Parameter.empty) for p in signature.parameters.values()]
    return signature.replace(parameters=parameters, return_annotation=inspect.Signature.empty)

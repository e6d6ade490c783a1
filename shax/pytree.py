"""Pytrees: nested tuples, lists and dicts of leaves, flattened to a list and back.
Dict entries are ordered by sorted key, as in JAX."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import attrs


@attrs.frozen
class TreeDef:
    kind: str  # "leaf", "tuple", "list" or "dict"
    children: tuple[TreeDef, ...] = ()
    keys: tuple[Any, ...] = ()

    num_leaves: int = attrs.field(init=False, eq=False)

    def __attrs_post_init__(self) -> None:
        count = 1 if self.kind == "leaf" else sum(c.num_leaves for c in self.children)
        object.__setattr__(self, "num_leaves", count)


LEAF = TreeDef("leaf")


def flatten(tree: Any, is_leaf: Callable[[Any], bool] = lambda _: False) -> tuple[list[Any], TreeDef]:
    leaves: list[Any] = []

    def walk(node: Any) -> TreeDef:
        if not is_leaf(node):
            if isinstance(node, dict):
                keys = tuple(sorted(node))
                return TreeDef("dict", tuple(walk(node[k]) for k in keys), keys)
            if isinstance(node, (tuple, list)):
                return TreeDef(type(node).__name__, tuple(walk(c) for c in node))
        leaves.append(node)
        return LEAF

    return leaves, walk(tree)


def unflatten(treedef: TreeDef, leaves: Sequence[Any]) -> Any:
    # The common shapes, without a walk: one leaf, or a flat tuple of leaves.
    if treedef.kind == "leaf":
        return leaves[0]
    if treedef.kind == "tuple" and treedef.num_leaves == len(treedef.children):
        return tuple(leaves)
    position = iter(leaves)

    def build(node: TreeDef) -> Any:
        if node.kind == "leaf":
            return next(position)
        children = [build(c) for c in node.children]
        if node.kind == "dict":
            return dict(zip(node.keys, children))
        return tuple(children) if node.kind == "tuple" else children

    return build(treedef)

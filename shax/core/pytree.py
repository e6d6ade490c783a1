"""Pytrees, as in JAX: nested containers of leaves, flattened to a list of leaves and a
`TreeDef` (the structure), and rebuilt from the two.

The containers (nodes) are those JAX knows without registration, told by exact class:
tuples and lists; dicts, whose entries are ordered by sorted key (so insertion order
does not change the structure); named tuples, rebuilt as their own class; `None`, a
node with no children (an empty subtree, not a leaf); `OrderedDict`s, which keep their
insertion order; `defaultdict`s, sorted like dicts and rebuilt with their factory; and
the classes registered in `REGISTRY` (`shax.tree_util.register_pytree_node` and its
dataclass and class-method forms), taken apart by their own functions into children and
auxiliary data (which must be hashable: it is part of the structure, so of `jit`'s cache
key). Anything else is a leaf, subclasses of these included. A container of one leaf is
still a container. Dict keys that cannot be compared with each other (1 and "a") have
no sorted order: that is a `ShaxValueError` naming them, as JAX refuses them too.

Every walk (flatten, unflatten, equality, printing, paths) is a loop over an explicit
stack, linear in the size of the tree: a 3,000-deep list is no `RecursionError`. A
TreeDef's hash is computed once, from its children's.
"""

from __future__ import annotations

import functools
import operator
from collections import OrderedDict, defaultdict
from collections.abc import Callable, Sequence
from typing import Any

import attrs

from shax.core.errors import ShaxTypeError, ShaxValueError, at
from shax.core.location import current_source
from shax.core.pytree_keys import DictKey, FlattenedIndexKey, GetAttrKey, KeyEntry, SequenceKey

NoneType = type(None)

# The node classes but named tuples, and how `kind` names them.
_KINDS: dict[type, str] = {
    tuple: "tuple",
    list: "list",
    dict: "dict",
    OrderedDict: "dict",
    defaultdict: "dict",
    NoneType: "none",
}


@attrs.frozen
class Registered:
    """How a registered class is taken apart and rebuilt: `flatten(node) -> (children,
    aux)`, `unflatten(aux, children) -> node` (JAX's), and the attribute each child is
    named by in key paths (`.w`: a dataclass's fields), or None (`[<flat index 0>]`)."""

    flatten: Callable[[Any], tuple[Any, Any]]
    unflatten: Callable[[Any, Any], Any]
    fields: tuple[str, ...] | None = None


# class -> how to take its values apart; filled by `shax.tree_util`'s register functions.
REGISTRY: dict[type, Registered] = {}


class TreeDef:
    """The structure of a pytree: a leaf (`node_type` None, the one `LEAF`), or a node of
    class `node_type` whose children have the structures `children`. Equal structures
    compare and hash equal (a cache key), by a loop, not recursion.

    Never changed once made. A plain class with slots, not a frozen attrs class, as
    construction is on the path of every call with pytree arguments (4x faster)."""

    __slots__ = ("node_type", "children", "keys", "aux", "kind", "num_leaves", "flat", "_hash")
    node_type: type | None
    children: tuple[TreeDef, ...]
    keys: tuple[Any, ...]  # a dict's keys, in its children's order
    aux: Any  # a defaultdict's default_factory, or a registered node's auxiliary data
    kind: str  # "leaf", "none", "tuple" (a named tuple too), "list", "dict" (an ordered or default one too), "custom"
    num_leaves: int
    flat: bool  # a node whose children are all leaves
    _hash: int

    def __init__(
        self,
        node_type: type | None,
        children: tuple[TreeDef, ...] = (),
        keys: tuple[Any, ...] = (),
        aux: Any = None,
    ) -> None:
        self.node_type = node_type
        self.children = children
        self.keys = keys
        self.aux = aux
        self.kind = "leaf" if node_type is None else _KINDS.get(node_type) or _custom_or_tuple(node_type)
        leaves, flat = 0, node_type is not None
        for child in children:
            leaves += child.num_leaves
            flat = flat and child.node_type is None
        self.num_leaves = leaves if node_type is not None else 1
        self.flat = flat
        # The children's hashes are stored, so this reads one level only.
        self._hash = hash((node_type, children, keys, aux))

    def __hash__(self) -> int:
        return self._hash

    def __eq__(self, other: object) -> bool:
        if self is other:
            return True
        if not isinstance(other, TreeDef):
            return NotImplemented
        pairs = [(self, other)]
        while pairs:
            a, b = pairs.pop()
            if a is b:
                continue
            if (
                a._hash != b._hash
                or a.node_type is not b.node_type
                or a.flat != b.flat
                or len(a.children) != len(b.children)
                or a.keys != b.keys
                or not same_aux(a.aux, b.aux)
            ):
                return False
            if not a.flat:  # (children that are all leaves are equal)
                pairs.extend(zip(a.children, b.children))
        return True

    def rebuild(self, children: Sequence[Any]) -> Any:
        """A container of this node's class holding `children` (one value per child)."""
        cls = self.node_type
        if cls is tuple:
            return tuple(children)
        if cls is list:
            return list(children)
        if cls is dict:
            return dict(zip(self.keys, children))
        if cls is NoneType:
            return None
        if cls is OrderedDict:
            return OrderedDict(zip(self.keys, children))
        if cls is defaultdict:
            return defaultdict(self.aux, zip(self.keys, children))
        if self.kind == "custom":
            return REGISTRY[cls].unflatten(self.aux, list(children))  # type: ignore[index]
        return cls._make(children)  # type: ignore[union-attr]  # a named tuple

    def unflatten(self, leaves: Sequence[Any]) -> Any:
        """JAX's `treedef.unflatten(leaves)`: the pytree of this structure holding `leaves`."""
        return unflatten(self, leaves)

    def __str__(self) -> str:
        """JAX's notation: `*` for a leaf, `(*, {'a': *}, [*], None, Point(x=*, y=*))`."""
        pieces: list[str] = []
        todo: list[TreeDef | str] = [self]  # structures to show, or text to write, last first
        while todo:
            item = todo.pop()
            if isinstance(item, str):
                pieces.append(item)
            elif item.node_type is None:
                pieces.append("*")
            else:
                opening, labels, closing = _notation(item)
                pieces.append(opening)
                todo.append(closing)
                for k in reversed(range(len(item.children))):
                    todo.append(item.children[k])
                    todo.append((", " if k else "") + labels[k])
        return "".join(pieces)

    def __repr__(self) -> str:
        return f"TreeDef({self})"


def _custom_or_tuple(node_type: type) -> str:
    return "custom" if node_type in REGISTRY else "tuple"


def same_aux(a: Any, b: Any) -> bool:
    """Whether two nodes' auxiliary data are equal (`==` giving a bool, as JAX compares them)."""
    if a is b:
        return True
    try:
        return type(a) is type(b) and bool(a == b)
    except (TypeError, ValueError):  # an array's ambiguous truth: not equal
        return False


def _notation(node: TreeDef) -> tuple[str, list[str], str]:
    """How a node prints: (opening, a label before each child, closing)."""
    cls = node.node_type
    count = len(node.children)
    if node.kind == "custom":
        return f"CustomNode({cls.__name__}[{node.aux}], [", [""] * count, "])"  # type: ignore[union-attr]
    if cls is NoneType:
        return "None", [], ""
    if cls is list:
        return "[", [""] * count, "]"
    if node.kind == "dict":
        labels = [f"{k!r}: " for k in node.keys]
        return ("{", labels, "}") if cls is dict else (f"{cls.__name__}({{", labels, "})")  # type: ignore[union-attr]
    if cls is tuple:
        return "(", [""] * count, ",)" if count == 1 else ")"
    return f"{cls.__name__}(", [f"{f}=" for f in cls._fields], ")"  # type: ignore[union-attr]  # a named tuple


def key_steps(node: TreeDef) -> list[KeyEntry]:
    """The key path step to each child: `[0]`, `['w']`, `.b` (a named tuple's or a registered
    dataclass's field), `[<flat index 0>]` (another registered class's child)."""
    count = len(node.children)
    if node.kind == "custom":
        fields = REGISTRY[node.node_type].fields  # type: ignore[index]
        if fields is not None and len(fields) == count:
            return [GetAttrKey(f) for f in fields]
        return [FlattenedIndexKey(k) for k in range(count)]
    if node.kind == "dict":
        return [DictKey(k) for k in node.keys]
    if node.kind == "tuple" and node.node_type is not tuple:
        return [GetAttrKey(f) for f in node.node_type._fields]  # type: ignore[union-attr]  # a named tuple
    return [SequenceKey(k) for k in range(count)]


LEAF = TreeDef(None)


def flatten(tree: Any, is_leaf: Callable[[Any], bool] | None = None) -> tuple[list[Any], TreeDef]:
    """(the leaves of `tree`, left to right, and its structure). `is_leaf(x)` true makes
    `x` a leaf even if it is a container."""
    leaves: list[Any] = []
    done: list[TreeDef] = []  # structures of the subtrees walked, waiting for their parent
    walking: list[tuple[type, int, tuple[Any, ...], Any]] = []  # (class, children, keys, aux) of open nodes
    todo: list[Any] = [tree]  # values to walk, last first, and an _END after each node's children
    while todo:
        value = todo.pop()
        if value is _END:
            cls, count, keys, aux = walking.pop()
            subtrees = tuple(done[len(done) - count :])
            del done[len(done) - count :]
            done.append(_made(cls, subtrees, keys, aux))
            continue
        cls = type(value)
        if (
            cls not in _KINDS
            and cls not in REGISTRY
            and not (isinstance(value, tuple) and hasattr(cls, "_fields"))
            or (is_leaf is not None and is_leaf(value))
        ):
            leaves.append(value)
            done.append(LEAF)
            continue
        children, keys, aux = node_parts(value, cls)
        walking.append((cls, len(children), keys, aux))
        todo.append(_END)
        todo.extend(reversed(children))
    return leaves, done[0]


_END = object()


def _made(cls: type, subtrees: tuple[TreeDef, ...], keys: tuple[Any, ...], aux: Any) -> TreeDef:
    """The structure of a node; a `ShaxValueError` if its auxiliary data cannot be hashed."""
    try:
        return TreeDef(cls, subtrees, keys, aux)
    except TypeError as error:
        message = (
            f"pytree: {cls.__name__}'s flatten function gave the auxiliary data {aux!r}, which cannot be hashed "
            f"({error}); it is part of the tree's structure (jit's cache key): make it hashable (a tuple, not a list)"
        )
        raise at(ShaxValueError(message), current_source()) from None


def node_parts(node: Any, cls: type) -> tuple[Sequence[Any], tuple[Any, ...], Any]:
    """(children, keys, default factory or auxiliary data) of a container."""
    registered = REGISTRY.get(cls)
    if registered is not None:
        return _registered_parts(node, cls, registered)
    if cls is dict or cls is defaultdict:
        keys = sorted_keys(node)
        return [node[k] for k in keys], keys, node.default_factory if cls is defaultdict else None
    if cls is OrderedDict:
        return list(node.values()), tuple(node), None
    if node is None:
        return (), (), None
    return node, (), None  # a tuple, a named tuple or a list


def _registered_parts(node: Any, cls: type, registered: Registered) -> tuple[Sequence[Any], tuple[Any, ...], Any]:
    parts = registered.flatten(node)
    if not (isinstance(parts, tuple) and len(parts) == 2) or isinstance(parts[0], (str, bytes, dict)):
        message = (
            f"pytree: {cls.__name__}'s flatten function must return (children, aux_data), children a tuple or list, "
            f"got {parts!r}"
        )
        raise at(ShaxTypeError(message), current_source())
    try:
        children = list(parts[0])
    except TypeError:
        message = f"pytree: {cls.__name__}'s flatten function gave children {parts[0]!r}, not a tuple or list"
        raise at(ShaxTypeError(message), current_source()) from None
    return children, (), parts[1]


def sorted_keys(mapping: dict[Any, Any]) -> tuple[Any, ...]:
    """A dict's keys in the order its entries flatten: sorted, or a `ShaxValueError`."""
    try:
        return tuple(sorted(mapping))
    except TypeError as error:
        shown = ", ".join(map(repr, mapping))
        message = (
            f"pytree: a dict's entries are ordered by sorted key (as in JAX), but the keys {shown} cannot be "
            f"compared with each other ({error}); use keys of one type, or an OrderedDict, which keeps its "
            "insertion order"
        )
        raise at(ShaxValueError(message), current_source()) from None


def unflatten(tree_def: TreeDef, leaves: Sequence[Any]) -> Any:
    """The pytree of structure `tree_def` holding `leaves`, left to right."""
    if len(leaves) != tree_def.num_leaves:
        message = f"pytree: the structure {tree_def} holds {tree_def.num_leaves} leaves, but {len(leaves)} were given"
        raise ShaxValueError(message)
    # The common shapes, without a walk: one leaf, or one container of leaves.
    cls = tree_def.node_type
    if cls is None:
        return leaves[0]
    if tree_def.flat:
        return tuple(leaves) if cls is tuple else tree_def.rebuild(leaves)
    build = _builder(tree_def)
    if build is not _WALK:
        return build(leaves)
    position = iter(leaves)
    # Each node on the stack with the values of its children built so far.
    stack: list[tuple[TreeDef, list[Any]]] = [(tree_def, [])]
    while True:
        node, values = stack[-1]
        if len(values) < len(node.children):
            child = node.children[len(values)]
            if child.node_type is None:
                values.append(next(position))
            else:
                stack.append((child, []))
            continue
        stack.pop()
        if not stack:
            return node.rebuild(values)
        stack[-1][1].append(node.rebuild(values))


# A small nested structure (a jit's `(out, (dx, dy))`, a layer's dict of dicts) is rebuilt
# by one generated expression, `lambda l: (l[0], (l[1], l[2]))`, compiled once per
# structure: a few times faster than the walk, on the path of every transformed call.
# Larger or deeper ones are walked (a 3,000-deep list would not compile).
_MOST_NODES, _MOST_DEPTH, _MOST_BUILDERS = 64, 8, 1024
_WALK: Callable[[Sequence[Any]], Any] = lambda leaves: None  # noqa: E731 - the marker "walk it"
_builders: dict[TreeDef, Callable[[Sequence[Any]], Any]] = {}  # structure -> its builder, or _WALK


def builder(tree_def: TreeDef) -> Callable[[Sequence[Any]], Any]:
    """`unflatten(tree_def, ·)` for lists of exactly its number of leaves, as one call: what
    a caller that builds many pytrees of one structure keeps."""
    if tree_def.node_type is None:
        return operator.itemgetter(0)
    if tree_def.flat:
        return tuple if tree_def.node_type is tuple else tree_def.rebuild
    build = _builder(tree_def)
    return functools.partial(unflatten, tree_def) if build is _WALK else build


def _builder(tree_def: TreeDef) -> Callable[[Sequence[Any]], Any]:
    """The generated builder of `tree_def`'s pytrees, or _WALK for a large or deep one:
    generated once per structure."""
    build = _builders.get(tree_def)
    if build is None:
        if len(_builders) >= _MOST_BUILDERS:
            _builders.clear()
        build = _builders[tree_def] = _generated(tree_def)
    return build


def _generated(tree_def: TreeDef) -> Callable[[Sequence[Any]], Any]:
    """A new builder of `tree_def`'s pytrees, or _WALK for a large or deep one."""
    namespace: dict[str, Any] = {}
    leaves = iter(range(tree_def.num_leaves))
    nodes = iter(range(_MOST_NODES))

    def expression(node: TreeDef, depth: int) -> str | None:
        if node.node_type is None:
            return f"l[{next(leaves)}]"
        if depth > _MOST_DEPTH or next(nodes, None) is None:
            return None
        children: list[str] = []
        for child in node.children:
            text = expression(child, depth + 1)
            if text is None:
                return None
            children.append(text)
        items = ", ".join(children) + ("," if len(children) == 1 else "")  # a tuple display
        if node.node_type is tuple:
            return f"({items})"
        name = f"r{len(namespace)}"
        namespace[name] = node.rebuild
        return f"{name}(({items}))"

    body = expression(tree_def, 0)
    if body is None:
        return _WALK
    return eval(f"lambda l: {body}", namespace)  # noqa: S307 - our own expression, of names and indices


def leaf_paths(tree_def: TreeDef) -> list[str]:
    """Where each leaf sits, as JAX prints key paths: `[0]['w']`, `[1].b[0]`."""
    return ["".join(map(str, path)) for path in leaf_key_paths(tree_def)]


def leaf_key_paths(tree_def: TreeDef) -> list[tuple[KeyEntry, ...]]:
    """Where each leaf sits, as JAX's key paths: one step per container on the way down."""
    paths: list[tuple[KeyEntry, ...]] = []
    steps: list[KeyEntry] = []  # the path to the node being walked
    todo: list[tuple[TreeDef, KeyEntry | None] | None] = [(tree_def, None)]  # None: the walk leaves a node
    while todo:
        item = todo.pop()
        if item is None:
            steps.pop()
            continue
        node, step = item
        if node.node_type is None:
            paths.append((*steps, step) if step is not None else tuple(steps))
            continue
        if step is not None:
            steps.append(step)
            todo.append(None)
        todo.extend(reversed(list(zip(node.children, key_steps(node)))))
    return paths

"""`shax.tree_util`: JAX's pytree tools over `shax.core.pytree`, with its names and signatures.

    leaves, treedef = tree_flatten({"w": w, "b": (b, None)})   # None: a node with no children
    tree_map(lambda p, g: p - 0.1 * g, params, grads)        # several trees of one structure
    register_dataclass(Params)                               # a class of your own is a node

A registered class (`register_pytree_node`, `register_pytree_node_class`,
`register_dataclass`) is a node for every transform: `grad` gives its gradient as that
class, its auxiliary data (a dataclass's meta fields) is part of `jit`'s cache key, and
`vmap`'s `in_axes` may be an instance of it holding axes. The trees after the first of
`tree_map` must have the first's structure down to its leaves (where they may hold
subtrees: the first is a prefix), else a `ShaxValueError` naming the key path where they
part. Bad arguments are `ShaxError`s at the caller's line, never Python's own errors.
"""

from __future__ import annotations

import dataclasses
import functools
from collections import OrderedDict, defaultdict
from collections.abc import Callable, Iterable
from typing import Any, TypeVar

from shax.core.errors import ShaxError, ShaxTypeError, ShaxValueError, at
from shax.core.location import current_source
from shax.core.pytree import (
    LEAF,
    REGISTRY,
    Registered,
    TreeDef,
    flatten,
    key_steps,
    leaf_key_paths,
    node_parts,
    same_aux,
    unflatten,
)
from shax.core.pytree_keys import DictKey, FlattenedIndexKey, GetAttrKey, KeyEntry, SequenceKey, keystr

__all__ = [
    "DictKey", "FlattenedIndexKey", "GetAttrKey", "Partial", "PyTreeDef", "SequenceKey", "keystr",
    "register_dataclass", "register_pytree_node", "register_pytree_node_class", "tree_all", "tree_flatten",
    "tree_flatten_with_path", "tree_leaves", "tree_leaves_with_path", "tree_map", "tree_map_with_path",
    "tree_reduce", "tree_structure", "tree_transpose", "tree_unflatten",
]  # fmt: skip

PyTreeDef = TreeDef
T = TypeVar("T", bound=type)
IsLeaf = Callable[[Any], bool] | None
_MISSING = object()


def tree_flatten(tree: Any, is_leaf: IsLeaf = None) -> tuple[list[Any], TreeDef]:
    """(the leaves of `tree`, left to right, and its structure)."""
    return flatten(tree, _is_leaf("tree_flatten", is_leaf))


def tree_leaves(tree: Any, is_leaf: IsLeaf = None) -> list[Any]:
    """The leaves of `tree`, left to right."""
    return flatten(tree, _is_leaf("tree_leaves", is_leaf))[0]


def tree_structure(tree: Any, is_leaf: IsLeaf = None) -> TreeDef:
    """The structure of `tree`, its leaves left out."""
    return flatten(tree, _is_leaf("tree_structure", is_leaf))[1]


def tree_unflatten(treedef: TreeDef, leaves: Iterable[Any]) -> Any:
    """The pytree of structure `treedef` holding `leaves`, left to right."""
    _check_treedef("tree_unflatten", treedef)
    values = _listed("tree_unflatten", "leaves", leaves)
    try:
        return unflatten(treedef, values)
    except ShaxError as error:
        raise at(type(error)(f"tree_unflatten: {error}"), current_source()) from None


def tree_map(f: Callable[..., Any], tree: Any, *rest: Any, is_leaf: IsLeaf = None) -> Any:
    """`f` of each leaf of `tree` and the corresponding subtrees of `rest`, in `tree`'s structure."""
    _check_function("tree_map", "f", f)
    leaves, treedef = flatten(tree, _is_leaf("tree_map", is_leaf))
    others = [flatten_up_to("tree_map", treedef, r, f"tree {k + 1}") for k, r in enumerate(rest)]
    return unflatten(treedef, [f(*xs) for xs in zip(leaves, *others)])


def tree_map_with_path(f: Callable[..., Any], tree: Any, *rest: Any, is_leaf: IsLeaf = None) -> Any:
    """`f(key_path, leaf, *others)` for each leaf of `tree`, in `tree`'s structure."""
    _check_function("tree_map_with_path", "f", f)
    leaves, treedef = flatten(tree, _is_leaf("tree_map_with_path", is_leaf))
    others = [flatten_up_to("tree_map_with_path", treedef, r, f"tree {k + 1}") for k, r in enumerate(rest)]
    return unflatten(treedef, [f(*xs) for xs in zip(leaf_key_paths(treedef), leaves, *others)])


def tree_flatten_with_path(tree: Any, is_leaf: IsLeaf = None) -> tuple[list[tuple[Any, Any]], TreeDef]:
    """([(key path, leaf), ...], structure): where each leaf sits, as JAX's key paths."""
    leaves, treedef = flatten(tree, _is_leaf("tree_flatten_with_path", is_leaf))
    return list(zip(leaf_key_paths(treedef), leaves)), treedef


def tree_leaves_with_path(tree: Any, is_leaf: IsLeaf = None) -> list[tuple[Any, Any]]:
    """[(key path, leaf), ...] of `tree`."""
    leaves, treedef = flatten(tree, _is_leaf("tree_leaves_with_path", is_leaf))
    return list(zip(leaf_key_paths(treedef), leaves))


def tree_reduce(
    function: Callable[[Any, Any], Any], tree: Any, initializer: Any = _MISSING, is_leaf: IsLeaf = None
) -> Any:
    """`functools.reduce(function, leaves, initializer)` over `tree`'s leaves."""
    _check_function("tree_reduce", "function", function)
    leaves = flatten(tree, _is_leaf("tree_reduce", is_leaf))[0]
    if initializer is not _MISSING:
        return functools.reduce(function, leaves, initializer)
    if not leaves:
        message = "tree_reduce: the tree has no leaves and no initializer was given (as functools.reduce)"
        raise at(ShaxValueError(message), current_source())
    return functools.reduce(function, leaves)


def tree_all(tree: Any, *, is_leaf: IsLeaf = None) -> bool:
    """Whether every leaf of `tree` is true (an empty tree's are)."""
    for leaf in flatten(tree, _is_leaf("tree_all", is_leaf))[0]:
        try:
            if not leaf:
                return False
        except ValueError:  # an array of several elements has no one truth value
            message = f"tree_all: a leaf of shape {getattr(leaf, 'shape', '?')} is neither true nor false"
            raise at(ShaxValueError(message), current_source()) from None
    return True


def tree_transpose(outer_treedef: TreeDef, inner_treedef: TreeDef | None, pytree_to_transpose: Any) -> Any:
    """A tree of structure outer∘inner turned into one of inner∘outer (`[(1, 2), (3, 4)]`
    with outer `[*, *]` and inner `(*, *)` to `([1, 3], [2, 4])`); inner None: the first's."""
    _check_treedef("tree_transpose", outer_treedef)
    inners = flatten_up_to("tree_transpose", outer_treedef, pytree_to_transpose, "pytree_to_transpose")
    if inner_treedef is None:
        inner_treedef = flatten(inners[0])[1] if inners else LEAF
    _check_treedef("tree_transpose", inner_treedef)
    rows = [flatten_up_to("tree_transpose", inner_treedef, v, f"the outer leaf {k}") for k, v in enumerate(inners)]
    columns = list(zip(*rows)) if rows else [() for _ in range(inner_treedef.num_leaves)]
    return unflatten(inner_treedef, [unflatten(outer_treedef, list(column)) for column in columns])


def flatten_up_to(what: str, prefix: TreeDef, tree: Any, label: str) -> list[Any]:
    """The subtrees of `tree` at the leaves of `prefix` (its structure down to them), or a
    `ShaxValueError` naming `what`, `label` and the key path where the two part."""
    found: list[Any] = []
    todo: list[tuple[TreeDef, Any, tuple[KeyEntry, ...]]] = [(prefix, tree, ())]
    while todo:
        node, value, path = todo.pop()
        if node.node_type is None:
            found.append(value)
            continue
        cls = type(value)
        dicts = (dict, OrderedDict, defaultdict)
        if cls is not node.node_type and not (node.kind == "dict" and cls in dicts):
            raise _parted(what, label, path, _shown(node), f"a {cls.__name__}")
        if node.kind == "dict":
            if set(value) != set(node.keys):
                raise _parted(what, label, path, _shown(node), f"a dict with keys {list(value)}")
            children: list[Any] = [value[k] for k in node.keys]
        else:
            children = list(node_parts(value, cls)[0])
            aux = node_parts(value, cls)[2] if node.kind == "custom" else None
            if len(children) != len(node.children) or (node.kind == "custom" and not same_aux(aux, node.aux)):
                shown = f"a {cls.__name__} of {len(children)}" + (f" with aux {aux!r}" if node.kind == "custom" else "")
                raise _parted(what, label, path, _shown(node), shown)
        steps = key_steps(node)
        todo.extend((c, v, (*path, s)) for c, v, s in reversed(list(zip(node.children, children, steps))))
    return found


def _shown(node: TreeDef) -> str:
    if node.kind == "dict":
        return f"a dict with keys {list(node.keys)}"
    if node.kind == "custom":
        return f"a {node.node_type.__name__} of {len(node.children)} with aux {node.aux!r}"  # type: ignore[union-attr]
    return "None" if node.kind == "none" else f"a {node.node_type.__name__} of {len(node.children)}"  # type: ignore[union-attr]


def _parted(what: str, label: str, path: tuple[KeyEntry, ...], expected: str, got: str) -> ShaxError:
    where = keystr(path) or "the root"
    message = f"{what}: {label} does not have the first tree's structure: at {where} the first has {expected}, {label} "
    message += got
    return at(ShaxValueError(message), current_source())


# Registration ------------------------------------------------------------------------------


def register_pytree_node(
    nodetype: type,
    flatten_func: Callable[[Any], tuple[Iterable[Any], Any]],
    unflatten_func: Callable[[Any, Iterable[Any]], Any],
    flatten_with_keys_func: Callable[..., Any] | None = None,
) -> None:
    """Make `nodetype` a node: `flatten_func(x) -> (children, aux_data)`,
    `unflatten_func(aux_data, children) -> x` (aux_data hashable: it is part of the structure)."""
    if flatten_with_keys_func is not None:
        message = "register_pytree_node: flatten_with_keys_func is not supported (children are named by flat index)"
        raise at(ShaxValueError(message), current_source())
    _register("register_pytree_node", nodetype, flatten_func, unflatten_func, None)


def register_pytree_node_class(cls: T) -> T:
    """A class decorator: the class's `tree_flatten(self) -> (children, aux_data)` and
    classmethod `tree_unflatten(aux_data, children)` make it a node."""
    for method in ("tree_flatten", "tree_unflatten"):
        if not callable(getattr(cls, method, None)):
            message = f"register_pytree_node_class: {getattr(cls, '__name__', cls)!r} has no method {method}"
            raise at(ShaxTypeError(message), current_source())
    unflatten_func = cls.tree_unflatten  # type: ignore[attr-defined]  # checked above
    _register("register_pytree_node_class", cls, lambda x: x.tree_flatten(), unflatten_func, None)
    return cls


def register_dataclass(
    nodetype: T,
    data_fields: Iterable[str] | None = None,
    meta_fields: Iterable[str] | None = None,
    drop_fields: Iterable[str] = (),
) -> T:
    """Make the dataclass `nodetype` a node whose children are its `data_fields` and whose
    `meta_fields` are static (part of the structure); both None: the fields marked
    `field(metadata=dict(static=True))` are meta, the others data. Returns `nodetype`, so
    it decorates (`@register_dataclass`, or through `functools.partial` with fields)."""
    what = "register_dataclass"
    if not isinstance(nodetype, type):
        raise at(ShaxTypeError(f"{what}: expects a class, got {nodetype!r}"), current_source())
    if (data_fields is None) != (meta_fields is None):
        raise at(ShaxValueError(f"{what}: give both data_fields and meta_fields, or neither"), current_source())
    dropped = _names(what, "drop_fields", drop_fields)
    if data_fields is None or meta_fields is None:
        if not dataclasses.is_dataclass(nodetype):
            message = f"{what}: {nodetype.__name__} is not a dataclass; give data_fields and meta_fields"
            raise at(ShaxTypeError(message), current_source())
        fields = [f for f in dataclasses.fields(nodetype) if f.init and f.name not in dropped]
        data = tuple(f.name for f in fields if not f.metadata.get("static", False))
        meta = tuple(f.name for f in fields if f.metadata.get("static", False))
    else:
        data, meta = _names(what, "data_fields", data_fields), _names(what, "meta_fields", meta_fields)
        if dataclasses.is_dataclass(nodetype):
            expected = {f.name for f in dataclasses.fields(nodetype) if f.init} - set(dropped)
            if set(data) | set(meta) != expected or set(data) & set(meta):
                message = (
                    f"{what}: data_fields {list(data)} and meta_fields {list(meta)} must name each of "
                    f"{nodetype.__name__}'s init fields {sorted(expected)} once"
                )
                raise at(ShaxValueError(message), current_source())

    def flatten_func(x: Any) -> tuple[tuple[Any, ...], tuple[Any, ...]]:
        return tuple(getattr(x, f) for f in data), tuple(getattr(x, f) for f in meta)

    def unflatten_func(aux: tuple[Any, ...], children: Iterable[Any]) -> Any:
        return nodetype(**dict(zip(data, children)), **dict(zip(meta, aux)))

    _register(what, nodetype, flatten_func, unflatten_func, data)
    return nodetype


def _register(what: str, nodetype: Any, flatten_func: Any, unflatten_func: Any, fields: tuple[str, ...] | None) -> None:
    if not isinstance(nodetype, type):
        raise at(ShaxTypeError(f"{what}: expects a class, got {nodetype!r}"), current_source())
    _check_function(what, "flatten_func", flatten_func)
    _check_function(what, "unflatten_func", unflatten_func)
    builtin = nodetype in (tuple, list, dict, OrderedDict, defaultdict, type(None))
    if builtin or nodetype in REGISTRY or (issubclass(nodetype, tuple) and hasattr(nodetype, "_fields")):
        message = f"{what}: {nodetype.__name__} is a pytree node already (each class is registered once)"
        raise at(ShaxValueError(message), current_source())
    REGISTRY[nodetype] = Registered(flatten_func, unflatten_func, fields)


class Partial(functools.partial):
    """`functools.partial` as a pytree: its arguments are children, its function is static,
    so a function with bound arrays passes through transforms (JAX's `Partial`)."""

    def __new__(cls, func: Any, *args: Any, **keywords: Any) -> Partial:
        _check_function("Partial", "func", func)
        return super().__new__(cls, func, *args, **keywords)


def _partial_parts(p: Partial) -> tuple[tuple[Any, ...], Any]:
    return (p.args, p.keywords), p.func


def _partial_of(func: Any, children: Iterable[Any]) -> Partial:
    args, keywords = children
    return Partial(func, *args, **keywords)


REGISTRY[Partial] = Registered(_partial_parts, _partial_of)


# Argument checks ------------------------------------------------------------------------


def _is_leaf(what: str, is_leaf: Any) -> IsLeaf:
    if is_leaf is not None and not callable(is_leaf):
        raise at(ShaxTypeError(f"{what}: is_leaf must be a function or None, got {is_leaf!r}"), current_source())
    return is_leaf


def _check_function(what: str, name: str, f: Any) -> None:
    if not callable(f):
        raise at(ShaxTypeError(f"{what}: {name} must be a function, got {type(f).__name__} {f!r}"), current_source())


def _check_treedef(what: str, treedef: Any) -> None:
    if not isinstance(treedef, TreeDef):
        message = f"{what}: expects a tree structure (from tree_structure or tree_flatten), got {treedef!r}"
        raise at(ShaxTypeError(message), current_source())


def _listed(what: str, name: str, values: Any) -> list[Any]:
    try:
        return list(values)
    except TypeError:
        raise at(ShaxTypeError(f"{what}: {name} must be iterable, got {values!r}"), current_source()) from None


def _names(what: str, name: str, fields: Any) -> tuple[str, ...]:
    names = tuple(_listed(what, name, fields))
    if isinstance(fields, str) or not all(isinstance(n, str) for n in names):
        raise at(ShaxTypeError(f"{what}: {name} must be field names (strings), got {fields!r}"), current_source())
    return names

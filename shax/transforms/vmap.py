"""`shax.vmap(f, in_axes=0, out_axes=0)`: f over a batch, as one rewrite of its program
(`shax.stages.batch`), not a loop over the examples.

    vmap(f)(xs)                        f on each xs[i], stacked along axis 0
    vmap(f, in_axes=(None, 0))(w, xs)  w shared by every example
    vmap(f, axis=1)                    the language spec's spelling: in and out at axis 1

`in_axes` is an int or None for every argument, or a tuple with one entry per
argument, each an int, None, or a pytree of them matching that argument (a prefix: an
int covers a whole subtree; an instance of a registered class, its data fields axes and
its meta fields the argument's), nested at most `MAX_AXES_DEPTH` containers deep. `out_axes`
is the same for f's result. Rank-0 values
(Python numbers, numpy scalars) have no axis to map over: they are shared. f is traced
once at the per-example types (cached like every transform), then batched and cleaned.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Sequence
from typing import Any

import attrs
import numpy as np

from shax import passes, stages
from shax.core.errors import ShaxError, ShaxValueError, at, reworded
from shax.core.location import current_source
from shax.core.pytree import REGISTRY, TreeDef, node_parts, same_aux, sorted_keys, unflatten
from shax.core.types import TensorType
from shax.transforms.arguments import argument_labels
from shax.transforms.program import Program
from shax.transforms.staging import stage
from shax.transforms.transformed import Transformed

Axes = Any  # an int, None, or a pytree prefix of them (see the module docstring)

# in_axes and out_axes are read by recursion, so their nesting is bounded well below
# Python's recursion limit (the arguments themselves may nest deeper: an int covers a subtree).
MAX_AXES_DEPTH = 200


class Vmap(Transformed):
    kind = "vmap"

    def __init__(self, fn: Callable[..., Any], in_axes: Axes = 0, out_axes: Axes = 0) -> None:
        super().__init__(fn)
        self.in_axes = _frozen("in_axes", in_axes)
        self.out_axes = _frozen("out_axes", out_axes)

    def key(self) -> Hashable:
        return (self.in_axes, self.out_axes)

    def build(self, in_tree: TreeDef, types: tuple[TensorType, ...]) -> _BuiltVmap:
        labels = argument_labels(in_tree)
        axes = _leaf_axes("in_axes", self.in_axes, in_tree, top_level=True)
        axes = [None if a is None or t.rank == 0 else _normalized(n, a, t) for a, t, n in zip(axes, types, labels)]
        size = _batch_size(axes, types, labels)
        example_types = tuple(t if a is None else _unbatched(t, a) for a, t in zip(axes, types))
        staging = stage(self.fn, in_tree, example_types)
        out_axes = _leaf_axes("out_axes", self.out_axes, staging.out_tree, top_level=False)
        batched = stages.batch(staging.typed, [*axes, *[None] * len(staging.captured)], size, out_axes)
        return _BuiltVmap(Program(passes.cleanup(batched)), staging.captured, staging.out_tree)


@attrs.frozen
class _BuiltVmap:
    program: Program  # (batched argument leaves, captured) -> batched output leaves
    captured: tuple[Any, ...]
    out_tree: TreeDef

    def call(self, leaves: Sequence[Any]) -> Any:
        return unflatten(self.out_tree, self.program([*leaves, *self.captured]))


def vmap(fn: Callable[..., Any], in_axes: Axes = 0, out_axes: Axes = 0, *, axis: int | None = None) -> Vmap:
    """`fn` mapped over a batch axis of its arguments (`in_axes`), its results stacked
    along `out_axes`; `axis=k` (the language spec's keyword) sets both to k."""
    if axis is not None:
        if (in_axes, out_axes) != (0, 0):
            raise at(ShaxValueError("vmap: give either axis= or in_axes/out_axes, not both"), current_source())
        in_axes = out_axes = axis
    return Vmap(fn, in_axes, out_axes)


def _frozen(what: str, axes: Axes) -> Hashable:
    """`axes` as a hashable value of the same shape: lists become tuples, dicts sorted items."""
    _check_depth(what, axes)
    return _frozen_within(what, axes)


def _check_depth(what: str, axes: Axes) -> None:
    """Nothing if `axes` nests at most MAX_AXES_DEPTH containers deep (walked by a loop)."""
    todo = [(axes, 0)]
    while todo:
        value, depth = todo.pop()
        if isinstance(value, (tuple, list, dict)) or type(value) in REGISTRY:
            if depth >= MAX_AXES_DEPTH:
                message = (
                    f"vmap: {what} nests containers more than {MAX_AXES_DEPTH} deep; give one int or None "
                    "for a whole subtree instead"
                )
                raise at(ShaxValueError(message), current_source())
            children = node_parts(value, type(value))[0] if type(value) in REGISTRY else value
            todo.extend((child, depth + 1) for child in (value.values() if isinstance(value, dict) else children))


def _frozen_within(what: str, axes: Axes) -> Hashable:
    if axes is None:
        return None
    if isinstance(axes, (int, np.integer)) and not isinstance(axes, bool):
        return int(axes)
    if type(axes) in REGISTRY:
        children, _, aux = node_parts(axes, type(axes))
        try:
            return _Node(type(axes), aux, tuple(_frozen_within(what, a) for a in children))
        except TypeError as error:  # aux data that cannot be hashed
            raise at(ShaxValueError(f"vmap: {what}: {type(axes).__name__}: {error}"), current_source()) from None
    if isinstance(axes, (tuple, list)):
        return tuple(_frozen_within(what, a) for a in axes)
    if isinstance(axes, dict):
        try:
            keys = sorted_keys(axes)
        except ShaxError as error:
            raise reworded(error, f"vmap: {what}: {error}") from None
        return _Dict(tuple((k, _frozen_within(what, axes[k])) for k in keys))
    raise at(
        ShaxValueError(f"vmap: {what} entries must be ints, None, or pytrees of them, got {axes!r}"), current_source()
    )


@attrs.frozen
class _Dict:
    """A dict of axes, frozen (told apart from a tuple of pairs)."""

    items: tuple[tuple[Any, Hashable], ...]


@attrs.frozen
class _Node:
    """An instance of a registered class holding axes, frozen: its class, aux data and children's axes."""

    node_type: type
    aux: Any
    children: tuple[Hashable, ...]


def _leaf_axes(what: str, axes: Hashable, tree: TreeDef, top_level: bool) -> list[int | None]:
    """One axis per leaf of `tree`, from `axes`, a prefix of it. At the top level of
    in_axes, a tuple has one entry per argument (the arguments are a tuple)."""
    if axes is None or isinstance(axes, int):
        return [axes] * tree.num_leaves
    if tree.kind == "leaf":
        message = f"vmap: {what} gives {_show(axes)} where the {_role(what, top_level)} is a single array"
        raise at(ShaxValueError(message), current_source())
    if isinstance(axes, _Dict):
        by_key = dict(axes.items)  # matched by key: an OrderedDict argument keeps its own order
        if tree.kind != "dict" or by_key.keys() != set(tree.keys):
            role = _role(what, top_level)
            message = f"vmap: {what} has a dict with keys {list(by_key)} where the {role} is a {_kind(tree)}"
            raise at(ShaxValueError(message), current_source())
        children = [by_key[k] for k in tree.keys]
    elif isinstance(axes, _Node):
        if (
            tree.node_type is not axes.node_type
            or len(tree.children) != len(axes.children)
            or not same_aux(tree.aux, axes.aux)
        ):
            message = f"vmap: {what} has {_show(axes)} where the {_role(what, top_level)} is a {_kind(tree)}" + (
                f" with aux data {tree.aux!r}" if tree.kind == "custom" else ""
            )
            raise at(ShaxValueError(message), current_source())
        children = list(axes.children)
    else:
        assert isinstance(axes, tuple), axes  # `_frozen` leaves ints, None, `_Dict`s and tuples
        if tree.kind in ("dict", "custom") or len(axes) != len(tree.children):
            noun = "argument" if top_level else "entry"
            message = (
                f"vmap: {what}={_show(axes)} has {len(axes)} entries, but the {_role(what, top_level)} "
                f"{'are' if top_level else 'is'} a {_kind(tree)} with {len(tree.children)} {noun}(s)"
            )
            raise at(ShaxValueError(message), current_source())
        children = list(axes)
    return [a for child, sub in zip(children, tree.children) for a in _leaf_axes(what, child, sub, False)]


def _role(what: str, top_level: bool) -> str:
    if top_level:
        return "arguments"
    return "argument" if what == "in_axes" else "result"


def _kind(tree: TreeDef) -> str:
    if tree.kind == "custom":
        return tree.node_type.__name__  # type: ignore[union-attr]
    return {"dict": "dict", "none": "None", "tuple": "tuple", "list": "list", "leaf": "single array"}[tree.kind]


def _show(axes: Hashable) -> str:
    if isinstance(axes, _Node):
        shown = ", ".join(_show(a) for a in axes.children)
        return f"{axes.node_type.__name__}[{axes.aux}]({shown})"
    if isinstance(axes, _Dict):
        return "{" + ", ".join(f"{k!r}: {_show(v)}" for k, v in axes.items) + "}"
    if isinstance(axes, tuple):
        return "(" + ", ".join(_show(a) for a in axes) + ("," if len(axes) == 1 else "") + ")"
    return repr(axes)


def _normalized(label: str, axis: int, t: TensorType) -> int:
    if not -t.rank <= axis < t.rank:
        message = f"vmap: in_axes maps {label} :: {t} along axis {axis}, but it has only {t.rank} axes"
        raise at(ShaxValueError(message), current_source())
    return axis % t.rank


def _unbatched(t: TensorType, axis: int) -> TensorType:
    return t.with_shape(t.shape[:axis] + t.shape[axis + 1 :])


def _batch_size(axes: Sequence[int | None], types: Sequence[TensorType], labels: Sequence[str]) -> int:
    sizes = {k: t.shape[a] for k, (a, t) in enumerate(zip(axes, types)) if a is not None}
    if not sizes:
        message = "vmap: no argument is mapped: in_axes gives every argument None (or they are all scalars)"
        raise at(ShaxValueError(message), current_source())
    if len(set(sizes.values())) > 1:
        shown = ", ".join(f"{labels[k]} :: {types[k]} has {n} at axis {axes[k]}" for k, n in sizes.items())
        raise at(ShaxValueError(f"vmap: inconsistent batch sizes: {shown}"), current_source())
    return next(iter(sizes.values()))

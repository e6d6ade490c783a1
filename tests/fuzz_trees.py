"""The fuzz's drivers (tests/test_fuzz.py) for `shax.tree_util`, `shax.tree` and the
optax-shaped half of `shax.optimizers`: a good call of each, whose arguments the fuzz
replaces with bad values."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any

import numpy as np
from fuzzing import XS, Call, X, Y, pair

import shax.optimizers as so
import shax.optimizers.optax as optax
import shax.tree_util as tu


def first(*xs: Any) -> Any:
    return xs[0]


def keep(a: Any, b: Any) -> Any:
    return a


TREE = {"a": X, "b": (Y, None)}
TREES = {
    "tree_map": Call(tu.tree_map, (first, TREE, TREE), {"is_leaf": None}, variadic=True),
    "tree_map_with_path": Call(tu.tree_map_with_path, (first, TREE, TREE), {"is_leaf": None}, variadic=True),
    "tree_leaves": Call(tu.tree_leaves, (TREE,), {"is_leaf": None}),
    "tree_structure": Call(tu.tree_structure, (TREE,), {"is_leaf": None}),
    "tree_flatten": Call(tu.tree_flatten, (TREE,), {"is_leaf": None}),
    "tree_flatten_with_path": Call(tu.tree_flatten_with_path, (TREE,), {"is_leaf": None}),
    "tree_leaves_with_path": Call(tu.tree_leaves_with_path, (TREE,), {"is_leaf": None}),
    "tree_unflatten": Call(tu.tree_unflatten, (tu.tree_structure(TREE), [X, Y])),
    "tree_reduce": Call(tu.tree_reduce, (keep, TREE, X), {"is_leaf": None}),
    "tree_all": Call(tu.tree_all, ([1, (True,)],), {"is_leaf": None}),
    "tree_transpose": Call(tu.tree_transpose, (tu.tree_structure([0, 0]), tu.tree_structure((0, 0)), [(X, Y), (Y, X)])),
}
TREE_NAMES = {name.removeprefix("tree_"): call for name, call in TREES.items()}


def registered(flatten_func: Any, unflatten_func: Any) -> Any:
    """A class of its own registered with these functions, one of its values flattened and rebuilt."""
    cls = type("Fresh", (), {})
    tu.register_pytree_node(cls, flatten_func, unflatten_func)
    leaves, treedef = tu.tree_flatten(cls())
    return tu.tree_unflatten(treedef, leaves)


def registered_class(flatten_method: Any, unflatten_method: Any) -> Any:
    cls = type("Fresh", (), {"tree_flatten": flatten_method, "tree_unflatten": classmethod(unflatten_method)})
    tu.register_pytree_node_class(cls)
    return tu.tree_leaves(cls())


def registered_dataclass(data_fields: Any, meta_fields: Any, drop_fields: Any) -> Any:
    cls = dataclasses.make_dataclass("Fresh", ["w", "n"])
    tu.register_dataclass(cls, data_fields, meta_fields, drop_fields)
    return tu.tree_map(lambda v: v, cls(X, 2))


def no_children(x: Any) -> Any:
    return (), "aux"


def made(aux: Any, children: Any) -> Any:
    return None


TREE_UTIL = {
    **TREES,
    "register_pytree_node": Call(registered, (no_children, made)),
    "register_pytree_node_class": Call(registered_class, (no_children, made)),
    "register_dataclass": Call(registered_dataclass, (["w"], ["n"], ())),
    "Partial": Call(tu.Partial, (pair, X), variadic=True),
    "keystr": Call(tu.keystr, ((tu.DictKey("a"), tu.SequenceKey(0)),), {"simple": True, "separator": "/"}),
    "SequenceKey": Call(tu.SequenceKey, (0,)),
    "DictKey": Call(tu.DictKey, ("a",)),
    "GetAttrKey": Call(tu.GetAttrKey, ("w",)),
    "FlattenedIndexKey": Call(tu.FlattenedIndexKey, (0,)),
}

# Optimizers: each built from its hyperparameters and run for a step on PARAMS.
PARAMS = {"w": X, "b": (Y,)}
GRADS = {"w": Y, "b": (X,)}


def one_step(make: Callable[..., Any]) -> Callable[..., Any]:
    def step(*args: Any, **kwargs: Any) -> Any:
        tx = make(*args, **kwargs)
        updates, state = tx.update(GRADS, tx.init(PARAMS), PARAMS)
        return so.apply_updates(PARAMS, updates), state

    return step


def at_steps(make: Callable[..., Any]) -> Callable[..., Any]:
    return lambda *args, **kwargs: [make(*args, **kwargs)(np.int32(k)) for k in (0, 3)]


def updated(tx: Any) -> Callable[..., Any]:
    return lambda grads, state, params: tx.update(grads, state, params)


TRANSFORMS: dict[str, tuple[tuple[Any, ...], dict[str, Any]]] = {
    "sgd": ((0.1,), {"momentum": 0.9, "nesterov": True}),
    "adamw": ((0.1,), {"b1": 0.8, "eps_root": 0.0, "mu_dtype": np.float32, "weight_decay": 0.1, "nesterov": False}),
    "rmsprop": ((0.1,), {"decay": 0.8, "eps_in_sqrt": False, "centered": True, "momentum": 0.5}),
    "adagrad": ((0.1,), {"initial_accumulator_value": 0.2, "eps": 1e-6}),
    "scale": ((-0.5,), {}),
    "scale_by_adam": ((0.8, 0.9), {"eps": 1e-6, "nesterov": True}),
    "scale_by_rms": ((0.8, 1e-6, 0.1), {}),
    "scale_by_stddev": ((0.8, 1e-6, 0.1), {}),
    "scale_by_rss": ((0.2, 1e-6), {}),
    "scale_by_schedule": ((so.constant_schedule(-0.1),), {}),
    "scale_by_learning_rate": ((0.1,), {"flip_sign": True}),
    "trace": ((0.9,), {"nesterov": True}),
    "add_decayed_weights": ((0.1,), {}),
    "clip_by_global_norm": ((1.0,), {}),
    "identity": ((), {}),
}
SCHEDULES: dict[str, tuple[tuple[Any, ...], dict[str, Any]]] = {
    "constant_schedule": ((0.1,), {}),
    "linear_schedule": ((1.0, 0.0, 4), {"transition_begin": 1}),
    "polynomial_schedule": ((1.0, 0.0, 2.0, 4), {"transition_begin": 1}),
    "exponential_decay": ((0.2, 2, 0.5), {"transition_begin": 1, "staircase": True, "end_value": 0.05}),
    "cosine_decay_schedule": ((1.0, 5), {"alpha": 0.1, "exponent": 2.0}),
    "warmup_cosine_decay_schedule": ((0.0, 0.1, 2, 6), {"end_value": 0.01, "exponent": 1.0}),
    "join_schedules": (([so.constant_schedule(1.0), so.linear_schedule(1.0, 0.0, 3)], [2]), {}),
}
ADAM = optax.adam(0.1)
OPTIMIZERS_OPTAX = {
    **{name: Call(one_step(getattr(so, name)), args, kwargs) for name, (args, kwargs) in TRANSFORMS.items()},
    **{name: Call(at_steps(getattr(so, name)), args, kwargs) for name, (args, kwargs) in SCHEDULES.items()},
    "chain": Call(one_step(so.chain), (so.clip_by_global_norm(1.0), so.sgd(0.1)), variadic=True),
    "apply_updates": Call(so.apply_updates, (PARAMS, GRADS)),
    "global_norm": Call(so.global_norm, (GRADS,)),
    "GradientTransformation": Call(so.GradientTransformation, (ADAM.init, ADAM.update)),
    "optax.adam": Call(one_step(optax.adam), (0.1, 0.8, 0.9, 1e-6), {"nesterov": True}),
    "optax.adam (update)": Call(updated(ADAM), (GRADS, ADAM.init(PARAMS), PARAMS)),
    "adamw (update)": Call(updated(so.adamw(0.1)), (GRADS, so.adamw(0.1).init(PARAMS), PARAMS)),
    "schedule (step)": Call(so.warmup_cosine_decay_schedule(0.0, 0.1, 2, 6), (np.int32(3),)),
    "join_schedules (step)": Call(SCHEDULES["join_schedules"][0][0][1], (XS.astype(np.int32),)),
}
NOT_CALLED_IN_OPTIMIZERS = {
    f"optimizers.{name}": "a state, made by init"
    for name in (
        "EmptyState", "ScaleByAdamState", "ScaleByRStdDevState", "ScaleByRmsState", "ScaleByRssState",
        "ScaleByScheduleState", "TraceState",
    )
} | {
    "optimizers.History": "made by the loops, with history=True",
    "tree_util.PyTreeDef": "made by tree_structure",
}  # fmt: skip

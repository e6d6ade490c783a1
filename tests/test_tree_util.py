"""shax.tree_util and shax.tree: JAX's pytree tools (expected values are JAX 0.10's), and
registered classes and dataclasses through every transform."""

from __future__ import annotations

import dataclasses
import functools
from typing import Any

import numpy as np
import pytest
import typeguard

import shax
import shax.tree_util as tu
from shax import ShaxTypeError, ShaxValueError


@functools.partial(tu.register_dataclass, data_fields=["w", "b"], meta_fields=["act"])
@dataclasses.dataclass
class Layer:
    w: Any
    b: Any
    act: str


@tu.register_dataclass
@dataclasses.dataclass
class Inferred:
    x: Any
    n: int = dataclasses.field(default=2, metadata={"static": True})


class Pair:
    def __init__(self, a: Any, b: Any) -> None:
        self.a, self.b = a, b


tu.register_pytree_node(Pair, lambda p: ((p.a, p.b), "aux"), lambda aux, children: Pair(*children))


@tu.register_pytree_node_class
class Box:
    def __init__(self, value: Any, tag: str) -> None:
        self.value, self.tag = value, tag

    def tree_flatten(self) -> tuple[tuple[Any, ...], str]:
        return (self.value,), self.tag

    @classmethod
    def tree_unflatten(cls, tag: str, children: Any) -> Box:
        return cls(children[0], tag)


W = np.arange(6, dtype=np.float32).reshape(3, 2) / 4
B = np.array([0.5, -1.0], np.float32)
X = np.arange(6, dtype=np.float32).reshape(2, 3) - 2


def test_flatten_and_unflatten_as_jax() -> None:
    leaves, treedef = tu.tree_flatten([None, (1,), {"b": 2, "a": Layer(3, 4, "relu")}])
    assert leaves == [1, 3, 4, 2]
    assert str(treedef) == "[None, (*,), {'a': CustomNode(Layer[('relu',)], [*, *]), 'b': *}]"
    rebuilt = tu.tree_unflatten(treedef, [10, 30, 40, 20])
    assert rebuilt[:2] == [None, (10,)] and rebuilt[2]["a"] == Layer(30, 40, "relu") and rebuilt[2]["b"] == 20
    assert treedef.unflatten([1, 2, 3, 4])[2]["a"].w == 2
    assert str(tu.tree_structure(Pair(1, [2, 3]))) == "CustomNode(Pair[aux], [*, [*, *]])"
    assert tu.tree_leaves(Inferred(np.float32(1.5))) == [np.float32(1.5)]
    assert tu.tree_structure(Inferred(1.0, 3)) != tu.tree_structure(Inferred(1.0, 2))  # meta is structure
    assert tu.tree_leaves([None, 1]) == [1]  # None is a node with no children
    assert tu.tree_leaves([None, 1], is_leaf=lambda x: x is None) == [None, 1]


def test_tree_map_of_several_trees_and_prefixes() -> None:
    assert tu.tree_map(lambda x, y: (x, y), [1, 2], [(3, 4), {"a": 5}]) == [(1, (3, 4)), (2, {"a": 5})]
    summed = tu.tree_map(lambda x, y: x + y, Layer(1, 2, "id"), Layer(10, 20, "id"))
    assert summed == Layer(11, 22, "id")
    assert tu.tree_map(lambda x: x * 2, Box(3, "t")).value == 6
    with pytest.raises(
        ShaxValueError, match=r"tree_map: tree 1 .* at the root the first has a list of 2, tree 1 a tuple"
    ):
        tu.tree_map(lambda x, y: x, [1, 2], (1, 2))
    with pytest.raises(ShaxValueError, match=r"at \[1\] the first has a dict with keys \['b'\]"):
        tu.tree_map(lambda x, y: x, [1, {"b": 2}], [1, {"a": 2}])
    with pytest.raises(ShaxValueError, match=r"aux \('relu',\)"):  # meta fields must agree
        tu.tree_map(lambda x, y: x, Layer(1, 2, "id"), Layer(1, 2, "relu"))
    with pytest.raises(ShaxTypeError, match="tree_map: f must be a function"), typeguard.suppress_type_checks():
        tu.tree_map(3, [1])


def test_reduce_all_transpose_and_paths() -> None:
    assert tu.tree_reduce(lambda a, b: a + b, [1, 2, 3], 10) == 16
    assert tu.tree_reduce(lambda a, b: a * b, {"a": 2, "b": (3, 4)}) == 24
    with pytest.raises(ShaxValueError, match="tree_reduce: the tree has no leaves"):
        tu.tree_reduce(lambda a, b: a, [])
    assert tu.tree_all([1, True, (2,)]) is True and tu.tree_all([]) is True and tu.tree_all([1, 0]) is False
    with pytest.raises(ShaxValueError, match="tree_all"):
        tu.tree_all([np.ones(2)])
    outer, inner = tu.tree_structure([0, 0]), tu.tree_structure((0, 0))
    assert tu.tree_transpose(outer, inner, [(1, 2), (3, 4)]) == ([1, 3], [2, 4])
    assert tu.tree_transpose(outer, None, [(1, 2), (3, 4)]) == ([1, 3], [2, 4])
    paths = [tu.keystr(p) for p, _ in tu.tree_flatten_with_path([{"w": 1}, Layer(2, 3, "id"), Pair(4, (5,))])[0]]
    assert paths == ["[0]['w']", "[1].w", "[1].b", "[2][<flat index 0>]", "[2][<flat index 1>][0]"]
    path = tu.tree_leaves_with_path({"a": [7]})[0][0]
    assert path == (tu.DictKey("a"), tu.SequenceKey(0)) and repr(path[0]) == "DictKey(key='a')"
    assert tu.keystr(path, simple=True, separator="/") == "a/0"
    assert tu.tree_map_with_path(lambda p, x: tu.keystr(p), {"a": 1}) == {"a": "['a']"}


def test_the_short_names() -> None:
    tree = {"a": 1, "b": (2, None)}
    assert shax.tree.leaves(tree) == [1, 2] and shax.tree.map(lambda x: -x, tree) == {"a": -1, "b": (-2, None)}
    leaves, treedef = shax.tree.flatten(tree)
    assert shax.tree.unflatten(treedef, leaves) == tree and shax.tree.structure(tree) == treedef
    assert shax.tree.reduce(max, tree) == 2 and shax.tree.all(tree)
    assert shax.tree.transpose(shax.tree.structure([0, 0]), None, [(1, 2), (3, 4)]) == ([1, 3], [2, 4])


def test_partial_is_a_pytree() -> None:
    add = tu.Partial(lambda a, b: a + b, 1.0)
    assert tu.tree_leaves(add) == [1.0] and add(2.0) == 3.0
    doubled = tu.tree_map(lambda x: 2 * x, add)
    assert isinstance(doubled, tu.Partial) and doubled(2.0) == 4.0


def loss(p: Layer, x: Any) -> Any:
    y = x @ p.w + p.b
    return (shax.nn.relu(y) if p.act == "relu" else y).sum()


def test_grad_of_a_registered_dataclass_is_that_class() -> None:
    g = shax.grad(loss, argnums=0)(Layer(W, B, "relu"), X)
    # relu(y) where y = x @ w + b: rows of x with y > 0 count
    y = X @ W + B
    assert isinstance(g, Layer) and g.act == "relu"
    np.testing.assert_array_equal(g.w, X.T @ (y > 0).astype(np.float32))
    np.testing.assert_array_equal(g.b, (y > 0).sum(0).astype(np.float32))
    box = shax.grad(lambda b: (b.value * b.value).sum())(Box(B, "t"))
    assert isinstance(box, Box) and box.tag == "t"
    np.testing.assert_array_equal(box.value, 2 * B)


def test_jit_keys_its_cache_on_meta_fields() -> None:
    f = shax.jit(loss)
    y = X @ W + B
    assert f(Layer(W, B, "relu"), X) == np.maximum(y, 0).sum()
    assert f(Layer(W, B, "id"), X) == y.sum()  # another meta field: another program, not the cached one
    doubled = shax.jit(lambda p: tu.tree_map(lambda a: 2 * a, p))(Pair(W, B))
    assert isinstance(doubled, Pair)
    np.testing.assert_array_equal(doubled.b, 2 * B)


def test_vmap_axes_may_be_registered_instances() -> None:
    def affine(p: Layer, x: Any) -> Any:
        return x @ p.w + p.b

    bs = np.stack([B, 2 * B, 3 * B])
    out = shax.vmap(affine, in_axes=(Layer(None, 0, "id"), None))(Layer(W, bs, "id"), X[0])
    np.testing.assert_array_equal(out, X[0] @ W + bs)
    with pytest.raises(ShaxValueError, match=r"vmap: in_axes has Layer\[\('relu',\)\]\(None, 0\) where"):
        shax.vmap(affine, in_axes=(Layer(None, 0, "relu"), None))(Layer(W, bs, "id"), X[0])
    with pytest.raises(ShaxValueError, match="vmap: in_axes"):
        shax.vmap(affine, in_axes=((None, 0), None))(Layer(W, bs, "id"), X[0])
    per_example = shax.vmap(shax.grad(loss, argnums=0), in_axes=(None, 0))(Layer(W, B, "id"), X[:, None, :])
    assert isinstance(per_example, Layer)
    np.testing.assert_array_equal(per_example.b, np.ones((2, 2), np.float32))


def test_bad_input_is_a_shax_error() -> None:
    with typeguard.suppress_type_checks():  # shax's own checks, as users meet them

        @dataclasses.dataclass
        class Unregistered:
            w: Any

        with pytest.raises(ShaxTypeError, match="grad: argument 0: .*register_dataclass"):
            shax.grad(lambda p: p.w.sum())(Unregistered(W))
        with pytest.raises(ShaxValueError, match="register_pytree_node: Layer is a pytree node already"):
            tu.register_pytree_node(Layer, lambda x: ((), None), lambda a, c: None)
        with pytest.raises(ShaxValueError, match="register_pytree_node: tuple is a pytree node already"):
            tu.register_pytree_node(tuple, lambda x: ((), None), lambda a, c: None)
        with pytest.raises(ShaxValueError, match="register_dataclass: data_fields .* must name each"):
            tu.register_dataclass(Unregistered, data_fields=[], meta_fields=[])
        with pytest.raises(ShaxValueError, match="give both data_fields and meta_fields"):
            tu.register_dataclass(Unregistered, data_fields=["w"])
        with pytest.raises(ShaxTypeError, match="register_dataclass: .* is not a dataclass"):
            tu.register_dataclass(type("Plain", (), {}))
        with pytest.raises(ShaxTypeError, match="register_pytree_node_class: .* has no method tree_flatten"):
            tu.register_pytree_node_class(type("NoMethods", (), {}))

        class Listy:
            pass

        tu.register_pytree_node(Listy, lambda x: ((), [1]), lambda aux, children: Listy())
        with pytest.raises(ShaxValueError, match="auxiliary data \\[1\\], which cannot be hashed"):
            tu.tree_structure(Listy())
        with pytest.raises(ShaxValueError, match="tree_unflatten: .* holds 2 leaves, but 1 were given"):
            tu.tree_unflatten(tu.tree_structure((1, 2)), [1])
        with pytest.raises(ShaxTypeError, match="tree_unflatten: expects a tree structure"):
            tu.tree_unflatten((1, 2), [1])

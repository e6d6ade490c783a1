"""Pytrees keep their structure, as in JAX: flatten/unflatten round-trip exactly (types
included: a container of one leaf is still a container, a NamedTuple comes back as the
same NamedTuple, None is an empty subtree), dict keys sort (or are a ShaxError when they
cannot be compared), walks are iterative, and every transform gives back the structure
it was given."""

from __future__ import annotations

import re
from collections import OrderedDict, defaultdict, namedtuple
from typing import Any, NamedTuple

import numpy as np
import pytest
from hypothesis import assume, given
from hypothesis import strategies as st

import shax
from shax import f32, f64
from shax.core.pytree import LEAF, flatten, leaf_paths, unflatten
from shax.optimizers import adam, gradient_descent
from typeclasses import reduce_sum, sin

X = np.array([1.0, -2.0, 0.5])
HERE = re.escape(__file__)


class Params(NamedTuple):
    w: Any
    b: Any


Pair = namedtuple("Pair", "first second")


def assert_same(got: Any, expected: Any) -> None:
    """`got` has `expected`'s structure exactly (container types, dict keys, a
    defaultdict's factory, an OrderedDict's order) and its leaves' values."""
    if expected is None or isinstance(expected, (tuple, list, dict)):
        assert type(got) is type(expected), (got, expected)
    if isinstance(expected, (tuple, list)):
        assert len(got) == len(expected)
        for g, e in zip(got, expected):
            assert_same(g, e)
    elif isinstance(expected, dict):
        keys = list(expected) if type(expected) is OrderedDict else sorted(expected)
        assert list(got) == keys
        if type(expected) is defaultdict:
            assert got.default_factory is expected.default_factory
        for k in keys:
            assert_same(got[k], expected[k])
    elif expected is not None:
        np.testing.assert_array_equal(got, expected)


def tree_map(fn: Any, tree: Any) -> Any:
    leaves, tree_def = flatten(tree)
    return unflatten(tree_def, [fn(leaf) for leaf in leaves])


# flatten and unflatten ---------------------------------------------------------------------


@pytest.mark.parametrize(
    "tree",
    [
        {"w": X},
        [X],
        (X,),
        ((), (X, X)),
        ([], {}, (X,)),
        Params(X, [X]),
        Pair({"a": X}, None),
        None,
        (X, None, [None, X]),
        OrderedDict([("b", X), ("a", X * 2)]),
        defaultdict(list, {"b": X, "a": None}),
    ],
    ids=lambda t: repr(flatten(t)[1]),
)
def test_flatten_then_unflatten_gives_the_tree_back(tree: Any) -> None:
    leaves, tree_def = flatten(tree)
    assert tree_def.num_leaves == len(leaves)
    assert_same(unflatten(tree_def, leaves), tree)


def test_a_container_of_one_leaf_is_not_a_leaf() -> None:
    for tree in ({"w": X}, [X], (X,), Params(X, None)):
        leaves, tree_def = flatten(tree)
        assert len(leaves) == 1 and tree_def != LEAF
        assert type(unflatten(tree_def, leaves)) is type(tree)


def test_none_is_an_empty_subtree_not_a_leaf() -> None:
    leaves, tree_def = flatten((None, X, [None]))
    assert len(leaves) == 1 and leaves[0] is X
    assert str(tree_def) == "(None, *, [None])"
    leaves, tree_def = flatten(None)
    assert leaves == [] and tree_def != LEAF and tree_def.num_leaves == 0
    assert unflatten(tree_def, []) is None


def test_dict_entries_are_ordered_by_sorted_key() -> None:
    a, b = flatten({"b": 1.0, "a": 2.0}), flatten({"a": 2.0, "b": 1.0})
    assert a == b == ([2.0, 1.0], a[1])
    assert list(unflatten(a[1], [3.0, 4.0])) == ["a", "b"]
    # Keys of different types that compare with each other sort too.
    assert flatten({1: "one", 0.5: "half", -2: "minus two"})[0] == ["minus two", "half", "one"]


def test_keys_that_cannot_be_compared_are_a_value_error_naming_them() -> None:
    with pytest.raises(shax.ShaxValueError, match=r"1, 'a'.*OrderedDict"):
        flatten({1: X, "a": X})
    # Through a transform: the transform and the user's line are named.
    with pytest.raises(shax.ShaxValueError, match=rf"jit: .*\(at {HERE}:\d+\)"):
        shax.jit(lambda p: p[1])({1: X, "a": X})
    with pytest.raises(shax.ShaxValueError, match=r"result of .*1, 'a'"):
        shax.jit(lambda x: {1: x, "a": x})(X)
    with pytest.raises(shax.ShaxValueError, match=r"vmap: in_axes: .*1, 'a'"):
        shax.vmap(lambda p: p, in_axes=({1: 0, "a": 0},))
    with pytest.raises(shax.ShaxValueError, match=r"vjp_fn: .*1, 'a'"):
        shax.vjp(lambda x: {"a": x}, X)[1]({1: X, "a": X})
    # An OrderedDict keeps its insertion order instead, so any keys do.
    keyed = OrderedDict([(1, X), ("a", 2 * X)])
    assert_same(shax.jit(lambda p: p)(keyed), keyed)


def test_ordered_dicts_keep_their_order_and_default_dicts_their_factory() -> None:
    ordered = flatten(OrderedDict([("b", 1.0), ("a", 2.0)]))
    assert ordered[0] == [1.0, 2.0]
    assert ordered[1] != flatten({"b": 1.0, "a": 2.0})[1]
    assert ordered[1] != flatten(OrderedDict([("a", 2.0), ("b", 1.0)]))[1]
    assert flatten(defaultdict(list, {"a": 1.0}))[1] != flatten(defaultdict(dict, {"a": 1.0}))[1]


def test_named_tuples_are_told_apart_from_tuples_and_each_other() -> None:
    structures = {flatten(t)[1] for t in [(X, X), Params(X, X), Pair(X, X), [X, X]]}
    assert len(structures) == 4
    assert str(flatten(Params(X, {"k": None}))[1]) == "Params(w=*, b={'k': None})"


def test_other_classes_are_leaves() -> None:
    class Mine(tuple):  # a tuple subclass that is not a named tuple: a leaf, as in JAX
        pass

    mine = Mine((X,))
    assert flatten(mine) == ([mine], LEAF)
    with pytest.raises(shax.ShaxTypeError, match=r"jit: argument 0\[1\]"):
        shax.jit(lambda p: p[0])([X, mine])


def test_structures_compare_and_hash_by_value() -> None:
    tree = {"a": [X, (X, None)], "b": Params(X, X)}
    first, second = flatten(tree)[1], flatten(tree_map(lambda x: 2 * x, tree))[1]
    assert first is not second and first == second and hash(first) == hash(second)
    assert first != flatten({"a": [X, (X, X)], "b": Params(X, X)})[1]
    assert first != flatten({"a": [X, [X, None]], "b": Params(X, X)})[1]


def test_is_leaf_stops_the_walk() -> None:
    leaves, tree_def = flatten({"a": (1, 2), "b": [3]}, is_leaf=lambda x: isinstance(x, tuple))
    assert leaves == [(1, 2), 3] and str(tree_def) == "{'a': *, 'b': [*]}"


def test_unflatten_needs_as_many_leaves_as_the_structure_has() -> None:
    with pytest.raises(shax.ShaxValueError, match=r"\(\*, \[\*\]\) holds 2 leaves, but 3"):
        unflatten(flatten((X, [X]))[1], [X, X, X])


def test_leaf_paths_name_each_leaf() -> None:
    tree_def = flatten(({"w": X, "b": [X, None]}, Params(X, (X,))))[1]
    assert leaf_paths(tree_def) == ["[0]['b'][0]", "[0]['w']", "[1].w", "[1].b[0]"]


def deep(depth: int, leaf: Any) -> Any:
    tree = leaf
    for _ in range(depth):
        tree = [tree]
    return tree


def innermost(tree: Any) -> Any:
    while isinstance(tree, list):
        tree = tree[0]
    return tree


def test_a_deep_tree_needs_no_recursion() -> None:
    tree = deep(3000, X)
    leaves, tree_def = flatten(tree)
    assert leaves == [X] and tree_def.num_leaves == 1
    assert tree_def == flatten(deep(3000, 2 * X))[1] and hash(tree_def) == hash(flatten(deep(3000, X))[1])
    assert tree_def != flatten(deep(2999, X))[1]
    assert str(tree_def) == "[" * 3000 + "*" + "]" * 3000
    assert leaf_paths(tree_def) == ["[0]" * 3000]
    rebuilt = unflatten(tree_def, [2 * X])
    np.testing.assert_array_equal(innermost(rebuilt), 2 * X)
    assert flatten(rebuilt)[1] == tree_def
    # And through the transforms.
    assert flatten(shax.jit(lambda t: t)(tree))[1] == tree_def
    grads = shax.grad(lambda t: reduce_sum(sin(innermost(t)), [0]))(tree)
    np.testing.assert_allclose(innermost(grads), np.cos(X))
    batched = shax.vmap(lambda t: t)(deep(3000, np.ones((2, 3))))
    assert flatten(batched)[1] == tree_def


# The examples ------------------------------------------------------------------------


def test_the_gradient_of_a_dict_of_one_leaf_is_a_dict() -> None:
    grads = shax.grad(lambda p: reduce_sum(p["w"] ** 2.0, [0]))({"w": X})
    assert_same(grads, {"w": 2 * X})


def test_jit_returns_a_dict_and_a_list() -> None:
    out = shax.jit(lambda x: ({"a": x}, [x]))(X)
    assert_same(out, ({"a": X}, [X]))


def test_empty_and_nested_tuples_round_trip() -> None:
    assert_same(shax.jit(lambda t: t)(((), (X, X))), ((), (X, X)))
    assert_same(shax.vmap(lambda t: t)(((), (np.ones((3, 2)), X))), ((), (np.ones((3, 2)), X)))


def test_a_list_argument_reaches_f_as_a_list() -> None:
    seen: list[type] = []

    def f(xs: Any) -> Any:
        seen.append(type(xs))
        return reduce_sum(xs[0], [0])

    shax.jit(f)([X])
    shax.grad(f)([X])
    shax.vmap(f)([np.ones((2, 3))])
    shax.xpr(f, [f32[3]])
    shax.trace(f, [f32[3]])
    assert seen == [list] * 5


# Every transform, against JAX's pytree behaviour ---------------------------------------------


STRUCTURES = [
    pytest.param(lambda x: {"w": x}, id="dict"),
    pytest.param(lambda x: [x], id="list"),
    pytest.param(lambda x: (x,), id="tuple"),
    pytest.param(lambda x: ((), (x, x)), id="nested-empties"),
    pytest.param(lambda x: Params(x, [x]), id="namedtuple"),
    pytest.param(lambda x: {"w": x, "b": None}, id="none-leaf"),
    pytest.param(lambda x: {0: x, 0.5: [x]}, id="mixed-comparable-keys"),
    pytest.param(lambda x: OrderedDict([("z", x), (1, None)]), id="ordereddict"),
]


def total(tree: Any) -> Any:
    """Σ over the leaves of sin(leaf)."""
    leaves = flatten(tree)[0]
    result = reduce_sum(sin(leaves[0]), [0])
    for leaf in leaves[1:]:
        result = result + reduce_sum(sin(leaf), [0])
    return result


@pytest.mark.parametrize("make", STRUCTURES)
def test_grad_and_value_and_grad_keep_the_structure(make: Any) -> None:
    tree = make(X)
    assert_same(shax.grad(total)(tree), tree_map(np.cos, tree))
    value, grads = shax.value_and_grad(total)(tree)
    assert_same(grads, tree_map(np.cos, tree))
    np.testing.assert_allclose(value, sum(np.sin(leaf).sum() for leaf in flatten(tree)[0]))
    assert_same(shax.jit(shax.grad(total))(tree), tree_map(np.cos, tree))


@pytest.mark.parametrize("make", STRUCTURES)
def test_vjp_jvp_and_linearize_keep_the_structure(make: Any) -> None:
    tree = make(X)
    out, vjp_fn = shax.vjp(lambda t: tree_map(sin, t), tree)
    assert_same(out, tree_map(np.sin, tree))
    (cts,) = vjp_fn(tree_map(lambda x: 2 * x, tree))
    assert_same(cts, tree_map(lambda x: 2 * x * np.cos(x), tree))
    out, tangent = shax.jvp(lambda t: tree_map(sin, t), (tree,), (tree,))
    assert_same(out, tree_map(np.sin, tree))
    assert_same(tangent, tree_map(lambda x: x * np.cos(x), tree))
    out, f_jvp = shax.linearize(lambda t: tree_map(sin, t), tree)
    assert_same(out, tree_map(np.sin, tree))
    assert_same(f_jvp(tree), tree_map(lambda x: x * np.cos(x), tree))


@pytest.mark.parametrize("make", STRUCTURES)
def test_jit_vmap_and_xpr_keep_the_structure(make: Any) -> None:
    tree = make(X)
    assert_same(shax.jit(lambda t: tree_map(sin, t))(tree), tree_map(np.sin, tree))
    batch = make(np.stack([X, 2 * X]))
    assert_same(shax.vmap(lambda t: tree_map(sin, t))(batch), tree_map(np.sin, batch))
    assert_same(shax.vmap(lambda t: t, out_axes=1)(batch), tree_map(lambda x: x.T, batch))
    seen: list[Any] = []
    shax.xpr(lambda t: seen.append(t) or total(t), make(f32[3]))
    assert flatten(seen[0])[1] == flatten(tree)[1]


def test_vmap_axes_are_pytree_prefixes_of_one_leaf_containers() -> None:
    xs = np.stack([X, 2 * X])
    out = shax.vmap(lambda p, w: {"y": [p["w"] * w]}, in_axes=({"w": 0}, None), out_axes={"y": [1]})({"w": xs}, X)
    assert_same(out, {"y": [(xs * X).T]})
    out = shax.vmap(lambda p: p, in_axes=(Params(0, None),))(Params(xs, X))
    assert_same(out, Params(xs, np.stack([X, X])))
    # A dict of axes against an OrderedDict argument matches by key, whatever the order.
    ordered = OrderedDict([("b", xs), ("a", X)])
    assert_same(shax.vmap(lambda p: p["b"], in_axes=({"a": None, "b": 0},))(ordered), xs)


def test_none_arguments_get_none_gradients() -> None:
    def f(x: Any, nothing: Any) -> Any:
        assert nothing is None
        return reduce_sum(sin(x), [0])

    np.testing.assert_allclose(shax.grad(f)(X, None), np.cos(X))  # the float parameter only
    g = shax.grad(f, wrt=(0, 1))(X, None)
    assert isinstance(g, tuple) and g[1] is None
    np.testing.assert_allclose(g[0], np.cos(X))
    assert shax.grad(f, wrt=1)(X, None) is None
    assert shax.grad(lambda x, e: reduce_sum(x, [0]), wrt=1)(X, ((), {})) == ((), {})
    _, vjp_fn = shax.vjp(f, X, None)
    assert vjp_fn(np.float64(1.0))[1] is None
    out, tangent = shax.jvp(f, (X, None), (X, None))
    np.testing.assert_allclose(tangent, (X * np.cos(X)).sum())
    assert_same(shax.jit(lambda x: (x, None))(X), (X, None))
    assert shax.jit(lambda x: None)(X) is None


def test_named_tuple_parameters_come_back_as_the_same_named_tuple() -> None:
    def loss(p: Params, x: Any) -> Any:
        return reduce_sum(sin(p.w * x + p.b), [0])

    p = Params(np.array([0.5, 1.0, 2.0]), np.float64(0.25))
    grads = shax.grad(loss, wrt=0)(p, X)
    assert type(grads) is Params
    np.testing.assert_allclose(grads.w, np.cos(p.w * X + p.b) * X)
    np.testing.assert_allclose(grads.b, np.cos(p.w * X + p.b).sum())


def test_trace_and_xpr_take_pytrees_of_types() -> None:
    defn = shax.trace(lambda p: p["w"] * p["s"][0], {"w": f32[3], "s": (f32[()],)})
    assert defn.arg_types == (f32[()], f32[3])  # dict entries by sorted key: "s" before "w"
    assert shax.xpr(lambda p: p.w * 2.0, Params(f64[2], None)).arg_types == (f64[2],)


@pytest.mark.parametrize("optimizer", [gradient_descent, adam])
def test_optimizers_keep_dict_and_named_tuple_parameters(optimizer: Any) -> None:
    def loss(p: Any) -> Any:
        d = p["w"] - X if isinstance(p, dict) else p.w - X
        return reduce_sum(d * d, [0])

    found, _ = optimizer(loss, {"w": np.zeros(3)}, lr=0.1, iters=200, log=None)
    assert set(found) == {"w"}
    np.testing.assert_allclose(found["w"], X, atol=1e-3)
    found, _ = optimizer(loss, Params(np.zeros(3), None), lr=0.1, iters=200, log=None)
    assert type(found) is Params and found.b is None  # a NamedTuple is f's one argument
    np.testing.assert_allclose(found.w, X, atol=1e-3)


def test_a_cotangent_of_another_structure_is_refused() -> None:
    _, vjp_fn = shax.vjp(lambda x: {"a": x}, X)
    with pytest.raises(shax.ShaxValueError, match=r"expected \{'a': \*\}, got \*"):
        vjp_fn(X)
    with pytest.raises(shax.ShaxValueError, match=r"expected \(Params\(w=\*, b=\*\),\), got \(\(\*, \*\),\)"):
        shax.jvp(lambda p: p.w, (Params(X, X),), ((X, X),))


# Generated pytrees ---------------------------------------------------------------------------


def trees(leaves: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    """Nested tuples, lists, dicts (string or int keys), NamedTuples, OrderedDicts,
    defaultdicts and None around `leaves`."""

    def containers(children: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
        return st.one_of(
            st.lists(children, max_size=3).map(tuple),
            st.lists(children, max_size=3),
            st.dictionaries(st.sampled_from("abcd"), children, max_size=3),
            st.dictionaries(st.integers(-3, 3), children, max_size=3),
            st.builds(Params, children, children),
            st.builds(Pair, children, children),
            st.dictionaries(st.sampled_from(["x", 2, None]), children, max_size=3).map(OrderedDict),
            st.dictionaries(st.sampled_from("ab"), children, max_size=2).map(lambda d: defaultdict(list, d)),
        )

    return st.recursive(leaves | st.none(), containers, max_leaves=8)


def arrays(shape: tuple[int, ...]) -> st.SearchStrategy[np.ndarray]:
    return st.integers(-8, 8).map(lambda k: np.arange(float(k), float(k) + np.prod(shape)).reshape(shape) / 4)


@given(trees(arrays(()) | arrays((2,)) | st.floats(-2, 2)))
def test_generated_trees_round_trip_exactly(tree: Any) -> None:
    leaves, tree_def = flatten(tree)
    rebuilt = unflatten(tree_def, leaves)
    assert_same(rebuilt, tree)
    assert all(a is b for a, b in zip(flatten(rebuilt)[0], leaves))
    assert flatten(rebuilt)[1] == tree_def and hash(flatten(rebuilt)[1]) == hash(tree_def)
    assert len(leaf_paths(tree_def)) == len(leaves)


@given(trees(arrays(()) | arrays((2,))))
def test_generated_trees_through_jit_vmap_and_grad(tree: Any) -> None:
    assume(flatten(tree)[0])
    assert_same(shax.jit(lambda t: t)(tree), tree)
    assert_same(shax.grad(total_of_all)(tree), tree_map(np.ones_like, tree))
    batch = tree_map(lambda x: np.stack([x, x + 1.0]), tree)
    assert_same(shax.vmap(lambda t: t)(batch), batch)


def total_of_all(tree: Any) -> Any:
    """Σ of every element of every leaf."""
    leaves = flatten(tree)[0]
    result = reduce_sum(leaves[0], list(range(leaves[0].type.rank)))
    for leaf in leaves[1:]:
        result = result + reduce_sum(leaf, list(range(leaf.type.rank)))
    return result

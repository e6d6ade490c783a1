"""A tracer's numpy-array surface: copies, the protocols and methods numpy arrays have
(each a value where it means one on a traced value, else a ShaxError saying what to do
instead), and JAX's `.at[...]` updates on numpy values through `shax.numpy.asarray`."""

from __future__ import annotations

import copy
from typing import Any

import numpy as np
import pytest

import shax
import shax.numpy as snp

X = np.array([0.5, -1.25, 2.0], np.float32)


def traced(f: Any, *args: Any) -> Any:
    """f's result on a tracer: run through jit."""
    return shax.jit(f)(*args)


# copy.deepcopy of a tracer ------------------------------------------------------------


def deep_square_sum(x: Any) -> Any:
    return (copy.deepcopy(x) * x).sum()


def test_deepcopy_gradient_is_the_product_rule() -> None:
    np.testing.assert_allclose(shax.grad(deep_square_sum)(X), 2 * X)


def test_deepcopy_under_jit_and_vmap_gives_numbers() -> None:
    out = shax.jit(deep_square_sum)(X)
    assert isinstance(out, (np.ndarray, np.generic))
    np.testing.assert_allclose(out, (X * X).sum())
    batch = np.stack([X, 2 * X])
    np.testing.assert_allclose(shax.vmap(deep_square_sum)(batch), (batch * batch).sum(axis=1))


def test_deepcopy_of_a_pytree_keeps_the_tracers() -> None:
    def f(x: Any) -> Any:
        tree = copy.deepcopy({"a": [x, 2 * x], "b": (x,)})
        return (tree["a"][0] * tree["a"][1] + tree["b"][0]).sum()

    np.testing.assert_allclose(shax.grad(f)(X), 4 * X + 1)


def test_copy_is_the_value() -> None:
    assert traced(lambda x: x.copy() * copy.copy(x), X).tolist() == (X * X).tolist()
    np.testing.assert_allclose(shax.grad(lambda x: (x.copy() * x).sum())(X), 2 * X)


# protocols: a value where it means one ---------------------------------------------------


def test_round_method_and_builtin_are_numpys_round() -> None:
    y = np.array([1.23456, -2.5, 0.5, 12.5, 1234.5], np.float32)
    for decimals in (0, 2, -1):
        expected = np.round(y, decimals)
        np.testing.assert_array_equal(traced(lambda x: x.round(decimals), y), expected)  # noqa: B023 - run here
        np.testing.assert_array_equal(traced(lambda x: round(x, decimals), y), expected)  # noqa: B023
        np.testing.assert_array_equal(snp.round(y, decimals), expected)
    np.testing.assert_array_equal(traced(lambda x: round(x), y), np.round(y))
    ints = np.array([1, -2, 3])
    assert snp.round(ints, 2).dtype == ints.dtype
    np.testing.assert_array_equal(snp.round(ints, 2), ints)


def test_view_of_its_own_dtype_is_the_value() -> None:
    np.testing.assert_array_equal(traced(lambda x: x.view() + x.view(np.float32), X), 2 * X)


def test_format_without_a_spec_is_the_tracers_text() -> None:
    seen: list[str] = []
    traced(lambda x: seen.append(f"{x}") or x, X)
    assert seen == ["Tracer(f32[3])"]


def test_power_is_still_the_power() -> None:
    np.testing.assert_allclose(traced(lambda x: pow(x, 2), X), X**2)


# protocols: a ShaxError saying what to do instead ---------------------------------------

REFUSED: list[tuple[str, Any, str]] = [
    ("item", lambda x: x.item(), r"item\(\): a traced f32\[3\] has no concrete value.*return it"),
    ("tolist", lambda x: x.tolist(), r"tolist\(\): a traced f32\[3\] has no concrete value"),
    ("float", lambda x: float(x), r"float\(\): a traced f32\[3\] has no concrete value"),
    ("int", lambda x: int(x), r"int\(\): a traced f32\[3\] has no concrete value"),
    ("complex", lambda x: complex(x), r"complex\(\): a traced f32\[3\] has no concrete value"),
    ("bool", lambda x: bool(x), r"bool\(\): a traced f32\[3\] has no concrete value.*select"),
    ("index", lambda x: [1, 2, 3][x], r"index: a traced f32\[3\] has no concrete value"),
    ("format", lambda x: f"{x:.3f}", r"format '.3f': a traced f32\[3\] has no concrete value"),
    ("array", lambda x: np.asarray(x), r"numpy array: a traced f32\[3\] has no concrete value"),
    ("setitem", lambda x: x.__setitem__(0, 1.0), r"x\[key\] = value: .*f32\[3\].*x\.at\[key\]\.set\(value\)"),
    ("fill", lambda x: x.fill(1.0), r"fill: .*f32\[3\].*full_like"),
    ("view", lambda x: x.view(np.int64), r"view: .*f32\[3\].*int64.*astype"),
    ("lshift", lambda x: x << 1, r"<<: .*f32\[3\]"),
    ("rlshift", lambda x: 1 << x, r"<<: .*f32\[3\]"),
    ("rshift", lambda x: x >> 1, r">>: .*f32\[3\]"),
    ("rrshift", lambda x: 1 >> x, r">>: .*f32\[3\]"),
    ("and", lambda x: x & 1, r"&: .*f32"),
    ("or", lambda x: 1 | x, r"\|: .*f32"),
    ("xor", lambda x: x ^ 1, r"\^: .*f32"),
    ("invert", lambda x: ~x, r"~: .*f32"),
    ("pow3", lambda x: pow(x, 2, 3), r"pow: a traced f32\[3\] .*modulo"),
    ("where1", lambda x: snp.where(x > 0), r"where: .*bool\[3\].*nonzero\(\.\.\., size=\)"),
    ("hash", lambda x: hash(x), r"hash: a traced f32\[3\] is not hashable"),
    ("len0", lambda x: len(x[0]), r"len\(\): .*f32\[\]"),
    ("iter0", lambda x: iter(x[0]), r"iter\(\): .*f32\[\]"),
]


@pytest.mark.parametrize(("label", "f", "message"), REFUSED, ids=[r[0] for r in REFUSED])
def test_refused_protocols_raise_a_shax_type_error_at_the_users_line(label: str, f: Any, message: str) -> None:
    with pytest.raises(shax.ShaxTypeError, match=message) as raised:
        traced(f, X)
    assert "test_array_protocols.py:" in str(raised.value)


def test_one_argument_where_on_numpy_values_is_nonzero() -> None:
    y = np.array([[0.0, 1.0], [2.0, 0.0]], np.float32)
    out = snp.where(y)
    expected = np.where(y)
    assert len(out) == len(expected)
    for a, b in zip(out, expected):
        np.testing.assert_array_equal(a, b)
        assert a.dtype == b.dtype
    with pytest.raises(shax.ShaxValueError, match="where: .*both x and y, or neither"):
        snp.where(y, 1.0)


def test_full_like_is_what_fill_points_to() -> None:
    np.testing.assert_array_equal(traced(lambda x: snp.full_like(x, 7.5), X), np.full_like(X, 7.5))
    assert traced(lambda x: snp.full_like(x, 2, dtype=np.int32), X).dtype == np.int32
    np.testing.assert_array_equal(snp.full_like(X, 3), np.full_like(X, 3))


# .at on numpy values: shax.numpy's Array ---------------------------------------------

UPDATES: list[tuple[str, Any]] = [
    ("set", lambda x: x.at[1].set(5.0)),
    ("set_slice", lambda x: x.at[1:].set(np.array([7.0, 8.0], np.float32))),
    ("set_negative", lambda x: x.at[-1].set(-3.0)),
    ("set_mask", lambda x: x.at[np.array([True, False, True])].set(0.0)),
    ("set_repeated", lambda x: x.at[np.array([0, 0])].set(np.array([1.0, 2.0], np.float32))),
    ("add", lambda x: x.at[2].add(10.0)),
    ("add_repeated", lambda x: x.at[np.array([0, 2, 0])].add(1.0)),
    ("get", lambda x: x.at[np.array([2, 0])].get()),
    ("chained", lambda x: x.at[0].set(1.0).at[1].add(2.0)),
]


@pytest.mark.parametrize(("label", "update"), UPDATES, ids=[u[0] for u in UPDATES])
def test_at_on_numpy_values_is_the_traced_update(label: str, update: Any) -> None:
    for make, base in ((snp.asarray, X), (snp.array, X), (snp.sin, np.sin(X)), (snp.abs, np.abs(X))):
        expected = traced(update, base)
        x = make(base if make in (snp.asarray, snp.array) else X)
        before = np.array(x, copy=True)
        out = update(x)
        assert isinstance(out, snp.ndarray)
        assert (out.dtype, out.shape) == (expected.dtype, expected.shape)
        np.testing.assert_allclose(out, expected, rtol=1e-6)
        np.testing.assert_array_equal(x, before)  # functional: the input is unchanged


def test_at_on_a_numpy_value_takes_traced_values() -> None:
    def f(v: Any) -> Any:
        return (snp.zeros(3, np.float32).at[np.array([0, 0, 2])].add(v) * v).sum()

    y = np.array([1.0, 2.0, 3.0], np.float32)
    # Σ_k u_k v_k with u = (v0 + v1, 0, v2): its gradient is u + Jᵀ v = (2 v0 + v1, v0, 2 v2).
    np.testing.assert_allclose(shax.jit(f)(y), (1.0 + 2.0) * 1.0 + 3.0 * 3.0)
    np.testing.assert_allclose(shax.grad(f)(y), [4.0, 1.0, 6.0])


def test_at_casts_values_to_the_arrays_dtype() -> None:
    ints = snp.asarray(np.array([1, 2, 3], np.int32))
    out = ints.at[0].set(7.9)
    assert out.dtype == np.int32 and out.tolist() == [7, 2, 3]


def test_shax_numpy_returns_arrays_with_numpys_values() -> None:
    y = np.arange(6.0, dtype=np.float32).reshape(2, 3)
    cases = [
        (snp.sin(y), np.sin(y)),
        (snp.reshape(y, (3, 2)), np.reshape(y, (3, 2))),
        (snp.sum(y, axis=0), np.sum(y, axis=0)),
        (snp.zeros(2), np.zeros(2)),
        (snp.asarray([1, 2]), np.asarray([1, 2])),
        (snp.array(y, ndmin=3), np.array(y, ndmin=3)),
        (snp.asarray(y, dtype=np.float64), np.asarray(y, dtype=np.float64)),
        (np.cos(snp.asarray(y)), np.cos(y)),  # numpy's ufuncs keep the Array
        (snp.asarray(y) + 1, y + 1),
    ]
    for ours, numpys in cases:
        assert isinstance(ours, snp.ndarray)
        assert (ours.dtype, ours.shape) == (numpys.dtype, numpys.shape)
        np.testing.assert_array_equal(ours, numpys)
    total = snp.sum(y)  # a scalar, as numpy's
    assert type(total) is np.float32 and total == np.sum(y)
    q, r = snp.divmod(y, 4.0)
    assert isinstance(q, snp.ndarray) and isinstance(r, snp.ndarray)
    assert all(isinstance(part, snp.ndarray) for part in snp.split(y, 3, axis=1))


def test_asarray_and_array_of_a_tracer_are_the_tracer() -> None:
    def f(x: Any) -> Any:
        assert snp.asarray(x) is x and snp.array(x) is x
        return snp.asarray(x, dtype=np.float64), snp.array(x, ndmin=2)

    wide, lifted = shax.jit(f)(X)
    assert wide.dtype == np.float64 and lifted.shape == (1, 3)
    np.testing.assert_array_equal(wide, X.astype(np.float64))
    np.testing.assert_array_equal(lifted, X[None])
    stacked = shax.jit(lambda x: snp.asarray([x, 2 * x]))(X)
    np.testing.assert_array_equal(stacked, np.stack([X, 2 * X]))


def test_asarray_refuses_dtypes_shax_has_not() -> None:
    with pytest.raises(shax.ShaxTypeError, match="asarray: "):
        snp.asarray([1.0], dtype=np.float16)
    with pytest.raises(shax.ShaxValueError, match="array: numpy: ValueError"):
        snp.array([[1.0], [1.0, 2.0]])


def test_transforms_take_arrays() -> None:
    x = snp.asarray(X)
    np.testing.assert_allclose(shax.grad(lambda v: (v * v).sum())(x), 2 * X)
    np.testing.assert_allclose(shax.vmap(lambda v: v.at[0].set(1.0))(snp.stack([x, x])), np.tile([1.0, *X[1:]], (2, 1)))


# every public name of numpy's ndarray on a tracer -----------------------------------

A = np.array([[0.25, -1.5, 2.0], [3.5, -0.75, 1.0]], np.float32)

# numpy's ndarray names a tracer implements, each called the same way on A and on a
# tracer of A's type: the results must be numpy's (dtype, shape, values).
IMPLEMENTED: dict[str, Any] = {
    "T": lambda a: a.T,
    "argmax": lambda a: a.argmax(axis=1),
    "argmin": lambda a: a.argmin(),
    "argsort": lambda a: a.argsort(axis=1),
    "astype": lambda a: a.astype(np.float64),
    "clip": lambda a: a.clip(-0.5, 0.5),
    "conj": lambda a: a.conj(),
    "conjugate": lambda a: a.conjugate(),
    "copy": lambda a: a.copy(),
    "dot": lambda a: a.dot(a.T),
    "dtype": lambda a: a.dtype,
    "flatten": lambda a: a.flatten(),
    "imag": lambda a: a.imag,
    "itemsize": lambda a: a.itemsize,
    "mT": lambda a: a.mT,
    "max": lambda a: a.max(axis=0),
    "mean": lambda a: a.mean(axis=1, keepdims=True),
    "min": lambda a: a.min(),
    "nbytes": lambda a: a.nbytes,
    "ndim": lambda a: a.ndim,
    "prod": lambda a: a.prod(axis=1),
    "ravel": lambda a: a.ravel(),
    "real": lambda a: a.real,
    "repeat": lambda a: a.repeat(2, axis=1),
    "reshape": lambda a: a.reshape(3, 2),
    "round": lambda a: a.round(1),
    "shape": lambda a: a.shape,
    "size": lambda a: a.size,
    "squeeze": lambda a: a[None].squeeze(0),
    "std": lambda a: a.std(axis=0),
    "sum": lambda a: a.sum(axis=1),
    "swapaxes": lambda a: a.swapaxes(0, 1),
    "take": lambda a: a.take(np.array([2, 0]), axis=1),
    "transpose": lambda a: a.transpose(1, 0),
    "var": lambda a: a.var(),
    "view": lambda a: a.view(),
    "all": lambda a: (a > 2).all(axis=1),
    "any": lambda a: (a > 2).any(axis=0),
    "cumsum": lambda a: a.cumsum(axis=1),
    "cumprod": lambda a: a.cumprod(axis=0),
    "diagonal": lambda a: a.diagonal(1),
    "trace": lambda a: a.trace(1),
    # JAX's: a sorted copy (numpy's sorts in place and returns None)
    "sort": lambda a: a.sort(axis=0) if isinstance(a, shax.Tracer) else np.sort(a, axis=0),
    # JAX's static size (numpy's nonzero has none; here every element is found)
    "nonzero": lambda a: a.nonzero(**({"size": a.size} if isinstance(a, shax.Tracer) else {}))[1],
    "searchsorted": lambda a: a[0].searchsorted(np.array([0.5, 2.0], np.float32), side="right"),
}

# The rest, each with plausible arguments (numpy's attributes: None, read only): a
# ShaxError naming it.
REFUSED_NAMES: dict[str, tuple[Any, ...] | None] = {
    "argpartition": (1,), "base": None, "byteswap": (), "choose": ([[0.0], [1.0]],),
    "compress": ([True, False],), "ctypes": None, "data": None, "device": None,
    "dump": ("x.pickle",), "dumps": (), "fill": (0.0,), "flags": None, "flat": None,
    "getfield": (np.float32,), "item": (), "partition": (1,), "put": ([0], [1.0]), "resize": ((3, 2),),
    "setfield": (1.0, np.float32), "setflags": (False,), "strides": None,
    "to_device": ("cpu",), "tobytes": (), "tofile": ("x.bin",), "tolist": (),
}  # fmt: skip

# numpy's names a tracer uses for something of its own: none (the Trace recording x is `x.owner`).
CLASHES: set[str] = set()

# Index results are i32, JAX's default int, where numpy's are int64 (docs/conventions.md).
INDEX_RESULTS = {"argmax", "argmin", "argsort", "nonzero", "searchsorted"}

PUBLIC = sorted(name for name in dir(np.ndarray) if not name.startswith("_"))


def test_every_public_ndarray_name_is_classified() -> None:
    assert not set(IMPLEMENTED) & set(REFUSED_NAMES)
    assert [name for name in PUBLIC if name not in {*IMPLEMENTED, *REFUSED_NAMES, *CLASHES}] == []


def on_a_tracer(call: Any, x: np.ndarray) -> Any:
    """`call` on a tracer of x's type inside jit: its tensor result, or a Python value it gives."""
    seen: list[Any] = []

    def f(t: Any) -> Any:
        out = call(t)
        if isinstance(out, shax.Tracer):
            return out
        seen.append(out)
        return t

    result = shax.jit(f)(x)
    return seen[0] if seen else result


@pytest.mark.parametrize("name", sorted(IMPLEMENTED))
def test_an_implemented_ndarray_name_gives_numpys_result(name: str) -> None:
    ours, numpys = on_a_tracer(IMPLEMENTED[name], A), IMPLEMENTED[name](A)
    if not isinstance(numpys, (np.ndarray, np.generic)):  # shape, size, dtype, ...
        assert ours == numpys
        return
    dtype = np.dtype(np.int32) if name in INDEX_RESULTS else numpys.dtype
    assert (np.asarray(ours).dtype, np.shape(ours)) == (dtype, numpys.shape)
    np.testing.assert_allclose(ours, numpys, rtol=1e-6)


@pytest.mark.parametrize("name", sorted(REFUSED_NAMES))
def test_a_refused_ndarray_name_is_a_shax_error_naming_it(name: str) -> None:
    args = REFUSED_NAMES[name]

    def f(t: Any) -> Any:
        found = getattr(t, name)
        return found(*args) if args is not None else found

    with pytest.raises(shax.ShaxError, match=f"^{name}(\\(\\))?: a traced f32\\[2, 3\\] ") as raised:
        on_a_tracer(f, A)
    assert "test_array_protocols.py:" in str(raised.value)
    if args is None:  # an attribute: hasattr is False, as for any attribute a value lacks
        assert isinstance(raised.value, AttributeError)

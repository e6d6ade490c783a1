"""`shax.numpy`'s arguments: numpy's keywords honoured, validated or refused (never
silently ignored), bools refused where a size or an axis is taken, `np.matrix` and masked
arrays refused at every entry, and the arguments numpy refuses with Python's own errors
(ZeroDivisionError, a ragged list, a tracer for a dtype) refused with ShaxErrors naming
the function, on numpy values and tracers alike."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
import typeguard
from hypothesis import given
from hypothesis import strategies as st

import shax
import shax.numpy as snp
from shax import nn

V = np.arange(6.0).reshape(2, 3)
CALLER = r".*test_numpy_arguments\.py:\d+"


def _on_values_and_tracers(call: Callable[[Any], Any]) -> list[Callable[[], Any]]:
    """`call` on the numpy array V, and on a tracer of it (under jit)."""
    return [lambda: call(V), lambda: shax.jit(call)(V)]


# (function, keyword, bad value): numpy refuses each, shax must too, naming both.
BAD_KEYWORDS: list[tuple[str, Callable[[Any], Any], str]] = [
    ("sort", lambda v: snp.sort(v, kind="bogus"), "kind"),
    ("argsort", lambda v: snp.argsort(v, kind="bogus"), "kind"),
    ("sort", lambda v: snp.sort(v, kind="stable", stable=True), "kind"),
    ("sort", lambda v: snp.sort(v, stable="yes"), "stable"),
    ("einsum", lambda v: snp.einsum("ij->", v, order=3), "order"),
    ("einsum", lambda v: snp.einsum("ij->", v, order="Z"), "order"),
    ("einsum", lambda v: snp.einsum("ij->", v, casting="bogus"), "casting"),
    ("einsum", lambda v: snp.einsum("ij->", v, optimize="bogus"), "optimize"),
    ("sin", lambda v: snp.sin(v, casting="bogus"), "casting"),
    ("sin", lambda v: snp.sin(v, order="Z"), "order"),
    ("sin", lambda v: snp.sin(v, out=np.empty((2, 3))), "out"),
    ("sin", lambda v: snp.sin(v, where=False), "where"),
    ("add", lambda v: snp.add(v, v, dtype=np.float32), "dtype"),
    ("divmod", lambda v: snp.divmod(v, 2.0, out=None, casting="bogus"), "casting"),
    ("clip", lambda v: snp.clip(v, 0, 1, casting="bogus"), "casting"),
    ("round", lambda v: snp.round(v, out=np.empty((2, 3))), "out"),
    ("sum", lambda v: snp.sum(v, where=False), "where"),
    ("sum", lambda v: snp.sum(v, initial=1.0), "initial"),
    ("max", lambda v: snp.max(v, initial="bogus"), "initial"),
    ("mean", lambda v: snp.mean(v, out=np.empty(())), "out"),
    ("reshape", lambda v: snp.reshape(v, (3, 2), order="F"), "order"),
    ("reshape", lambda v: snp.reshape(v, (3, 2), order="bogus"), "order"),
    ("concatenate", lambda v: snp.concatenate([v, v], casting="bogus"), "casting"),
    ("concatenate", lambda v: snp.concatenate([v, v], dtype=np.float32), "dtype"),
    ("stack", lambda v: snp.stack([v, v], out=np.empty((2, 2, 3))), "out"),
    ("take", lambda v: snp.take(v, [0], mode="bogus"), "mode"),
    ("zeros_like", lambda v: snp.zeros_like(v, order="bogus"), "order"),
    ("ones_like", lambda v: snp.ones_like(v, shape=(3,)), "shape"),
]


@pytest.mark.parametrize(("name", "call", "keyword"), BAD_KEYWORDS, ids=[f"{b[0]}-{b[2]}" for b in BAD_KEYWORDS])
@typeguard.suppress_type_checks
def test_bad_keyword_values_are_refused(name: str, call: Any, keyword: str) -> None:
    for attempt in _on_values_and_tracers(call):
        with pytest.raises(shax.ShaxError, match=rf"^{name}\b.*{keyword}{CALLER}"):
            attempt()


def test_unknown_keywords_are_shax_errors() -> None:
    with pytest.raises(shax.ShaxTypeError, match=r"^sin: .*bogus"):
        snp.sin(V, bogus=1)


def test_keywords_at_numpys_defaults_or_meaning_the_same_values_are_honoured() -> None:
    np.testing.assert_array_equal(snp.sort(V[::-1], kind="quicksort"), np.sort(V[::-1]))
    np.testing.assert_array_equal(snp.argsort(V, stable=True), np.argsort(V, stable=True))
    assert snp.einsum("ij->", V, order="C", casting="no", optimize="greedy") == V.sum()
    np.testing.assert_array_equal(snp.sin(V, casting="same_kind", order="K", where=True, out=None), np.sin(V))
    np.testing.assert_array_equal(snp.sum(V, initial=None, where=True), V.sum())
    np.testing.assert_array_equal(snp.reshape(V, (3, 2), order="C"), V.reshape(3, 2))
    np.testing.assert_array_equal(snp.concatenate([V, V], casting="same_kind"), np.concatenate([V, V]))
    np.testing.assert_array_equal(snp.zeros((2, 3), order="F"), np.zeros((2, 3), order="F"))
    assert snp.zeros((2, 3), order="F").flags.f_contiguous


# Bools where numpy takes a size or an axis (numpy refuses most with TypeError; shax all).
BOOL_SIZES_AND_AXES: list[tuple[str, Callable[[Any], Any]]] = [
    ("reshape", lambda v: snp.reshape(v, True)),
    ("reshape", lambda v: snp.reshape(v, (True, 6))),
    ("broadcast_to", lambda v: snp.broadcast_to(v, (True, 2, 3))),
    ("concatenate", lambda v: snp.concatenate([v, v], axis=True)),
    ("stack", lambda v: snp.stack([v, v], axis=True)),
    ("expand_dims", lambda v: snp.expand_dims(v, True)),
    ("squeeze", lambda v: snp.squeeze(v, axis=False)),
    ("flip", lambda v: snp.flip(v, axis=True)),
    ("transpose", lambda v: snp.transpose(v, (True, 0))),
    ("moveaxis", lambda v: snp.moveaxis(v, True, 0)),
    ("swapaxes", lambda v: snp.swapaxes(v, True, 0)),
    ("split", lambda v: snp.split(v, 3, axis=True)),
    ("tile", lambda v: snp.tile(v, (True, 2))),
    ("repeat", lambda v: snp.repeat(v, 2, axis=True)),
    ("sum", lambda v: snp.sum(v, axis=True)),
    ("argmax", lambda v: snp.argmax(v, axis=True)),
    ("take", lambda v: snp.take(v, [0], axis=True)),
    ("sort", lambda v: snp.sort(v, axis=True)),
    ("size", lambda v: snp.size(v, True)),
]


@pytest.mark.parametrize(("name", "call"), BOOL_SIZES_AND_AXES, ids=[b[0] for b in BOOL_SIZES_AND_AXES])
def test_bools_are_no_sizes_or_axes(name: str, call: Any) -> None:
    for attempt in _on_values_and_tracers(call):
        with pytest.raises(shax.ShaxTypeError, match=rf"^{name}: .*(True|False){CALLER}"):
            attempt()


@pytest.mark.parametrize(
    ("name", "call"),
    [
        ("zeros", lambda: snp.zeros(True)),
        ("zeros", lambda: snp.zeros((True, 2))),
        ("ones", lambda: snp.ones((2, np.True_))),
        ("full", lambda: snp.full(True, 1.0)),
        ("eye", lambda: snp.eye(True)),
    ],
)
def test_bools_are_no_shapes_of_constructors(name: str, call: Any) -> None:
    with pytest.raises(shax.ShaxTypeError, match=rf"^{name}: .*True{CALLER}"):
        call()


MATRIX = np.matrix([[1.0, 2.0], [3.0, 4.0]])
MASKED = np.ma.masked_array([1.0, 2.0], mask=[False, True])
SUBCLASS_CALLS: list[tuple[str, Callable[[Any], Any]]] = [
    ("sin", snp.sin),
    ("multiply", lambda m: snp.multiply(m, m)),
    ("sum", snp.sum),
    ("einsum", lambda m: snp.einsum("...->", m)),
    ("ones_like", snp.ones_like),
    ("concatenate", lambda m: snp.concatenate([m, m])),
    ("shape", snp.shape),
    ("sigmoid", nn.sigmoid),
    ("relu", nn.relu),
    ("softmax", nn.softmax),
]


@pytest.mark.parametrize("value", [MATRIX, MASKED], ids=["matrix", "masked"])
@pytest.mark.parametrize(("name", "call"), SUBCLASS_CALLS, ids=[c[0] for c in SUBCLASS_CALLS])
def test_matrix_and_masked_arrays_are_refused(name: str, call: Any, value: Any) -> None:
    kind = "numpy.matrix" if isinstance(value, np.matrix) else r"numpy.ma.MaskedArray"
    with pytest.raises(shax.ShaxTypeError, match=rf"^{name}: does not take {kind}.*pass{CALLER}"):
        call(value)


@pytest.mark.parametrize("value", [MATRIX, MASKED], ids=["matrix", "masked"])
def test_matrix_and_masked_arrays_are_refused_by_transforms(value: Any) -> None:
    for transform in (shax.jit, shax.grad, shax.vmap):
        with pytest.raises(shax.ShaxTypeError, match=r"argument 0.*does not take numpy\.(matrix|ma\.MaskedArray)"):
            transform(lambda x: snp.sum(x))(value)


def test_matrix_and_tracer_together_are_refused() -> None:
    with pytest.raises(shax.ShaxTypeError, match=r"^mul: does not take numpy.matrix"):
        shax.jit(lambda x: MATRIX * x)(np.ones((2, 2)))


def test_other_ndarray_subclasses_are_read_as_their_data() -> None:
    class Tagged(np.ndarray):
        pass

    tagged = np.arange(3.0).view(Tagged)
    np.testing.assert_array_equal(shax.jit(snp.sin)(tagged), np.sin(np.arange(3.0)))


def test_divmod_by_a_huge_int_gives_numpys_value() -> None:
    x = np.ones(3, np.float32)
    for bound in (2**63, 2**64):
        quotient, remainder = snp.divmod(x, bound)
        expected = np.divmod(x, bound)
        np.testing.assert_array_equal(quotient, expected[0])
        np.testing.assert_array_equal(remainder, expected[1])
    traced = shax.jit(lambda v: snp.divmod(v, 2**63))(x)
    np.testing.assert_array_equal(traced[0], np.divmod(x, 2**63)[0])
    np.testing.assert_array_equal(traced[1], np.divmod(x, 2**63)[1])
    with pytest.raises(shax.ShaxValueError, match=rf"^divmod: .*{CALLER}"):
        snp.divmod(x, 10**400)  # numpy: OverflowError
    with pytest.raises(shax.ShaxValueError, match=rf"^floor_divide: .*{CALLER}"):
        shax.jit(lambda v: snp.floor_divide(v, 10**400))(x)
    with pytest.raises(shax.ShaxValueError, match=rf"^divmod: .*{CALLER}"):
        snp.divmod(np.ones(3, np.int32), 2**63)


def test_split_into_a_0d_array_of_sections_as_numpy() -> None:
    x = np.arange(6.0)
    for sections in (np.array(3), np.int64(3)):
        pieces = snp.split(x, sections)
        assert [p.tolist() for p in pieces] == [p.tolist() for p in np.split(x, sections)]
    pieces = shax.jit(lambda v: snp.split(v, np.array(2)))(x)
    assert [np.asarray(p).tolist() for p in pieces] == [[0.0, 1.0, 2.0], [3.0, 4.0, 5.0]]


def test_arange_with_step_zero_is_a_value_error() -> None:
    with pytest.raises(shax.ShaxValueError, match=rf"^arange: .*step{CALLER}"):
        snp.arange(1, 7, 0)


def test_einsum_of_a_ragged_list_is_a_value_error() -> None:
    with pytest.raises(shax.ShaxValueError, match=rf"^einsum .*ragged|inhomogeneous.*{CALLER}"):
        snp.einsum("ij->", [[1.0], [1.0, 2.0]])


@pytest.mark.parametrize("name", ["ones_like", "zeros_like"])
def test_a_tracer_is_no_dtype(name: str) -> None:
    f = getattr(snp, name)
    for attempt in (lambda: shax.jit(lambda t: f(t, t))(np.ones(2)), lambda: shax.jit(lambda t: f(V, t))(np.ones(2))):
        with pytest.raises(shax.ShaxTypeError, match=rf"^{name}: dtype.*{CALLER}"):
            attempt()


# Fuzz: any of the refusals above, on any of the values, names its function.
REFUSALS = [(n, c, shax.ShaxError) for n, c, _ in BAD_KEYWORDS] + [
    (n, c, shax.ShaxTypeError) for n, c in BOOL_SIZES_AND_AXES
]


@given(
    st.sampled_from(REFUSALS),
    st.sampled_from([V, V.astype(np.float32), np.ones((2, 3, 4)), np.ones(3)]),
    st.booleans(),
)
@typeguard.suppress_type_checks
def test_fuzz_refusals_name_their_function(refusal: Any, value: Any, traced: bool) -> None:
    name, call, error = refusal
    with pytest.raises(shax.ShaxError) as raised:
        shax.jit(call)(value) if traced else call(value)
    # A shape the call does not fit may be refused first, but by the same function.
    assert str(raised.value).startswith(name), str(raised.value)


@given(st.sampled_from(SUBCLASS_CALLS), st.sampled_from([MATRIX, MASKED, np.matrix([[1.0]]), np.ma.ones(3)]))
def test_fuzz_subclasses_are_refused_naming_their_function(entry: Any, value: Any) -> None:
    name, call = entry
    with pytest.raises(shax.ShaxTypeError, match=rf"^{name}: does not take numpy\."):
        call(value)

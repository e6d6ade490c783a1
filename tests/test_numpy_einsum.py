"""snp.einsum is numpy's: the same dtype, shape and values as np.einsum over explicit and
implicit subscripts, `...`, repeated labels (diagonals, traces), labels summed in one
operand, size-1 broadcasting and any number of operands, on numpy values, traced (jit),
batched (vmap), and as numpy's own np.einsum on tracers; its gradients match finite
differences (`numeric.py`) and the closed forms of multilinear maps; bad subscripts are
ShaxValueErrors naming einsum, the subscripts and the caller's line.

Values are small integers held in floats where numpy's result is compared exactly: every
product and sum is then exact, whatever order numpy's loops and shax's matmuls add in."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import typeguard
from hypothesis import given
from hypothesis import strategies as st

import shax
import shax.numpy as snp
from shax.testing.numeric import check_directional_derivative

RNG = np.random.default_rng(0)


def integers(shape: tuple[int, ...], dtype: Any = np.float64) -> np.ndarray:
    return RNG.integers(-3, 4, shape).astype(dtype)


def line_of(marker: str) -> str:
    lines = Path(__file__).read_text().splitlines()
    (number,) = [k for k, line in enumerate(lines, 1) if line.rstrip().endswith(f"# {marker}")]
    return f"{Path(__file__).name}:{number}"


def assert_same(actual: Any, expected: Any) -> None:
    """The same dtype, shape and values."""
    actual, expected = np.asarray(actual), np.asarray(expected)
    assert (actual.dtype, actual.shape) == (expected.dtype, expected.shape)
    np.testing.assert_array_equal(actual, expected)


# (subscripts, operand shapes)
CASES: list[tuple[str, list[tuple[int, ...]]]] = [
    ("ij,jk->ik", [(2, 3), (3, 4)]),
    ("ij,jk", [(2, 3), (3, 4)]),  # implicit: the labels appearing once, sorted
    ("ij,jk->ki", [(2, 3), (3, 4)]),
    ("ji", [(2, 3)]),  # implicit order transposes
    ("ij->ji", [(2, 3)]),
    ("ij->", [(2, 3)]),
    ("ij->j", [(2, 3)]),
    ("ii->i", [(3, 3)]),  # diagonal
    ("ii", [(3, 3)]),  # trace
    ("iii->i", [(3, 3, 3)]),
    ("iij->ji", [(2, 2, 3)]),
    ("jii", [(3, 2, 2)]),
    ("ijji->ij", [(2, 3, 3, 2)]),
    ("ii,ij->j", [(3, 3), (3, 4)]),
    ("i,i->", [(4,), (4,)]),
    ("i,i->i", [(4,), (4,)]),
    ("i,j->ij", [(2,), (3,)]),
    ("i,j", [(2,), (3,)]),
    ("bij,bjk->bik", [(2, 3, 4), (2, 4, 5)]),
    ("bij,bjk->kbi", [(2, 3, 4), (2, 4, 5)]),
    ("ijk,jl,lk->i", [(2, 3, 4), (3, 5), (5, 4)]),
    ("ab,bc,cd,de->ae", [(2, 3), (3, 2), (2, 4), (4, 2)]),
    ("i,j,k->ijk", [(2,), (3,), (2,)]),
    ("ij,ij,ij->", [(2, 3), (2, 3), (2, 3)]),
    ("ij,kl->", [(2, 3), (3, 2)]),  # every label summed within its operand
    ("ij,jk,k->", [(2, 3), (3, 4), (4,)]),
    ("Ba,aA", [(2, 3), (3, 4)]),  # upper case sorts before lower case (ASCII)
    (" i j , j k -> i k ", [(2, 3), (3, 4)]),  # spaces are ignored
    ("->", [()]),
    ("", [()]),
    (",->", [(), ()]),
    ("i,->i", [(3,), ()]),
    ("...ij,...jk->...ik", [(5, 2, 3), (3, 4)]),
    ("...ij,...jk", [(5, 2, 3), (3, 4)]),
    ("i...", [(3, 4, 5)]),  # implicit: the broadcast axes first
    ("...i->", [(3,)]),  # '...' of no axes
    ("i...i", [(2, 3, 2)]),
    ("...ii->...i", [(4, 3, 3)]),
    ("ij->j...i", [(2, 3)]),
    ("i...->...", [(2, 3, 4)]),
    ("...,...", [(2, 1), (3,)]),  # '...' axes broadcast, size 1 stretching
    ("a...b,b...->...a", [(2, 1, 3, 4), (4, 5, 1)]),
    ("i,i->i", [(1,), (3,)]),  # a label of size 1 stretches, as numpy's
    ("ij,j", [(2, 1), (3,)]),  # even contracted
    ("ij,jk", [(2, 0), (0, 3)]),  # empty axes: zeros
    ("ii->i", [(0, 0)]),
]
IDS = [f"{s.strip() or 'empty'}-{'x'.join(map(str, shapes))}" for s, shapes in CASES]


@pytest.mark.parametrize(("subscripts", "shapes"), CASES, ids=IDS)
@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.int32])
def test_einsum_of_numpy_values_is_numpys(subscripts: str, shapes: list[tuple[int, ...]], dtype: Any) -> None:
    operands = [integers(s, dtype) for s in shapes]
    expected = np.einsum(subscripts, *operands)
    actual = snp.einsum(subscripts, *operands)
    assert_same(actual, expected)
    # A rank-0 result is a numpy scalar, as numpy's; an array is shax.numpy's subclass.
    assert isinstance(actual, type(expected))


@pytest.mark.parametrize(("subscripts", "shapes"), CASES, ids=IDS)
def test_a_traced_einsum_is_numpys(subscripts: str, shapes: list[tuple[int, ...]]) -> None:
    operands = [integers(s) for s in shapes]
    expected = np.einsum(subscripts, *operands)
    assert_same(shax.jit(lambda *xs: snp.einsum(subscripts, *xs))(*operands), expected)
    # numpy's own einsum on tracers reaches shax.numpy's
    assert_same(shax.jit(lambda *xs: np.einsum(subscripts, *xs, optimize=True))(*operands), expected)


def test_random_values_agree_with_numpy_to_rounding() -> None:
    a, b, c = (RNG.normal(size=s).astype(np.float32) for s in [(4, 5, 6), (6, 7), (5, 7)])
    for subscripts, operands in [("ijk,kl,jl->i", (a, b, c)), ("ijk,kl", (a, b)), ("ijk->kj", (a,))]:
        actual = snp.einsum(subscripts, *operands)
        assert np.asarray(actual).dtype == np.float32
        np.testing.assert_allclose(actual, np.einsum(subscripts, *operands), rtol=2e-5, atol=2e-5)


def test_the_interleaved_form_is_numpys() -> None:
    a, b, c = integers((2, 3)), integers((3, 4)), integers((5, 2, 3))
    assert_same(snp.einsum(a, [0, 1], b, [1, 2], [2, 0]), np.einsum(a, [0, 1], b, [1, 2], [2, 0]))
    assert_same(snp.einsum(a, [0, 1], b, [1, 2]), np.einsum(a, [0, 1], b, [1, 2]))
    assert_same(snp.einsum(c, [..., 1], a, [0, 1], [..., 0]), np.einsum(c, [..., 1], a, [0, 1], [..., 0]))
    assert_same(snp.einsum(a, [0, 51]), np.einsum(a, [0, 51]))


def test_a_diagonal_keeps_what_is_off_it_out() -> None:
    # The diagonal is read, not masked: ∞ and NaN off it do not reach the result.
    x = np.array([[1.0, np.inf], [np.nan, -2.0]])
    assert_same(snp.einsum("ii->i", x), np.array([1.0, -2.0]))
    assert_same(snp.einsum("ii", x), np.float64(-1.0))


def test_python_numbers_and_lists_are_operands_as_in_numpy() -> None:
    assert_same(snp.einsum("i,i", [1.0, 2.0], [3.0, 4.0]), np.einsum("i,i", [1.0, 2.0], [3.0, 4.0]))
    assert_same(snp.einsum("->", 2.0), np.einsum("->", 2.0))


def test_einsum_is_lowered_to_existing_primitives() -> None:
    a, b = integers((3, 3)), integers((3, 4))
    program = shax.xpr(lambda a, b: snp.einsum("ii,ij->j", a, b), a, b)
    names = {binding.prim.name for binding in program.bindings}
    assert names <= {"arg", "reshape", "transpose", "pad", "slice", "reduce_sum", "broadcast", "dot_general"}
    assert "dot_general" in names


def test_the_smallest_contraction_comes_first() -> None:
    # Left to right, `i,j,ij->` would build the 3 × 4 outer product of the vectors first.
    a, b, c = integers((3,)), integers((4,)), integers((3, 4))
    program = shax.xpr(lambda a, b, c: snp.einsum("i,j,ij->", a, b, c), a, b, c)
    assert [str(binding.var.type) for binding in program.bindings if binding.prim.name == "dot_general"] == [
        "f64[3]",
        "f64[]",
    ]


# Generated subscripts: up to three operands over the labels a..d (with repeats), some
# with a `...` standing for trailing axes of one batch shape (size 1 stretching), an
# explicit output (some of their labels, distinct, and `...` if any operand has one) or
# the implicit one.

SIZES = {"a": 2, "b": 3, "c": 1, "d": 2}


@st.composite
def einsum_calls(draw: st.DrawFn) -> tuple[str, list[np.ndarray]]:
    labels = st.sampled_from(sorted(SIZES))
    inputs = draw(st.lists(st.lists(labels, max_size=3), min_size=1, max_size=3))
    batch = draw(st.lists(st.sampled_from([2, 3]), max_size=2))
    parts, shapes = [], []
    for letters in inputs:
        shape = [SIZES[label] for label in letters]
        if draw(st.booleans()):  # this operand has '...': some trailing batch axes, each maybe 1
            span = [draw(st.sampled_from([n, 1])) for n in batch[len(batch) - draw(st.integers(0, len(batch))) :]]
            k = draw(st.integers(0, len(letters)))
            letters, shape = [*letters[:k], "...", *letters[k:]], [*shape[:k], *span, *shape[k:]]
        parts.append("".join(letters))
        shapes.append(tuple(shape))
    subscripts = ",".join(parts)
    if draw(st.booleans()):
        used = sorted({label for letters in inputs for label in letters})
        output = draw(st.permutations(used))[: draw(st.integers(0, len(used)))]
        if "..." in subscripts:
            output.insert(draw(st.integers(0, len(output))), "...")
        subscripts += "->" + "".join(output)
    return subscripts, [integers(shape) for shape in shapes]


@given(einsum_calls())
def test_generated_einsums_are_numpys(call: tuple[str, list[np.ndarray]]) -> None:
    subscripts, operands = call
    expected = np.einsum(subscripts, *operands)
    assert_same(snp.einsum(subscripts, *operands), expected)
    assert_same(shax.jit(lambda *xs: snp.einsum(subscripts, *xs))(*operands), expected)


# Transforms.

GRAD_CASES = [
    ("ij,jk->ik", [(2, 3), (3, 4)]),
    ("ii->i", [(3, 3)]),
    ("ii", [(3, 3)]),
    ("iij,jk->ik", [(2, 2, 3), (3, 2)]),
    ("bij,bjk->bik", [(2, 3, 4), (2, 4, 2)]),
    ("ijk,jl,lk->i", [(2, 3, 4), (3, 5), (5, 4)]),
    ("...ij,...jk", [(2, 2, 3), (3, 4)]),
    ("ij,j", [(2, 1), (3,)]),
    ("i,i,i->", [(3,), (3,), (3,)]),
]
GRAD_IDS = [s for s, _ in GRAD_CASES]


@pytest.mark.parametrize(("subscripts", "shapes"), GRAD_CASES, ids=GRAD_IDS)
def test_gradients_match_finite_differences(subscripts: str, shapes: list[tuple[int, ...]]) -> None:
    operands = [RNG.normal(size=s) for s in shapes]
    weights = RNG.normal(size=np.shape(np.einsum(subscripts, *operands)))

    def f(*xs: Any) -> Any:
        return snp.sum(snp.einsum(subscripts, *xs) * weights)

    gradients = shax.grad(f, wrt=tuple(range(len(operands))))(*operands)
    tangents = [RNG.normal(size=s) for s in shapes]
    directional = sum(float(np.sum(g * t)) for g, t in zip(gradients, tangents))
    check_directional_derivative(f, operands, tangents, [directional], what=f"einsum {subscripts!r}'s gradient")


def test_gradients_are_the_closed_forms() -> None:
    a, b, w = RNG.normal(size=(2, 3)), RNG.normal(size=(3, 4)), RNG.normal(size=(2, 4))
    ga, gb = shax.grad(lambda a, b: snp.sum(snp.einsum("ij,jk->ik", a, b) * w))(a, b)
    np.testing.assert_allclose(ga, w @ b.T, rtol=1e-14)
    np.testing.assert_allclose(gb, a.T @ w, rtol=1e-14)
    x = RNG.normal(size=(3, 3))
    np.testing.assert_array_equal(shax.grad(lambda x: snp.einsum("ii", x))(x), np.eye(3))
    v = RNG.normal(size=3)
    np.testing.assert_array_equal(shax.grad(lambda x: snp.sum(snp.einsum("ii->i", x) * v))(x), np.diag(v))
    # d²/dx² of x·x = 2 I, through einsum twice
    hessian_row = shax.grad(lambda x: shax.grad(lambda y: snp.einsum("i,i", y, y))(x)[1])(v)
    np.testing.assert_array_equal(hessian_row, [0.0, 2.0, 0.0])


@pytest.mark.parametrize(
    ("subscripts", "shapes", "in_axes"),
    [
        ("ij,jk->ik", [(4, 2, 3), (3, 5)], (0, None)),
        ("ij,jk->ik", [(2, 4, 3), (3, 4, 5)], (1, 1)),
        ("ii->i", [(3, 3, 4)], 2),
        ("ii", [(4, 3, 3)], 0),
        ("i,j,ij->", [(4, 2), (3, 4), (2, 3)], (0, 1, None)),
        ("...i,i", [(4, 2, 3), (3,)], (0, None)),
    ],
)
def test_a_batched_einsum_is_a_loop(subscripts: str, shapes: list[tuple[int, ...]], in_axes: Any) -> None:
    operands = [integers(s) for s in shapes]
    axes = in_axes if isinstance(in_axes, tuple) else (in_axes,) * len(operands)
    batch = next(np.shape(x)[a] for x, a in zip(operands, axes) if a is not None)
    batched = shax.vmap(lambda *xs: snp.einsum(subscripts, *xs), in_axes=in_axes)(*operands)
    loop = [
        np.einsum(subscripts, *(x if a is None else np.take(x, k, axis=a) for x, a in zip(operands, axes)))
        for k in range(batch)
    ]
    assert_same(batched, np.stack(loop))


def test_per_example_gradients_of_an_einsum() -> None:
    xs, w = RNG.normal(size=(4, 3)), RNG.normal(size=(3, 3))
    grads = shax.vmap(shax.grad(lambda x: snp.einsum("i,ij,j", x, w, x)), in_axes=0)(xs)
    np.testing.assert_allclose(grads, xs @ (w + w.T), rtol=1e-13)


# Errors.

BAD = [
    ("ij", [(3,)], "operand 0 has 1 axes"),
    ("ii->i", [(2, 3)], "operand 0's axes labelled 'i' differ in size"),
    ("i->ii", [(3,)], "the output 'ii' repeats a label"),
    ("ij->k", [(2, 3)], "the output's label 'k' is in no operand"),
    ("i1", [(2, 3)], "operand 0 has '1', which is no letter"),
    ("i.j", [(2, 3)], "a '.' outside '...'"),
    ("......", [(2, 3)], "operand 0 has '...' twice"),
    ("...i->", [(2, 3)], "the output needs '...'"),
    ("i,i", [(2,), (3,)], "label 'i' has sizes 2 and 3"),
    ("...,...", [(2,), (3,)], "a '...' axis has sizes 2 and 3"),
    ("ij,jk", [(2, 2)], "names 2 operand\\(s\\), but 1 were given"),
    ("i->i->i", [(2,)], "'->' must appear at most once"),
    ("i-j", [(2, 3)], "'->' must appear at most once"),
]


@pytest.mark.parametrize(("subscripts", "shapes", "message"), BAD, ids=[s for s, _, _ in BAD])
def test_bad_subscripts_are_value_errors_naming_einsum(subscripts: str, shapes: list[Any], message: str) -> None:
    operands = [integers(s) for s in shapes]
    named = f"einsum {re.escape(repr(subscripts))}: .*{message}"
    with pytest.raises(shax.ShaxValueError, match=f"{named}.*{line_of('numpy values')}"):
        snp.einsum(subscripts, *operands)  # numpy values
    with pytest.raises(shax.ShaxValueError, match=f"{named}.*{line_of('traced')}"):
        shax.jit(lambda *xs: snp.einsum(subscripts, *xs))(*operands)  # traced


@typeguard.suppress_type_checks  # the annotations forbid what is tested
def test_unsupported_options_and_operands_are_errors_at_the_callers_line() -> None:
    a = integers((2, 2))
    with pytest.raises(shax.ShaxTypeError, match=f"einsum 'ij->ji': out= is not supported.*{line_of('out')}"):
        snp.einsum("ij->ji", a, out=np.empty((2, 2)))  # out
    with pytest.raises(shax.ShaxTypeError, match=f"dtype= is not supported.*{line_of('dtype')}"):
        snp.einsum("ij->ji", a, dtype=np.float32)  # dtype
    assert_same(snp.einsum("ij,jk", a, a.astype(np.float32)), np.einsum("ij,jk", a, a.astype(np.float32)))  # promoted
    with pytest.raises(shax.ShaxTypeError, match=f"bool operands are not summed.*{line_of('bool')}"):
        snp.einsum("ij,jk", a > 0, a > 0)  # bool
    with pytest.raises(shax.ShaxValueError, match=f"a label must be an int in \\[0, 52\\).*{line_of('sublist')}"):
        snp.einsum(a, [0, 52])  # sublist
    assert_same(snp.einsum("ij->ji", a > 0), (a > 0).T)  # bools are only moved about
    assert_same(snp.einsum("ij->ji", a, optimize="greedy", order="C"), a.T)

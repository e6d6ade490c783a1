"""explain and the reduction lowering at scale (issue 28): programs of bounded size, empty
shapes, checked options."""

from __future__ import annotations

import math

import numpy as np
import pytest
import typeguard

import shax
import shax.numpy as snp
from shax.core.ir import Definition
from shax.passes import lower_reductions_to_sums_of_slices
from shax.primitives import Add, ReduceSum, Slice
from shax.stages import check_types, infer_types


def lowered(f: object, *types: str) -> tuple[Definition, Definition]:
    typed = infer_types(shax.trace(f, *types))
    out = lower_reductions_to_sums_of_slices(typed)
    check_types(out)
    return typed, out


def count(defn: Definition, prim: type) -> int:
    return sum(isinstance(b.prim, prim) for b in defn.bindings)


@pytest.mark.parametrize("n", [2, 3, 4, 5, 7, 8, 9, 1000, 1023, 1024, 1025, 1_000_000])
def test_a_reduction_lowers_to_logarithmically_many_slices_and_adds(n: int) -> None:
    typed, out = lowered(lambda a: snp.sum(a), f"f64[{n}]")
    assert count(out, ReduceSum) == 0
    # halving: per level two slices and an add, and a slice and an add more when the size is odd
    levels = math.floor(math.log2(n))
    assert count(out, Slice) <= 3 * levels
    assert count(out, Add) <= 2 * levels
    if n <= 10_000:  # integers as floats: every summation order gives the exact sum
        x = np.arange(n, dtype=np.float64) - n // 3
        assert shax.evaluate(out, x) == shax.evaluate(typed, x) == [np.sum(x)]


@pytest.mark.parametrize(("shape", "axes"), [((7, 5, 6), (0, 2)), ((128, 784), (1,)), ((3, 9), (0, 1))])
def test_reductions_over_several_axes_keep_their_values(shape: tuple[int, ...], axes: tuple[int, ...]) -> None:
    typed, out = lowered(lambda a: snp.sum(a, axis=axes), f"f64[{', '.join(map(str, shape))}]")
    x = np.random.default_rng(0).integers(-50, 50, shape).astype(np.float64)
    (got,) = shax.evaluate(out, x)
    np.testing.assert_array_equal(got, np.sum(x, axis=axes))
    assert count(out, Add) <= sum(2 * math.log2(shape[a]) for a in axes)


def test_an_axis_of_three_is_still_added_left_to_right() -> None:
    _, out = lowered(lambda a: snp.sum(a), "f32[3]")
    slices = [b.prim for b in out.bindings if isinstance(b.prim, Slice)]
    assert [(s.start, s.end) for s in slices] == [((0,), (1,)), ((1,), (2,)), ((2,), (3,))]


def test_explain_of_a_million_element_reduction_finishes() -> None:
    e = shax.explain(lambda a: snp.sum(snp.sin(a)), "f32[1000000]")
    assert len(e.rewritten.bindings) <= 5 * math.log2(1_000_000) + 5
    (x,) = e.inputs
    np.testing.assert_allclose(e.outputs[0], np.sum(np.sin(x.astype(np.float64))), rtol=1e-4)
    np.testing.assert_allclose(e.input_cotangents[0], np.cos(x) * e.cotangents[0], rtol=1e-6)


def test_explain_of_an_mlp_on_a_batch_of_mnist_inputs_finishes() -> None:
    def mlp(w: object, x: object) -> object:
        return snp.sum(shax.nn.relu(x @ w))

    e = shax.explain(mlp, "f32[784, 16]", "f32[128, 784]")
    w, x = e.inputs
    np.testing.assert_allclose(e.outputs[0], np.sum(np.maximum(x @ w, 0)), rtol=1e-4)


@pytest.mark.parametrize("t", ["f32[0, 3]", "f32[3, 0]", "f32[0]", "f32[2, 0, 3]"])
def test_explain_of_an_empty_shape_draws_empty_inputs_and_prints_empty_boxes(t: str) -> None:
    e = shax.explain(lambda a: snp.sum(snp.sin(a)) + snp.sum(a * a), t)
    (x,) = e.inputs
    assert x.shape == shax.TensorType.parse(t).shape and x.size == 0
    assert e.outputs[0] == 0.0
    assert e.input_cotangents[0].shape == x.shape
    text = str(e)
    assert "dft(ct):" in text and "VJP:" in text


def test_empty_arrays_print_as_empty_boxes_one_row_per_row() -> None:
    from shax.core.printing import show_values

    assert show_values([np.zeros((0, 3))]) == "[┌┐\n └┘]"
    assert show_values([np.zeros((2, 0))]) == "[┌┐\n ││\n ││\n └┘]"
    assert show_values([np.zeros((0,))]) == "[┌┐\n ││\n └┘]"


@pytest.mark.parametrize("progress", [3, "tracing", True])
@typeguard.suppress_type_checks
def test_explain_progress_must_be_callable(progress: object) -> None:
    with pytest.raises(shax.ShaxTypeError, match=r"explain: progress must be .*test_explain_scale.py:\d+"):
        shax.explain(lambda a: a, "f32[2]", progress=progress)

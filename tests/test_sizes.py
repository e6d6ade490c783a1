"""Sizes beyond what an array can be (issue 28): refused when the type is made, naming the
operation, the shape and the bytes, before any work."""

from __future__ import annotations

import numpy as np
import pytest

import shax
import shax.numpy as snp
from shax import f32, f64
from shax.types import MAX_BYTES, MAX_RANK, TensorType, show_bytes

HERE = r"test_sizes.py:\d+"


def test_the_limits_are_numpys_rank_for_broadcasting_and_2_to_the_48_bytes() -> None:
    assert MAX_RANK == 32 and MAX_BYTES == 2**48
    with pytest.raises(RuntimeError, match="only supports up to 32 dimensions"):
        np.broadcast_shapes((1,) * (MAX_RANK + 1), (1,))
    assert TensorType(f32, (1,) * MAX_RANK).rank == MAX_RANK
    assert TensorType(f32, (2**46,)).size == 2**46  # exactly 2**48 bytes


@pytest.mark.parametrize(
    ("make", "what"),
    [
        (lambda: TensorType(f32, (2**46 + 1,)), r"TensorType: f32\[70368744177665\] would take 256.00 TiB"),
        (lambda: f64[2**40, 2**30], r"TensorType: f64\[1099511627776, 1073741824\] would take 8192.00 EiB"),
        (lambda: TensorType.parse("f32[1180591620717411303424]"), r"TensorType: f32\[1180591620717411303424\]"),
        (lambda: f32[(1,) * 33], r"TensorType: f32\[1, 1, .* has rank 33, more than numpy broadcasts \(32\)"),
    ],
)
def test_a_type_too_large_to_exist_is_refused_where_it_is_made(make: object, what: str) -> None:
    with pytest.raises(shax.ShaxValueError, match=f"{what}.*{HERE}"):
        make()  # type: ignore[operator]


def test_explain_of_a_2_to_the_70_element_type_is_refused_before_any_work() -> None:
    with pytest.raises(shax.ShaxValueError, match=rf"f32\[1180591620717411303424\] would take 4096.00 EiB.*{HERE}"):
        shax.explain(lambda a: snp.sum(a), "f32[1180591620717411303424]")


def test_grad_of_a_tile_too_large_names_the_broadcast_and_the_shape() -> None:
    x = np.ones(2**17, np.float32)
    message = r"broadcast: f32\[2147483648, 131072\] would take 1.00 PiB.*operands: f32\[131072\].*"
    with pytest.raises(shax.ShaxValueError, match=message + HERE):
        shax.grad(lambda x: snp.sum(snp.tile(x, 2**31)))(x)


@pytest.mark.parametrize("backend", ["numpy", "xla"])
def test_jit_of_a_broadcast_too_large_is_refused_when_traced(backend: str) -> None:
    if backend == "xla":
        pytest.importorskip("jax")
    with pytest.raises(shax.ShaxValueError, match=rf"broadcast: f64\[1125899906842624\] would take 8.00 PiB.*{HERE}"):
        shax.jit(lambda x: snp.broadcast_to(x, (2**50,)), backend=backend)(np.ones(1))


def test_a_rank_above_numpys_is_refused_by_the_type_rule() -> None:
    with pytest.raises(
        shax.ShaxValueError, match=rf"reshape: f64\[1, 1, .*has rank 33, more than numpy broadcasts.*{HERE}"
    ):
        shax.grad(lambda x: snp.sum(snp.reshape(x, (1,) * 33)))(np.ones(1))


def test_vmap_of_grad_past_numpys_rank_names_the_batched_operation() -> None:
    g = shax.vmap(shax.grad(lambda x: snp.sum(snp.sin(snp.reshape(x, (1,) * 32)))))
    with pytest.raises(
        shax.ShaxValueError, match=rf"reshape: f64\[2, 1, .*has rank 33, more than numpy broadcasts.*{HERE}"
    ):
        g(np.ones((2, 1)))
    x = np.linspace(0, 1, 2).reshape(2, 1)
    g = shax.vmap(shax.grad(lambda x: snp.sum(snp.sin(snp.reshape(x, (1,) * 31)))))
    np.testing.assert_allclose(g(x), np.cos(x))


def test_zeros_too_large_for_memory_on_numpy_values_names_zeros_and_the_line() -> None:
    with pytest.raises(shax.ShaxValueError, match=rf"zeros: .*8.00 TiB.*{HERE}"):
        snp.zeros((2**40,))


def test_show_bytes_as_numpy_does() -> None:
    assert [show_bytes(n) for n in (0, 1023, 1024, 2**43, 2**70)] == [
        "0 bytes",
        "1023 bytes",
        "1.00 KiB",
        "8.00 TiB",
        "1024.00 EiB",
    ]

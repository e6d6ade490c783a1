"""Sizes beyond what an array can be (issue 28): refused when the type is made, naming the
operation, the shape and the bytes, before any work."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pytest
from hypothesis import assume, given
from hypothesis import strategies as st

import shax
import shax.numpy as snp
from shax import f32, f64
from shax.core.types import MAX_BYTES, MAX_RANK, TensorType, show_bytes
from shax.primitives import Constant

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


# Constants in jit: a large constant is not copied into the program --------------------


def constants(defn: object) -> list[np.ndarray]:
    return [b.prim.value for b in defn.bindings if isinstance(b.prim, Constant)]  # type: ignore[attr-defined]


@pytest.mark.parametrize("backend", ["numpy", "xla"])
def test_a_large_zeros_inside_jit_is_a_broadcast_not_a_copy(backend: str) -> None:
    if backend == "xla":
        pytest.importorskip("jax")
    f = shax.jit(lambda x: x + snp.zeros((2**20,)), backend=backend)
    np.testing.assert_array_equal(f(np.float64(1.5)), np.full(2**20, 1.5))
    traced = shax.trace(lambda x: x + snp.zeros((2**26,)), f64[()])
    assert [c.shape for c in constants(traced)] == [()]
    assert "broadcast [] [67108864]" in str(traced)


def test_jit_source_of_a_large_constant_stays_small() -> None:
    source = shax.jit(lambda x: x + snp.zeros((2**26,))).source(np.float64(1.0))
    assert len(source) < 400
    assert "# c1 = fromList [] [0.0]" in source


@pytest.mark.parametrize(
    "fill",
    [np.zeros(64), np.full(64, -0.0), np.full((8, 8), np.nan), np.ones(64, np.float32), np.full(64, 7, np.uint8)],
)
def test_a_uniform_constant_traced_as_a_broadcast_keeps_every_bit(fill: np.ndarray) -> None:
    x = np.zeros((), fill.dtype)
    got = shax.jit(lambda x: fill + x)(x)
    assert got.dtype == fill.dtype
    np.testing.assert_array_equal(got.view(f"u{fill.itemsize}"), (fill + x).view(f"u{fill.itemsize}"))
    assert [c.shape for c in constants(shax.trace(lambda x: fill + x, TensorType.of(x)))] == [()]


def test_constants_that_are_not_uniform_stay_whole() -> None:
    mixed = np.zeros(64)
    mixed[5] = -0.0  # -0.0 is not 0.0
    strided = np.zeros((64, 2))[:, 0]
    for a in (mixed, strided, np.arange(64.0)):
        (c,) = constants(shax.trace(lambda x: a + x, f64[()]))  # noqa: B023 - traced right away
        np.testing.assert_array_equal(c.view(np.uint64), a.view(np.uint64))


def test_a_read_only_constant_is_kept_by_reference_a_writable_one_by_value() -> None:
    frozen = np.arange(64.0)
    frozen.flags.writeable = False
    (c,) = constants(shax.trace(lambda x: frozen + x, f64[()]))
    assert c is frozen
    w = np.arange(64.0)
    f = shax.jit(lambda x: w + x)
    before = f(np.float64(0.0))
    w[0] = 100.0  # jit saw w's value when it traced, as JAX's does
    np.testing.assert_array_equal(f(np.float64(0.0)), before)


# Copies: a result is never an argument's memory ----------------------------------------


def assert_fresh(out: object, x: np.ndarray) -> None:
    assert out is not x
    assert not np.shares_memory(np.asarray(out), x)


VIEWS = {
    "itself": lambda x: x,
    "transposed": lambda x: x.T,
    "reshaped": lambda x: x.reshape(6),
    "sliced": lambda x: x[1:],
    "broadcast": lambda x: snp.broadcast_to(x, (4, 2, 3)),
}


@pytest.mark.parametrize("backend", ["numpy", "xla"])
@pytest.mark.parametrize("view", VIEWS)
def test_jit_returns_a_new_array_where_a_result_is_an_argument(backend: str, view: str) -> None:
    if backend == "xla":
        pytest.importorskip("jax")
    x = np.arange(6.0).reshape(2, 3)
    f = shax.jit(VIEWS[view], backend=backend)
    for _ in range(2):
        out = f(x)
        assert_fresh(out, x)
        np.testing.assert_array_equal(out, VIEWS[view](x))


def test_jit_copies_only_the_results_that_are_arguments() -> None:
    x = np.arange(6.0)
    assert shax.jit(lambda x: (x, snp.sin(x), x * 2)).source(x).count(".copy()") == 1
    assert ".copy()" not in shax.jit(lambda x: snp.sin(x).reshape(2, 3)).source(x)
    # x + 0 is x (forward_identities): its result is the argument, so it is copied
    assert shax.jit(lambda x: x + snp.zeros(6)).source(x).count(".copy()") == 1


def test_vmap_vjp_and_jvp_return_new_arrays_on_every_call() -> None:
    x, t = np.arange(6.0).reshape(2, 3), np.ones((2, 3))
    g = shax.vmap(lambda x: x)
    for _ in range(3):  # evaluated the first time, compiled from the second
        assert_fresh(g(x), x)
        out, vjp_fn = shax.vjp(lambda x: x, x)
        assert_fresh(out, x)
        (ct,) = vjp_fn(t)
        assert_fresh(ct, t)
        out, tangent = shax.jvp(lambda x: x, (x,), (t,))
        assert_fresh(out, x)
        assert_fresh(tangent, t)
    scaled = shax.grad(lambda x: snp.sum(x))
    np.testing.assert_array_equal(scaled(x), np.ones((2, 3)))


# Within the bound, beyond this machine: 2**48 bytes, more than a 47-bit address space holds.
HUGE = (2**45,)


@pytest.mark.parametrize("backend", ["numpy", "xla"])
def test_jit_out_of_memory_at_run_time_is_a_shax_error_at_the_callers_line(backend: str) -> None:
    if backend == "xla":
        pytest.importorskip("jax")
    f = shax.jit(lambda x: snp.broadcast_to(x, HUGE) * 2, backend=backend)
    for _ in range(2):
        with pytest.raises(shax.ShaxValueError, match=rf"^f: out of memory: .*{HERE}"):
            f(np.ones(1))


def test_grad_out_of_memory_at_run_time_is_a_shax_error_at_the_callers_line() -> None:
    g = shax.grad(lambda x: snp.sum(snp.broadcast_to(x, HUGE) * 2))
    for _ in range(2):  # evaluated, then compiled
        with pytest.raises(shax.ShaxValueError, match=rf"^grad_f: out of memory: numpy: .*256. TiB.*{HERE}"):
            g(np.ones(1))


# Huge shapes, drawn (issue 28's fuzz family): 2**40 bytes and more, beyond this machine's
# memory (a MemoryError at run time) or beyond MAX_BYTES (refused when the type is made).
HUGE_SHAPES = st.lists(st.integers(1, 2**62), min_size=1, max_size=4).filter(
    lambda shape: math.prod(shape) * 4 >= 2**40
)
# name -> the constructor on numpy values (None: it makes a view, numpy's broadcast, which
# is no allocation), and a function of x using it under a transform
HUGE_CALLS: dict[str, tuple[Any, Any]] = {
    "zeros": (snp.zeros, lambda shape: lambda x: snp.zeros(shape, np.float32) + x),
    "ones": (snp.ones, lambda shape: lambda x: snp.ones(shape, np.float32) * x),
    "full": (lambda shape: snp.full(shape, 2.0), lambda shape: lambda x: snp.full(shape, 2.0, np.float32) - x),
    "broadcast_to": (None, lambda shape: lambda x: snp.broadcast_to(x, shape) * 2.0),
    "tile": (None, lambda shape: lambda x: snp.tile(x, shape) * 2.0),
}


@given(name=st.sampled_from(sorted(HUGE_CALLS)), shape=HUGE_SHAPES, transform=st.sampled_from(["numpy", "jit", "vmap"]))
def test_fuzz_huge_shapes_are_shax_errors_naming_the_operation(name: str, shape: list[int], transform: str) -> None:
    """Refused as too large (naming the operation), or out of memory when run (naming the
    function), at the caller's line; never numpy's MemoryError or a hang."""
    constructor, function = HUGE_CALLS[name]
    assume(transform != "numpy" or constructor is not None)
    f = function(tuple(shape))
    named = rf"^(zeros|ones|full|broadcast|broadcast_to|tile|reshape|\w+: out of memory)[: ].*{HERE}"
    with pytest.raises(shax.ShaxValueError, match=named):
        if transform == "numpy":
            constructor(tuple(shape))
        elif transform == "jit":
            shax.jit(f)(np.float32(1.0))
        else:
            shax.vmap(f)(np.ones(2, np.float32))

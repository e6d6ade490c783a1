"""Steps of `shax.testing.strategies`' programs over the structured primitives, in the
form of its `FAMILIES` (a `StepMaker` per step, by family):

- "linalg", on matrices (a value's last two axes, stacked over the others) made well
  conditioned, so that every decomposition is smooth where the program draws it:
  `spd(v) = t tᵀ + n·I` with t = tanh(v) (n × k, so its eigenvalues lie in [n, n + k])
  for `cholesky`, `inv`, `solve` and `slogdet`; `sep(v) = t tᵀ / k + diag(0, 8, 16, ...)`
  for `eigh` (Gershgorin's discs are apart: eigenvalues at least 3 apart, so their
  vectors are smooth too; a vector is read as its square, which its sign does not
  change); `t + ½ + 5·I` (tall) for `qr`, and `t + diag(4, 12, 20, ...)` for `svd`
  (singular values at least 1, and 2 apart);
- "window": `conv_general_dilated` (any axis order, strides, dilations, negative pads,
  feature or batch groups), `reduce_window_sum`, `dynamic_slice` and
  `dynamic_update_slice` at starts computed in the program (0·Σv + constants: traced,
  but not moved by the values, so the step stays smooth), and `checkpoint_name`;
- "nonsmooth_structured" (left out of smooth programs): `reduce_window_max`, the slices
  at starts the values decide (⌊c + 1.5·tanh Σv⌋, clamped or counted from the end as
  XLA's), and `bitcast_convert_type` (the sign bit flipped through the integer of the
  float's width: −v, whose derivative bits do not carry).
"""

from __future__ import annotations

import builtins
import math
from collections.abc import Callable
from typing import Any

import numpy as np
from hypothesis import strategies as st

import shax
import shax.numpy as snp
from shax.core.types import DType, f32
from shax.testing.strategies import Draw, Step, StepMaker, Value, _fits, _pick
from typeclasses import (
    bitcast_convert_type,
    bitwise_xor,
    conv_general_dilated,
    convert_element_type,
    dynamic_slice,
    dynamic_update_slice,
    floor,
    reduce_sum,
    reduce_window_max,
    reduce_window_sum,
    tanh,
    transpose,
)

Made = tuple[Step, Value] | None


def _mT(x: Any) -> Any:  # noqa: N802 - numpy's name
    rank = len(np.shape(x))
    return transpose(x, [*range(rank - 2), rank - 1, rank - 2])


def _gram(v: Any) -> Any:
    t = tanh(v)
    return t @ _mT(t)


def _like(x: Any, constant: np.ndarray) -> np.ndarray:
    """A numpy constant in x's dtype: an f64 one would widen an f32 x (numpy's rules)."""
    return constant.astype(getattr(x.dtype, "numpy", x.dtype))


def _spd(v: Any) -> Any:
    """t tᵀ + n·I: symmetric, eigenvalues in [n, n + k] (t = tanh v is n × k, |t| < 1)."""
    n = np.shape(v)[-2]
    return _gram(v) + _like(v, n * np.eye(n))


def _separated(v: Any) -> Any:
    """t tᵀ / k + diag(0, 8, ...): entries of t tᵀ / k within [-1, 1], so Gershgorin's
    discs (radius n - 1 ≤ 2 about 8i to 8i + 1) are apart, the eigenvalues distinct."""
    n, k = np.shape(v)[-2:]
    return _gram(v) * (1.0 / k) + _like(v, np.diag(8.0 * np.arange(n)))


def _matrices(draw: Draw, values: list[Value]) -> int | None:
    return _pick(draw, values, lambda v: v.rank >= 2)


def _spd_step(text: str, f: Callable[[Any], Any], bound: Callable[[int, int], float], matrix: bool = True) -> StepMaker:
    """`f(spd(v))` of a stack of matrices v (n × k): a stack of n × n matrices (`matrix`)
    or of numbers; `bound(n, k)` bounds it."""

    def make(draw: Draw, values: list[Value], dtype: DType) -> Made:
        k = _matrices(draw, values)
        if k is None:
            return None
        v = values[k]
        shape = v.shape[:-1] + (v.shape[-2],) if matrix else v.shape[:-2]
        return Step(text, (k,), lambda x: f(_spd(x))), Value(shape, bound(*v.shape[-2:]))

    return make


def _signed_log_det(a: Any) -> Any:
    sign, log_abs_det = snp.linalg.slogdet(a)
    return sign * log_abs_det


def _solve(draw: Draw, values: list[Value], dtype: DType) -> Made:
    """x with spd(v) x = w: w a stack of n-row matrices like v's, or one vector of n."""
    k = _matrices(draw, values)
    if k is None:
        return None
    v = values[k]
    n = v.shape[-2]
    j = _pick(draw, values, lambda w: w.shape[:-1] == v.shape[:-1] or (v.rank == 2 and w.shape == (n,)))
    assert j is not None  # v itself qualifies
    # |x| ≤ ‖x‖ ≤ ‖w‖ / n ≤ √n · |w| / n: the eigenvalues are at least n
    return Step("solve(spd({0}), {1})", (k, j), lambda x, w: snp.linalg.solve(_spd(x), w)), values[j]


def _eigh(draw: Draw, values: list[Value], dtype: DType) -> Made:
    k = _matrices(draw, values)
    if k is None:
        return None
    v = values[k]
    n = v.shape[-2]
    if draw(st.booleans()):
        step = Step("eigh(sep({0})).eigenvalues", (k,), lambda x: snp.linalg.eigh(_separated(x))[0])
        return step, Value(v.shape[:-1], 8.0 * (n - 1) + n)
    vectors = Step("eigh(sep({0})).eigenvectors ** 2", (k,), lambda x: snp.linalg.eigh(_separated(x))[1] ** 2.0)
    return vectors, Value(v.shape[:-1] + (n,), 1.0)


def _qr(draw: Draw, values: list[Value], dtype: DType) -> Made:
    """Q or R of tanh(v) + ½ + 5·I, v (or vᵀ) tall: columns independent (σ ≥ 5 − ‖tanh v + ½‖
    ≥ 5 − 1.5·√6 > 1). The ½ keeps the columns below the diagonal off 0, where LAPACK's
    Householder step skips its reflection and the signs of Q and R jump (v = 0 is drawn often)."""
    k = _matrices(draw, values)
    if k is None:
        return None
    v = values[k]
    wide = v.shape[-2] < v.shape[-1]
    m, n = sorted(v.shape[-2:], reverse=True)
    part = draw(st.sampled_from([0, 1]))

    def apply(x: Any) -> Any:
        a = tanh(_mT(x) if wide else x) + _like(x, 0.5 + 5.0 * np.eye(m, n))
        return snp.linalg.qr(a)[part]

    shown = "{0}ᵀ" if wide else "{0}"
    stack = v.shape[:-2]
    shape = stack + ((m, n) if part == 0 else (n, n))
    return Step(f"qr(tanh({shown}) + ½ + 5·I)[{part}]", (k,), apply), Value(shape, 1.0 if part == 0 else 5.0 + 4.5)


def _svd(draw: Draw, values: list[Value], dtype: DType) -> Made:
    """U², S or Vh² (thin) of tanh(v) + diag(4, 12, ...): singular values within 3 of those."""
    k = _matrices(draw, values)
    if k is None:
        return None
    v = values[k]
    m, n = v.shape[-2:]
    r = builtins.min(m, n)
    part = draw(st.sampled_from([0, 1, 2]))
    diagonal = np.zeros((m, n))
    diagonal[range(r), range(r)] = 4.0 + 8.0 * np.arange(r)

    def apply(x: Any) -> Any:
        found = snp.linalg.svd(tanh(x) + _like(x, diagonal), full_matrices=False)[part]
        return found if part == 1 else found**2.0

    shape = v.shape[:-2] + [(m, r), (r,), (r, n)][part]
    shown = ["U ** 2", "S", "Vh ** 2"][part]
    return Step(f"svd(tanh({{0}}) + diag(4, 12, ...)).{shown}", (k,), apply), Value(shape, 8.0 * r + 3.0)


def _divisors(n: int) -> list[int]:
    return [d for d in range(1, n + 1) if n % d == 0]


def _conv(draw: Draw, values: list[Value], dtype: DType) -> Made:
    """conv_general_dilated of a value (batch, feature and 0-1 spatial axes, in a drawn
    order) with a kernel value of its rank, in feature or batch groups."""
    k = _pick(draw, values, lambda v: v.rank in (2, 3))
    if k is None:
        return None
    x = values[k]
    r = x.rank
    lhs_spec = tuple(draw(st.permutations(range(r))))
    batch, features = x.shape[lhs_spec[0]], x.shape[lhs_spec[1]]
    groups = draw(st.sampled_from(_divisors(features)))
    j = _pick(draw, values, lambda w: w.rank == r and features // groups in w.shape)
    if j is None:
        return None
    y = values[j]
    in_axis = draw(st.sampled_from([a for a in range(r) if y.shape[a] == features // groups]))
    out_axes = [a for a in range(r) if a != in_axis and y.shape[a] % groups == 0]
    if not out_axes:
        return None
    out_axis = draw(st.sampled_from(out_axes))
    rhs_spec = (out_axis, in_axis, *(a for a in range(r) if a not in (out_axis, in_axis)))
    out_features = y.shape[out_axis]
    batch_groups = 1
    if groups == 1:
        batch_groups = draw(st.sampled_from([b for b in _divisors(batch) if out_features % b == 0]))
    strides, padding, lhs_d, rhs_d, sizes = [], [], [], [], []
    for a, b in zip(lhs_spec[2:], rhs_spec[2:]):
        stride, ld, rd = (draw(st.integers(1, 2)) for _ in range(3))
        lo, hi = draw(st.integers(-1, 1)), draw(st.integers(-1, 1))
        extent = (x.shape[a] - 1) * ld + 1 + lo + hi
        kernel = (y.shape[b] - 1) * rd + 1
        if extent < kernel:
            return None
        strides.append(stride)
        padding.append((lo, hi))
        lhs_d.append(ld)
        rhs_d.append(rd)
        sizes.append((extent - kernel) // stride + 1)
    out_spec = tuple(draw(st.permutations(range(r))))
    shape = [0] * r
    for axis, size in zip(out_spec, [batch // batch_groups, out_features, *sizes]):
        shape[axis] = size
    kernel_size = math.prod(y.shape[b] for b in rhs_spec[2:])
    result = Value(tuple(shape), x.bound * y.bound * (features // groups) * kernel_size)
    if not _fits(result.shape, result.bound):
        return None
    specs = (lhs_spec, rhs_spec, out_spec)
    static = (strides, padding, lhs_d, rhs_d, specs, groups, batch_groups)

    def apply(lhs: Any, rhs: Any) -> Any:
        return conv_general_dilated(lhs, rhs, *static)

    return Step(f"conv_general_dilated({{0}}, {{1}}, {', '.join(map(str, static))})", (k, j), apply), result


def _window(kind: str) -> StepMaker:
    """reduce_window_sum or _max over windows of 1 to n + 1 elements per axis, strides 1-2,
    pads 0-1; a max's windows each reach into the value (none all padding, -inf)."""

    def make(draw: Draw, values: list[Value], dtype: DType) -> Made:
        k = _pick(draw, values, lambda v: v.rank >= 1)
        if k is None:
            return None
        x = values[k]
        window, strides, padding, sizes = [], [], [], []
        for n in x.shape:
            lo, hi = draw(st.integers(0, 1)), draw(st.integers(0, 1))
            low = builtins.max(lo, hi) + 1 if kind == "max" else 1
            if low > n + lo + hi:
                return None
            w, s = draw(st.integers(low, n + lo + hi)), draw(st.integers(1, 2))
            window.append(w)
            strides.append(s)
            padding.append((lo, hi))
            sizes.append((n + lo + hi - w) // s + 1)
        bound = x.bound * (math.prod(window) if kind == "sum" else 1)
        if not _fits(tuple(sizes), bound):
            return None
        f = reduce_window_sum if kind == "sum" else reduce_window_max
        text = f"reduce_window_{kind}({{0}}, {window}, {strides}, {padding})"
        return Step(text, (k,), lambda v: f(v, window, strides, padding)), Value(tuple(sizes), bound)

    return make


def _starts(x: Any, offsets: np.ndarray, moved: bool) -> Any:
    """The i32 start vector `offsets`, traced from x: ⌊offsets + 1.5·tanh Σx⌋ if `moved`
    (the values decide it), else 0·Σx + offsets."""
    total = reduce_sum(x, list(range(len(np.shape(x)))))
    shift = 1.5 * tanh(total) if moved else total * 0.0
    return convert_element_type(floor(shift + _like(x, offsets)), np.int32)


def _dynamic(moved: bool) -> StepMaker:
    """dynamic_slice of a value, or dynamic_update_slice of one with another that fits in
    it, at starts from -1 to past the end (clamped, a negative one counted from the end)."""

    def make(draw: Draw, values: list[Value], dtype: DType) -> Made:
        k = _pick(draw, values, lambda v: v.rank >= 1)
        if k is None:
            return None
        x = values[k]
        offsets = np.array([draw(st.integers(-1, n)) for n in x.shape], np.float64)
        how = "moved by the values" if moved else "traced"
        if draw(st.booleans()):
            sizes = [draw(st.integers(1, n)) for n in x.shape]
            text = f"dynamic_slice({{0}}, {offsets.tolist()} {how}, {sizes})"
            step = Step(text, (k,), lambda v: dynamic_slice(v, _starts(v, offsets, moved), sizes))
            return step, Value(tuple(sizes), x.bound)
        j = _pick(draw, values, lambda u: u.rank == x.rank and all(a <= b for a, b in zip(u.shape, x.shape)))
        assert j is not None  # x itself fits
        text = f"dynamic_update_slice({{0}}, {{1}}, {offsets.tolist()} {how})"
        step = Step(text, (k, j), lambda v, u: dynamic_update_slice(v, u, _starts(v, offsets, moved)))
        return step, Value(x.shape, builtins.max(x.bound, values[j].bound))

    return make


def _checkpoint_name(draw: Draw, values: list[Value], dtype: DType) -> Made:
    k = _pick(draw, values)
    name = draw(st.sampled_from(["a", "h"]))
    return Step(f"checkpoint_name({{0}}, {name!r})", (k,), lambda v: shax.checkpoint_name(v, name)), values[k]


def _flip_sign_bits(draw: Draw, values: list[Value], dtype: DType) -> Made:
    """−v as bits: v read as the integer of its width, the sign bit flipped, read back."""
    k = _pick(draw, values)
    floating, integer = (np.float32, np.int32) if dtype == f32 else (np.float64, np.int64)
    sign = integer(np.iinfo(integer).min)

    def apply(v: Any) -> Any:
        return bitcast_convert_type(bitwise_xor(bitcast_convert_type(v, integer), sign), floating)

    name = np.dtype(integer).name
    return Step(f"bitcast(bitcast({{0}}, {name}) ^ {sign}, its dtype)", (k,), apply), values[k]


FAMILIES: dict[str, dict[str, StepMaker]] = {
    "linalg": {
        # |L| ≤ √(largest eigenvalue) ≤ √(n + k)
        "cholesky": _spd_step("cholesky(spd({0}))", snp.linalg.cholesky, lambda n, k: math.sqrt(n + k)),
        # ‖spd(v)⁻¹‖ ≤ 1/n
        "inv": _spd_step("inv(spd({0}))", snp.linalg.inv, lambda n, k: 1.0),
        # sign · log|det|: the sign is 1, log det ≤ n log(n + k)
        "slogdet": _spd_step(
            "sign · logabsdet of slogdet(spd({0}))", _signed_log_det, lambda n, k: n * math.log(n + k), matrix=False
        ),
        "solve": _solve,
        "eigh": _eigh,
        "qr": _qr,
        "svd": _svd,
    },
    "window": {
        "conv": _conv,
        "reduce_window_sum": _window("sum"),
        "dynamic_slice": _dynamic(moved=False),
        "checkpoint_name": _checkpoint_name,
    },
    "nonsmooth_structured": {
        "reduce_window_max": _window("max"),
        "dynamic_slice": _dynamic(moved=True),
        "bitcast": _flip_sign_bits,
    },
}

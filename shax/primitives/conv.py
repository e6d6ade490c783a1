"""`conv_general_dilated`: XLA's convolution, bilinear in the input (lhs) and the kernel (rhs).

    out[n, o, p...] = Σ_{c, k...} lhs'[n, c, p·s + k...] · rhs'[o, c, k...]

where lhs' is lhs dilated by `lhs_dilation` (zeros between its elements) and padded (a
negative pad crops), rhs' the kernel dilated by `rhs_dilation`, s the strides. With
`feature_group_count` G the channels and the output features split into G groups, each
convolved on its own; with `batch_group_count` B the batch does (the result has N / B
examples), which is how the kernel's cotangent of a grouped convolution is written.
The axes are named by `dimension_numbers`: lhs (batch, feature, spatial...), rhs (out
feature, in feature, spatial...), result (batch, feature, spatial...), spatial axes paired
in that order.

Its derivative comes from bilinearity; each transpose is a convolution (JAX's
`_conv_general_dilated_transpose_lhs/rhs`): of the cotangent with the reversed kernel,
strides and lhs dilation swapped, for lhs; of lhs with the cotangent as kernel, strides
and rhs dilation swapped, for rhs.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, ClassVar

import attrs

import typeclasses as tc
from shax.core.errors import ShaxValueError
from shax.core.primitive import Linearity, Primitive, int_pairs, integer, ints
from shax.core.types import TensorType, bool_
from shax.rules.batch import batch_rule
from shax.rules.cost import cost_rule
from shax.rules.export import export_rule
from shax.rules.linearize import Zero, materialized
from shax.rules.transpose import Linear, transpose_rule
from shax.rules.types import type_rule

if TYPE_CHECKING:
    from shax.tracing.tracer import Tracer

__all__ = ["ConvGeneralDilated", "dilate", "window_counts"]

Specs = tuple[tuple[int, ...], tuple[int, ...], tuple[int, ...]]


def _specs(value: Any) -> Specs:
    try:
        lhs, rhs, out = (ints(v) for v in value)
    except (TypeError, ValueError):
        raise ShaxValueError(f"dimension_numbers must be three lists of axes, got {value!r}") from None
    return lhs, rhs, out


def dilate(n: int, d: int) -> int:
    """The size of an axis of n elements with d - 1 zeros between neighbours."""
    return 0 if n == 0 else (n - 1) * d + 1


def window_counts(
    sizes: Sequence[int], window: Sequence[int], strides: Sequence[int], padding: Sequence[tuple[int, int]]
) -> tuple[int, ...]:
    """How many windows fit along each axis of `sizes` once padded."""
    return tuple(
        max((n + lo + hi - w) // s + 1, 0) if n + lo + hi >= w else 0
        for n, w, s, (lo, hi) in zip(sizes, window, strides, padding)
    )


@attrs.frozen
class ConvGeneralDilated(Primitive):
    name: ClassVar[str] = "conv_general_dilated"
    function = tc.conv_general_dilated
    linearity: ClassVar[tuple[Linearity, ...]] = (Linearity.BILINEAR, Linearity.BILINEAR)
    window_strides: tuple[int, ...] = attrs.field(converter=ints)
    padding: tuple[tuple[int, int], ...] = attrs.field(converter=int_pairs)
    lhs_dilation: tuple[int, ...] = attrs.field(converter=ints)
    rhs_dilation: tuple[int, ...] = attrs.field(converter=ints)
    dimension_numbers: Specs = attrs.field(converter=_specs)
    feature_group_count: int = attrs.field(converter=integer)
    batch_group_count: int = attrs.field(converter=integer)

    def with_(self, **changes: Any) -> ConvGeneralDilated:
        return attrs.evolve(self, **changes)


def _spatial(spec: Sequence[int]) -> list[int]:
    return list(spec[2:])


@type_rule(ConvGeneralDilated)
def _conv_type(prim: ConvGeneralDilated, operands: Sequence[TensorType]) -> TensorType:
    lhs, rhs = operands
    if lhs.dtype != rhs.dtype or lhs.dtype == bool_:
        raise prim.fail("operands need the same numeric dtype", lhs, rhs)
    if lhs.rank != rhs.rank or lhs.rank < 2:
        raise prim.fail("lhs and rhs need the same rank, at least 2", lhs, rhs)
    rank = lhs.rank - 2
    for spec in prim.dimension_numbers:
        if sorted(spec) != list(range(lhs.rank)):
            message = f"dimension_numbers {[list(s) for s in prim.dimension_numbers]} must each order the axes"
            raise prim.fail(message, lhs, rhs, error=ShaxValueError)
    params = (prim.window_strides, prim.padding, prim.lhs_dilation, prim.rhs_dilation)
    if any(len(p) != rank for p in params):
        message = f"strides, padding and dilations need one entry per spatial axis ({rank})"
        raise prim.fail(message, lhs, rhs, error=ShaxValueError)
    if any(v < 1 for v in (*prim.window_strides, *prim.lhs_dilation, *prim.rhs_dilation)):
        raise prim.fail("strides and dilations must be positive", lhs, rhs, error=ShaxValueError)
    (ln, lc, *ls), (ro, ri, *rs) = prim.dimension_numbers[0], prim.dimension_numbers[1]
    g, b = prim.feature_group_count, prim.batch_group_count
    n, c, o, i = lhs.shape[ln], lhs.shape[lc], rhs.shape[ro], rhs.shape[ri]
    if g < 1 or b < 1 or (g > 1 and b > 1):
        raise prim.fail(f"group counts {g}, {b}: positive, one of them 1", lhs, rhs, error=ShaxValueError)
    if c % g or c // g != i or o % g or n % b or o % b:
        message = f"{c} input features in {g} groups of the kernel's {i}, {o} output features, batch {n} in {b} groups"
        raise prim.fail(f"the sizes do not fit: {message}", lhs, rhs)
    kernel = [dilate(rhs.shape[a], d) for a, d in zip(rs, prim.rhs_dilation)]
    sizes = [dilate(lhs.shape[a], d) for a, d in zip(ls, prim.lhs_dilation)]
    out = (n // b, o, *window_counts(sizes, kernel, prim.window_strides, prim.padding))
    shape = [0] * lhs.rank
    for axis, size in zip(prim.dimension_numbers[2], out):
        shape[axis] = size
    return lhs.with_shape(tuple(shape))


def _into(src: int, dst: int, x: Any) -> Any:
    """Axis `src` of x merged into axis `dst` (numbered without src) as its major part."""
    shape = list(tc.shape(x))
    perm = [a for a in range(len(shape)) if a != src]
    perm.insert(dst, src)
    size = shape.pop(src)
    shape[dst] *= size
    return tc.reshape(tc.transpose(x, perm) if perm != sorted(perm) else x, shape)


def _out_of(src: int, size: int, x: Any) -> Any:
    """Axis `src` of x split into (size, rest)."""
    shape = list(tc.shape(x))
    shape[src : src + 1] = [size, shape[src] // size]
    return tc.reshape(x, shape)


def _swapped(spec: Sequence[int]) -> tuple[int, ...]:
    return (spec[1], spec[0], *spec[2:])


def _shape(x: Any) -> tuple[int, ...]:
    return tuple(x.type.shape) if isinstance(x, Linear) else tuple(tc.shape(x))


def _taken(shape: Sequence[int], axes: Sequence[int]) -> list[int]:
    return [shape[a] for a in axes]


# conv, lhs: ⟨ct, conv(dx, w)⟩ = ⟨conv(ct, rev w), dx⟩, the kernel's features swapped (and
# its groups moved into them), strides turned into lhs dilation, the padding making the
# result lhs's shape (JAX's `_conv_general_vjp_lhs_padding`)
def _transpose_lhs(prim: ConvGeneralDilated, ct: Any, lhs_shape: tuple[int, ...], rhs: Any) -> Any:
    lhs_spec, rhs_spec, out_spec = prim.dimension_numbers
    g, b = prim.feature_group_count, prim.batch_group_count
    rhs_shape = _shape(rhs)
    if g > 1 or b > 1:
        rhs = _into(rhs_spec[0], rhs_spec[1], _out_of(rhs_spec[0], g * b, rhs))
    kernel = [dilate(k, d) for k, d in zip(_taken(rhs_shape, _spatial(rhs_spec)), prim.rhs_dilation)]
    sizes = [dilate(n, d) for n, d in zip(_taken(lhs_shape, _spatial(lhs_spec)), prim.lhs_dilation)]
    outs = [dilate(n, s) for n, s in zip(_taken(tc.shape(ct), _spatial(out_spec)), prim.window_strides)]
    before = [k - lo - 1 for k, (lo, _) in zip(kernel, prim.padding)]
    padding = [(lo, n + k - 1 - m - lo) for lo, n, k, m in zip(before, sizes, kernel, outs)]
    transposed = prim.with_(
        window_strides=prim.lhs_dilation,
        padding=padding,
        lhs_dilation=prim.window_strides,
        dimension_numbers=(out_spec, _swapped(rhs_spec), lhs_spec),
        feature_group_count=g * b,
        batch_group_count=1,
    )
    out = transposed.apply(ct, tc.rev(rhs, _spatial(rhs_spec)))
    if b > 1:
        out = _into(lhs_spec[1], lhs_spec[0], _out_of(lhs_spec[1], b, out))
    return out


# conv, rhs: ⟨ct, conv(x, dw)⟩ = ⟨conv(x, ct), dw⟩ with batch and features swapped, feature
# groups turned into batch groups (and back), strides turned into rhs dilation (JAX's
# `_conv_general_vjp_rhs_padding`)
def _transpose_rhs(prim: ConvGeneralDilated, ct: Any, lhs: Any, rhs_shape: tuple[int, ...]) -> Any:
    lhs_spec, rhs_spec, out_spec = prim.dimension_numbers
    ct_shape = tuple(tc.shape(ct))
    if math.prod(ct_shape) == 0:
        return materialized(Zero(TensorType(ct.type.dtype, rhs_shape)))
    kernel = [dilate(k, d) for k, d in zip(_taken(rhs_shape, _spatial(rhs_spec)), prim.rhs_dilation)]
    sizes = [dilate(n, d) for n, d in zip(_taken(_shape(lhs), _spatial(lhs_spec)), prim.lhs_dilation)]
    outs = [dilate(n, s) for n, s in zip(_taken(ct_shape, _spatial(out_spec)), prim.window_strides)]
    padding = [(lo, m - n + k - lo - 1) for (lo, _), n, k, m in zip(prim.padding, sizes, kernel, outs)]
    transposed = prim.with_(
        window_strides=prim.rhs_dilation,
        padding=padding,
        rhs_dilation=prim.window_strides,
        dimension_numbers=(_swapped(lhs_spec), _swapped(out_spec), _swapped(rhs_spec)),
        feature_group_count=prim.batch_group_count,
        batch_group_count=prim.feature_group_count,
    )
    return transposed.apply(lhs, ct)


@transpose_rule(ConvGeneralDilated)
def _conv_transpose(prim: ConvGeneralDilated, ct: Tracer, operands: Sequence[Any]) -> tuple[Any, Any]:
    lhs, rhs = operands
    if isinstance(lhs, Linear):
        return _transpose_lhs(prim, ct, tuple(lhs.type.shape), rhs), None
    return None, _transpose_rhs(prim, ct, lhs, tuple(rhs.type.shape))


# conv batched (JAX's batching rule): a batched lhs's examples join its batch axis (inside
# each batch group); a batched kernel's join its output features (inside each group); both
# batched, each example is one more feature group (or batch group).
@batch_rule(ConvGeneralDilated)
def _conv_batch(prim: ConvGeneralDilated, operands: Sequence[Tracer], dims: Sequence[int | None]) -> tuple[Any, int]:
    (lhs, rhs), (dl, dr) = operands, dims
    lhs_spec, rhs_spec, out_spec = prim.dimension_numbers
    g, b = prim.feature_group_count, prim.batch_group_count
    if dl is not None and dr is not None:
        size = tc.shape(lhs)[dl]
        if b > 1:
            lhs, prim = _into(dl, lhs_spec[0], lhs), prim.with_(batch_group_count=b * size)
        else:
            lhs, prim = _into(dl, lhs_spec[1], lhs), prim.with_(feature_group_count=g * size)
        return _out_of(out_spec[1], size, prim.apply(lhs, _into(dr, rhs_spec[0], rhs))), out_spec[1]
    if dl is not None:
        size = tc.shape(lhs)[dl]
        if b > 1:
            lhs = _out_of(lhs_spec[0] + (dl <= lhs_spec[0]), b, lhs)
            lhs = _into(lhs_spec[0], lhs_spec[0], _into(dl + (lhs_spec[0] < dl), lhs_spec[0] + 1, lhs))
        else:
            lhs = _into(dl, lhs_spec[0], lhs)
        return _out_of(out_spec[0], size, prim.apply(lhs, rhs)), out_spec[0]
    assert dr is not None, "a batch rule runs when an operand is batched"
    size = tc.shape(rhs)[dr]
    if g == 1 and b == 1:
        return _out_of(out_spec[1], size, prim.apply(lhs, _into(dr, rhs_spec[0], rhs))), out_spec[1]
    groups = g * b
    rhs = _out_of(rhs_spec[0] + (dr <= rhs_spec[0]), groups, rhs)
    rhs = _into(rhs_spec[0], rhs_spec[0], _into(dr + (rhs_spec[0] < dr), rhs_spec[0] + 1, rhs))
    out = _out_of(out_spec[1] + 1, size, _out_of(out_spec[1], groups, prim.apply(lhs, rhs)))
    return _into(out_spec[1], out_spec[1] + 1, out), out_spec[1]


# conv: each result element is (input features per group)·(kernel elements) multiply-adds
@cost_rule(ConvGeneralDilated)
def _conv_cost(prim: ConvGeneralDilated, operands: Sequence[TensorType], out: TensorType) -> int:
    rhs = operands[1]
    rhs_spec = prim.dimension_numbers[1]
    return 2 * out.size * rhs.shape[rhs_spec[1]] * math.prod(rhs.shape[a] for a in _spatial(rhs_spec))


# conv_general_dilated: XLA's, with shax's dimension numbers and explicit padding
@export_rule(ConvGeneralDilated)
def _conv_export(prim: ConvGeneralDilated, operands: Sequence[Any], out: TensorType) -> Any:
    from jax import lax

    lhs, rhs = operands
    return lax.conv_general_dilated(
        lhs,
        rhs,
        prim.window_strides,
        prim.padding,
        prim.lhs_dilation,
        prim.rhs_dilation,
        lax.ConvDimensionNumbers(*prim.dimension_numbers),
        prim.feature_group_count,
        prim.batch_group_count,
    )

"""The value of every binding of the programs `shax.explain` evaluates, for the page
(`shax.tools.html`: shown on hover and on a click), and the dot-product test of the transpose.

Each program runs once more with every binding as an output (the `evaluate` of the
stages, on numpy values): the primal programs on x, the linear one on dx and the
residuals, the transposed one on ct and the residuals, the zipped one on x and ct. A
value prints in full when small (up to `FULL` elements), else as its shape, min, max and
mean, as treescope summarises an array.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from shax.core.ir import Definition, LinearizedDefinition
from shax.tracing.evaluate import evaluate

if TYPE_CHECKING:
    from shax.tools.explain import Explanation

FULL = 16  # elements up to which a value prints in full
_SHORT = {"float32": "f32", "float64": "f64", "int32": "i32", "int64": "i64", "uint8": "u8"}  # numpy's -> ours


def all_values(defn: Definition, args: Sequence[Any]) -> dict[int, Any]:
    """var id -> its value, for every binding of `defn` run on `args`."""
    results = tuple(v for b in defn.bindings for v in b.vars)
    every = Definition(defn.name, defn.arg_types, defn.bindings, results)
    return {v.id: value for v, value in zip(results, evaluate(every, *args))}


def linearized_values(
    lin: LinearizedDefinition, primals: Sequence[Any], linear_args: Sequence[Any]
) -> tuple[dict[int, Any], dict[int, Any]]:
    """The values of the primal program's bindings on `primals`, and of the linear
    program's on `linear_args` (tangents or cotangents) and the residuals."""
    primal = all_values(lin.primal, primals)
    residuals = [primal[v.id] for v in lin.primal.outputs[len(lin.primal.outputs) - lin.num_residuals :]]
    return primal, all_values(lin.linear, [*linear_args, *residuals])


def summary(value: Any) -> str:
    """`[1. 2. 3.]` for a small array; `f32[100, 3] min -2.1 max 3.4 mean 0.012` for a larger one."""
    array = np.asarray(value)
    if array.size <= FULL:
        return np.array2string(array, precision=6, separator=" ", max_line_width=1_000_000).replace("\n", "")
    shape = ", ".join(map(str, array.shape))
    kind = _SHORT.get(array.dtype.name, array.dtype.name)
    if array.dtype.kind == "b":
        return f"{kind}[{shape}] {int(array.sum())} true"
    numbers = array.astype(np.float64)
    return f"{kind}[{shape}] min {numbers.min():.4g} max {numbers.max():.4g} mean {numbers.mean():.4g}"


def dot_products(e: Explanation) -> tuple[float, float]:
    """(⟨ct, J·dx⟩, ⟨Jᵀ·ct, dx⟩): the cotangents against df(dx), and dft(ct) against the
    tangents, in float64. Equal (to rounding) when the transpose is right."""
    forward = sum(_inner(c, t) for c, t in zip(e.cotangents, e.output_tangents))
    backward = sum(_inner(c, t) for c, t in zip(e.input_cotangents, e.tangents))
    return float(forward), float(backward)


def _inner(a: Any, b: Any) -> float:
    left, right = np.asarray(a), np.asarray(b)
    if left.dtype.kind != "f" or right.dtype.kind != "f" or left.shape != right.shape:
        return 0.0  # an integer or boolean argument or output is not differentiated: its tangent is zero
    return float(np.sum(left.astype(np.float64) * right.astype(np.float64)))

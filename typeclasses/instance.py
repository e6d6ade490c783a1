"""The base of every typeclass instance, holding the default methods.

Like Haskell's default class methods, a default is written in terms of the
typeclass functions, so it works for every instance that provides the primitives.
An instance may override a default (the tracer keeps `dot` as one operation).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from numpy import broadcast_shapes

import typeclasses.functions as tc
from typeclasses.dispatch import ArgumentsError, MissingMethodError, error


class Instance:
    """Subclasses implement every primitive method of Floating, Ord and HNP."""

    def level(self, value: Any) -> int:
        """How deeply nested the value's interpretation is; 0 for constants."""
        raise NotImplementedError

    def __getattr__(self, method: str) -> Any:
        """Reached only for a method the instance lacks: a clear error, not Python's own."""
        if method.startswith("__"):  # protocols probed by copy, pickle, ...: not typeclass functions
            raise AttributeError(method)
        reason = f"the {type(self).__name__} typeclass instance does not implement it"
        raise error(MissingMethodError, method, (), reason)

    # logBase b x = log x / log b
    def log_base(self, base: Any, x: Any) -> Any:
        return tc.div(tc.log(x), tc.log(base))

    # square x = x · x
    def square(self, x: Any) -> Any:
        return tc.mul(x, x)

    # reciprocal x = 1 / x
    def reciprocal(self, x: Any) -> Any:
        return tc.div(1.0, x)

    # rsqrt x = 1 / √x
    def rsqrt(self, x: Any) -> Any:
        return tc.div(1.0, tc.sqrt(x))

    # log(eˣ + eʸ) = m + log(eˣ⁻ᵐ + eʸ⁻ᵐ) for every m; with m = max(x, y) the exponents are at
    # most 0, so nothing overflows, and m + log1p(expm1(0) + e^−|x−y|) is numpy's formula,
    # max + log1p(e^−|x−y|). An identity in m, its derivatives of every order are
    # log(eˣ + eʸ)'s whatever m's are: eˣ⁻ᵒᵘᵗ dx + eʸ⁻ᵒᵘᵗ dy, ½ each at a tie (JAX's).
    # Where x − y is NaN (infinities of one sign, or a NaN), x + y; where it is ±∞, max(x, y)
    # (numpy's values; gradient 1 for the larger operand); 0 for the operands of the other
    # branch there, so that its derivatives hold no NaN.
    def logaddexp(self, x: Any, y: Any) -> Any:
        d = tc.sub(x, y)
        undefined, far = tc.ne(d, d), tc.eq(tc.abs(d), float("inf"))
        aside, shape = tc.logical_or(undefined, far), tuple(tc.shape(d))
        xs, ys = (_aside(v, aside, shape) for v in (x, y))
        m = tc.max(xs, ys)
        a, b = tc.sub(xs, m), tc.sub(ys, m)
        rest = tc.select(tc.ge(xs, ys), tc.add(tc.expm1(a), tc.exp(b)), tc.add(tc.exp(a), tc.expm1(b)))
        return tc.select(undefined, tc.add(x, y), tc.select(far, tc.max(x, y), tc.add(m, tc.log1p(rest))))

    # sign = signum (numpy's name)
    def sign(self, x: Any) -> Any:
        return tc.signum(x)

    # maximum = max, minimum = min (numpy's names)
    def maximum(self, x: Any, y: Any) -> Any:
        return tc.max(x, y)

    def minimum(self, x: Any, y: Any) -> Any:
        return tc.min(x, y)

    # clip x lo hi = min(max(x, lo), hi) (numpy's order: hi wins where lo > hi)
    def clip(self, x: Any, lo: Any, hi: Any) -> Any:
        return tc.min(tc.max(x, lo), hi)

    # where c x y = select c x y, the three broadcast to their common shape (numpy's
    # rules: trailing axes line up); a Python number branch stays a number, as select takes.
    def where(self, cond: Any, x: Any, y: Any) -> Any:
        shapes = [tuple(tc.shape(o)) for o in (cond, x, y)]
        try:
            shape = broadcast_shapes(*shapes)
        except ValueError:
            raise error(ArgumentsError, "where", (cond, x, y), f"shapes {shapes} do not broadcast together") from None
        x, y = (o if isinstance(o, (int, float)) else tc.broadcast_to(o, shape) for o in (x, y))
        return tc.select(tc.broadcast_to(cond, shape), x, y)

    # dot = dot_general contracting x's last axis with y's second-to-last (numpy).
    def dot(self, x: Any, y: Any) -> Any:
        return tc.dot_general(x, y, tc.dot_dims(len(tc.shape(x)), len(tc.shape(y))))

    # mean x = Σ x / n, n the number of elements summed
    def mean(self, x: Any, axes: Sequence[int]) -> Any:
        shape = tc.shape(x)
        return tc.div(tc.reduce_sum(x, axes), float(math.prod(shape[a] for a in axes)))

    # var x = Σ |x − mean x|² / (n − ddof), the deviations from the mean broadcast back;
    # numpy's divisor, clamped at 0 (so ∞ or NaN where ddof ≥ n)
    def var(self, x: Any, axes: Sequence[int], ddof: int = 0) -> Any:
        shape = tc.shape(x)
        mean = tc.mean(x, axes)  # first: reduce_sum checks the axes
        kept = [a for a in range(len(shape)) if a not in axes]
        deviation = tc.sub(x, tc.broadcast(mean, kept, shape))
        n = math.prod(shape[a] for a in axes)
        return tc.div(tc.reduce_sum(tc.mul(deviation, deviation), axes), float(max(n - ddof, 0)))

    # matmul = dot_general contracting x's last axis with y's second-to-last (its only one, for a
    # vector), batched over the axes before the last two, broadcast against each other (numpy).
    def matmul(self, x: Any, y: Any) -> Any:
        xs, ys = tc.shape(x), tc.shape(y)
        if not xs or not ys:
            raise error(ArgumentsError, "matmul", (x, y), "needs operands of rank at least 1 (use * for numbers)")
        if len(xs) == 1 or len(ys) <= 2:
            # x a vector, or y without batch axes: dot_general's free axes are matmul's, in order.
            return tc.dot_general(x, y, ((len(xs) - 1,), (max(len(ys) - 2, 0),), (), ()))
        batch = _broadcast_shapes(xs[:-2], ys[:-2])
        x, y = (_batched(v, s, batch) for v, s in ((x, xs), (y, ys)))
        rank = len(batch) + 2
        axes = tuple(range(len(batch)))
        return tc.dot_general(x, y, ((rank - 1,), (rank - 2,), axes, axes))


def _broadcast_shapes(a: tuple[int, ...], b: tuple[int, ...]) -> tuple[int, ...]:
    """numpy's broadcast of two batch shapes, aligned at the end (a mismatch is left to
    `broadcast`, whose error names the sizes)."""
    a, b = (1,) * (len(b) - len(a)) + a, (1,) * (len(a) - len(b)) + b
    return tuple(n if m == 1 else m for m, n in zip(a, b))


def _batched(x: Any, shape: tuple[int, ...], batch: tuple[int, ...]) -> Any:
    """x, a matrix or a batch of them, broadcast to the batch shape `batch` (a vector stays)."""
    return x if len(shape) < 2 else tc.broadcast_to(x, (*batch, *shape[-2:]))


def _aside(v: Any, aside: Any, shape: tuple[int, ...]) -> Any:
    """0 where `aside` holds, else v broadcast to `shape`; a Python number as it is (no derivative to keep clean)."""
    return v if isinstance(v, (int, float)) else tc.select(aside, 0.0, tc.broadcast_to(v, shape))

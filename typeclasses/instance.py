"""The base of every typeclass instance, holding the default methods.

Like Haskell's default class methods, a default is written in terms of the
typeclass functions, so it works for every instance that provides the primitives.
An instance may override a default (the tracer keeps `dot` as one operation).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

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

    # sinh x = (e^x - e^-x) / 2
    def sinh(self, x: Any) -> Any:
        return (tc.exp(x) - tc.exp(tc.neg(x))) * 0.5

    # cosh x = (e^x + e^-x) / 2
    def cosh(self, x: Any) -> Any:
        return (tc.exp(x) + tc.exp(tc.neg(x))) * 0.5

    # logBase b x = log x / log b
    def log_base(self, base: Any, x: Any) -> Any:
        return tc.div(tc.log(x), tc.log(base))

    # dot = dot_general contracting x's last axis with y's second-to-last (numpy).
    def dot(self, x: Any, y: Any) -> Any:
        return tc.dot_general(x, y, tc.dot_dims(len(tc.shape(x)), len(tc.shape(y))))

    # mean x = Σ x / n, n the number of elements summed
    def mean(self, x: Any, axes: Sequence[int]) -> Any:
        shape = tc.shape(x)
        return tc.div(tc.reduce_sum(x, axes), float(math.prod(shape[a] for a in axes)))

    # var x = mean |x − mean x|², the deviations from the mean broadcast back (ddof 0, numpy's)
    def var(self, x: Any, axes: Sequence[int]) -> Any:
        shape = tc.shape(x)
        kept = [a for a in range(len(shape)) if a not in axes]
        deviation = tc.sub(x, tc.broadcast(tc.mean(x, axes), kept, shape))
        return tc.mean(tc.mul(deviation, deviation), axes)

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
    if len(shape) < 2 or shape[:-2] == batch:
        return x
    full = (*batch, *shape[-2:])
    return tc.broadcast(x, list(range(len(full) - len(shape), len(full))), full)

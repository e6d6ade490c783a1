"""The original's `medium`, written once against the typeclasses: it runs on numpy
arrays directly, and shax traces it into the typed let-IR.

    python examples/medium.py
"""

from typing import TypeVar

import numpy as np

import shax
from shax import f32
from typeclasses import Tensor, broadcast, cos, dot, exp, max, min, reduce_sum, sin, transpose

# The original's constraint (HNP a, Ord a, Floating a).
A = TypeVar("A", bound=Tensor)


def medium(x0: A, x8: A) -> A:
    x1 = broadcast(x0, dims=[1], shape=[2, 6])
    x2 = sin(x1)
    x3 = cos(x2)
    x4 = x2 + x3
    x5 = exp(x4)
    x6 = transpose(x4, [1, 0])
    x7 = dot(x5, x6)
    x9 = x7 * x8
    x10 = x7 + x8
    return reduce_sum(max(x9, x10) - min(x9, x10), axes=[0])


def main() -> None:
    x = np.arange(1, 7, dtype=np.float32)
    y = np.arange(1, 5, dtype=np.float32).reshape(2, 2)
    print("On numpy arrays:", medium(x, y))
    traced = shax.trace(medium, f32[6], f32[2, 2])
    print("After tracing:")
    print(traced)
    typed = shax.stages.infer_types(traced)
    print("After type inference:")
    print(typed)
    print("Evaluated:", shax.evaluate(typed, x, y))


if __name__ == "__main__":
    main()

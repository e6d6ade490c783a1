"""The original's `medium`, written once against the typeclasses: it runs on numpy
arrays directly, and shax traces it into the typed let-IR, then differentiates it in
reverse mode, printing every stage as the original's transcript does.

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
    # The original's transcript: x as the point and as the tangent, ct = [5, 9].
    ct = np.array([5, 9], dtype=np.float32)
    explanation = shax.explain(medium, f32[6], f32[2, 2], inputs=[x, y], tangents=[x, y], cotangents=[ct])
    print(explanation)
    print("Evaluated:", shax.evaluate(explanation.typed, x, y))


if __name__ == "__main__":
    main()

"""Softmax regression on a synthetic data set: three Gaussian blobs in the plane, one per
class. The loss is the mean cross-entropy, written with `shax.nn.log_softmax`; Adam fits
the weights on shax's gradient; `argmax` of the scores gives the accuracy.

    python examples/softmax_regression.py
"""

from typing import Any

import numpy as np

import shax.numpy as snp
from shax import nn
from shax.optimizers import adam

CLASSES = 3
CENTRES = np.array([[0.0, 2.0], [-2.0, -1.0], [2.0, -1.0]], np.float32)


def data(points_per_class: int = 100, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """(points f32[n, 2], labels i32[n]): each class's points scattered around its centre."""
    rng = np.random.default_rng(seed)
    labels = np.repeat(np.arange(CLASSES, dtype=np.int32), points_per_class)
    points = CENTRES[labels] + rng.normal(scale=0.8, size=(labels.size, 2)).astype(np.float32)
    return points, labels


def cross_entropy(w: Any, b: Any, points: np.ndarray, labels: np.ndarray) -> Any:
    """−mean over the points of log p(label | point), p = softmax(points·w + b)."""
    log_p = nn.log_softmax(snp.matmul(points, w) + b, axis=1)
    return -snp.mean(snp.sum(log_p * nn.one_hot(labels, CLASSES), axis=1))


def accuracy(w: np.ndarray, b: np.ndarray, points: np.ndarray, labels: np.ndarray) -> float:
    return float(np.mean(snp.argmax(snp.matmul(points, w) + b, axis=1) == labels))


def main(iters: int = 100, log: Any = print) -> tuple[float, float]:
    """Train; returns (final loss, accuracy)."""
    points, labels = data()
    w, b = np.zeros((2, CLASSES), np.float32), np.zeros(CLASSES, np.float32)
    (w, b), loss = adam(lambda w, b: cross_entropy(w, b, points, labels), [w, b], lr=0.1, iters=iters, log=None)
    correct = accuracy(w, b, points, labels)
    if log is not None:
        log(f"cross-entropy {float(loss):.4f}, accuracy {correct:.1%} after {iters} Adam steps")
    return float(loss), correct


if __name__ == "__main__":
    main()

"""B7: one training step of examples/digits_cnn.py's network (two 3×3 convolutions with
max pooling, a dense layer; a minibatch of 64 8×8 images): cross-entropy, its gradient,
one Adam update. shax jit (numpy and XLA) beside JAX jit and PyTorch eager (NCHW, the same
weights transposed), from the same parameters and Adam state. No hand-numpy floor: the
first row, JAX jit, is the reference the ratios divide by.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from benchmarks.frameworks import Frameworks
from benchmarks.harness import Impl, Missing
from benchmarks.training import Params, rows, warmed
from examples.digits_cnn import CLASSES, init_params, loss
from shax import random

TITLE = "B7  digits CNN training step (conv 3×3×16, pool, conv 3×3×32, pool, dense 10; batch 64; Adam), × JAX jit"
LR = 3e-3
BATCH = 64


def data() -> tuple[Params, np.ndarray, np.ndarray]:
    """Parameters from the example's initialisation, random pixels in [0, 1), random labels."""
    params = {k: np.asarray(v) for k, v in init_params(random.PRNGKey(0)).items()}
    rng = np.random.default_rng(0)
    images = rng.random((BATCH, 8, 8, 1), dtype=np.float32)
    labels = rng.integers(0, CLASSES, BATCH).astype(np.int32)
    return params, images, labels


def implementations(fw: Frameworks) -> list[Impl | Missing]:
    params, x, y = data()
    params, state = warmed(loss, LR, params, x, y)
    return rows(fw, LR, loss, _jax_loss(fw), _torch_loss(fw), params, state, x, y)


def _jax_loss(fw: Frameworks) -> Any:
    jax = fw.get("jax")
    if jax is None:
        return None
    jnp, lax = jax.numpy, jax.lax
    dimensions = ("NHWC", "HWIO", "NHWC")

    def pool(x: Any) -> Any:
        return lax.reduce_window(x, -jnp.inf, lax.max, (1, 2, 2, 1), (1, 2, 2, 1), "VALID")

    def loss_jax(params: Params, images: Any, labels: Any) -> Any:
        x = lax.conv_general_dilated(images, params["conv1"], (1, 1), "SAME", dimension_numbers=dimensions)
        x = pool(jax.nn.relu(x + params["bias1"]))
        x = lax.conv_general_dilated(x, params["conv2"], (1, 1), "SAME", dimension_numbers=dimensions)
        x = pool(jax.nn.relu(x + params["bias2"]))
        logits = x.reshape(x.shape[0], -1) @ params["dense"] + params["bias3"]
        log_p = jax.nn.log_softmax(logits, axis=1)
        return -jnp.mean(jnp.sum(log_p * jax.nn.one_hot(labels, CLASSES), axis=1))

    return loss_jax


def _torch_loss(fw: Frameworks) -> Any:
    torch = fw.get("torch")
    if torch is None:
        return None
    functional = torch.nn.functional

    def loss_torch(params: Params, images: Any, labels: Any) -> Any:
        # HWIO kernels as torch's OIHW, NHWC images as NCHW; flattened back in NHWC order
        x = images.permute(0, 3, 1, 2)
        x = functional.conv2d(x, params["conv1"].permute(3, 2, 0, 1), padding=1)
        x = functional.max_pool2d(functional.relu(x + params["bias1"][:, None, None]), 2)
        x = functional.conv2d(x, params["conv2"].permute(3, 2, 0, 1), padding=1)
        x = functional.max_pool2d(functional.relu(x + params["bias2"][:, None, None]), 2)
        logits = x.permute(0, 2, 3, 1).reshape(x.shape[0], -1) @ params["dense"] + params["bias3"]
        return functional.cross_entropy(logits, labels.long())

    return loss_torch

"""Per-example gradients of a small model, on a batch sharded over 8 devices.

shax builds the program (`vmap(grad(loss))`), `shax.jit(..., backend="xla")` exports it
to JAX and compiles it with XLA, and JAX runs it where its arguments live: the batch is
split over a `Mesh` of 8 devices (`NamedSharding`, the batch axis over the mesh's one
axis), the parameters are replicated, and XLA partitions the program to match. On a
machine without 8 accelerators, XLA's host platform pretends to have 8 CPUs
(`--xla_force_host_platform_device_count=8`, set before JAX is imported). The result is
checked against the single-device numpy backend.

    python examples/data_parallel.py       (needs JAX: pip install 'shax[xla]')
"""

import os

os.environ["XLA_FLAGS"] = f"{os.environ.get('XLA_FLAGS', '')} --xla_force_host_platform_device_count=8".strip()
os.environ.setdefault("JAX_PLATFORMS", "cpu")

from typing import Any  # noqa: E402 - after the flags, which JAX reads when imported

import jax  # noqa: E402
import numpy as np  # noqa: E402
from jax.sharding import Mesh, NamedSharding, PartitionSpec  # noqa: E402

import shax  # noqa: E402
import shax.numpy as snp  # noqa: E402

DEVICES = 8


def loss(params: dict[str, Any], x: Any, y: Any) -> Any:
    """Squared error of a one-hidden-layer tanh network on one example x :: f32[16]."""
    hidden = snp.tanh(x @ params["w1"] + params["b1"])
    error = hidden @ params["w2"] + params["b2"] - y
    return snp.sum(error * error)


def data(batch: int = 64, seed: int = 0) -> tuple[dict[str, np.ndarray], np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    params = {
        "w1": (rng.standard_normal((16, 32)) / 4).astype(np.float32),
        "b1": np.zeros(32, np.float32),
        "w2": (rng.standard_normal((32, 4)) / 6).astype(np.float32),
        "b2": np.zeros(4, np.float32),
    }
    xs = rng.standard_normal((batch, 16)).astype(np.float32)
    ys = rng.standard_normal((batch, 4)).astype(np.float32)
    return params, xs, ys


def main(log: Any = print) -> dict[str, Any]:
    """The per-example gradients (JAX arrays, sharded over the devices)."""
    per_example = shax.vmap(shax.grad(loss, wrt=0), in_axes=(None, 0, 0))  # params shared, examples batched
    params, xs, ys = data()

    mesh = Mesh(np.array(jax.devices()[:DEVICES]), ("batch",))
    batch, replicated = NamedSharding(mesh, PartitionSpec("batch")), NamedSharding(mesh, PartitionSpec())
    sharded = shax.jit(per_example, backend="xla")(
        jax.device_put(params, replicated), jax.device_put(xs, batch), jax.device_put(ys, batch)
    )

    expected = shax.jit(per_example)(params, xs, ys)  # one device: the numpy backend
    for name, grad in sharded.items():
        np.testing.assert_allclose(np.asarray(grad), expected[name], rtol=1e-5, atol=1e-6)
        devices = len(grad.sharding.device_set)
        log(f"{name}: {grad.shape} gradients on {devices} devices, {grad.sharding.spec}; equal to numpy's")
    return sharded


if __name__ == "__main__":
    main()

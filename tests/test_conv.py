"""conv_general_dilated and reduce_window through shax.lax: values and gradients equal to
JAX's (stored, computed once with jax in float64; and against jax directly when it is
installed), every layout and padding form, and a tiny CNN under jit, grad and vmap."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import shax
import shax.numpy as snp
from shax import lax

CONV_VALUE = -6.311591103211304
CONV_GX_SUM_ABS = 74.05302434677613
CONV_GX00 = [
    [0.14302235965, -0.407734579031, 0.479018358927, -0.141472395102],
    [1.580534753117, 3.699967766752, 2.05950957174, 1.636455425977],
    [0.122128854093, -1.865869681526, -1.392527585563, -1.694175257654],
    [-0.78399938944, 0.646700437542, -0.191925043472, 0.619995684576],
    [-0.138136828296, -1.976637356617, -0.916077090474, -1.163508797829],
]
CONV_GW_0 = [
    [[-2.93420595138, -2.785671765644], [-2.204332259892, -2.045642182823], [-1.234208240037, -1.169133778616]],
    [[1.971264150302, 2.460103821129], [3.434039189587, 4.083407589352], [2.041738465607, 2.332772163643]],
]
POOL_GRAD = [
    [
        [0.0, 0.0, 1.031002743643, 0.0, 0.0, 0.0],
        [1.997086690749, 0.0, 0.0, 0.0, 0.0, 1.973543928549],
        [0.215507304599, 0.0, 0.0, 0.0, 1.857590468154, 0.0],
        [0.0, 0.0, 0.0, 1.654655801191, 0.0, 0.0],
        [0.0, 1.767740847092, 1.374242292409, 0.0, 0.0, 0.001776313611],
    ],
    [
        [1.927590772568, 0.0, 0.0, 0.0, 0.0, 1.997181744824],
        [0.0, 0.0, 0.0, 0.841945652286, 0.0, 0.0],
        [0.0, 0.0, 0.0, 1.856931445531, -0.219038905707, 0.0],
        [0.0, 1.526265431034, 0.0, 0.0, 0.0, 0.0],
        [1.768570988309, 0.0, -1.034045322198, 0.0, 0.0, 1.928063653775],
    ],
]
SUM_POOL_GRAD0 = [
    [2.919659065412, 1.792408296136, -4.649986355384, -4.280140102507, 2.360121427845, 3.117525944244],
    [2.919659065412, 1.792408296136, -4.649986355384, -4.280140102507, 2.360121427845, 3.117525944244],
    [-0.196398837345, -0.563185068589, -0.366617168326, 0.367045742428, 0.562985780628, 0.196109101118],
    [-3.116057902758, -2.355593364725, 4.283369187059, 4.647185844935, -1.797135647217, -2.921416843126],
    [-3.116057902758, -2.355593364725, 4.283369187059, 4.647185844935, -1.797135647217, -2.921416843126],
]
TOPK = [[[7.0, 3.0, 3.0], [9.0, 2.0, 2.0]], [[4, 0, 2], [3, 1, 2]]]

X = np.linspace(-1, 1, 2 * 2 * 5 * 4).reshape(2, 2, 5, 4)
W = np.cos(np.arange(3 * 2 * 3 * 2)).reshape(3, 2, 3, 2)
Y = np.sin(np.arange(2 * 5 * 6) * 1.3).reshape(2, 5, 6)


def conv_loss(x: Any, w: Any) -> Any:
    return snp.sum(snp.tanh(lax.conv_general_dilated(x, w, (2, 1), "SAME", rhs_dilation=(1, 2))))


def test_conv_value_and_gradients_are_jaxs() -> None:
    value, (gx, gw) = shax.value_and_grad(conv_loss)(X, W)
    np.testing.assert_allclose(value, CONV_VALUE, rtol=1e-12)
    np.testing.assert_allclose(np.abs(gx).sum(), CONV_GX_SUM_ABS, rtol=1e-12)
    np.testing.assert_allclose(gx[0, 0], CONV_GX00, atol=1e-11)
    np.testing.assert_allclose(gw[0], CONV_GW_0, atol=1e-11)


def test_max_pool_gradient_goes_to_each_windows_largest_element() -> None:
    def pool(y: Any) -> Any:
        return snp.sum(lax.reduce_window(y, -np.inf, lax.max, (1, 2, 2), (1, 2, 2), "SAME") ** 2)

    np.testing.assert_allclose(shax.grad(pool)(Y), POOL_GRAD, atol=1e-11)


def test_sum_pool_gradient_is_jaxs() -> None:
    def pool(y: Any) -> Any:
        return snp.sum(lax.reduce_window(y, 0.0, lax.add, (1, 3, 2), (1, 2, 1), "VALID") ** 2)

    np.testing.assert_allclose(shax.grad(pool)(Y)[0], SUM_POOL_GRAD0, atol=1e-11)


def test_conv_refuses_sizes_that_do_not_fit() -> None:
    with pytest.raises(shax.ShaxTypeError, match="conv_general_dilated: the sizes do not fit"):
        lax.conv_general_dilated(X, W[:, :1], (1, 1), "VALID")
    with pytest.raises(shax.ShaxValueError, match="lax.conv_general_dilated: padding must be"):
        lax.conv_general_dilated(X, W, (1, 1), "FULL")
    with pytest.raises(shax.ShaxValueError, match="lax.reduce_window: a max needs init_value"):
        lax.reduce_window(Y, 0.0, lax.max, (1, 2, 2), (1, 1, 1), "VALID")


CASES = [
    ((2, 3, 6, 5), (4, 3, 3, 2), dict(window_strides=(1, 1), padding="SAME"), ("NCHW", "OIHW", "NCHW")),
    ((2, 6, 5, 3), (3, 2, 3, 4), dict(window_strides=(2, 2), padding="VALID"), ("NHWC", "HWIO", "NHWC")),
    (
        (1, 4, 7, 5),
        (4, 2, 2, 3),
        dict(window_strides=(2, 1), padding=[(1, 0), (2, -1)], lhs_dilation=(1, 2), feature_group_count=2),
        ("NCHW", "OIHW", "NCHW"),
    ),
    ((2, 3, 9), (4, 3, 3), dict(window_strides=(3,), padding=[(2, 1)], rhs_dilation=(2,)), ("NCH", "OIH", "NCH")),
]


@pytest.mark.parametrize("lhs_shape, rhs_shape, options, numbers", CASES)
def test_conv_and_its_gradients_equal_jax(lhs_shape: Any, rhs_shape: Any, options: Any, numbers: Any) -> None:
    jax = pytest.importorskip("jax")
    from shax.export.lowering import x64  # JAX's x64 mode within a block (it imports jax)

    rng = np.random.default_rng(0)
    x, w = rng.normal(size=lhs_shape), rng.normal(size=rhs_shape)

    def loss(conv: Any, total: Any, sin: Any) -> Any:
        return lambda x, w: total(sin(conv(x, w, dimension_numbers=numbers, **options)))

    ours = loss(lax.conv_general_dilated, snp.sum, snp.sin)
    theirs = loss(jax.lax.conv_general_dilated, jax.numpy.sum, jax.numpy.sin)
    with x64():
        expected_value = jax.lax.conv_general_dilated(x, w, dimension_numbers=numbers, **options)
        expected_grads = jax.jit(jax.grad(theirs, (0, 1)))(x, w)
    np.testing.assert_allclose(
        lax.conv_general_dilated(x, w, dimension_numbers=numbers, **options), expected_value, atol=1e-12
    )
    for got, expected in zip(shax.grad(ours)(x, w), expected_grads):
        np.testing.assert_allclose(got, expected, atol=1e-11)
    xs = rng.normal(size=(2, *lhs_shape))
    batched = shax.vmap(shax.grad(ours), in_axes=(0, None))(xs, w)
    for k, x_k in enumerate(xs):
        for g, e in zip(batched, shax.grad(ours)(x_k, w)):
            np.testing.assert_allclose(g[k], e, atol=1e-12)


def cnn(params: dict[str, Any], images: Any) -> Any:
    """conv 3×3 SAME, relu, 2×2 max pool, dense: logits of 3 classes."""
    h = lax.conv_general_dilated(images, params["k"], (1, 1), "SAME", dimension_numbers=("NHWC", "HWIO", "NHWC"))
    h = lax.reduce_window(shax.nn.relu(h), -np.inf, lax.max, (1, 2, 2, 1), (1, 2, 2, 1), "VALID")
    return h.reshape(h.shape[0], -1) @ params["w"]


def cnn_loss(params: dict[str, Any], images: Any, labels: Any) -> Any:
    logits = cnn(params, images)
    return -snp.mean(snp.sum(shax.nn.log_softmax(logits) * labels, axis=1))


def test_a_tiny_cnn_trains_under_jit() -> None:
    rng = np.random.default_rng(1)
    images = rng.normal(size=(4, 4, 4, 1)).astype(np.float32)
    labels = np.eye(3, dtype=np.float32)[[0, 1, 2, 0]]
    params = {
        "k": (rng.normal(size=(3, 3, 1, 2)) * 0.5).astype(np.float32),
        "w": (rng.normal(size=(8, 3)) * 0.5).astype(np.float32),
    }
    step = shax.jit(shax.value_and_grad(cnn_loss, argnums=0))
    first, grads = step(params, images, labels)
    assert grads["k"].shape == (3, 3, 1, 2) and grads["k"].dtype == np.float32
    for _ in range(20):
        loss, grads = step(params, images, labels)
        params = {k: params[k] - 0.5 * grads[k] for k in params}
    assert loss < first
    loss_eager, grads_eager = shax.value_and_grad(cnn_loss, argnums=0)(params, images, labels)
    loss_jit, grads_jit = step(params, images, labels)
    np.testing.assert_allclose(loss_jit, loss_eager, rtol=1e-5)
    np.testing.assert_allclose(grads_jit["w"], grads_eager["w"], rtol=1e-4, atol=1e-6)

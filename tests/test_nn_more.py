"""The rest of jax.nn's activations in shax.nn: JAX's values and gradients (at the kinks
too), on numpy values and traced; integer inputs computed in f32, bad input refused.
The expected values were computed once with JAX 0.10 (CPU, f32) and stored."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
import typeguard

import shax
import shax.nn as nn
from shax import ShaxTypeError, ShaxValueError

XS = np.array([-7, -3, -1, -0.5, 0, 0.5, 1, 3, 6, 7], np.float32)
M = np.arange(12, dtype=np.float32).reshape(3, 4) / 5 - 1

FUNCTIONS: dict[str, Callable[[Any], Any]] = {
    "elu": nn.elu,
    "elu_alpha": lambda x: nn.elu(x, 0.5),
    "leaky_relu": nn.leaky_relu,
    "leaky_relu_slope": lambda x: nn.leaky_relu(x, 0.2),
    "selu": nn.selu,
    "celu": nn.celu,
    "celu_alpha": lambda x: nn.celu(x, 2.0),
    "hard_tanh": nn.hard_tanh,
    "relu6": nn.relu6,
    "hard_sigmoid": nn.hard_sigmoid,
    "hard_silu": nn.hard_silu,
    "log_sigmoid": nn.log_sigmoid,
    "swish": nn.swish,
    "soft_sign": nn.soft_sign,
    "sparse_plus": nn.sparse_plus,
}
# name: (values at XS, derivatives at XS), JAX's
JAX = {
    "elu": (
        [
            -0.9990881085395813,
            -0.9502129554748535,
            -0.6321205496788025,
            -0.39346933364868164,
            0.0,
            0.5,
            1.0,
            3.0,
            6.0,
            7.0,
        ],
        [
            0.0009118914604187012,
            0.049787044525146484,
            0.3678794503211975,
            0.6065306663513184,
            1.0,
            1.0,
            1.0,
            1.0,
            1.0,
            1.0,
        ],
    ),
    "elu_alpha": (
        [
            -0.49954405426979065,
            -0.47510647773742676,
            -0.31606027483940125,
            -0.19673466682434082,
            0.0,
            0.5,
            1.0,
            3.0,
            6.0,
            7.0,
        ],
        [
            0.0004559457302093506,
            0.024893522262573242,
            0.18393972516059875,
            0.3032653331756592,
            0.5,
            1.0,
            1.0,
            1.0,
            1.0,
            1.0,
        ],
    ),
    "leaky_relu": (
        [
            -0.07000000029802322,
            -0.029999999329447746,
            -0.009999999776482582,
            -0.004999999888241291,
            0.0,
            0.5,
            1.0,
            3.0,
            6.0,
            7.0,
        ],
        [
            0.009999999776482582,
            0.009999999776482582,
            0.009999999776482582,
            0.009999999776482582,
            1.0,
            1.0,
            1.0,
            1.0,
            1.0,
            1.0,
        ],
    ),
    "leaky_relu_slope": (
        [
            -1.399999976158142,
            -0.6000000238418579,
            -0.20000000298023224,
            -0.10000000149011612,
            0.0,
            0.5,
            1.0,
            3.0,
            6.0,
            7.0,
        ],
        [
            0.20000000298023224,
            0.20000000298023224,
            0.20000000298023224,
            0.20000000298023224,
            1.0,
            1.0,
            1.0,
            1.0,
            1.0,
            1.0,
        ],
    ),
    "selu": (
        [
            -1.7564960718154907,
            -1.670568823814392,
            -1.1113307476043701,
            -0.6917582154273987,
            0.0,
            0.5253505110740662,
            1.0507010221481323,
            3.1521029472351074,
            6.304205894470215,
            7.354907035827637,
        ],
        [
            0.0016031957929953933,
            0.08753056824207306,
            0.6467686295509338,
            1.0663411617279053,
            1.7580993175506592,
            1.0507010221481323,
            1.0507010221481323,
            1.0507010221481323,
            1.0507010221481323,
            1.0507010221481323,
        ],
    ),
    "celu": (
        [
            -0.9990881085395813,
            -0.9502129554748535,
            -0.6321205496788025,
            -0.39346933364868164,
            0.0,
            0.5,
            1.0,
            3.0,
            6.0,
            7.0,
        ],
        [
            0.0009118914604187012,
            0.049787044525146484,
            0.3678794503211975,
            0.6065306663513184,
            1.0,
            1.0,
            1.0,
            1.0,
            1.0,
            1.0,
        ],
    ),
    "celu_alpha": (
        [
            -1.9396052360534668,
            -1.5537396669387817,
            -0.7869386672973633,
            -0.44239839911460876,
            0.0,
            0.5,
            1.0,
            3.0,
            6.0,
            7.0,
        ],
        [0.0301973819732666, 0.22313016653060913, 0.6065306663513184, 0.7788007855415344, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0],
    ),
    "hard_tanh": (
        [-1.0, -1.0, -1.0, -0.5, 0.0, 0.5, 1.0, 1.0, 1.0, 1.0],
        [0.0, 0.0, 1.0, 1.0, 1.0, 1.0, 1.0, 0.0, 0.0, 0.0],
    ),
    "relu6": ([0.0, 0.0, 0.0, 0.0, 0.0, 0.5, 1.0, 3.0, 6.0, 6.0], [0.0, 0.0, 0.0, 0.0, 0.0, 1.0, 1.0, 1.0, 0.0, 0.0]),
    "hard_sigmoid": (
        [0.0, 0.0, 0.3333333432674408, 0.4166666865348816, 0.5, 0.5833333730697632, 0.6666666865348816, 1.0, 1.0, 1.0],
        [
            0.0,
            0.0,
            0.1666666716337204,
            0.1666666716337204,
            0.1666666716337204,
            0.1666666716337204,
            0.1666666716337204,
            0.0,
            0.0,
            0.0,
        ],
    ),
    "hard_silu": (
        [
            -0.0,
            -0.0,
            -0.3333333432674408,
            -0.2083333432674408,
            0.0,
            0.2916666865348816,
            0.6666666865348816,
            3.0,
            6.0,
            7.0,
        ],
        [0.0, 0.0, 0.1666666716337204, 0.3333333432674408, 0.5, 0.6666666865348816, 0.8333333730697632, 1.0, 1.0, 1.0],
    ),
    "log_sigmoid": (
        [
            -7.000911235809326,
            -3.0485873222351074,
            -1.3132617473602295,
            -0.9740769863128662,
            -0.6931471824645996,
            -0.4740769863128662,
            -0.3132616877555847,
            -0.04858735203742981,
            -0.0024756852071732283,
            -0.000911466486286372,
        ],
        [
            0.9990891814231873,
            0.9525741338729858,
            0.7310585379600525,
            0.622459352016449,
            0.5,
            0.3775406777858734,
            0.26894140243530273,
            0.04742587357759476,
            0.0024726230185478926,
            0.000911051407456398,
        ],
    ),
    "swish": (
        [
            -0.006377357989549637,
            -0.14227762818336487,
            -0.2689414322376251,
            -0.1887703388929367,
            0.0,
            0.3112296760082245,
            0.7310585975646973,
            2.857722282409668,
            5.985164642333984,
            6.993622779846191,
        ],
        [
            -0.0054604969918727875,
            -0.08810410648584366,
            0.07232949137687683,
            0.260038822889328,
            0.5,
            0.7399612069129944,
            0.9276705384254456,
            1.0881041288375854,
            1.0123262405395508,
            1.0054601430892944,
        ],
    ),
    "soft_sign": (
        [-0.875, -0.75, -0.5, -0.3333333432674408, 0.0, 0.3333333432674408, 0.5, 0.75, 0.8571428656578064, 0.875],
        [
            0.015625,
            0.0625,
            0.25,
            0.444444477558136,
            1.0,
            0.444444477558136,
            0.25,
            0.0625,
            0.02040816843509674,
            0.015625,
        ],
    ),
    "sparse_plus": (
        [0.0, 0.0, 0.0, 0.0625, 0.25, 0.5625, 1.0, 3.0, 6.0, 7.0],
        [0.0, 0.0, 0.0, 0.25, 0.5, 0.75, 1.0, 1.0, 1.0, 1.0],
    ),
}
GLU = [
    [-0.3543437123298645, -0.32104989886283875, -0.10996679961681366, 0.0, 0.4386351704597473, 0.6148198246955872],
    # d/dM sum(glu(M)²)
    [-0.251118928194046, -0.25768259167671204, 0.1621365249156952, 0.12341710925102234, -0.12092697620391846, 0.0,
     0.010887441225349903, 0.0, 0.6413360238075256, 0.9450085759162903, 0.10348909348249435, 0.17499680817127228],
]  # fmt: skip
STANDARDIZE = [
    [-1.3415061235427856, -0.44716861844062805, 0.44716888666152954, 1.3415066003799438, -1.3415067195892334,
     -0.44716891646385193, 0.4471690356731415, 1.3415063619613647, -1.3415071964263916, -0.4471694529056549,
     0.44716891646385193, 1.3415071964263916],
    # d/dM sum(standardize(M, axis=0) * M)
    [-1.2247592210769653, -1.2247592210769653, -1.2247593402862549, -1.2247591018676758, 4.711601775397867e-09,
     2.4333923320796202e-08, 4.268345676905483e-08, -6.108067651666715e-08, 1.2247593402862549, 1.2247591018676758,
     1.2247592210769653, 1.2247592210769653],
    # standardize(M, axis=None, algorithm="stable", epsilon=0.1)
    [-1.4485392570495605, -1.1851685047149658, -0.9217977523803711, -0.6584268808364868, -0.3950561285018921,
     -0.13168537616729736, 0.13168546557426453, 0.3950561285018921, 0.6584269404411316, 0.9217976331710815,
     1.1851685047149658, 1.4485392570495605],
]  # fmt: skip


@pytest.mark.parametrize("name", sorted(FUNCTIONS))
def test_values_and_derivatives_are_jax_s(name: str) -> None:
    f, (values, derivatives) = FUNCTIONS[name], JAX[name]
    np.testing.assert_allclose(f(XS), values, rtol=2e-6, atol=1e-7)
    np.testing.assert_allclose(shax.jit(f)(XS), values, rtol=2e-6, atol=1e-7)
    np.testing.assert_allclose(shax.vmap(shax.grad(f))(XS), derivatives, rtol=2e-6, atol=1e-7)
    assert f(XS).dtype == np.float32 and f(XS.astype(np.float64)).dtype == np.float64


def test_glu_and_standardize_are_jax_s() -> None:
    np.testing.assert_allclose(np.ravel(nn.glu(M)), GLU[0], rtol=2e-6)
    np.testing.assert_allclose(np.ravel(shax.grad(lambda m: (nn.glu(m) ** 2).sum())(M)), GLU[1], rtol=2e-6, atol=1e-7)
    np.testing.assert_allclose(np.ravel(nn.standardize(M)), STANDARDIZE[0], rtol=1e-5)
    gradient = shax.grad(lambda m: (nn.standardize(m, axis=0) * m).sum())(M)
    np.testing.assert_allclose(np.ravel(gradient), STANDARDIZE[1], atol=2e-6)
    stable = nn.standardize(M, axis=None, algorithm="stable", epsilon=0.1)
    np.testing.assert_allclose(np.ravel(stable), STANDARDIZE[2], rtol=1e-5)
    given = nn.standardize(M, mean=0.5, variance=4.0, epsilon=0.0)
    np.testing.assert_allclose(given, (M - 0.5) / 2, rtol=1e-6)


def test_integers_are_computed_in_f32() -> None:
    ints = np.array([-2, 0, 3], np.int32)
    for name in ("elu", "leaky_relu", "relu6", "hard_tanh", "soft_sign"):
        out = FUNCTIONS[name](ints)
        assert out.dtype == np.float32, name
        np.testing.assert_allclose(out, FUNCTIONS[name](ints.astype(np.float32)))
    assert nn.swish is nn.silu and nn.hard_swish is nn.hard_silu


def test_bad_input_is_a_shax_error() -> None:
    with typeguard.suppress_type_checks():  # shax's own checks, as users meet them
        with pytest.raises(ShaxTypeError, match="elu: expects an array"):
            nn.elu([1.0, 2.0])
        with pytest.raises(ShaxTypeError, match="leaky_relu: negative_slope must be a real number"):
            nn.leaky_relu(XS, "0.1")
        with pytest.raises(
            ShaxValueError, match=r"glu: axis -1 of x of shape \(3, 3\) must exist and have an even size"
        ):
            nn.glu(np.ones((3, 3), np.float32))
        with pytest.raises(ShaxValueError, match="standardize: algorithm must be 'fast' or 'stable'"):
            nn.standardize(M, algorithm="slow")
        with pytest.raises(ShaxTypeError, match="selu: .*complex"):
            nn.selu(np.ones(2, np.complex64))

"""`shax.nn`: the activation and normalisation functions of `jax.nn`, with its signatures,
values and gradients, written with the typeclass functions and `shax.numpy`: each runs
on numpy values and on tracers, and differentiates again.

The rest of jax.nn's activations (`elu`, `leaky_relu`, `selu`, `celu`, `hard_tanh`,
`relu6`, `hard_sigmoid`, `hard_silu`/`hard_swish`, `log_sigmoid`, `swish`, `soft_sign`,
`sparse_plus`, `glu`, `standardize`) are JAX's formulas, so their derivatives at the
kinks are JAX's too: 1 at 0 for `elu`, `leaky_relu` and `celu` (whose max and min split
the tie ½–½), 1 at ±1 for `hard_tanh`, and 0 at 0 and 6 for `relu6` (JAX's custom rule).

Integer and bool inputs of the float functions (all but `relu` and `one_hot`) are computed
in f32, JAX's default float: converted first, so that no arithmetic wraps around in u8
(numpy's `1 + exp(-x)` of a u8 array is f16, its softplus inf). jax.nn's softplus, gelu
and logsumexp promote so; its sigmoid and silu refuse integers, which here promote too,
for one rule across the module. `relu` keeps an integer dtype (bools become i32, as
JAX's). Float dtypes are kept (f16 on numpy values too); complex inputs are refused:
shax has no complex dtype, and numpy's formulas would drop the imaginary part.

The shifts that keep `softmax`, `log_softmax` and `logsumexp` from overflowing subtract
the maximum along the axis: its derivative cancels exactly (d(x − m) summed against a
softmax gives dx), so the gradient is JAX's, which stops it instead.
"""

from __future__ import annotations

import math
from typing import Any, SupportsIndex

import numpy as np

import shax.numpy as snp
import typeclasses as tc
from shax.core.array_subclasses import refuse_array_subclass
from shax.core.errors import ShaxTypeError, ShaxValueError, at
from shax.core.location import current_source
from shax.nn import initializers  # noqa: F401 - shax.nn.initializers, a module of this package
from shax.numpy._reductions import reduction_axes
from shax.tracing.tracer import Tracer

__all__ = [
    "gelu", "log_softmax", "logsumexp", "one_hot", "relu", "sigmoid", "silu", "softmax", "softplus",
    "celu", "elu", "glu", "hard_sigmoid", "hard_silu", "hard_swish", "hard_tanh", "leaky_relu", "log_sigmoid", "relu6",
    "selu", "soft_sign", "sparse_plus", "standardize", "swish",
]  # fmt: skip

Axis = SupportsIndex | tuple[SupportsIndex, ...] | None  # numpy's integers too


def relu(x: Any) -> Any:
    """max(x, 0), NaN at NaN, with derivative 0 wherever x > 0 fails: at 0 and NaN (JAX's)."""
    x = _operand("relu", x, floating=False)
    # NaN passes through as in JAX's max(x, 0), but its branch carries no derivative.
    below = tc.select(snp.not_equal(x, x), tc.stop_gradient(x), 0)
    return tc.select(snp.greater(x, 0), x, below)


def sigmoid(x: Any) -> Any:
    """1 / (1 + e⁻ˣ), without overflow."""
    x = _operand("sigmoid", x)
    return tc.logistic(x)


def softplus(x: Any) -> Any:
    """log(1 + eˣ) = max(x, 0) + log1p(e^−|x|), stable for large |x|; its derivative is sigmoid."""
    x = _operand("softplus", x)
    return tc.max(x, 0.0) + tc.log1p(tc.exp(-tc.abs(x)))


def silu(x: Any) -> Any:
    """x · sigmoid(x) (also called swish)."""
    x = _operand("silu", x)
    return x * tc.logistic(x)


def gelu(x: Any, approximate: bool = True) -> Any:
    """x · Φ(x): by default JAX's tanh approximation, ½x(1 + tanh(√(2/π)(x + 0.044715x³)));
    `approximate=False` uses the error function, Φ(x) = ½(1 + erf(x/√2))."""
    x = _operand("gelu", x)
    if not isinstance(approximate, (bool, np.bool_)):
        raise at(ShaxTypeError(f"gelu: approximate must be a bool, got {approximate!r}"), current_source())
    if approximate:
        return 0.5 * x * (1.0 + tc.tanh(math.sqrt(2.0 / math.pi) * (x + 0.044715 * (x * x * x))))
    return 0.5 * x * (1.0 + tc.erf(x * (1.0 / math.sqrt(2.0))))


def logsumexp(a: Any, axis: Axis = None, keepdims: bool = False) -> Any:
    """log Σ exp(a) along `axis` (all axes by default): m + log Σ exp(a − m), m the maximum."""
    a = _operand("logsumexp", a)
    # m where finite, else 0 (JAX's): all −∞ gives log 0 = −∞, a +∞ gives +∞, not ∞ − ∞ = NaN.
    m = snp.max(a, axis=axis, keepdims=True)
    m = snp.where(abs(m) < np.inf, m, 0.0)
    total = m + tc.log(snp.sum(tc.exp(a - m), axis=axis, keepdims=True))
    return total if keepdims else snp.squeeze(total, axis=tuple(reduction_axes("logsumexp", tc.shape(a), axis)))


def log_softmax(x: Any, axis: Axis = -1) -> Any:
    """x − logsumexp(x) along `axis`."""
    x = _operand("log_softmax", x)
    shifted = x - snp.max(x, axis=axis, keepdims=True)
    return shifted - tc.log(snp.sum(tc.exp(shifted), axis=axis, keepdims=True))


def softmax(x: Any, axis: Axis = -1) -> Any:
    """exp(x) / Σ exp(x) along `axis`."""
    x = _operand("softmax", x)
    unnormalized = tc.exp(x - snp.max(x, axis=axis, keepdims=True))
    return unnormalized / snp.sum(unnormalized, axis=axis, keepdims=True)


def one_hot(x: Any, num_classes: SupportsIndex, dtype: Any = np.float32, axis: SupportsIndex = -1) -> Any:
    """1 where x equals the class of the new axis (at `axis`), else 0: integer labels to rows."""
    x = _operand("one_hot", x, floating=False)
    num_classes, axis = _int("one_hot", num_classes, "num_classes"), _int("one_hot", axis, "axis")
    shape = tc.shape(x)
    if not 0 <= num_classes * math.prod(shape) <= np.iinfo(np.intp).max:
        message = f"one_hot: num_classes={num_classes} for labels of shape {tuple(shape)} is no array size"
        raise at(ShaxValueError(message), current_source())
    rank = len(shape) + 1
    position = axis % rank if -rank <= axis < rank else rank  # out of range: expand_dims says so
    dtype_of_labels = _numpy_dtype(x)
    if dtype_of_labels.kind in "iu" and np.iinfo(dtype_of_labels).max < num_classes - 1:
        # More classes than the labels' dtype counts (300 for u8): labels in one that does.
        dtype_of_labels = np.dtype(np.int32 if num_classes <= 2**31 else np.int64)
        x = tc.convert_element_type(x, dtype_of_labels)
    labels = snp.expand_dims(x, position)
    # The classes in the labels' dtype (i64 from numpy, i32, u8): comparing joins no two dtypes.
    try:
        classes = np.arange(num_classes, dtype=dtype_of_labels)
    except MemoryError:
        raise at(
            ShaxValueError(f"one_hot: num_classes={num_classes}: too many to allocate"), current_source()
        ) from None
    classes = classes.reshape([-1 if k == position else 1 for k in range(rank)])
    hit = snp.equal(labels, classes)
    return tc.select(hit, snp.ones(tc.shape(hit), dtype), snp.zeros(tc.shape(hit), dtype))


def elu(x: Any, alpha: Any = 1.0) -> Any:
    """x where x > 0, else α(eˣ − 1)."""
    x = _operand("elu", x)
    alpha = _number("elu", "alpha", alpha)
    positive = snp.greater(x, 0)
    return snp.where(positive, x, alpha * tc.expm1(snp.where(positive, 0.0, x)))


def leaky_relu(x: Any, negative_slope: Any = 1e-2) -> Any:
    """x where x ≥ 0, else negative_slope · x."""
    x = _operand("leaky_relu", x)
    negative_slope = _number("leaky_relu", "negative_slope", negative_slope)
    return snp.where(snp.greater_equal(x, 0), x, negative_slope * x)


def selu(x: Any) -> Any:
    """λ · elu(x, α), with the self-normalising constants λ ≈ 1.0507, α ≈ 1.6733."""
    x = _operand("selu", x)
    return 1.0507009873554804934193349852946 * elu(x, 1.6732632423543772848170429916717)


def celu(x: Any, alpha: Any = 1.0) -> Any:
    """max(x, 0) + α(e^(min(x, 0)/α) − 1)."""
    x = _operand("celu", x)
    alpha = _number("celu", "alpha", alpha)
    return tc.max(x, 0.0) + alpha * tc.expm1(tc.min(x, 0.0) / alpha)


def hard_tanh(x: Any) -> Any:
    """x clipped to [−1, 1]."""
    x = _operand("hard_tanh", x)
    return snp.where(snp.greater(x, 1), 1.0, snp.where(snp.less(x, -1), -1.0, x))


def relu6(x: Any) -> Any:
    """min(max(x, 0), 6), with derivative 1 on (0, 6) and 0 elsewhere, the ends included (JAX's)."""
    x = _operand("relu6", x)
    inside = snp.logical_and(snp.greater(x, 0), snp.less(x, 6))
    return snp.where(inside, x, tc.stop_gradient(tc.min(tc.max(x, 0.0), 6.0)))


def hard_sigmoid(x: Any) -> Any:
    """relu6(x + 3) / 6."""
    x = _operand("hard_sigmoid", x)
    return relu6(x + 3.0) / 6.0


def hard_silu(x: Any) -> Any:
    """x · hard_sigmoid(x) (also called hard_swish)."""
    x = _operand("hard_silu", x)
    return x * hard_sigmoid(x)


hard_swish = hard_silu
swish = silu


def log_sigmoid(x: Any) -> Any:
    """log(sigmoid(x)) = −softplus(−x)."""
    x = _operand("log_sigmoid", x)
    return -softplus(-x)


def soft_sign(x: Any) -> Any:
    """x / (|x| + 1)."""
    x = _operand("soft_sign", x)
    return x / (tc.abs(x) + 1.0)


def sparse_plus(x: Any) -> Any:
    """0 for x ≤ −1, (x + 1)²/4 between, x for x ≥ 1."""
    x = _operand("sparse_plus", x)
    middle = (x + 1.0) * (x + 1.0) / 4.0
    return snp.where(snp.less_equal(x, -1.0), 0.0, snp.where(snp.greater_equal(x, 1.0), x, middle))


def glu(x: Any, axis: int = -1) -> Any:
    """a · sigmoid(b), a and b the two halves of x along `axis` (of even size)."""
    x = _operand("glu", x)
    axis = _int("glu", axis, "axis")
    shape = tc.shape(x)
    if not -len(shape) <= axis < len(shape) or shape[axis] % 2:
        message = f"glu: axis {axis} of x of shape {tuple(shape)} must exist and have an even size"
        raise at(ShaxValueError(message), current_source())
    a, b = snp.split(x, 2, axis)
    return a * tc.logistic(b)


def standardize(
    x: Any,
    axis: Axis = -1,
    mean: Any = None,
    variance: Any = None,
    epsilon: Any = 1e-5,
    where: None = None,
    *,
    algorithm: str = "fast",
) -> Any:
    """(x − mean) / √(variance + ε) along `axis`: by default the mean of x and, with JAX's
    "fast" algorithm, the variance mean(x²) − mean², clipped at 0 ("stable": mean((x − mean)²)).
    (JAX's `where` mask is not supported: None only.)"""
    x = _operand("standardize", x)
    epsilon = _number("standardize", "epsilon", epsilon)
    if where is not None:
        raise at(ShaxValueError("standardize: where is not supported (pass where=None)"), current_source())
    if algorithm not in ("fast", "stable"):
        message = f"standardize: algorithm must be 'fast' or 'stable', got {algorithm!r}"
        raise at(ShaxValueError(message), current_source())
    mean = snp.mean(x, axis=axis, keepdims=True) if mean is None else _operand("standardize", mean)
    if variance is not None:
        variance = _operand("standardize", variance)
    elif algorithm == "stable":
        variance = snp.mean(snp.square(x - mean), axis=axis, keepdims=True)
    else:
        variance = snp.maximum(snp.mean(snp.square(x), axis=axis, keepdims=True) - snp.square(mean), 0.0)
    return (x - mean) * tc.rsqrt(variance + epsilon)


def _number(op: str, name: str, value: Any) -> Any:
    """A real number parameter (alpha, a slope): a Python or numpy number, or a 0-d array."""
    is_array = isinstance(value, np.ndarray) and value.shape == () and value.dtype.kind in "iuf"
    if not is_array and (isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, float, np.number))):
        raise at(ShaxTypeError(f"{op}: {name} must be a real number, got {value!r}"), current_source())
    if isinstance(value, np.complexfloating):
        raise at(ShaxTypeError(f"{op}: {name} must be a real number, got {value!r}"), current_source())
    return value[()] if is_array else value


def _operand(op: str, x: Any, floating: bool = True) -> Any:
    """x, which must be an array, a number or a tracer (as JAX's, which refuse lists): the
    functions apply Python's operators to it, whose errors on other values are no ShaxError.
    Not complex (module docstring); `floating`: integers and bools in f32, else bools in i32."""
    if not isinstance(x, (np.ndarray, np.generic, bool, int, float, Tracer)):
        raise at(
            ShaxTypeError(f"{op}: expects an array, a number or a tracer, got {type(x).__name__}"), current_source()
        )
    refuse_array_subclass(op, x)
    dtype = _numpy_dtype(x)
    if dtype.kind == "c":
        message = f"{op}: {dtype} is not supported (shax has no complex dtype; pass the real and imaginary parts)"
        raise at(ShaxTypeError(message), current_source())
    if dtype.kind not in "biuf":
        raise at(ShaxTypeError(f"{op}: expects numbers, got an array of {dtype}"), current_source())
    if floating and dtype.kind in "biu":
        return _converted(x, np.dtype(np.float32))
    if not floating and dtype.kind == "b":
        return _converted(x, np.dtype(np.int32))
    return x


def _converted(x: Any, dtype: np.dtype) -> Any:
    return tc.convert_element_type(x, dtype) if isinstance(x, Tracer) else np.asarray(x, dtype)


def _int(op: str, value: Any, what: str) -> int:
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, np.integer)):
        raise at(ShaxTypeError(f"{op}: {what} must be an int, got {value!r}"), current_source())
    return int(value)


def _numpy_dtype(x: Any) -> np.dtype:
    """x's element type as numpy's: a tracer's shax dtype names it; a Python int is numpy's int64."""
    dtype = getattr(x, "dtype", None)
    return np.dtype(getattr(dtype, "numpy", dtype)) if dtype is not None else np.result_type(x)

"""optax's optimizers, each a chain of the transformations in `transforms`, as optax
composes them (the same order, so the same arithmetic)."""

from __future__ import annotations

from typing import Any

from shax.core.errors import ShaxValueError, at
from shax.core.location import current_source
from shax.optimizers.checks import flag, number, rate
from shax.optimizers.transforms import (
    GradientTransformation,
    ScalarOrSchedule,
    add_decayed_weights,
    chain,
    identity,
    scale_by_adam,
    scale_by_learning_rate,
    scale_by_rms,
    scale_by_rss,
    scale_by_stddev,
    trace,
)


def sgd(
    learning_rate: ScalarOrSchedule, momentum: float | None = None, nesterov: bool = False
) -> GradientTransformation:
    """u = −lr·g; with momentum, t ← g + momentum·t and u = −lr·t (Nesterov: −lr·(g + momentum·t))."""
    flag("sgd", "nesterov", nesterov)
    first = identity() if momentum is None else trace(number("sgd", "momentum", momentum), bool(nesterov))
    return chain(first, scale_by_learning_rate(rate("sgd", learning_rate)))


def adam(
    learning_rate: ScalarOrSchedule,
    b1: float = 0.9,
    b2: float = 0.999,
    eps: float = 1e-8,
    eps_root: float = 0.0,
    mu_dtype: Any = None,
    *,
    nesterov: bool = False,
) -> GradientTransformation:
    """Adam: u = −lr · m̂/(√(v̂ + eps_root) + eps) (see `scale_by_adam`)."""
    scaling = scale_by_adam(b1, b2, eps, eps_root, mu_dtype, nesterov=nesterov)
    return chain(scaling, scale_by_learning_rate(rate("adam", learning_rate)))


def adamw(
    learning_rate: ScalarOrSchedule,
    b1: float = 0.9,
    b2: float = 0.999,
    eps: float = 1e-8,
    eps_root: float = 0.0,
    mu_dtype: Any = None,
    weight_decay: float = 1e-4,
    mask: None = None,
    *,
    nesterov: bool = False,
) -> GradientTransformation:
    """AdamW: u = −lr · (m̂/(√(v̂ + eps_root) + eps) + weight_decay·p), decay decoupled from the moments.
    (optax's `mask`, to decay only some parameters, is not supported: None only.)"""
    if mask is not None:
        message = "adamw: mask is not supported (every parameter decays); pass mask=None, or chain transformations"
        raise at(ShaxValueError(message), current_source())
    return chain(
        scale_by_adam(b1, b2, eps, eps_root, mu_dtype, nesterov=nesterov),
        add_decayed_weights(weight_decay),
        scale_by_learning_rate(rate("adamw", learning_rate)),
    )


def rmsprop(
    learning_rate: ScalarOrSchedule,
    decay: float = 0.9,
    eps: float = 1e-8,
    initial_scale: float = 0.0,
    eps_in_sqrt: bool = True,
    centered: bool = False,
    momentum: float | None = None,
    nesterov: bool = False,
    bias_correction: bool = False,
) -> GradientTransformation:
    """RMSProp: u = −lr · g/√(v + eps), v the running mean of g² (`centered`: of g² − m²),
    then momentum on u if asked. (optax's `bias_correction=True` is not supported.)"""
    flag("rmsprop", "centered", centered)
    flag("rmsprop", "nesterov", nesterov)
    flag("rmsprop", "bias_correction", bias_correction)
    if bias_correction:
        raise at(ShaxValueError("rmsprop: bias_correction=True is not supported"), current_source())
    scaling = (scale_by_stddev if centered else scale_by_rms)(decay, eps, initial_scale, eps_in_sqrt)
    last = identity() if momentum is None else trace(number("rmsprop", "momentum", momentum), bool(nesterov))
    return chain(scaling, scale_by_learning_rate(rate("rmsprop", learning_rate)), last)


def adagrad(
    learning_rate: ScalarOrSchedule, initial_accumulator_value: float = 0.1, eps: float = 1e-7
) -> GradientTransformation:
    """Adagrad: u = −lr · g/√(s + eps), s the sum of every g² so far (from initial_accumulator_value)."""
    return chain(scale_by_rss(initial_accumulator_value, eps), scale_by_learning_rate(rate("adagrad", learning_rate)))

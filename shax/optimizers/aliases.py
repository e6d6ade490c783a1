"""optax's optimizers, each a chain of the transformations in `transforms`, as optax
composes them (the same order, so the same arithmetic)."""

from __future__ import annotations

import numpy as np

from shax.errors import ShaxTypeError, at
from shax.location import current_source
from shax.optimizers.checks import number, rate
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
    _flag("sgd", "nesterov", nesterov)
    first = identity() if momentum is None else trace(number("sgd", "momentum", momentum), bool(nesterov))
    return chain(first, scale_by_learning_rate(rate("sgd", learning_rate)))


def adam(
    learning_rate: ScalarOrSchedule, b1: float = 0.9, b2: float = 0.999, eps: float = 1e-8, eps_root: float = 0.0
) -> GradientTransformation:
    """Adam: u = −lr · m̂/(√(v̂ + eps_root) + eps) (see `scale_by_adam`)."""
    return chain(scale_by_adam(b1, b2, eps, eps_root), scale_by_learning_rate(rate("adam", learning_rate)))


def adamw(
    learning_rate: ScalarOrSchedule,
    b1: float = 0.9,
    b2: float = 0.999,
    eps: float = 1e-8,
    eps_root: float = 0.0,
    weight_decay: float = 1e-4,
) -> GradientTransformation:
    """AdamW: u = −lr · (m̂/(√(v̂ + eps_root) + eps) + weight_decay·p), decay decoupled from the moments."""
    return chain(
        scale_by_adam(b1, b2, eps, eps_root),
        add_decayed_weights(weight_decay),
        scale_by_learning_rate(rate("adamw", learning_rate)),
    )


def rmsprop(
    learning_rate: ScalarOrSchedule,
    decay: float = 0.9,
    eps: float = 1e-8,
    initial_scale: float = 0.0,
    centered: bool = False,
    momentum: float | None = None,
    nesterov: bool = False,
) -> GradientTransformation:
    """RMSProp: u = −lr · g/√(v + eps), v the running mean of g² (`centered`: of g² − m²),
    then momentum on u if asked."""
    _flag("rmsprop", "centered", centered)
    _flag("rmsprop", "nesterov", nesterov)
    scaling = (scale_by_stddev if centered else scale_by_rms)(decay, eps, initial_scale)
    last = identity() if momentum is None else trace(number("rmsprop", "momentum", momentum), bool(nesterov))
    return chain(scaling, scale_by_learning_rate(rate("rmsprop", learning_rate)), last)


def adagrad(
    learning_rate: ScalarOrSchedule, initial_accumulator_value: float = 0.1, eps: float = 1e-7
) -> GradientTransformation:
    """Adagrad: u = −lr · g/√(s + eps), s the sum of every g² so far (from initial_accumulator_value)."""
    return chain(scale_by_rss(initial_accumulator_value, eps), scale_by_learning_rate(rate("adagrad", learning_rate)))


def _flag(what: str, name: str, value: object) -> None:
    if not isinstance(value, (bool, np.bool_)):
        raise at(ShaxTypeError(f"{what}: {name} must be a bool, got {value!r}"), current_source())

"""Gradient transformations, optax's shape: a `GradientTransformation(init, update)` pair,

    state = tx.init(params)
    updates, state = tx.update(grads, state, params)
    params = apply_updates(params, updates)

with optax's names, signatures and arithmetic (its update order, bias corrections, f32
step counts), written with `shax.numpy`: the same step runs on numpy values and traced,
so a whole training step `jit`s. States are named tuples of pytrees (an `int32` count,
moments shaped like the parameters), so they are pytrees too. `update` checks that the
gradients have the structure, shapes and dtypes of the parameters its state was made
for: a state from another tree is a `ShaxValueError`, not a broadcast.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, NamedTuple

import numpy as np

import shax.numpy as snp
import typeclasses as tc
from shax.core.errors import ShaxTypeError, ShaxValueError, at
from shax.core.location import current_source
from shax.optimizers.checks import flag, float_dtype, number, rate
from shax.tracing.tracer import Tracer
from shax.tree_util import tree_leaves, tree_map, tree_structure

Schedule = Callable[[Any], Any]
ScalarOrSchedule = float | Schedule


class GradientTransformation(NamedTuple):
    """`init(params) -> state`; `update(updates, state, params=None) -> (updates, state)`."""

    init: Callable[[Any], Any]
    update: Callable[..., tuple[Any, Any]]


class EmptyState(NamedTuple):
    """The state of a transformation that keeps none."""


class ScaleByScheduleState(NamedTuple):
    count: Any  # i32[], the number of updates made


class TraceState(NamedTuple):
    trace: Any  # like the parameters


class ScaleByAdamState(NamedTuple):
    count: Any  # i32[]
    mu: Any  # first moments, like the parameters
    nu: Any  # second moments, like the parameters


class ScaleByRmsState(NamedTuple):
    nu: Any


class ScaleByRStdDevState(NamedTuple):
    mu: Any
    nu: Any


class ScaleByRssState(NamedTuple):
    sum_of_squares: Any


def identity() -> GradientTransformation:
    """u ↦ u."""
    return GradientTransformation(lambda params: EmptyState(), lambda updates, state, params=None: (updates, state))


def scale(step_size: float) -> GradientTransformation:
    """u ↦ step_size · u."""
    step_size = number("scale", "step_size", step_size)

    def update(updates: Any, state: Any, params: Any = None) -> tuple[Any, Any]:
        return tree_map(lambda g: step_size * g, updates), state

    return GradientTransformation(lambda params: EmptyState(), update)


def scale_by_schedule(step_size_fn: Schedule) -> GradientTransformation:
    """u ↦ step_size_fn(count) · u, count the updates made before this one."""
    if not callable(step_size_fn):
        message = f"scale_by_schedule: step_size_fn must be a function of the step count, got {step_size_fn!r}"
        raise at(ShaxTypeError(message), current_source())

    def update(updates: Any, state: Any, params: Any = None) -> tuple[Any, Any]:
        _check_state("scale_by_schedule", state, ScaleByScheduleState)
        step_size = step_size_fn(state.count)
        if not isinstance(step_size, (int, float, np.integer, np.floating, np.ndarray, Tracer)) or isinstance(
            step_size, (bool, np.bool_)
        ):
            message = f"scale_by_schedule: the schedule gave {_shown(step_size)} at step {state.count}, not a number"
            raise at(ShaxTypeError(message), current_source())
        return tree_map(lambda g: _cast(step_size, g) * g, updates), ScaleByScheduleState(_increment(state.count))

    return GradientTransformation(lambda params: ScaleByScheduleState(_count()), update)


def scale_by_learning_rate(learning_rate: ScalarOrSchedule, *, flip_sign: bool = True) -> GradientTransformation:
    """u ↦ −lr · u (a schedule: −lr(count) · u); `flip_sign=False` keeps the sign."""
    flag("scale_by_learning_rate", "flip_sign", flip_sign)
    sign = -1.0 if flip_sign else 1.0
    lr = rate("scale_by_learning_rate", learning_rate)
    if callable(lr):
        return scale_by_schedule(lambda count: sign * lr(count))
    return scale(sign * lr)


def trace(decay: float, nesterov: bool = False) -> GradientTransformation:
    """Momentum: t ← u + decay·t, then u ↦ t (Nesterov: u + decay·t)."""
    decay = number("trace", "decay", decay)
    flag("trace", "nesterov", nesterov)

    def update(updates: Any, state: Any, params: Any = None) -> tuple[Any, Any]:
        _check_state("trace", state, TraceState)
        _check_like("trace", updates, state.trace)
        new = tree_map(lambda g, t: g + decay * t, updates, state.trace)
        out = tree_map(lambda g, t: g + decay * t, updates, new) if nesterov else new
        return out, TraceState(new)

    return GradientTransformation(lambda params: TraceState(_zeros_like(params)), update)


def scale_by_adam(
    b1: float = 0.9,
    b2: float = 0.999,
    eps: float = 1e-8,
    eps_root: float = 0.0,
    mu_dtype: Any = None,
    *,
    nesterov: bool = False,
) -> GradientTransformation:
    """Adam's scaling: m ← (1−b1)·u + b1·m, v ← (1−b2)·u² + b2·v, then
    u ↦ m̂ / (√(v̂ + eps_root) + eps) with m̂ = m/(1−b1ᵗ), v̂ = v/(1−b2ᵗ)
    (Nesterov, optax's NAdam: m̂ = b1·m/(1−b1ᵗ⁺¹) + (1−b1)·u/(1−b1ᵗ)); m kept in `mu_dtype`."""
    b1, b2 = number("scale_by_adam", "b1", b1), number("scale_by_adam", "b2", b2)
    eps, eps_root = number("scale_by_adam", "eps", eps), number("scale_by_adam", "eps_root", eps_root)
    flag("scale_by_adam", "nesterov", nesterov)
    mu_type = None if mu_dtype is None else float_dtype("scale_by_adam", "mu_dtype", mu_dtype)

    def init(params: Any) -> ScaleByAdamState:
        mu = _zeros_like(params)
        return ScaleByAdamState(
            _count(), mu if mu_type is None else tree_map(lambda m: _cast(m, mu_type), mu), _zeros_like(params)
        )

    def update(updates: Any, state: Any, params: Any = None) -> tuple[Any, Any]:
        _check_state("scale_by_adam", state, ScaleByAdamState)
        _check_like("scale_by_adam", updates, state.nu)
        mu = tree_map(lambda g, m: (1 - b1) * g + b1 * m, updates, state.mu)
        nu = tree_map(lambda g, v: (1 - b2) * (g * g) + b2 * v, updates, state.nu)
        count = _increment(state.count)
        c1, c2 = _correction(b1, count), _correction(b2, count)
        if nesterov:
            c1_next = _correction(b1, _increment(count))
            mu_hat = tree_map(lambda m, g: b1 * (m / _cast(c1_next, m)) + (1 - b1) * (g / _cast(c1, g)), mu, updates)
        else:
            mu_hat = tree_map(lambda m: m / _cast(c1, m), mu)
        out = tree_map(lambda m, v: m / (snp.sqrt(v / _cast(c2, v) + eps_root) + eps), mu_hat, nu)
        if mu_type is not None:
            mu = tree_map(lambda m: _cast(m, mu_type), mu)
        return out, ScaleByAdamState(count, mu, nu)

    return GradientTransformation(init, update)


def _correction(decay: float, count: Any) -> Any:
    """1 − decayᵗ, in f32 (optax's, of an i32 count)."""
    return 1 - decay ** snp.asarray(count, np.float32)


def scale_by_rms(
    decay: float = 0.9, eps: float = 1e-8, initial_scale: float = 0.0, eps_in_sqrt: bool = True
) -> GradientTransformation:
    """RMSProp's scaling: v ← (1−decay)·u² + decay·v, u ↦ u / √(v + eps) (or u / (√v + eps))."""
    flag("scale_by_rms", "eps_in_sqrt", eps_in_sqrt)
    decay, eps = number("scale_by_rms", "decay", decay), number("scale_by_rms", "eps", eps)
    initial_scale = number("scale_by_rms", "initial_scale", initial_scale)

    def update(updates: Any, state: Any, params: Any = None) -> tuple[Any, Any]:
        _check_state("scale_by_rms", state, ScaleByRmsState)
        _check_like("scale_by_rms", updates, state.nu)
        nu = tree_map(lambda g, v: (1 - decay) * (g * g) + decay * v, updates, state.nu)
        return tree_map(lambda g, v: g / _root(v, eps, eps_in_sqrt), updates, nu), ScaleByRmsState(nu)

    return GradientTransformation(lambda params: ScaleByRmsState(_full_like(params, initial_scale)), update)


def scale_by_stddev(
    decay: float = 0.9, eps: float = 1e-8, initial_scale: float = 0.0, eps_in_sqrt: bool = True
) -> GradientTransformation:
    """Centred RMSProp's scaling: m and v as Adam's (without bias correction),
    u ↦ u / √(v − m² + eps) (or u / (√(v − m²) + eps))."""
    flag("scale_by_stddev", "eps_in_sqrt", eps_in_sqrt)
    decay, eps = number("scale_by_stddev", "decay", decay), number("scale_by_stddev", "eps", eps)
    initial_scale = number("scale_by_stddev", "initial_scale", initial_scale)

    def init(params: Any) -> ScaleByRStdDevState:
        return ScaleByRStdDevState(_zeros_like(params), _full_like(params, initial_scale))

    def update(updates: Any, state: Any, params: Any = None) -> tuple[Any, Any]:
        _check_state("scale_by_stddev", state, ScaleByRStdDevState)
        _check_like("scale_by_stddev", updates, state.mu)
        mu = tree_map(lambda g, m: (1 - decay) * g + decay * m, updates, state.mu)
        nu = tree_map(lambda g, v: (1 - decay) * (g * g) + decay * v, updates, state.nu)
        out = tree_map(lambda g, m, v: g / _root(v - m * m, eps, eps_in_sqrt), updates, mu, nu)
        return out, ScaleByRStdDevState(mu, nu)

    return GradientTransformation(init, update)


def _root(v: Any, eps: float, eps_in_sqrt: bool) -> Any:
    return snp.sqrt(v + eps) if eps_in_sqrt else snp.sqrt(v) + eps


def scale_by_rss(initial_accumulator_value: float = 0.1, eps: float = 1e-7) -> GradientTransformation:
    """Adagrad's scaling: s ← s + u², u ↦ u / √(s + eps) (0 where s = 0)."""
    initial = number("scale_by_rss", "initial_accumulator_value", initial_accumulator_value)
    eps = number("scale_by_rss", "eps", eps)

    def update(updates: Any, state: Any, params: Any = None) -> tuple[Any, Any]:
        _check_state("scale_by_rss", state, ScaleByRssState)
        _check_like("scale_by_rss", updates, state.sum_of_squares)
        total = tree_map(lambda g, s: g * g + s, updates, state.sum_of_squares)
        out = tree_map(lambda g, s: snp.where(s > 0, 1 / snp.sqrt(s + eps), 0.0) * g, updates, total)
        return out, ScaleByRssState(total)

    return GradientTransformation(lambda params: ScaleByRssState(_full_like(params, initial)), update)


def add_decayed_weights(weight_decay: float = 0.0) -> GradientTransformation:
    """Decoupled weight decay: u ↦ u + weight_decay · params."""
    weight_decay = number("add_decayed_weights", "weight_decay", weight_decay)

    def update(updates: Any, state: Any, params: Any = None) -> tuple[Any, Any]:
        if params is None:
            message = "add_decayed_weights: update needs the parameters: call update(grads, state, params)"
            raise at(ShaxValueError(message), current_source())
        _check_like("add_decayed_weights", updates, params)
        return tree_map(lambda g, p: g + weight_decay * p, updates, params), state

    return GradientTransformation(lambda params: EmptyState(), update)


def clip_by_global_norm(max_norm: float) -> GradientTransformation:
    """u ↦ u · max_norm / ‖u‖ where ‖u‖ (over every leaf) ≥ max_norm, else u."""
    max_norm = number("clip_by_global_norm", "max_norm", max_norm)

    def update(updates: Any, state: Any, params: Any = None) -> tuple[Any, Any]:
        norm = global_norm(updates)
        return tree_map(lambda g: snp.where(norm < max_norm, g, g / _cast(norm, g) * max_norm), updates), state

    return GradientTransformation(lambda params: EmptyState(), update)


def global_norm(updates: Any) -> Any:
    """√(Σ u²) over every element of every leaf."""
    _check_arrays("global_norm", updates)
    return snp.sqrt(sum(snp.sum(g * g) for g in tree_leaves(updates)))


def chain(*args: GradientTransformation) -> GradientTransformation:
    """The transformations one after the other; the state is the tuple of theirs."""
    for k, tx in enumerate(args):
        if not isinstance(tx, GradientTransformation):
            message = f"chain: argument {k} must be a GradientTransformation (sgd(...), scale(...), ...), got {tx!r}"
            raise at(ShaxTypeError(message), current_source())

    def init(params: Any) -> tuple[Any, ...]:
        return tuple(tx.init(params) for tx in args)

    def update(updates: Any, state: Any, params: Any = None) -> tuple[Any, Any]:
        if not isinstance(state, tuple) or len(state) != len(args):
            message = f"chain: the state must be the tuple of {len(args)} states its init made, got {_shown(state)}"
            raise at(ShaxValueError(message), current_source())
        states = []
        for tx, inner in zip(args, state):
            updates, inner = tx.update(updates, inner, params)
            states.append(inner)
        return updates, tuple(states)

    return GradientTransformation(init, update)


def apply_updates(params: Any, updates: Any) -> Any:
    """params + updates, leaf by leaf, each in its parameter's dtype."""
    _check_like("apply_updates", updates, params)
    return tree_map(lambda p, u: _cast(p + u, p), params, updates)


# Helpers ------------------------------------------------------------------------------


def _count() -> np.ndarray:
    return np.zeros((), np.int32)


def _increment(count: Any) -> Any:
    """count + 1, saturating at the largest i32 (optax's safe increment)."""
    limit = np.iinfo(np.int32).max
    return snp.where(count < limit, count + np.int32(1), np.int32(limit))


def _dtype(x: Any) -> np.dtype:
    dtype = getattr(x, "dtype", None)
    return np.dtype(getattr(dtype, "numpy", dtype)) if dtype is not None else np.result_type(x)


def _cast(value: Any, like: Any) -> Any:
    """`value` in `like`'s dtype."""
    dtype = _dtype(like)
    if isinstance(value, Tracer):
        return tc.convert_element_type(value, dtype)
    return snp.asarray(value, dtype)


def _zeros_like(params: Any) -> Any:
    return _full_like(params, 0.0)


def _full_like(params: Any, value: float) -> Any:
    _check_arrays("init", params)
    return tree_map(lambda p: snp.full_like(p, value), params)


def _check_state(what: str, state: Any, expected: type) -> None:
    if type(state) is not expected:
        message = f"{what}: the state must be the {expected.__name__} its init made, got {_shown(state)}"
        raise at(ShaxValueError(message), current_source())


def _check_arrays(what: str, tree: Any) -> None:
    for leaf in tree_leaves(tree):
        numeric = isinstance(leaf, (Tracer, float, int)) or (
            isinstance(leaf, (np.ndarray, np.generic)) and leaf.dtype.kind in "iuf"
        )
        if not numeric or isinstance(leaf, bool):
            message = f"{what}: the parameters and updates must be pytrees of arrays, got a leaf {_shown(leaf)}"
            raise at(ShaxTypeError(message), current_source())


def _check_like(what: str, tree: Any, reference: Any) -> None:
    """Nothing if `tree` has `reference`'s structure, shapes and dtypes: else the state (or
    parameters) was made for another tree, a ShaxValueError."""
    _check_arrays(what, tree)
    _check_arrays(what, reference)
    structure, expected = tree_structure(tree), tree_structure(reference)
    if structure != expected:
        message = f"{what}: the updates have the structure {structure}, but the state was made for {expected}"
        raise at(ShaxValueError(message), current_source())
    for k, (g, r) in enumerate(zip(tree_leaves(tree), tree_leaves(reference))):
        typed = hasattr(g, "dtype") and hasattr(r, "dtype")  # (a Python number takes its parameter's dtype)
        if tc.shape(g) != tc.shape(r) or (typed and _dtype(g) != _dtype(r)):
            message = (
                f"{what}: leaf {k} of the updates is {_dtype(g)}{list(tc.shape(g))}, but the state was made for "
                f"{_dtype(r)}{list(tc.shape(r))}"
            )
            raise at(ShaxValueError(message), current_source())


def _shown(value: Any) -> str:
    text = repr(value)
    return f"{type(value).__name__} {text[:80]}{'...' if len(text) > 80 else ''}"

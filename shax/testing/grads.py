"""`check_grads(f, args, order=1, modes=("fwd", "rev"))`: shax's derivatives of `f` at
`args` checked against finite differences, as JAX's `jax.test_util.check_grads`.

Each order checks one random direction, as JAX does: "fwd" compares `jvp(f)` along a
random tangent with the finite differences along it, output element by output element;
"rev" compares `<tangent, vjp_fn(ct)>` with `<finite differences, ct>` for a random
output cotangent `ct` (the inner-product test: `vjp_fn` is the transpose of the jvp).
Order n + 1 checks, the same way, the functions order n differentiated: `(primals,
tangents) ↦ jvp(f, primals, tangents)` at (args, args), and `args ↦ vjp_fn(f(args))`.

The finite differences are `shax.testing.numeric`'s (Ridders' extrapolation, in float64,
with an error estimate), evaluated on float64 copies of the arguments also when they are
float32, so the tolerance is known rather than guessed: an element fails when it is off by
more than `TRUST` times the estimate's error plus round-off, plus `atol + rtol·|expected|`
(both 0 by default), plus for float32 `F32_TOL` of the largest derivative of that output
or value f computes (shax computed them in float32). Where the differences did not settle
(a kink, a pole), nothing else is wrong and shax's derivative is off them, nothing can be
said: `NotSmooth`, a `ShaxValueError`. Where it agrees with them, nothing was found wrong:
so at a point where f is flat to high order (its derivatives all 0 there), agreeing with
differences of size 1e-20 passes.

On a wrong derivative the AssertionError names the mode, the order, the argument and the
worst element: found by checking again along each argument alone (fwd), or element by
element of each argument's cotangent (rev, at most `MAX_PROBES` elements per argument).
"""

from __future__ import annotations

import numbers
import reprlib
from collections.abc import Callable, Sequence
from typing import Any

import attrs
import numpy as np

from shax.core.errors import ShaxError, ShaxTypeError, ShaxValueError, at
from shax.core.location import current_source
from shax.core.pytree import flatten, unflatten
from shax.core.types import f32, f64
from shax.testing.numeric import RTOL, STEP, TRUST, Estimate, NotSmooth, directional_derivative, unsettled
from shax.tracing.trace import check_function, function_name
from shax.transforms import jvp, vjp
from shax.transforms.arguments import abstract_arguments, argument_labels

MODES = ("fwd", "rev")
F32_TOL = 2e-4  # of an output's largest derivative: what float32 rounding inside f may cost (measured: below 3e-5)
MAX_PROBES = 256  # elements of an argument whose cotangents a failed "rev" check probes one by one
SEED = 0  # of the random tangents and cotangents, so that a check is repeatable

Flat = Callable[..., list[Any]]  # a function of leaves returning leaves


@attrs.frozen
class _Level:
    """One function to check: `fn(*leaves)` (leaves in, leaves out) at `args`, its leaves
    named by `labels`; `what` says what it is (`f`, `the jvp of f`) and `order` which
    derivative of the user's f its derivatives are."""

    fn: Flat
    args: tuple[np.ndarray, ...]
    labels: tuple[str, ...]
    what: str
    order: int


@attrs.frozen
class _Tolerances:
    atol: float
    rtol: float
    eps: float


def check_grads(
    f: Callable[..., Any],
    args: Sequence[Any],
    order: int = 1,
    modes: Sequence[str] = MODES,
    atol: float | None = None,
    rtol: float | None = None,
    eps: float | None = None,
) -> None:
    """Check shax's derivatives of `f` at `args` (a tuple of pytrees of float arrays)
    against finite differences, up to `order`, in `modes` ("fwd": jvp, "rev": vjp).

    AssertionError naming the mode, the order, the argument and the worst element (its
    index, the derivative shax computed, the finite differences' value and the tolerance)
    where a derivative is wrong; `NotSmooth` where finite differences cannot tell. `atol`
    and `rtol` loosen the tolerance (see the module docstring); `eps` is the first step
    of the finite differences (default `numeric.STEP`), which then shrinks."""
    tolerances = _checked_options(f, args, order, modes, atol, rtol, eps)
    leaves, tree, types = abstract_arguments("check_grads", tuple(args))
    labels = argument_labels(tree)
    arrays = []
    for label, leaf, t in zip(labels, leaves, types):
        if t.dtype not in (f32, f64):
            message = f"check_grads: {label} is {t}: it differentiates float arrays (f32, f64); close over the others"
            raise at(ShaxTypeError(message), current_source())
        array = np.array(leaf, t.dtype.numpy)
        if not np.isfinite(array).all():
            raise at(ShaxValueError(f"check_grads: {label} has elements that are not finite"), current_source())
        # The first step moves an element by up to eps: beyond the dtype's range, no difference is a number.
        if float(np.max(np.abs(array), initial=0.0)) + tolerances.eps > float(np.finfo(array.dtype).max):
            message = f"check_grads: eps={tolerances.eps:g} is too large: {label} ± eps is not finite in {t.dtype.name}"
            raise at(ShaxValueError(message), current_source())
        arrays.append(array)

    def flat(*xs: Any) -> list[Any]:
        return flatten(f(*unflatten(tree, xs)))[0]

    name = function_name(f)
    # f itself through shax first: its errors (a wrong number of arguments, a shape error) name the user's line.
    zeros = unflatten(tree, [np.zeros_like(x) for x in arrays])
    returned = jvp(f, unflatten(tree, arrays), zeros)[0]
    _check_outputs(name, returned, flatten(returned)[0])
    levels = [_Level(flat, tuple(arrays), tuple(labels), name, 1)]
    rng = np.random.default_rng(SEED)
    while levels:  # depth first: a level in each mode, then the levels those lead to (fwd's first)
        level = levels.pop(0)
        followers = []
        for mode in (m for m in MODES if m in modes):
            _check(level, mode, tolerances, rng)
            if level.order < order:
                followers.append(_jvp_level(level) if mode == "fwd" else _vjp_level(level))
        levels[:0] = followers


def _checked_options(f: Any, args: Any, order: Any, modes: Any, atol: Any, rtol: Any, eps: Any) -> _Tolerances:
    check_function("check_grads", f)
    problems = []
    if not isinstance(args, (tuple, list)):
        problems.append(f"args must be a tuple of the arguments, got {type(args).__name__} {reprlib.repr(args)}")
    if isinstance(order, bool) or not isinstance(order, int) or order < 1:
        problems.append(f"order must be an int ≥ 1, got {reprlib.repr(order)}")
    if not isinstance(modes, (tuple, list)) or not modes or not all(isinstance(m, str) and m in MODES for m in modes):
        problems.append(f"modes must be a non-empty tuple of 'fwd' and 'rev', got {reprlib.repr(modes)}")
    for option, value, least in (("atol", atol, 0.0), ("rtol", rtol, 0.0), ("eps", eps, None)):
        number = isinstance(value, numbers.Real) and not isinstance(value, bool)
        if value is not None and not (number and np.isfinite(value) and (value > 0 if least is None else value >= 0)):
            bound = "> 0" if least is None else "≥ 0"
            problems.append(f"{option} must be None or a finite number {bound}, got {reprlib.repr(value)}")
    if problems:
        raise at(ShaxValueError("check_grads: " + "; ".join(problems)), current_source())
    return _Tolerances(float(atol or 0.0), float(rtol or 0.0), float(eps or STEP))


def _check_outputs(name: str, returned: Any, outputs: Sequence[Any]) -> None:
    if not outputs:  # nothing would be checked, and the check would pass
        message = f"check_grads: {name} returned {reprlib.repr(returned)}: it has no outputs whose derivatives to check"
        raise at(ShaxValueError(message), current_source())
    for k, out in enumerate(outputs):
        array = np.asarray(out)
        if array.dtype not in (np.float32, np.float64):
            message = f"check_grads: output {k} of {name} is {array.dtype}: it differentiates float outputs (f32, f64)"
            raise at(ShaxTypeError(message), current_source())
        if not np.isfinite(array).all():
            raise at(ShaxValueError(f"check_grads: output {k} of {name} is not finite there"), current_source())


def _jvp_level(level: _Level) -> _Level:
    """(primals, tangents) ↦ (outputs, output tangents), checked at (args, args)."""
    n = len(level.args)

    def jvp_of(*xs: Any) -> list[Any]:
        outputs, tangents = jvp(level.fn, xs[:n], xs[n:])
        return [*outputs, *tangents]

    labels = (*level.labels, *(f"the tangent of {label}" for label in level.labels))
    return _Level(jvp_of, level.args * 2, labels, f"the jvp of {level.what}", level.order + 1)


def _vjp_level(level: _Level) -> _Level:
    """primals ↦ vjp_fn(f(primals)): the cotangents pulled back from the outputs themselves."""

    def vjp_of(*xs: Any) -> list[Any]:
        outputs, vjp_fn = vjp(level.fn, *xs)
        return list(vjp_fn(outputs))

    return _Level(vjp_of, level.args, level.labels, f"the vjp of {level.what}", level.order + 1)


def _random_like(rng: np.random.Generator, x: Any) -> np.ndarray:
    """Standard normal values of x's shape and dtype, rounded to float32 so that they are
    the same in float64 (where finite differences use them)."""
    array = np.asarray(x)
    return np.asarray(rng.standard_normal(array.shape), np.float32).astype(array.dtype)


def _estimates(level: _Level, tangents: Sequence[np.ndarray], eps: float) -> list[Estimate]:
    """Finite differences of the level's function along `tangents`, in float64 (the
    function at float64 arguments, or at its own if it cannot take them)."""
    try:
        return directional_derivative(level.fn, level.args, tangents, step=eps)
    except NotSmooth:
        raise
    except ShaxError:
        fn = level.fn

        def at_own_dtypes(*xs: Any) -> list[Any]:
            return fn(*(np.asarray(x, a.dtype) for x, a in zip(xs, level.args)))

        return directional_derivative(at_own_dtypes, level.args, tangents, step=eps)


def _allowance(got: np.ndarray, estimate: Estimate, tolerances: _Tolerances, values: float | None) -> np.ndarray:
    """How far `got` may be from `estimate.value`, element by element. `values`: None if
    shax computed `got` in float64; in float32, the largest |value| the function computes
    (float32 rounding there is relative to those values as much as to the derivative's:
    a derivative that cancels to nearly 0 keeps the rounding of its terms)."""
    scale = float(np.max(np.abs(np.concatenate([got.ravel(), estimate.value.ravel()])), initial=0.0))
    allowed = TRUST * estimate.error + RTOL * scale + tolerances.atol + tolerances.rtol * np.abs(estimate.value)
    return np.asarray(allowed + (0.0 if values is None else F32_TOL * max(scale, values)))


def _values(arrays: Sequence[Any]) -> float | None:
    """None if every array is float64; else the largest |element| (the scale of float32 rounding)."""
    if all(np.asarray(a).dtype == np.float64 for a in arrays):
        return None
    return max((float(np.max(np.abs(np.asarray(a, np.float64)), initial=0.0)) for a in arrays), default=0.0)


def _check(level: _Level, mode: str, tolerances: _Tolerances, rng: np.random.Generator) -> None:
    tangents = [_random_like(rng, x) for x in level.args]
    if mode == "fwd":
        _check_fwd(level, tangents, tolerances)
    else:
        _check_rev(level, tangents, tolerances, rng)


@attrs.frozen
class _Miss:
    """An element off by more than allowed: where (`place`: an output's element, or an
    argument's), what shax computed, what finite differences give (± their error), and
    the tolerance."""

    place: str
    got: float
    expected: float
    error: float
    allowed: float

    @property
    def ratio(self) -> float:
        return abs(self.got - self.expected) / self.allowed if self.allowed > 0 else np.inf


def _index(flat_index: int, shape: tuple[int, ...]) -> list[int]:
    return [int(i) for i in np.unravel_index(flat_index, shape)] if shape else []


def _compare_fwd(
    got: Sequence[Any], estimates: Sequence[Estimate], tolerances: _Tolerances, values: float | None
) -> tuple[_Miss | None, bool]:
    """(the worst element of the output tangents `got` off their settled estimates, if
    any is; whether some element is off an estimate that did not settle)."""
    worst: _Miss | None = None
    unknown = False
    for k, (value, estimate) in enumerate(zip(got, estimates)):
        array = np.asarray(value)
        exact = array.astype(np.float64)
        allowed = _allowance(exact, estimate, tolerances, values)
        scale = float(np.max(np.abs(np.concatenate([exact.ravel(), estimate.value.ravel()])), initial=0.0))
        rough = unsettled(estimate, scale)
        with np.errstate(invalid="ignore"):
            apart = ~(np.abs(exact - estimate.value) <= allowed)
        off = apart & ~rough
        unknown |= bool((apart & rough).any())
        if off.any():
            ratios = np.where(off, np.abs(exact - estimate.value) / np.maximum(allowed, 1e-300), -1.0)
            j = int(np.argmax(ratios))
            at_index = _index(j, exact.shape)
            miss = _Miss(
                f"output {k} at {at_index}",
                float(exact.flat[j]),
                float(estimate.value.flat[j]),
                float(estimate.error.flat[j]),
                float(allowed.flat[j]),
            )
            worst = miss if worst is None or miss.ratio > worst.ratio else worst
    return worst, unknown


def _check_fwd(level: _Level, tangents: list[np.ndarray], tolerances: _Tolerances) -> None:
    outputs, got = jvp(level.fn, level.args, tangents)
    values = _values([*level.args, *outputs, *got])
    estimates = _estimates(level, tangents, tolerances.eps)
    worst, unknown = _compare_fwd(got, estimates, tolerances, values)
    if worst is not None:
        where = "all arguments together"
        if len(level.args) > 1:  # which argument: along each alone
            for i, label in enumerate(level.labels):
                alone = [t if j == i else np.zeros_like(t) for j, t in enumerate(tangents)]
                _, got = jvp(level.fn, level.args, alone)
                miss, _ = _compare_fwd(got, _estimates(level, alone, tolerances.eps), tolerances, values)
                if miss is not None:
                    worst, where = miss, label
                    break
        else:
            where = level.labels[0]
        raise _failure(level, "fwd", f"{where} (along a random tangent)", "the tangent of " + worst.place, worst)
    if unknown:
        raise _not_smooth(level, "fwd", estimates, tolerances.eps)


def _weighted(
    estimates: Sequence[Estimate], cts: Sequence[np.ndarray], tolerances: _Tolerances, values: float | None
) -> tuple[float, float, bool]:
    """(Σ <estimate, ct> over the outputs, its tolerance, whether some estimate it uses says nothing)."""
    value = allowed = 0.0
    unknown = False
    for estimate, ct in zip(estimates, cts):
        weights = np.abs(ct.astype(np.float64))
        scale = float(np.max(np.abs(estimate.value), initial=0.0))
        value += float(np.sum(estimate.value * ct))
        allowed += float(np.sum(weights * _allowance(estimate.value, estimate, tolerances, values)))
        unknown |= bool((unsettled(estimate, scale) & (weights > 0)).any())
    return value, allowed + tolerances.rtol * abs(value), unknown


def _check_rev(level: _Level, tangents: list[np.ndarray], tolerances: _Tolerances, rng: np.random.Generator) -> None:
    outputs, vjp_fn = vjp(level.fn, *level.args)
    cts = [_random_like(rng, out) for out in outputs]
    got = [np.asarray(c, np.float64) for c in vjp_fn(cts)]
    values = _values([*level.args, *outputs])
    exact = sum(float(np.sum(t * g)) for t, g in zip(tangents, got))
    # the inner product shax's cotangents give is itself rounded
    rounding = (RTOL if values is None else F32_TOL) * sum(float(np.sum(np.abs(t * g))) for t, g in zip(tangents, got))
    estimates = _estimates(level, tangents, tolerances.eps)
    expected, allowed, unknown = _weighted(estimates, cts, tolerances, values)
    allowed += rounding
    if not abs(exact - expected) <= allowed:
        if unknown:
            raise _not_smooth(level, "rev", estimates, tolerances.eps)
        where, worst = _probe_rev(level, cts, got, tolerances, values)
        if worst is None:
            worst = _Miss("<tangent, cotangent>", exact, expected, np.nan, allowed)
            where = "all arguments together (along a random tangent; no element located)"
        raise _failure(level, "rev", where, worst.place, worst)


def _probe_rev(
    level: _Level, cts: Sequence[np.ndarray], got: Sequence[np.ndarray], tolerances: _Tolerances, values: float | None
) -> tuple[str, _Miss | None]:
    """The worst element of the arguments' cotangents `got`, each checked against the
    finite differences along that element alone (`MAX_PROBES` per argument at most)."""
    worst: tuple[str, _Miss | None] = ("", None)
    for i, (label, x) in enumerate(zip(level.labels, level.args)):
        for j in range(min(x.size, MAX_PROBES)):
            unit = [np.zeros_like(a) for a in level.args]
            unit[i].flat[j] = 1.0
            expected, allowed, unknown = _weighted(_estimates(level, unit, tolerances.eps), cts, tolerances, values)
            value = float(got[i].flat[j])
            if unknown or abs(value - expected) <= allowed:
                continue
            miss = _Miss(f"the cotangent at {_index(j, x.shape)}", value, expected, np.nan, allowed)
            if worst[1] is None or miss.ratio > worst[1].ratio:
                worst = (label, miss)
    return worst


def _failure(level: _Level, mode: str, argument: str, place: str, miss: _Miss) -> AssertionError:
    transform = "jvp" if mode == "fwd" else "vjp, against a random output cotangent"
    error = "" if np.isnan(miss.error) else f" ± {miss.error:.3g}"
    return AssertionError(
        f"check_grads: a wrong derivative of {level.what}: mode {mode!r} ({transform}), order {level.order}, "
        f"{argument}: {place} is {miss.got!r}, but finite differences give {miss.expected!r}{error}, "
        f"off by {abs(miss.got - miss.expected):.3g}, tolerance {miss.allowed:.3g}"
    )


def _not_smooth(level: _Level, mode: str, estimates: Sequence[Estimate], eps: float) -> ShaxError:
    settle = f"the finite differences of {level.what} did not settle (mode {mode!r}, order {level.order})"
    if any(e.overstepped for e in estimates):  # the step is to blame, not f
        message = (
            f"check_grads: eps={eps:g} is too large at these arguments: {settle}, as {level.what} is not finite "
            "a step of eps away (the step leaves its domain or overflows its values); pass a smaller eps"
        )
        return at(StepTooLarge(message), current_source())
    message = (
        f"check_grads: at these arguments {settle}: it is not smooth on the scale of their steps (a kink, a pole, "
        "a rounding step), so its derivatives cannot be checked there"
    )
    return at(NotSmooth(message), current_source())


class StepTooLarge(NotSmooth):
    """check_grads' finite differences did not settle because f is not finite a first step
    away from the arguments: `eps` is too large there. A NotSmooth (no place to check, at
    that eps), so that a property test drawing points rejects it as it rejects a kink."""

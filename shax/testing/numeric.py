"""Derivatives checked against finite differences whose error is known, so that a failed
check means a wrong derivative, not a badly chosen step.

`directional_derivative(f, primals, tangents)` estimates d/dt f(primals + t·tangents) at
t = 0 by Ridders' method, in float64: central differences D(h) = (g(h) − g(−h)) / 2h at
steps shrinking by `SHRINK`, extrapolated to h = 0 (Richardson: D(h) = g′ + c₁h² + c₂h⁴
+ …, so (s²ʲ·D(h/s) − D(h)) / (s²ʲ − 1) cancels the h²ʲ term, column by column of a
Neville table). Each entry's error is estimated by how far it is from the entries it is
checked against, and is at least the round-off of its step's quotient; the estimate kept
is the entry with the smallest error. The table grows until that error is round-off, or
the estimate has converged and going on makes it worse, or `ROWS` steps.

`check_directional_derivative` compares a derivative computed exactly (by shax) with that
estimate: they must agree within `TRUST` times the estimated error plus `RTOL` of the
derivative's scale, element by element, or the derivative is wrong: AssertionError. Where
the extrapolation's error (beyond round-off, and beyond the `NOISE` extrapolating adds
to round-off) is over `ROUGH` of that scale, the
differences never settled (a kink, a pole, an oscillation finer than the steps): nothing
is known there, agreeing or not, and `NotSmooth` is raised, for a property test to reject
the example. Where round-off alone limits the estimate (a derivative tiny beside the
values f computes), agreement within it is all that can be asked.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import attrs
import numpy as np

from shax.core.errors import ShaxValueError

SHRINK = 1.4  # the step shrinks by this factor per row of the table (Ridders' choice)
ROWS = 24  # at most this many steps: the last is STEP / SHRINK²³ ≈ STEP / 2300
STEP = 0.01  # the first step moves the input coordinate with the largest tangent this far
TRUST = 32.0  # a difference within this many estimated errors is the estimate's own (which can be optimistic)
RTOL = 1e-9  # and within this much of the derivative's scale is round-off
ROUGH = 1e-6  # an estimated error above this much of the scale: the estimate says nothing
MIN_ROWS = 4  # steps taken before the table may stop
ULPS = 16  # the round-off of a value f computes, in units of its last place
NOISE = 4.0  # an error within this many round-offs is round-off: extrapolating amplifies it, by (s²+1)/(s²−1) ≈ 3.1


class NotSmooth(ShaxValueError):
    """The finite differences did not settle: the function is not smooth enough at the
    point, on the scale of the steps, for the estimate to say anything (a ShaxValueError:
    the point is no place to check derivatives, as `check_grads` tells its users)."""


@attrs.frozen
class Estimate:
    """A derivative estimated by finite differences: `value`, and `error`, an estimate of
    |value − the true derivative|, element by element (inf where no step gave a number),
    of which `roundoff` is what round-off explains (the rest, the extrapolation's)."""

    value: np.ndarray
    error: np.ndarray
    roundoff: np.ndarray
    # Whether the first step's difference was not a number somewhere f's value is: the step
    # left f's domain or overflowed its values (so where the estimate did not settle, the
    # step is to blame, not f's smoothness).
    overstepped: bool = False


def _flat(outputs: Any) -> tuple[np.ndarray, list[tuple[int, ...]]]:
    """f's outputs (an array, a number, or a tuple or list of them) as one float64 vector,
    and their shapes."""
    parts = [np.asarray(o, np.float64) for o in (outputs if isinstance(outputs, (tuple, list)) else (outputs,))]
    return np.concatenate([np.zeros(0), *(p.ravel() for p in parts)]), [p.shape for p in parts]


def _unit(outputs: Any) -> float:
    """The unit round-off of f's values: float64's, or float32's where f computes in
    float32 (it cannot take float64 arguments, or rounds to float32 on the way)."""
    parts = outputs if isinstance(outputs, (tuple, list)) else (outputs,)
    coarse = any(np.asarray(o).dtype in (np.float32, np.float16) for o in parts)
    return float(np.finfo(np.float32 if coarse else np.float64).eps)


def _unflat(vector: np.ndarray, shapes: Sequence[tuple[int, ...]]) -> list[np.ndarray]:
    sizes = np.cumsum([0, *(int(np.prod(s)) for s in shapes)])
    return [vector[a:b].reshape(s) for a, b, s in zip(sizes, sizes[1:], shapes)]


def directional_derivative(
    f: Callable[..., Any], primals: Sequence[Any], tangents: Sequence[Any], *, step: float = STEP
) -> list[Estimate]:
    """d/dt f(primals + t·tangents) at t = 0, one `Estimate` per output of f (Ridders'
    method, see the module docstring). `step` is how far the first step moves the input
    coordinate with the largest tangent."""
    xs = [np.asarray(x, np.float64) for x in primals]
    us = [np.asarray(u, np.float64) for u in tangents]
    first = f(*xs)
    at, shapes = _flat(first)
    unit = _unit(first)
    reach = max((float(np.max(np.abs(u), initial=0.0)) for u in us), default=0.0)
    if reach == 0.0:  # no direction: f does not move
        size = sum(int(np.prod(s)) for s in shapes)
        zeros = _unflat(np.zeros(size), shapes)
        return [Estimate(z, z, z) for z in zeros]

    # f's values are no finer than a few ulps of their size, nor of the inputs' (sinh x as
    # (eˣ − e⁻ˣ)/2 is exactly 0 for tiny x, its derivative is not); and x ± h·u is rounded,
    # moving the point by an ulp of x, which moves f by about |D| · |x| / |u|.
    inputs = _magnitude(*xs)

    def central(h: float) -> tuple[np.ndarray, np.ndarray]:
        """(D(h), a bound on its round-off, over h: some ulps of f's values and of the
        change the rounding of the point makes)."""
        plus, _ = _flat(f(*(x + h * u for x, u in zip(xs, us))))
        minus, _ = _flat(f(*(x - h * u for x, u in zip(xs, us))))
        quotient = (plus - minus) / (2.0 * h)
        size = np.maximum.reduce([np.abs(plus), np.abs(minus), np.abs(at), np.full_like(at, inputs)])
        roundoff = ULPS * unit * (size + np.abs(quotient) * inputs / reach) / h
        return quotient, roundoff

    h = step / reach
    with np.errstate(all="ignore"):
        previous = [central(h)[0]]
    overstepped = bool((~np.isfinite(previous[0]) & np.isfinite(at)).any())
    best = np.full_like(previous[0], np.nan)
    error = np.full_like(previous[0], np.inf)
    best_roundoff = np.zeros_like(previous[0])
    settled = np.zeros(previous[0].shape, bool)  # the table stopped improving here
    with np.errstate(all="ignore"):
        for i in range(1, ROWS):
            h /= SHRINK
            first, roundoff = central(h)
            row = [first]
            factor = SHRINK**2
            for j in range(1, i + 1):
                row.append((factor * row[j - 1] - previous[j - 1]) / (factor - 1.0))
                factor *= SHRINK**2
            # An entry's error: how far it is from the three it is checked against, the lower
            # orders it was made from and the same order one step back (two of them can agree
            # by accident, where the h² and h⁴ terms cancel; the new highest order has no
            # third yet); and at least the round-off of this step's quotient, since where the
            # values differenced round alike (cos(±h) do) all entries agree however wrong.
            for j in range(1, i):
                moved = np.maximum.reduce(
                    [np.abs(row[j] - row[j - 1]), np.abs(row[j] - previous[j - 1]), np.abs(row[j] - previous[j])]
                )
                moved = np.maximum(moved, roundoff)
                better = ~settled & (moved <= error)
                best = np.where(better, row[j], best)
                error = np.where(better, moved, error)
                best_roundoff = np.where(better, roundoff, best_roundoff)
            # Done where the best error is round-off, which only grows as h shrinks; or where
            # the estimate has converged and the highest order moved far more than its
            # error (round-off is taking over). Elsewhere smaller steps may still help.
            if i >= MIN_ROWS:
                converged = error <= ROUGH * np.abs(best)
                settled |= (error <= roundoff) | converged & (np.abs(row[-1] - previous[-1]) >= 2.0 * error)
                if settled.all():
                    break
            previous = row
    error = np.where(np.isnan(error), np.inf, error)
    parts = zip(_unflat(best, shapes), _unflat(error, shapes), _unflat(best_roundoff, shapes))
    return [Estimate(*part, overstepped) for part in parts]


def unsettled(estimate: Estimate, scale: float) -> np.ndarray:
    """Where `estimate` says nothing: its error is more than round-off (up to the `NOISE`
    extrapolation adds to it) and than round-off plus `ROUGH` of `scale`."""
    with np.errstate(invalid="ignore"):
        beyond_roundoff = ~(estimate.error <= NOISE * estimate.roundoff)
        return np.asarray(beyond_roundoff & ~(estimate.error - estimate.roundoff <= ROUGH * scale))


def _magnitude(*values: np.ndarray) -> float:
    """The largest finite |element| of `values` (0 if none)."""
    return max((float(np.max(np.abs(v), where=np.isfinite(v), initial=0.0)) for v in values), default=0.0)


def check_directional_derivative(
    f: Callable[..., Any],
    primals: Sequence[Any],
    tangents: Sequence[Any],
    derivatives: Sequence[Any],
    *,
    what: str = "the derivative",
) -> None:
    """`derivatives` (one per output of f) are d/dt f(primals + t·tangents) at t = 0:
    AssertionError naming `what` where finite differences show they are not, NotSmooth
    where these cannot tell (see the module docstring)."""
    estimates = directional_derivative(f, primals, tangents)
    assert len(derivatives) == len(estimates), f"{what}: {len(derivatives)} derivatives for {len(estimates)} outputs"
    rough = []
    for k, (derivative, estimate) in enumerate(zip(derivatives, estimates)):
        got = np.asarray(derivative, np.float64)
        assert got.shape == estimate.value.shape, f"{what}, output {k}: shape {got.shape}, not {estimate.value.shape}"
        scale = _magnitude(got, estimate.value)
        with np.errstate(invalid="ignore"):
            off = ~(np.abs(got - estimate.value) <= TRUST * estimate.error + RTOL * scale)
            unknown = unsettled(estimate, scale)
        wrong = off & ~unknown
        if wrong.any():
            raise AssertionError(
                f"{what}, output {k}, at {np.argwhere(wrong).tolist()}: {got[wrong]}, but finite differences give "
                f"{estimate.value[wrong]} ± {estimate.error[wrong]} (tolerance {TRUST}·error + {RTOL}·{scale:.3g})"
            )
        if unknown.any():
            rough.append(
                f"output {k} at {np.argwhere(unknown).tolist()}: {estimate.value[unknown]} ± {estimate.error[unknown]}"
                f" (exact {got[unknown]})"
            )
    if rough:
        overstepped = any(e.overstepped for e in estimates)
        cause = "; their first step left f's domain or overflowed its values" if overstepped else ""
        raise NotSmooth(f"{what}: the finite differences did not settle{cause}, " + "; ".join(rough))

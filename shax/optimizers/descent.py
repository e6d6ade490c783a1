"""First-order optimizers on `shax.value_and_grad`, as the original's descent demo:

    params, value = gradient_descent(f, [0.5, -0.75], lr=0.05, iters=39, log=print)

prints `Iteration k: value` for the value at each step's starting point, then for the
final point (iters + 1 lines), and returns the final parameters and value. `params`
is a list or plain tuple of f's arguments (the original's convention: `f(*params)`),
or any other pytree (a dict, a NamedTuple, an array), which is f's one argument.
Python numbers become f32 (the original's Float); arrays keep their dtype. The
parameters keep their structure. `momentum` and `adam` share the interface.

To see the descent, ask for its history: `history=True` returns a `History` instead,
whose `values` are the logged values (as floats) and which unpacks as `(params, value)`
like the plain result, so the two calls read alike; `keep_params=True` (which implies
`history`) also keeps the parameters at each of those points, in `History.path`
(memory grows with iters times the parameters, hence opt-in). Printing is `log`'s:
`log=None` runs silently. `log=print` stays the default, as in the original's demo.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator, Sequence
from typing import Any, SupportsFloat

import attrs
import numpy as np

from shax.core.errors import ShaxError, ShaxTypeError, ShaxValueError, at
from shax.core.location import current_source
from shax.core.printing import show_float
from shax.core.pytree import flatten, unflatten
from shax.tracing.trace import check_function
from shax.transforms import value_and_grad

Log = Callable[[str], Any] | None
# (parameter leaves, gradient leaves, step number from 1) -> new parameter leaves
Update = Callable[[list[Any], Sequence[Any], int], list[Any]]


@attrs.frozen(eq=False)  # it holds arrays
class History:
    """A descent's result and what it went through: `values[k]` is f at iteration k+1's
    starting point (the last: at the final point), `path[k]` the parameters there (with
    `keep_params`, else None). Unpacks as `params, value = history`."""

    params: Any
    value: Any
    values: tuple[float, ...]
    path: tuple[Any, ...] | None = None

    def __iter__(self) -> Iterator[Any]:
        return iter((self.params, self.value))


def gradient_descent(
    f: Callable[..., Any],
    params: Any,
    lr: float,
    iters: int,
    log: Log = print,
    history: bool = False,
    keep_params: bool = False,
) -> tuple[Any, Any] | History:
    """Plain gradient descent: p ← p - lr·∇f(p)."""
    _check_settings("gradient_descent", f, iters, log, history, keep_params, lr=lr)

    def update(leaves: list[Any], grads: Sequence[Any], step: int) -> list[Any]:
        return [p - lr * g for p, g in zip(leaves, grads)]

    return _minimize(f, params, iters, log, update, history or keep_params, keep_params)


def momentum(
    f: Callable[..., Any],
    params: Any,
    lr: float,
    iters: int,
    beta: float = 0.9,
    log: Log = print,
    history: bool = False,
    keep_params: bool = False,
) -> tuple[Any, Any] | History:
    """Heavy-ball momentum: v ← β·v + ∇f(p), p ← p - lr·v."""
    _check_settings("momentum", f, iters, log, history, keep_params, lr=lr, beta=beta)
    velocity: list[Any] = []

    def update(leaves: list[Any], grads: Sequence[Any], step: int) -> list[Any]:
        if not velocity:
            velocity.extend(np.zeros_like(p) for p in leaves)
        velocity[:] = [beta * v + g for v, g in zip(velocity, grads)]
        return [p - lr * v for p, v in zip(leaves, velocity)]

    return _minimize(f, params, iters, log, update, history or keep_params, keep_params)


def adam(
    f: Callable[..., Any],
    params: Any,
    lr: float,
    iters: int,
    b1: float = 0.9,
    b2: float = 0.999,
    eps: float = 1e-8,
    log: Log = print,
    history: bool = False,
    keep_params: bool = False,
) -> tuple[Any, Any] | History:
    """Adam (Kingma & Ba): m ← b1·m + (1-b1)·g, s ← b2·s + (1-b2)·g², then
    p ← p - lr·m̂/(√ŝ + eps) with the bias-corrected m̂ = m/(1-b1ᵗ), ŝ = s/(1-b2ᵗ)."""
    _check_settings("adam", f, iters, log, history, keep_params, lr=lr, b1=b1, b2=b2, eps=eps)
    m: list[Any] = []
    s: list[Any] = []

    def update(leaves: list[Any], grads: Sequence[Any], step: int) -> list[Any]:
        if not m:
            m.extend(np.zeros_like(p) for p in leaves)
            s.extend(np.zeros_like(p) for p in leaves)
        m[:] = [b1 * a + (1 - b1) * g for a, g in zip(m, grads)]
        s[:] = [b2 * a + (1 - b2) * g * g for a, g in zip(s, grads)]
        return [p - lr * (a / (1 - b1**step)) / (np.sqrt(b / (1 - b2**step)) + eps) for p, a, b in zip(leaves, m, s)]

    return _minimize(f, params, iters, log, update, history or keep_params, keep_params)


def _check_settings(what: str, f: Any, iters: Any, log: Any, history: Any, keep_params: Any, **rates: Any) -> None:
    """Nothing if `f` is a function, `iters` a count, `log` a function or None, `history`
    and `keep_params` bools, and each of `rates` a finite real number; else a ShaxError
    naming the optimizer and the setting, at the caller's line."""
    check_function(what, f)
    for error in _bad_settings(what, iters, log, rates):
        raise at(error, current_source())
    for name, flag in (("history", history), ("keep_params", keep_params)):
        if not isinstance(flag, bool):
            raise at(ShaxTypeError(f"{what}: {name} must be a bool, got {flag!r}"), current_source())


def _bad_settings(what: str, iters: Any, log: Any, rates: dict[str, Any]) -> Iterator[ShaxError]:
    if isinstance(iters, bool) or not isinstance(iters, (int, np.integer)):
        yield ShaxTypeError(f"{what}: iters must be an int, got {type(iters).__name__} {iters!r}")
    elif iters < 0:
        yield ShaxValueError(f"{what}: iters must be at least 0, got {iters}")
    if log is not None and not callable(log):
        yield ShaxTypeError(f"{what}: log must be a function of one string (such as print) or None, got {log!r}")
    for name, rate in rates.items():
        if isinstance(rate, (bool, np.bool_)) or not isinstance(rate, (int, float, np.integer, np.floating)):
            yield ShaxTypeError(f"{what}: {name} must be a number, got {type(rate).__name__} {rate!r}")
        elif not _finite(rate):
            yield ShaxValueError(f"{what}: {name} must be finite, got {rate!r}")


def _finite(number: SupportsFloat) -> bool:
    try:
        return math.isfinite(number)
    except OverflowError:  # a Python int beyond the floats' range
        return False


def _minimize(
    f: Callable[..., Any], params: Any, iters: int, log: Log, update: Update, history: bool, keep_params: bool
) -> tuple[Any, Any] | History:
    spread = type(params) in (list, tuple)  # a NamedTuple (or other pytree) is f's one argument
    args = tuple(params) if spread else (params,)
    leaves, tree = flatten(args)
    leaves = [np.float32(p) if isinstance(p, (int, float)) and not isinstance(p, np.generic) else p for p in leaves]
    trained = [np.issubdtype(np.asarray(p).dtype, np.floating) for p in leaves]  # integer leaves stay as they are
    step = value_and_grad(f, wrt=tuple(range(len(args))))
    values: list[float] = []
    path: list[Any] = []
    for k in range(1, iters + 2):
        value, grads = step(*unflatten(tree, leaves))
        if log is not None:
            log(f"Iteration {k}: {show_float(value)}")
        if history:
            values.append(float(value))
        if keep_params:  # the updates build new arrays: these are never overwritten
            path.append(_shaped(params, unflatten(tree, leaves), spread))
        if k <= iters:
            new = update(leaves, flatten(grads)[0], k)
            leaves = [n if t else p for p, n, t in zip(leaves, new, trained)]
    final = _shaped(params, unflatten(tree, leaves), spread)
    if history:
        return History(final, value, tuple(values), tuple(path) if keep_params else None)
    return final, value


def _shaped(params: Any, args: Any, spread: bool) -> Any:
    """The arguments `args` in the structure the user gave `params` in."""
    return type(params)(args) if spread else args[0]

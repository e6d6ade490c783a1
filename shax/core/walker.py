"""The one loop over a definition's bindings that every stage runs.

    for_each_binding("linearize", defn.bindings, step)

runs `step(binding)` on each binding in order. What a step records (tracing operations,
emitting bindings) is attributed to the binding's source, the user's file and line that
wrote it; a `ShaxError` it raises comes out naming the stage, the binding and that line:

    linearize: in `x1 :: f32[3] = sin x0`: annotated f32[3], but ... (at user.py:12)

With `foreign_errors`, the errors numpy raises on bad values (ValueError, TypeError,
IndexError, ArithmeticError) come out the same way, as ShaxTypeErrors: evaluation runs
the user's values through numpy.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from contextvars import Token

from shax.core.errors import ShaxError, ShaxTypeError, at
from shax.core.ir import Binding
from shax.core.location import Attribution, attribute, current_source, restore
from shax.core.printing import show_binding

_FOREIGN = (ValueError, TypeError, IndexError, ArithmeticError)


def fail(stage: str, binding: Binding, message: str, error: type[ShaxError] = ShaxTypeError) -> ShaxError:
    """An error of `stage` in `binding`, at the user's line that wrote it; at the line
    calling the stage where no line wrote it (an argument's binding, a hand-built one)."""
    return at(error(f"{stage}: in `{show_binding(binding)}`: {message}"), binding.source or current_source())


def for_each_binding(
    stage: str,
    bindings: Iterable[Binding],
    step: Callable[[Binding], object],
    foreign_errors: bool = False,
    records: bool = True,
    rules: bool = True,
) -> None:
    """`step` on each of `bindings` in order (see the module docstring). A walk whose steps
    record no operation (evaluation on numpy values) says so with `records=False` and
    skips the attribution, its per-binding cost. What a step records comes from the
    stage's rule for the binding (`linearize rule of sin`), or, with `rules=False` (a
    definition inlined by evaluation), from where the binding itself came from; so does
    what it records of a binding a checkpoint policy recomputes (`Binding.recomputed`: a
    batched or transposed recomputation is still one)."""
    binding = None
    # The attribution is set for each binding and restored once, after the last: a step
    # that sets its own (a stage run by a rule) restores it before it returns.
    before: Token[Attribution | None] | None = None
    try:
        if records and rules:
            origins: dict[str, str] = {}  # primitive name -> `{stage} rule of {name}`
            for binding in bindings:
                name = binding.prim.name
                origin = origins.get(name)
                if origin is None:
                    origin = origins[name] = f"{stage} rule of {name}"
                # what a stage makes of a value a checkpoint policy recomputes is recomputed too
                token = attribute(binding.source, binding.origin if binding.recomputed else origin)
                before = before or token
                step(binding)
        elif records:
            for binding in bindings:
                token = attribute(binding.source, binding.origin)
                before = before or token
                step(binding)
        else:
            for binding in bindings:
                step(binding)
    except ShaxError as error:
        assert binding is not None
        _restored(before)  # so that a binding with no line of its own is reported at the caller's
        before = None
        raise fail(stage, binding, str(error), type(error)) from None
    except _FOREIGN as error:
        if not foreign_errors or binding is None:
            raise
        _restored(before)
        before = None
        raise fail(stage, binding, f"{type(error).__name__}: {error}") from error
    finally:
        _restored(before)


def _restored(token: Token[Attribution | None] | None) -> None:
    """The attribution as before the walk, given the token of its first binding (None: none was set)."""
    if token is not None:
        restore(token)

"""The original's gradient-descent demo: `f x y = sin (x + y) * cos (x + y)`, written once
against the Floating typeclass, traced and typed, then minimized from (0.5, -0.75) by
gradient descent on shax's reverse-mode gradient; last, its JVP definition.

    python examples/descent.py
"""

from typing import TypeVar

import shax
from shax import f32
from shax.core.printing import show_array, show_float
from shax.optimizers import gradient_descent
from shax.tools.plot import plot_descent
from typeclasses import Floating, cos, sin

A = TypeVar("A", bound=Floating)


def f(x: A, y: A) -> A:
    z = x + y
    return sin(z) * cos(z)


def main(plot: str | None = None) -> None:
    """The demo; with `plot` (a file name), also draw the descent there (`shax demo --plot`)."""
    typed = shax.xpr(f, f32[()], f32[()])
    print(typed.with_output_types())
    history = gradient_descent(f, [0.5, -0.75], lr=0.05, iters=39, log=print, keep_params=plot is not None)
    params, value = history
    if plot is not None:
        plot_descent(f, history, plot)
    print(f"Minimum location: [{','.join(show_array(p) for p in params)}]")
    print(f"Minimum value: {show_float(value)}")
    # The JVP definition: f's primal and linearized programs zipped into one, taking the
    # arguments then their tangents, returning the output then its tangent.
    print(shax.stages.zip_definitions(shax.stages.linearize(typed)))


if __name__ == "__main__":
    main()

"""Pictures of a descent (`shax demo --plot OUT`): the loss per iteration, and, for a
function of two scalar parameters, the path the parameters took over a contour plot of
the function. Needs matplotlib, the `plot` extra: `pip install 'shax[plot]'`.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from shax.core.errors import ShaxValueError
from shax.core.pytree import flatten
from shax.optimizers import History


def plot_descent(f: Callable[..., Any], history: History, out: str | Path) -> None:
    """Draw `history` (a descent of `f` with `keep_params=True`) into the image file `out`
    (PNG, SVG or PDF, by its suffix): the loss curve, then the path over f's contours when
    f takes two scalar parameters. `f` is evaluated on numpy arrays (a grid)."""
    try:
        import matplotlib
    except ImportError:
        raise ShaxValueError("plotting needs matplotlib, the 'plot' extra: pip install 'shax[plot]'") from None
    matplotlib.use("Agg")  # files only: no display needed
    import matplotlib.pyplot as plt

    if history.path is None:
        raise ShaxValueError("plot_descent: the history has no parameters; run the optimizer with keep_params=True")
    points = [flatten(p)[0] for p in history.path]
    two_scalars = all(len(p) == 2 and all(np.ndim(x) == 0 for x in p) for p in points)
    figure, axes = plt.subplots(1, 2 if two_scalars else 1, figsize=(11 if two_scalars else 5.5, 4.5), squeeze=False)
    loss = axes[0][0]
    loss.plot(range(1, len(history.values) + 1), history.values, marker=".")
    loss.set(title="loss", xlabel="iteration", ylabel="f")
    loss.grid(alpha=0.3)
    if two_scalars:
        _contour(axes[0][1], f, np.array(points, dtype=np.float64))
    figure.tight_layout()
    figure.savefig(out, dpi=100)
    plt.close(figure)


def _contour(axis: Any, f: Callable[..., Any], path: np.ndarray) -> None:
    """f's contours over a box around `path` (an n×2 array), and the path on them."""
    low, high = path.min(axis=0), path.max(axis=0)
    margin = np.maximum((high - low) * 0.5, 0.5)
    xs = np.linspace(low[0] - margin[0], high[0] + margin[0], 120)
    ys = np.linspace(low[1] - margin[1], high[1] + margin[1], 120)
    grid_x, grid_y = np.meshgrid(xs, ys)
    filled = axis.contourf(grid_x, grid_y, np.asarray(f(grid_x, grid_y)), levels=20, cmap="viridis")
    axis.figure.colorbar(filled, ax=axis, label="f")
    axis.plot(path[:, 0], path[:, 1], color="white", marker=".", markersize=4, linewidth=1)
    axis.plot(*path[0], "o", color="orange", label="start")
    axis.plot(*path[-1], "*", color="red", markersize=12, label="end")
    axis.set(title="descent path", xlabel="x", ylabel="y", aspect="equal")
    axis.legend(loc="upper right")

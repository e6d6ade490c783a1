"""Export rules: how each primitive is written in `jax.lax` (`shax.export.to_jax` runs a
Definition with them). One more `RuleTable`, keyed by primitive class like the stages':

    rule(prim, operands, out) -> a JAX value        e.g. lax.sin(x), lax.add(x, y)

`operands` are JAX values (tracers under `jax.jit`, arrays otherwise; an argument may
still be a numpy array) and `out` is the binding's result type, which the rules use to
make shax's implicit numpy broadcasting explicit for lax. A `multi_result` primitive
(`call`) gets the tuple of its results' types and returns all its results.

A rule sits under its primitive's declaration, like its other rules, and imports JAX
inside its body: `import shax` never imports JAX (an optional dependency), and a rule
runs only when a program is exported. An elementwise primitive's rule is derived from
its declaration (`export="sin"`, the `jax.lax` function of that name on the operands
broadcast to the result's shape, or a function of them). A primitive that runs
definitions (call, the loops, cond) writes them with `lowered(defn)`, their JAX
functions, which the export layer (above the primitives) installs. A primitive without
a rule is a ShaxError naming it.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, Protocol

from shax.core.errors import ShaxError
from shax.core.ir import Definition
from shax.core.primitive import Primitive
from shax.rules.table import RuleTable


class ExportRule(Protocol):
    def __call__(self, prim: Any, operands: Sequence[Any], out: Any, /) -> Any: ...


class JaxFunction(Protocol):
    """A Definition as a function of JAX values (`shax.export.lowering.JaxFunction`):
    called, the list of its outputs; `jitted`, the same under `jax.jit` (one StableHLO
    function, however many call sites)."""

    @property
    def jitted(self) -> Callable[..., Any]: ...

    def __call__(self, *args: Any) -> list[Any]: ...


# Set by `shax.export.lowering` when it is imported, which every export goes through.
_lowering: list[Callable[[Definition], JaxFunction]] = []


def install_lowering(lower: Callable[[Definition], JaxFunction]) -> None:
    _lowering[:] = [lower]


def lowered(defn: Definition) -> JaxFunction:
    """`defn`'s JAX function (one per definition), for the rules of primitives that run definitions."""
    if not _lowering:
        raise ShaxError(f"export: {defn.name} is exported only through shax.export (to_jax, jit(backend='xla'))")
    return _lowering[0](defn)


def stretched(x: Any, shape: tuple[int, ...]) -> Any:
    """x broadcast numpy's way to `shape`: its axes aligned to the right."""
    import numpy as np
    from jax import lax

    if tuple(np.shape(x)) == shape:
        return x
    rank = np.ndim(x)
    return lax.broadcast_in_dim(x, shape, tuple(range(len(shape) - rank, len(shape))))


def elementwise_export(export: str | Callable[..., Any]) -> ExportRule:
    """The rule of an elementwise primitive declared with `export`: the `jax.lax` function
    of that name (`"sin"`), or the given function (which imports jax itself), applied to the
    operands broadcast to the result's shape."""

    def rule(prim: Any, operands: Sequence[Any], out: Any) -> Any:
        if isinstance(export, str):
            from jax import lax

            function = getattr(lax, export)
        else:
            function = export
        return function(*(stretched(x, out.shape) for x in operands))

    return rule


def _derive(cls: type[Primitive]) -> ExportRule | None:
    export = getattr(cls, "lax_export", None)
    return None if export is None else elementwise_export(export)


export_rules: RuleTable[ExportRule] = RuleTable("export to JAX", _derive)
export_rule = export_rules.register

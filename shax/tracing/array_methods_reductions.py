"""numpy's reduction methods of arrays, for tracers: `x.sum(axis=None, keepdims=False)`,
`x.prod`, `x.max`, `x.min`, `x.mean`, `x.var`, `x.std`, `x.argmax`, `x.argmin`, each the function
of `shax.numpy` by that name with `x` as its array, in numpy's signature (numpy's own
`np.sum(x)` calls `x.sum(axis=..., dtype=..., out=...)` on a value that is no array)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from shax.tracing.numpy_dispatch import shax_numpy

if TYPE_CHECKING:
    from shax.numpy._reductions import Axis


def _reductions() -> Any:
    # shax.numpy's own functions, before it wraps them for numpy values (`shax.tracing.numpy_dispatch`
    # says why they are registered, not imported: shax.numpy imports the tracer).
    return shax_numpy()._reductions


class ReductionMethods:
    __slots__ = ()

    def sum(self, axis: Axis = None, dtype: None = None, out: None = None, keepdims: bool = False) -> Any:
        return _reductions().sum(self, axis, dtype, out, keepdims)

    def prod(self, axis: Axis = None, dtype: None = None, out: None = None, keepdims: bool = False) -> Any:
        return _reductions().prod(self, axis, dtype, out, keepdims)

    def max(self, axis: Axis = None, out: None = None, keepdims: bool = False) -> Any:
        return _reductions().max(self, axis, out, keepdims)

    def min(self, axis: Axis = None, out: None = None, keepdims: bool = False) -> Any:
        return _reductions().min(self, axis, out, keepdims)

    def mean(self, axis: Axis = None, dtype: Any = None, out: None = None, keepdims: bool = False) -> Any:
        return _reductions().mean(self, axis, dtype, out, keepdims)

    def var(
        self,
        axis: Axis = None,
        dtype: Any = None,
        out: None = None,
        ddof: int = 0,
        keepdims: bool = False,
        *,
        correction: int | None = None,
    ) -> Any:
        return _reductions().var(self, axis, dtype, out, ddof, keepdims, correction=correction)

    def std(
        self,
        axis: Axis = None,
        dtype: Any = None,
        out: None = None,
        ddof: int = 0,
        keepdims: bool = False,
        *,
        correction: int | None = None,
    ) -> Any:
        return _reductions().std(self, axis, dtype, out, ddof, keepdims, correction=correction)

    def argmax(self, axis: int | None = None, out: None = None, *, keepdims: bool = False) -> Any:
        return _reductions().argmax(self, axis, out, keepdims=keepdims)

    def argmin(self, axis: int | None = None, out: None = None, *, keepdims: bool = False) -> Any:
        return _reductions().argmin(self, axis, out, keepdims=keepdims)

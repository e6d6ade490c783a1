"""numpy's names and signatures over shax (`import shax.numpy as snp`), like `jax.numpy`:
each function takes numpy values and tracers alike, one private submodule per area. On
numpy values a function returns an `Array` where numpy returns an ndarray: numpy's
array with JAX's `.at[...]` updates (`_ndarray`), so code written for tracers runs on it.

Each refuses `np.matrix` and masked arrays among its arguments (`shax.core.array_subclasses`
says why) by its own name, before it reads them, and reads a JAX array as numpy's."""

import functools
import sys
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from shax.core.array_subclasses import refuse_array_subclass
from shax.core.errors import ShaxError, ShaxTypeError, ShaxValueError, at
from shax.core.jax_arrays import from_jax_arguments
from shax.core.location import current_source
from shax.numpy import (
    _arrays,
    _arrays_more,
    _binning,
    _correlations,
    _cumulative,
    _dtypes,
    _einsum,
    _elementwise,
    _elementwise_more,
    _indexing,
    _logic,
    _matrices,
    _ndarray,
    _reductions,
    _shaping,
    _static_size,
    _statistics,
    linalg,
)
from shax.numpy._arrays import *  # noqa: F403
from shax.numpy._arrays_more import *  # noqa: F403
from shax.numpy._binning import *  # noqa: F403
from shax.numpy._correlations import *  # noqa: F403
from shax.numpy._cumulative import *  # noqa: F403
from shax.numpy._dtypes import *  # noqa: F403
from shax.numpy._dtypes import (  # noqa: F401 - numpy's names, in __all__ through the two lists
    CONSTANTS,
    DTYPE_NAMES,
    bool_,
    complexfloating,
    dtype,
    e,
    euler_gamma,
    float16,
    float32,
    float64,
    float_,
    floating,
    generic,
    index_exp,
    inexact,
    inf,
    int8,
    int16,
    int32,
    int64,
    int_,
    integer,
    nan,
    newaxis,
    number,
    pi,
    signedinteger,
    uint8,
    uint16,
    uint32,
    uint64,
    unsignedinteger,
)
from shax.numpy._einsum import *  # noqa: F403
from shax.numpy._elementwise import *  # noqa: F403
from shax.numpy._elementwise_more import *  # noqa: F403
from shax.numpy._indexing import *  # noqa: F403
from shax.numpy._logic import *  # noqa: F403
from shax.numpy._matrices import *  # noqa: F403
from shax.numpy._ndarray import *  # noqa: F403
from shax.numpy._reductions import *  # noqa: F403
from shax.numpy._shaping import *  # noqa: F403
from shax.numpy._static_size import *  # noqa: F403
from shax.numpy._statistics import *  # noqa: F403
from shax.tracing import numpy_dispatch
from shax.tracing.checked_numpy import NUMPY_ERRORS

_MODULES = (
    _arrays, _arrays_more, _binning, _correlations, _cumulative, _dtypes, _einsum, _elementwise, _elementwise_more,
    _indexing, _logic, _matrices, _reductions, _shaping, _static_size, _statistics,
)  # fmt: skip
bool = _dtypes.bool_  # noqa: A001 - JAX's name of the boolean dtype (numpy 2's too)
_FUNCTIONS = [name for module in _MODULES for name in module.__all__]
if TYPE_CHECKING:  # numpy's ufuncs that are one primitive come from their declarations (`_elementwise`)

    def __getattr__(name: str) -> Callable[..., Any]: ...


__all__ = [*_FUNCTIONS, *_ndarray.__all__, *DTYPE_NAMES, *CONSTANTS]


def _refusing_subclasses(function: Callable[..., Any]) -> Callable[..., Any]:
    name = function.__name__

    @functools.wraps(function)
    def checked(*args: Any, **kwargs: Any) -> Any:
        refuse_array_subclass(name, *args, *kwargs.values())
        if "jax" in sys.modules:  # a JAX array read as numpy's (`shax.core.jax_arrays`)
            args = from_jax_arguments(args)
            kwargs = dict(zip(kwargs, from_jax_arguments(tuple(kwargs.values()))))
        try:
            return function(*args, **kwargs)
        except ShaxError:
            raise
        except NUMPY_ERRORS as error:  # numpy's or Python's own, on arguments no check foresaw
            raise _named_error(name, error) from error

    return checked


def _named_error(name: str, error: Exception) -> ShaxError:
    """What numpy or Python raised on values it cannot read (`np.interp(None, ...)`, an index
    too large for C; the errors checked numpy turns into ShaxErrors too), at the public
    boundary: a ShaxError naming the function and the user's line."""
    kind = ShaxTypeError if isinstance(error, (TypeError, AttributeError)) else ShaxValueError
    return at(kind(f"{name}: {type(error).__name__}: {error}"), current_source())


# Each function of the submodules, refusing matrices and masked arrays, its numpy arrays
# returned as Arrays; the submodules call each other's unwrapped functions, so a result
# is checked and wrapped once, here.
_names: dict[str, Any] = globals()
for _name in _FUNCTIONS:
    _names[_name] = _ndarray.returning_arrays(_refusing_subclasses(_names[_name]))
for _name in linalg.__all__:
    setattr(linalg, _name, _ndarray.returning_arrays(_refusing_subclasses(getattr(linalg, _name))))

# The tracer's numpy methods and numpy's protocols on tracers run these functions
# (`shax.tracing.numpy_dispatch` says why they are registered, not imported).
numpy_dispatch.register_numpy(sys.modules[__name__])

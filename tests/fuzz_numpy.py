"""The fuzz's drivers for `shax.numpy`, `shax.nn` and the tracer's array methods
(tests/test_fuzz.py runs them): one table row per function.

Each function is called on numpy values, and inside a traced function three ways:
traced (`shax.trace`), compiled and run (`shax.jit`), and differentiated (`shax.grad`);
the arrays of a shax dtype among its arguments, at any depth of lists, tuples and dicts
(`concatenate`'s list of arrays), become the traced function's parameters. So a bad
value the fuzz puts in is a tracer when it is such an array: a tracer of the wrong dtype
or shape, or one where a static parameter (an axis, a size) belongs.

The array methods run only on tracers (on numpy values they are numpy's own), so the
fuzz keeps their array an array of a shax dtype, of any shape.
"""

from __future__ import annotations

import inspect
import operator
from collections.abc import Callable
from typing import Any

import numpy as np
from fuzzing import ARRAYS, AXES, BAD, HUGE_INTS, SHAPES, Call, traceable
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import shax
import shax.nn
import shax.numpy as snp
import typeclasses as tc
from shax.tracing.array_methods import ArrayMethods
from shax.tracing.array_methods_reductions import ReductionMethods

A23 = np.arange(1, 7, dtype=np.float32).reshape(2, 3)
B23 = A23 > 2.5
I23 = np.arange(6, dtype=np.int32).reshape(2, 3)

# The calls spelled out: functions with static parameters, particular operands, or
# operands that are not all arrays. The others (numpy's ufuncs, `f(x, /)` and
# `f(x1, x2, /)`) get an f32 array for each operand.
NUMPY_CALLS: dict[str, tuple[tuple[Any, ...], dict[str, Any]]] = {
    **{name: ((A23 / 8,), {}) for name in ("arccos", "arcsin", "arctanh")},
    "logical_and": ((B23, ~B23), {}),
    "logical_or": ((B23, ~B23), {}),
    "logical_not": ((B23,), {}),
    "round": ((A23 / 4,), {"decimals": 0}),
    "clip": ((A23, 2.0, 5.0), {}),
    # Reductions: the array, an axis, keepdims.
    **{
        name: ((A23, 1), {"keepdims": True})
        for name in ("sum", "prod", "max", "min", "amax", "amin", "mean", "var", "std", "argmax", "argmin")
    },
    "einsum": (("ij,kj->ik", A23, A23 + 1.0), {}),
    **{name: ((A23,), {"axis": 0}) for name in ("sort", "argsort")},
    "take": ((A23, np.array([2, -1], np.int32)), {"axis": 1}),
    "take_along_axis": ((A23, np.array([[2], [0]], np.int32), 1), {}),
    # Shapes, joining, products.
    "shape": ((A23,), {}),
    "ndim": ((A23,), {}),
    "size": ((A23, 1), {}),
    "reshape": ((A23, (3, -1)), {}),
    "flip": ((A23, 1), {}),
    "transpose": ((A23, (1, 0)), {}),
    "moveaxis": ((A23, 0, -1), {}),
    "swapaxes": ((A23, 0, 1), {}),
    "expand_dims": ((A23, (0, 3)), {}),
    "squeeze": ((A23[:1], 0), {}),
    "tile": ((A23, (2, 1)), {}),
    "repeat": ((A23, 2), {"axis": 1}),
    "broadcast_to": ((A23[:1], (4, 2, 3)), {}),
    "concatenate": (([A23, A23, -A23],), {"axis": 1}),
    "stack": (([A23, -A23],), {"axis": -1}),
    "split": ((A23, [1, 2]), {"axis": 1}),
    "matmul": ((A23, A23.T), {}),
    "dot": ((A23, A23.T), {}),
    "inner": ((A23, A23), {}),
    "outer": ((A23, A23[0]), {}),
    "tensordot": ((A23, A23.T), {"axes": ([1], [0])}),
    # Constructors: numpy arrays, or a traced array's constant.
    "zeros": (((2, 3),), {"dtype": np.float32}),
    "ones": (((2, 3),), {"dtype": np.float32}),
    "full": (((2, 3), 1.5), {"dtype": np.float32}),
    "zeros_like": ((A23,), {}),
    "ones_like": ((A23,), {}),
    "full_like": ((A23, 1.5), {}),
    "empty_like": ((A23,), {}),
    "asarray": ((A23,), {}),
    "array": ((A23,), {"ndmin": 3}),
    "arange": ((1, 7, 2), {"dtype": np.float32}),
    "eye": ((3, 2, 1), {"dtype": np.float32}),
    "linspace": ((0.0, 1.0, 5), {"endpoint": False, "dtype": np.float32}),
    # Names of issue 31.
    **{name: ((A23, 1), {}) for name in ("cumsum", "cumprod", "count_nonzero", "all", "any")},
    "diff": ((A23,), {"n": 1, "axis": 0, "prepend": 0.0}),
    "isclose": ((A23, A23 + 1e-6), {}),
    "allclose": ((A23, A23 + 1e-6), {}),
    "nan_to_num": ((A23,), {"nan": 1.0}),
    "result_type": ((A23, 1.0), {}),
    "promote_types": ((np.float32, np.float64), {}),
    "issubdtype": ((np.float32, np.floating), {}),
    "broadcast_shapes": (((2, 1), (3,)), {}),
    "diag": ((A23[0],), {"k": 1}),
    "diagonal": ((A23, 1), {}),
    "trace": ((A23,), {"offset": -1}),
    "tril": ((A23, 1), {}),
    "triu": ((A23, -1), {}),
    "vdot": ((A23, A23), {}),
    "cross": ((A23, A23[::-1]), {}),
    "meshgrid": ((A23[0], A23[1, :2]), {"indexing": "ij"}),
    "identity": ((3,), {"dtype": np.float32}),
    "empty": (((2, 3),), {"dtype": np.float32}),
    "astype": ((A23, np.int32), {}),
    "ravel": ((A23,), {}),
    **{name: ((A23, A23[0]), {}) for name in ("atleast_1d", "atleast_2d", "atleast_3d")},
    "vstack": (([A23, A23],), {}),
    "hstack": (([A23, A23],), {}),
    "concat": (([A23, A23],), {"axis": 1}),
    "unstack": ((A23,), {"axis": 1}),
    "roll": ((A23, 2), {"axis": 1}),
    "pad": ((A23, ((1, 0), (0, 2))), {"mode": "constant", "constant_values": 1.5}),
    "nonzero": ((A23 - 2,), {"size": 4, "fill_value": -1}),
    "argwhere": ((A23 - 2,), {"size": 4}),
    "where": ((B23, A23, -A23), {}),
    "unique": ((A23,), {"size": 3}),
    "bincount": ((I23[0],), {"length": 4}),
    "searchsorted": ((A23[0], A23[1]), {"side": "right"}),
    "quantile": ((A23, 0.3), {"axis": 1}),
    "percentile": ((A23, 30.0), {"axis": 1}),
    "vectorize": ((lambda a, b: a * b,), {}),
    # The most-used names of the coverage measurement (benchmarks/jnp_coverage.py).
    "finfo": ((np.float32,), {}),
    "iinfo": ((np.int32,), {}),
    "polyval": ((A23[0], A23), {}),
    "real": ((A23,), {}),
    "imag": ((A23,), {}),
    "array_equal": ((A23, A23 + 0.0), {"equal_nan": True}),
    "append": ((A23, A23[:1]), {"axis": 0}),
    "column_stack": (([A23[0], A23[1]],), {}),
    "broadcast_arrays": ((A23, A23[:1]), {}),
    "copy": ((A23,), {}),
    "kron": ((A23, A23[:, :2]), {}),
    "rot90": ((A23,), {"k": 3}),
    "select": (([B23, ~B23], [A23, -A23]), {"default": 1.5}),
    "logspace": ((0.0, 2.0, 5), {"base": 2.0}),
    "diag_indices": ((3,), {"ndim": 2}),
    "diag_indices_from": ((A23[:, :2],), {}),
    "tril_indices": ((3,), {"k": -1}),
    "triu_indices": ((3,), {"k": 1, "m": 4}),
    **{name: ((A23,), {"axis": 1, "keepdims": True}) for name in ("nansum", "nanmean", "nanmin", "nanmax")},
    **{name: ((A23,), {}) for name in ("iscomplexobj", "isrealobj", "isneginf", "isposinf")},
    "isscalar": ((A23[0, 0],), {}),
    "invert": ((I23,), {}),
    # The names a sweep of JAX-style programs missed (tests/test_more_numpy_names.py).
    "around": ((A23 / 4,), {"decimals": 1}),
    "sinc": ((A23 / 4,), {}),
    "logical_xor": ((B23, ~B23), {}),
    "ptp": ((A23,), {"axis": 1, "keepdims": True}),
    "average": ((A23,), {"axis": 1, "weights": A23[0], "returned": True}),
    "median": ((A23,), {"axis": 1}),
    "interp": ((A23, A23[0], A23[1]), {"left": 0.5, "right": None, "period": None}),
    "digitize": ((A23, A23[0]), {"right": True}),
    "convolve": ((A23[0], A23[1, :2]), {"mode": "same"}),
    "cov": ((A23,), {"rowvar": False, "ddof": 0, "aweights": A23[:, 0]}),
    "array_split": ((A23, 2), {"axis": 1}),
}
NN_CALLS: dict[str, tuple[tuple[Any, ...], dict[str, Any]]] = {
    **{name: ((A23,), {}) for name in ("relu", "sigmoid", "softplus", "silu")},
    "gelu": ((A23,), {"approximate": False}),
    "softmax": ((A23,), {"axis": 0}),
    "log_softmax": ((A23,), {"axis": 0}),
    "logsumexp": ((A23,), {"axis": 1, "keepdims": True}),
    "one_hot": ((I23, 4), {"dtype": np.float32, "axis": 1}),
    **{
        name: ((A23,), {})
        for name in ("selu", "hard_tanh", "relu6", "hard_sigmoid", "hard_silu", "hard_swish", "log_sigmoid", "swish")
    },
    **{name: ((A23,), {}) for name in ("soft_sign", "sparse_plus")},
    "elu": ((A23,), {"alpha": 0.5}),
    "leaky_relu": ((A23,), {"negative_slope": 0.2}),
    "celu": ((A23,), {"alpha": 2.0}),
    "glu": ((A23,), {"axis": 0}),
    "standardize": ((A23,), {"axis": 0, "epsilon": 1e-3, "algorithm": "stable"}),
}


def default_call(name: str, function: Callable[..., Any]) -> tuple[tuple[Any, ...], dict[str, Any]]:
    parameters = inspect.signature(function).parameters.values()
    required = [p for p in parameters if p.default is p.empty and p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)]
    assert all(p.kind is p.POSITIONAL_ONLY for p in required), f"{name}: spell out its call in NUMPY_CALLS"
    return tuple(A23 + 0.5 for _ in required), {}


# Functions whose results are no arrays (dtypes, functions): called on numpy values only.
NOT_TRACED = {"result_type", "promote_types", "vectorize", "finfo", "iinfo", "iscomplexobj", "isrealobj", "isscalar"}


def numpy_call(name: str, table: dict[str, tuple[tuple[Any, ...], dict[str, Any]]], module: Any) -> Call:
    function = getattr(module, name)
    args, kwargs = table[name] if name in table else default_call(name, function)
    if name in NOT_TRACED:
        return Call(function, args, kwargs)
    return Call(function, args, kwargs, variants=(traced(function), jitted(function), differentiated(function)))


# Traced, compiled, differentiated ---------------------------------------------------------


def with_arrays(value: Any, replace: Callable[[np.ndarray], Any]) -> Any:
    """`value` with each array of a shax dtype in it, through lists, tuples and dicts,
    replaced by `replace(array)` (in order)."""
    if isinstance(value, np.ndarray):
        return replace(value) if traceable(value) else value
    if isinstance(value, (list, tuple)):
        return type(value)(with_arrays(v, replace) for v in value)
    if isinstance(value, dict):
        return {k: with_arrays(v, replace) for k, v in value.items()}
    return value


def staged(function: Callable[..., Any], args: Any, kwargs: Any, wanted: Callable[[np.ndarray], bool]) -> Any:
    """(the arrays `wanted` among the arguments, the function of them calling `function`
    with the arguments they came from)."""
    arrays: list[np.ndarray] = []

    def collect(array: np.ndarray) -> np.ndarray:
        if wanted(array):
            arrays.append(array)
        return array

    with_arrays((args, kwargs), collect)

    def f(*tracers: Any) -> Any:
        given = iter(tracers)
        args_, kwargs_ = with_arrays((args, kwargs), lambda a: next(given) if wanted(a) else a)
        return function(*args_, **kwargs_)

    return arrays, f


def traced(function: Callable[..., Any]) -> Callable[..., Any]:
    def call(*args: Any, **kwargs: Any) -> Any:
        arrays, f = staged(function, args, kwargs, traceable)
        return shax.trace(f, *(shax.TensorType.of(a) for a in arrays))

    return call


def jitted(function: Callable[..., Any]) -> Callable[..., Any]:
    def call(*args: Any, **kwargs: Any) -> Any:
        arrays, f = staged(function, args, kwargs, traceable)
        return shax.jit(f)(*arrays)

    return call


def differentiated(function: Callable[..., Any], receiver: bool = False) -> Callable[..., Any]:
    """The gradient of the sum of the results of the first float dtype (the float
    arrays among the arguments as the parameters; none: the function traced). With
    `receiver`, the first argument is traced whatever its dtype: a method's receiver, whose
    method would otherwise be numpy's own (an integer array's), not the tracer's."""

    def call(*args: Any, **kwargs: Any) -> Any:
        first = args[0] if receiver and args else None
        arrays, f = staged(function, args, kwargs, lambda a: a.dtype.kind == "f" or (a is first and traceable(a)))
        if not arrays:
            return traced(function)(*args, **kwargs)
        return shax.grad(lambda *tracers: total(f(*tracers), tracers[0]))(*arrays)

    return call


def total(result: Any, fallback: Any) -> Any:
    """The sum of the float tracers among `result`'s of the first one's dtype; with none,
    0 · the sum of `fallback`."""
    leaves = [r for r in (result if isinstance(result, (list, tuple)) else [result]) if isinstance(r, shax.Tracer)]
    floats = [r for r in leaves if r.dtype in (shax.f32, shax.f64)]
    if not floats:
        return tc.mul(tc.reduce_sum(fallback, list(range(fallback.ndim))), 0.0)
    sums = [tc.reduce_sum(r, list(range(r.ndim))) for r in floats if r.dtype == floats[0].dtype]
    out = sums[0]
    for s in sums[1:]:
        out = tc.add(out, s)
    return out


# The array methods, on tracers ------------------------------------------------------------

SHAX_ARRAYS = st.one_of(
    hnp.arrays(st.sampled_from([np.float32, np.float64, np.int32, np.bool_]), SHAPES),
    st.just(A23),
)
# numpy's basic indices, good and bad: ints, slices (of any step and bounds), None,
# Ellipsis, and tuples of them, besides the other bad values.
SLICES = st.builds(slice, *(st.one_of(st.none(), AXES, HUGE_INTS, st.just(np.int64(-1))) for _ in range(3)))
INDEX_ITEMS = st.one_of(AXES, HUGE_INTS, SLICES, st.none(), st.just(Ellipsis), st.booleans(), ARRAYS)
KEYS = st.one_of(INDEX_ITEMS, st.tuples(INDEX_ITEMS), st.lists(INDEX_ITEMS, max_size=4).map(tuple), BAD)


def method(name: str) -> Callable[..., Any]:
    def call(x: Any, *args: Any, **kwargs: Any) -> Any:
        return getattr(x, name)(*args, **kwargs)

    call.__name__ = name
    return call


def attribute(name: str) -> Callable[[Any], Any]:
    return lambda x: getattr(x, name)


OPERATORS = {
    "<": operator.lt, "<=": operator.le, ">": operator.gt, ">=": operator.ge, "==": operator.eq, "!=": operator.ne,
    "+": operator.add, "-": operator.sub, "*": operator.mul, "/": operator.truediv, "**": operator.pow,
}  # fmt: skip
METHOD_CALLS: dict[str, tuple[Callable[..., Any], tuple[Any, ...], dict[str, Any]]] = {
    "size": (attribute("size"), (A23,), {}),
    "T": (attribute("T"), (A23,), {}),
    "mT": (attribute("mT"), (A23,), {}),
    "reshape": (method("reshape"), (A23, 3, 2), {}),
    "astype": (method("astype"), (A23, np.int32), {}),
    "transpose": (method("transpose"), (A23, 1, 0), {}),
    "__len__": (len, (A23,), {}),
    "__iter__": (lambda x: list(iter(x)), (A23,), {}),
    "__getitem__": (lambda x, key: x[key], (A23, (Ellipsis, slice(None, None, -1), None)), {}),
    **{
        name: (method(name), (A23, 1), {"keepdims": True})
        for name in ("sum", "prod", "max", "min", "mean", "var", "std", "argmax", "argmin")
    },
    "at": (lambda x, key, v: x.at[key].add(v), (A23, (slice(None), [0, 2]), 1.5), {}),
    **{
        f"at.{name}": (lambda x, key, v, name=name: getattr(x.at[key], name)(v), (A23, (slice(None), [0, 0]), 1.5), {})
        for name in ("multiply", "divide", "power", "min", "max")
    },
    **{name: (attribute(name), (A23,), {}) for name in ("real", "imag", "itemsize", "nbytes")},
    **{name: (method(name), (A23,), {}) for name in ("flatten", "ravel", "conj", "conjugate")},
    "squeeze": (method("squeeze"), (A23[:1],), {}),
    "swapaxes": (method("swapaxes"), (A23, 0, 1), {}),
    "repeat": (method("repeat"), (A23, 2), {"axis": 1}),
    "take": (method("take"), (A23, np.array([2, 0])), {"axis": 1}),
    "argsort": (method("argsort"), (A23,), {"axis": 1}),
    "clip": (method("clip"), (A23, -0.5, 0.5), {}),
    "dot": (method("dot"), (A23, A23.T), {}),
    **{name: (method(name), (A23, 1), {}) for name in ("all", "any", "cumsum", "cumprod", "diagonal", "trace", "sort")},
    "nonzero": (method("nonzero"), (A23 - 2,), {"size": 3}),
    "searchsorted": (method("searchsorted"), (A23[0], A23[1]), {}),
    **{f"x {symbol} y": (function, (A23, A23[0] + 0.5), {}) for symbol, function in OPERATORS.items()},
    "x @ y": (operator.matmul, (A23, A23.T), {}),
}


def method_call(function: Callable[..., Any], args: tuple[Any, ...], kwargs: dict[str, Any]) -> Call:
    bad: dict[int | str, st.SearchStrategy[Any]] = {0: SHAX_ARRAYS}
    if function is METHOD_CALLS["__getitem__"][0]:
        bad[1] = KEYS
    return Call(
        traced(function), args, kwargs, bad=bad, variants=(jitted(function), differentiated(function, receiver=True))
    )


def public_methods() -> set[str]:
    """The tracer's numpy methods and attributes (its mixins' public names, and the
    protocols of `len`, iteration and indexing)."""
    names = {n for cls in (ArrayMethods, ReductionMethods) for n in vars(cls) if not n.startswith("_")}
    return names | {"__len__", "__iter__", "__getitem__"}


# Every function of shax.numpy (not its array class, snp.ndarray).
NUMPY: dict[str, Call] = {
    name: numpy_call(name, NUMPY_CALLS, snp)
    for name in snp.__all__
    if callable(getattr(snp, name)) and not isinstance(getattr(snp, name), type)
}
NN: dict[str, Call] = {name: numpy_call(name, NN_CALLS, shax.nn) for name in shax.nn.__all__}
# shax.numpy.linalg: a well-conditioned f32 matrix (symmetric positive definite) for each function.
S22 = np.array([[2.0, 0.5], [0.5, 1.0]], np.float32)
LINALG_CALLS: dict[str, tuple[tuple[Any, ...], dict[str, Any]]] = {
    **{name: ((S22,), {}) for name in ("inv", "det", "slogdet", "cholesky", "eigh", "eigvalsh", "qr", "pinv")},
    **{name: ((S22,), {}) for name in ("svd", "cond", "matrix_rank")},
    "solve": ((S22, np.array([1.0, -1.0], np.float32)), {}),
    "matrix_power": ((S22, 3), {}),
    "norm": ((S22,), {"ord": 1, "axis": None, "keepdims": False}),
}
LINALG: dict[str, Call] = {name: numpy_call(name, LINALG_CALLS, snp.linalg) for name in snp.linalg.__all__}
METHODS: dict[str, Call] = {name: method_call(*row) for name, row in METHOD_CALLS.items()}

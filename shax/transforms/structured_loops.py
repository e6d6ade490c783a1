"""Structured loops with `jax.lax`'s signatures: `scan`, `fori_loop`, `while_loop`.

    carry, ys = shax.scan(f, init, xs)          f(carry, x) -> (carry, y), pytrees
    val = shax.fori_loop(0, n, body, val)       body(i, val) -> val
    val = shax.while_loop(cond, body, val)      cond(val) -> bool scalar, body(val) -> val

On numpy values each runs as a Python loop. On tracers each records one loop operation
(`shax.control.loops`) holding the body as a typed definition, traced once at the
carry's (and x slices') types through the transforms' staging: every transform sees a
loop, whatever the trip count. `fori_loop` with Python int bounds is a scan (it has a
fixed trip count, so reverse mode differentiates it); with traced bounds a while loop.

A Python number in the carry is weakly typed, as in JAX: if the body returns that leaf in
another dtype (`fori_loop(0, n, lambda i, t: t + xs[i], 0.0)` with f64 xs), the loop
starts it in that dtype (one trace of the body finds it), rather than refusing the carry.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import attrs
import numpy as np

from shax.control import Scan, While
from shax.control.callees import rearranged
from shax.control.loops import run_all
from shax.core.errors import ShaxError, ShaxTypeError, ShaxValueError, at
from shax.core.ir import Definition
from shax.core.location import current_source
from shax.core.pytree import TreeDef, flatten, leaf_paths, unflatten
from shax.core.types import TensorType, bool_, i32
from shax.passes import cleanup
from shax.tracing.trace import check_arity, check_function, function_name
from shax.tracing.tracer import Tracer, tracing
from shax.transforms.arguments import leaf_type, typed_leaves
from shax.transforms.staging import Staging, stage

Label = Callable[[str], str]  # a carry leaf's path -> how errors name it


def scan(f: Callable[..., Any], init: Any, xs: Any = None, length: int | None = None, reverse: bool = False) -> Any:
    """`(carry, ys)`: `carry, y = f(carry, x)` for each x along the leading axis of `xs`
    (backwards if `reverse`), the ys stacked; `length` is the trip count when `xs` is None."""
    try:
        check_function("scan", f)
        check_arity("scan", "f", f, ("carry", "x"))
        slices = [TensorType(t.dtype, t.shape[1:]) for t in _types_of(flatten(xs)[0]) if t.shape]
        init = _weak_promoted("scan", init, flatten(xs)[0], lambda c: f(*c)[0], slices)
        return _scan("scan", f, function_name(f), init, xs, length, reverse, lambda path: "init" + path)
    except ShaxError as error:
        raise at(error, current_source()) from None


def fori_loop(lower: Any, upper: Any, body_fun: Callable[..., Any], init_val: Any) -> Any:
    """`val = body_fun(i, val)` for i from lower to upper - 1 (an i32 index)."""
    try:
        check_function("fori_loop", body_fun)
        check_arity("fori_loop", "body_fun", body_fun, ("i", "val"))
        init_val = _weak_promoted("fori_loop", init_val, (), lambda c: body_fun(c[1], c[0]), [TensorType(i32, ())])
        return _fori_loop(lower, upper, body_fun, init_val)
    except ShaxError as error:
        raise at(error, current_source()) from None


def while_loop(cond_fun: Callable[..., Any], body_fun: Callable[..., Any], init_val: Any) -> Any:
    """`val = body_fun(val)` while `cond_fun(val)` (a bool scalar) holds."""
    try:
        for role, fun in (("cond_fun", cond_fun), ("body_fun", body_fun)):
            check_function("while_loop", fun)
            check_arity("while_loop", role, fun, ("val",))
        init_val = _weak_promoted("while_loop", init_val, (), lambda c: body_fun(c[0]), [])
        return _while_loop("while_loop", cond_fun, body_fun, init_val, lambda path: "init_val" + path)
    except ShaxError as error:
        raise at(error, current_source()) from None


def _weak_promoted(
    what: str, init: Any, others: Sequence[Any], body: Callable[[tuple[Any, ...]], Any], extra: list[TensorType]
) -> Any:
    """`init` with each Python number leaf in the dtype `body` (of (carry, *extra), giving
    the new carry) returns it in, where that differs (JAX's weakly typed carry)."""
    leaves, tree = flatten(init)
    if not any(type(v) in (int, float) for v in leaves):
        return init
    carry, carry_tree, types = typed_leaves(what, init, others)
    extra_values = [np.zeros(t.shape, t.dtype.numpy) for t in extra]
    out = _carry_types(body, carry, carry_tree, types, extra_values, extra)
    if out is None:
        return init
    promoted = [
        np.asarray(v, u.dtype.numpy) if type(v) in (int, float) and u.shape == t.shape and _takes(v, u) else v
        for v, t, u in zip(leaves, types, out)
    ]
    return unflatten(tree, promoted)


def _takes(number: Any, t: TensorType) -> bool:
    """Whether a weak Python number joins t's dtype without changing it (JAX promotes a weak
    carry to the join of it and what the body returns; a float against an int stays apart)."""
    return bool(np.result_type(number, t.dtype.numpy) == t.dtype.numpy)


def _carry_types(
    body: Callable[[tuple[Any, ...]], Any],
    carry: list[Any],
    carry_tree: TreeDef,
    types: list[TensorType],
    extra_values: list[Any],
    extra: list[TensorType],
) -> list[TensorType] | None:
    """The types of the carry `body` returns: traced at the carry's types, or (numpy
    values indexed by a traced index cannot be traced) run once on the values; None if
    the body fails or returns another structure (the loop itself then says why)."""
    in_tree = flatten((unflatten(carry_tree, carry), *extra_values))[1]
    try:  # a body that fails here fails again, with its own error, in the loop itself
        staging = stage(lambda c, *e: body((c, *e)), in_tree, [*types, *extra])
        out, out_tree = list(staging.typed.output_types()), staging.out_tree
    except Exception:  # noqa: BLE001 - see above
        if tracing() or any(isinstance(v, Tracer) for v in carry):
            return None
        try:
            leaves, out_tree = flatten(body((unflatten(carry_tree, carry), *extra_values)))
            out = _types_of(leaves)
        except Exception:  # noqa: BLE001 - as above
            return None
    return out if out_tree == carry_tree else None


def _check_carry(
    what: str,
    fname: str,
    label: Label,
    tree: TreeDef,
    types: Sequence[TensorType],
    out_tree: TreeDef,
    out_types: Sequence[TensorType],
) -> None:
    """The carry `fname` returns has the structure and leaf types of the one it took."""
    if out_tree != tree:
        raise ShaxTypeError(f"{what}: {fname} returned a carry of structure {out_tree}, but {label('')} is {tree}")
    for path, t, u in zip(leaf_paths(tree), types, out_types):
        if t != u:
            message = f"{what}: {fname} returned a carry whose leaf {label(path)} is {u}, but it entered as {t}"
            raise ShaxTypeError(message + " (the carry must keep its types)")


def _types_of(leaves: Sequence[Any]) -> list[TensorType]:
    return [leaf_type(v) for v in leaves]


def _length(xs_leaves: Sequence[Any], length: Any) -> int:
    lengths = {leaf_type(x).shape[0] if leaf_type(x).shape else -1 for x in xs_leaves}
    if -1 in lengths:
        raise ShaxTypeError("scan: every leaf of xs must have a leading axis (a scalar has none)")
    if len(lengths) > 1:
        raise ShaxValueError(f"scan: the leaves of xs have different leading axes {sorted(lengths)}")
    if length is not None and (isinstance(length, bool) or not isinstance(length, (int, np.integer)) or length < 0):
        raise ShaxTypeError(f"scan: length must be a non-negative int, got {length!r}")
    if lengths and length is not None and int(length) not in lengths:
        raise ShaxValueError(f"scan: length={length} but xs have a leading axis of {lengths.pop()}")
    if not lengths and length is None:
        raise ShaxValueError("scan: with no xs, give the trip count as length=")
    return int(length) if length is not None else lengths.pop()


def _scan(
    what: str, f: Callable[..., Any], fname: str, init: Any, xs: Any, length: Any, reverse: Any, label: Label
) -> Any:
    if not isinstance(reverse, (bool, np.bool_)):
        raise ShaxTypeError(f"{what}: reverse must be a bool, got {reverse!r}")
    x_leaves, x_tree = flatten(xs)
    n = _length(x_leaves, length)
    carry, carry_tree, carry_types = typed_leaves(what, init, x_leaves)
    slices = [TensorType(t.dtype, t.shape[1:]) for t in _types_of(x_leaves)]
    in_tree = flatten((unflatten(carry_tree, carry), unflatten(x_tree, x_leaves)))[1]
    if n > 0 and not tracing() and not any(isinstance(v, Tracer) for v in [*carry, *x_leaves]):
        return _scan_values(what, f, fname, carry, carry_tree, carry_types, x_leaves, x_tree, n, bool(reverse), label)
    staging = stage(lambda c, x: f(c, x), in_tree, [*carry_types, *slices])
    body, y_tree = _scan_body(what, fname, staging, carry_tree, carry_types, label)
    captured = list(staging.captured)
    loop = Scan(body, n, bool(reverse), len(captured), len(carry))
    outputs = run_all(loop, [*captured, *carry, *x_leaves])  # recorded on tracers, else computed
    return unflatten(carry_tree, outputs[: len(carry)]), unflatten(y_tree, outputs[len(carry) :])


def _scan_body(
    what: str, fname: str, staging: Staging, carry_tree: TreeDef, carry_types: Sequence[TensorType], label: Label
) -> tuple[Definition, TreeDef]:
    """The body as (captured, carry, x slices) -> (carry, ys), and the ys' structure."""
    defn = staging.typed
    result = unflatten(staging.out_tree, list(range(len(defn.outputs))))
    if not isinstance(result, (tuple, list)) or len(result) != 2:
        raise ShaxTypeError(f"{what}: {fname} must return a pair (carry, y), got {staging.out_tree}")
    out_carry, out_tree = flatten(result[0])
    y_tree = flatten(result[1])[1]
    types = defn.output_types()
    _check_carry(what, fname, label, carry_tree, carry_types, out_tree, [types[k] for k in out_carry])
    declared = len(defn.arg_types) - len(staging.captured)
    positions = [*(len(staging.captured) + k for k in range(declared)), *range(len(staging.captured))]
    arg_types = [defn.arg_types[k] for k in range(declared, len(defn.arg_types))] + list(defn.arg_types[:declared])
    body = rearranged(attrs.evolve(defn, name=fname), arg_types, positions)
    return cleanup(body), y_tree


def _scan_values(
    what: str,
    f: Callable[..., Any],
    fname: str,
    carry: list[Any],
    carry_tree: TreeDef,
    carry_types: list[TensorType],
    x_leaves: list[Any],
    x_tree: TreeDef,
    n: int,
    reverse: bool,
    label: Label,
) -> Any:
    """The scan on numpy values: a Python loop, the ys stacked."""
    state = unflatten(carry_tree, carry)
    ys: list[Any] = [None] * n
    y_tree: TreeDef | None = None
    for i in range(n - 1, -1, -1) if reverse else range(n):
        result = f(state, unflatten(x_tree, [x[i] for x in x_leaves]))
        if not isinstance(result, (tuple, list)) or len(result) != 2:
            raise ShaxTypeError(f"{what}: {fname} must return a pair (carry, y), got a {type(result).__name__}")
        state, y = result
        leaves, tree = flatten(state)
        _check_carry(what, fname, label, carry_tree, carry_types, tree, _types_of(leaves))
        ys[i], tree = flatten(y)
        if y_tree is not None and tree != y_tree:
            raise ShaxTypeError(f"{what}: {fname} returned ys of structure {tree}, then of {y_tree}")
        y_tree = tree
    assert y_tree is not None, "n > 0 iterations ran"
    stacked = [np.stack([np.asarray(y[k]) for y in ys]) for k in range(len(ys[0]))]
    return state, unflatten(y_tree, stacked)


def _is_static(bound: Any) -> bool:
    return isinstance(bound, (int, np.integer)) and not isinstance(bound, (bool, np.bool_))


def _fori_loop(lower: Any, upper: Any, body_fun: Callable[..., Any], init_val: Any) -> Any:
    for bound in (lower, upper):
        if not _is_static(bound) and not (
            isinstance(bound, Tracer) and bound.type.dtype == i32 and not bound.type.shape
        ):
            raise ShaxTypeError(f"fori_loop: the bounds must be ints or i32[] values, got {bound!r}")
    val, val_tree, val_types = typed_leaves("fori_loop", init_val)
    bname = function_name(body_fun, "body_fun")
    label: Label = lambda path: "init_val" + path  # noqa: E731

    def checked(i: Any, val: Any) -> Any:
        # The loop below carries the index too: body_fun's result is checked here, so that
        # an error shows the user's carry, not the loop's.
        new = body_fun(i, val)
        leaves, tree = flatten(new)
        _check_carry("fori_loop", bname, label, val_tree, val_types, tree, _types_of(leaves))
        return new

    init = unflatten(val_tree, val)
    if _is_static(lower) and _is_static(upper):

        def step(carry: Any, _: Any) -> Any:
            i, val = carry
            return (i + np.int32(1), checked(i, val)), None

        trips = max(int(upper) - int(lower), 0)
        (_, out), _ = _scan("fori_loop", step, bname, (np.int32(lower), init), None, trips, False, label)
        return out

    def cond(carry: Any) -> Any:
        return carry[0] < carry[1]

    def body(carry: Any) -> Any:
        i, stop, val = carry
        return i + np.int32(1), stop, checked(i, val)

    bounds = [b if isinstance(b, Tracer) else np.int32(b) for b in (lower, upper)]
    return _while_loop("fori_loop", cond, body, (*bounds, init), label)[2]


def _while_loop(
    what: str, cond_fun: Callable[..., Any], body_fun: Callable[..., Any], init_val: Any, label: Label
) -> Any:
    carry, carry_tree, carry_types = typed_leaves(what, init_val)
    if not carry:
        raise ShaxTypeError(f"{what}: the carry {label('')} holds no tensor, got {init_val!r}")
    cname, bname = function_name(cond_fun, "cond_fun"), function_name(body_fun, "body_fun")
    in_tree = flatten((unflatten(carry_tree, carry),))[1]
    if not tracing() and not any(isinstance(v, Tracer) for v in carry):
        state = unflatten(carry_tree, carry)
        while _predicate(cname, cond_fun(state)):
            state = body_fun(state)
            leaves, tree = flatten(state)
            _check_carry(what, bname, label, carry_tree, carry_types, tree, _types_of(leaves))
        return state
    staged_cond = stage(cond_fun, in_tree, carry_types)
    out = staged_cond.typed.output_types()
    if len(out) != 1 or out[0] != TensorType(bool_, ()):
        raise ShaxTypeError(f"{what}: {cname} must return a bool scalar, got {', '.join(map(str, out))}")
    staged_body = stage(body_fun, in_tree, carry_types)
    body_types = staged_body.typed.output_types()
    _check_carry(what, bname, label, carry_tree, carry_types, staged_body.out_tree, body_types)
    ccap, bcap = list(staged_cond.captured), list(staged_body.captured)
    consts = [*ccap, *bcap]
    arg_types = [c.type for c in consts] + list(carry_types)
    n = len(carry)
    cond = rearranged(staged_cond.typed, arg_types, [*(len(consts) + k for k in range(n)), *range(len(ccap))])
    body_positions = [*(len(consts) + k for k in range(n)), *(len(ccap) + k for k in range(len(bcap)))]
    body = rearranged(staged_body.typed, arg_types, body_positions)
    loop = While(cleanup(cond), cleanup(body), len(consts))
    return unflatten(carry_tree, run_all(loop, [*consts, *carry]))


def _predicate(cname: str, value: Any) -> bool:
    t = leaf_type(value) if isinstance(value, (bool, np.bool_, np.ndarray)) else None
    if t is None or t != TensorType(bool_, ()):
        raise ShaxTypeError(f"while_loop: {cname} must return a bool scalar, got {value!r}")
    return bool(value)

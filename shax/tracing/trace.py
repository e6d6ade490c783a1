"""`shax.trace`: run a Python function on tracers and read off an untyped Definition.

Argument types may be pytrees (dicts, lists, tuples) of TensorTypes, flattened to
the definition's arguments in order. Where the function carries annotations
(`A = TypeVar("A", bound=Floating)`), typeguard checks its arguments and result
against them, so a constraint the tracer cannot meet fails with a clear message.
"""

from __future__ import annotations

import inspect
import reprlib
import typing
from collections.abc import Callable, Sequence
from typing import Any

import attrs
import typeguard

from shax.core.builder import Builder
from shax.core.errors import ShaxError, ShaxTypeError, ShaxValueError, at, reworded
from shax.core.gcpause import collector_paused
from shax.core.ir import Definition, Var
from shax.core.location import current_source
from shax.core.pytree import TreeDef, flatten, unflatten
from shax.core.types import TensorType
from shax.tracing.sharing import recover_sharing
from shax.tracing.tracer import Tracer, lift, new_trace


@attrs.frozen
class Traced:
    """A traced function: its definition, how its arguments and results nest, and the
    enclosing-trace values it captured (read through the arguments after the declared ones)."""

    defn: Definition
    in_tree: TreeDef
    out_tree: TreeDef
    captured: tuple[Tracer, ...]


def trace(f: Callable[..., Any], *arg_types: Any, name: str | None = None) -> Definition:
    """The untyped let-IR of `f` at the given argument types (the "After tracing" stage)."""
    check_function("trace", f)
    if name is not None and not (isinstance(name, str) and name.isidentifier()):
        raise at(ShaxValueError(f"trace: name must be a Python identifier, got {name!r}"), current_source())
    traced = trace_pytree(f, arg_types, name)
    if traced.out_tree.kind == "none":
        # None is an empty pytree (a jitted function may return it), but a definition
        # of no outputs is most likely a forgotten `return`.
        message = (
            f"trace: {traced.defn.name} returned None (NoneType): a definition needs outputs; is a return missing?"
        )
        raise at(ShaxTypeError(message), function_location(f))
    if traced.captured:
        raise at(
            ShaxTypeError(
                f"trace: {traced.defn.name} uses {len(traced.captured)} value(s) traced by an enclosing "
                "trace; pass them as arguments instead"
            ),
            function_location(f),
        )
    return traced.defn


def trace_pytree(
    f: Callable[..., Any], arg_trees: Sequence[Any], name: str | None = None, var_of: dict[int, Var] | None = None
) -> Traced:
    """Trace `f` on one tracer per leaf of `arg_trees` (leaves: TensorTypes or their printed
    form). `var_of`, if given, is filled with id(tracer) -> its var in the definition."""
    fname = name or function_name(f)
    try:
        leaves, in_tree = flatten(tuple(arg_trees), is_leaf=lambda x: isinstance(x, (TensorType, str)))
    except ShaxError as error:
        raise reworded(error, f"trace: the argument types of {fname}: {error}") from None
    try:
        types = [_as_type(fname, k, leaf) for k, leaf in enumerate(leaves)]
    except ShaxError as error:  # bad argument types: point at the caller's line
        raise at(error, current_source()) from None
    # A with-block, not a decorator: errors locate the user's line by walking the stack,
    # and a decorator's frame (in contextlib) would be the first one outside shax.
    with collector_paused():
        with new_trace(types) as current:
            args = unflatten(in_tree, current.args)
            _check_call(f, fname, args)
            result = f(*args)
            _check_result(f, fname, result)
            try:
                out_leaves, out_tree = flatten(result)
            except ShaxError as error:
                raise reworded(error, f"trace: the result of {fname}: {error}") from None
            try:
                outputs = [lift(current, leaf, None, "return") for leaf in out_leaves]
            except ShaxError as error:
                message = f"trace: {fname} returned a non-tensor: {error}"
                raise at(reworded(error, message), function_location(f)) from None
        builder = Builder()
        out_vars = recover_sharing(builder, outputs, var_of=var_of, effects=current.effects)
        defn = builder.build(fname, [*types, *(c.type for c in current.captured)], out_vars)
    return Traced(defn, in_tree, out_tree, tuple(current.captured))


def check_function(what: str, f: Any) -> None:
    """Nothing if `f` can be called; else a ShaxTypeError naming `what` at the caller's line."""
    if not callable(f):
        message = f"{what}: expected a function, got {type(f).__name__} {reprlib.repr(f)}"
        raise at(ShaxTypeError(message), current_source())


def function_name(f: Callable[..., Any], default: str = "f") -> str:
    """`f`'s name, or `default` (a lambda's, a callable object's)."""
    name = getattr(f, "__name__", default)
    return name if name.isidentifier() else default


def check_arity(what: str, role: str, f: Callable[..., Any], given: Sequence[str], where: str | None = None) -> None:
    """Nothing if `f` can be called with the arguments `given` (their descriptions, passed
    positionally); else a ShaxTypeError naming `what`, the callback's `role` and its
    signature, at `where` (the caller's line by default). Checked before the call, so that a
    TypeError the call raises is the callback's own."""
    try:
        signature = inspect.signature(f)
    except (TypeError, ValueError):  # a builtin without one: the call itself will tell
        return
    try:
        signature.bind(*given)
    except TypeError as error:
        place = where or current_source()
        defined = function_location(f)
        shown = f"{getattr(f, '__name__', type(f).__name__)}{signature}"
        if defined is not None and defined != place:
            shown += f", defined at {defined},"
        role = f"{role} " if role else ""
        message = f"{what}: {role}{shown} is called with {len(given)} argument(s) ({', '.join(given)}): {error}"
        raise at(ShaxTypeError(message), place) from None


def function_location(f: Callable[..., Any]) -> str | None:
    code = getattr(inspect.unwrap(f), "__code__", None)
    return None if code is None else f"{code.co_filename}:{code.co_firstlineno}"


def _as_type(fname: str, k: int, leaf: Any) -> TensorType:
    if isinstance(leaf, str):
        try:
            return TensorType.parse(leaf)
        except ShaxError as error:
            raise reworded(error, f"trace: argument type {k} of {fname}: {error}") from None
    if not isinstance(leaf, TensorType):
        raise ShaxTypeError(f"trace: argument type {k} of {fname} must be a TensorType like f32[2, 3], got {leaf!r}")
    return leaf


def _hints(f: Callable[..., Any]) -> dict[str, Any]:
    # Only functions carry their parameters' annotations; a callable object's class
    # annotations describe its attributes (a transformed function's are its fields).
    if not (inspect.isfunction(f) or inspect.ismethod(f)):
        return {}
    try:
        return typing.get_type_hints(f)
    except Exception:  # unresolvable annotations are the user's business, not a tracing error
        return {}


def _check_call(f: Callable[..., Any], fname: str, args: Sequence[Any]) -> None:
    where = function_location(f)
    given = [str(a.type) if isinstance(a, Tracer) else type(a).__name__ for a in args]
    check_arity("trace", "", f, given, where)
    hints = _hints(f)
    if not hints:
        return
    signature = inspect.signature(f)
    bound = signature.bind(*args)
    for pname, value in bound.arguments.items():
        if pname not in hints:
            continue
        kind = signature.parameters[pname].kind
        values = value if kind is inspect.Parameter.VAR_POSITIONAL else (value,)
        for v in values:
            _check_annotation(v, hints[pname], f"argument {pname} of {fname}", where)


def _check_result(f: Callable[..., Any], fname: str, result: Any) -> None:
    hints = _hints(f)
    if "return" in hints:
        _check_annotation(result, hints["return"], f"the result of {fname}", function_location(f))


def _check_annotation(value: Any, hint: Any, what: str, where: str | None) -> None:
    try:
        typeguard.check_type(value, hint)
    except typeguard.TypeCheckError as error:
        shown = getattr(hint, "__name__", str(hint))
        message = f"trace: {what} does not satisfy its annotation {shown}: {error}"
        raise at(ShaxTypeError(message), where) from None

"""Names from the user's code: `explain(..., names="source")` prints a binding under the
name the user's function gave its value (`z` for `z = x + y`), where that is unambiguous.

The names are read while the function is traced: a profiler sees every user frame
return (the function and the helpers it calls) and reads which of its local variables
hold tracers (a helper's parameters aside: they name its caller's values). A value held
by one name only, and a name holding one value only, is named; any other keeps its
`xN`. A name that is another binding's `xN` is not used.

Later stages copy a user's operation with its source line and primitive, and no origin
(`Binding.origin` is None for the user's own operations, in the primal program of
linearize too): such a copy gets the traced binding's name when it is the only copy in
its definition. A residual argument gets the name of the primal value it saves.
"""

from __future__ import annotations

import re
import sys
import sysconfig
from collections.abc import Callable, Mapping
from types import CodeType, FrameType
from typing import Any

from shax.core.ir import Binding, Definition
from shax.core.location import is_library_code
from shax.core.primitive import Arg
from shax.tracing.trace import trace_pytree
from shax.tracing.tracer import Tracer

_PYTHON_DIRS = tuple({sysconfig.get_path(p) for p in ("stdlib", "platstdlib", "purelib", "platlib")})
_DEFAULT_NAME = re.compile(r"x\d+")
_SAVES = re.compile(r"residual: saves x(\d+) of ")


def source_names(f: Callable[..., Any], arg_types: tuple[Any, ...]) -> dict[int, str]:
    """var id -> the user's name for it, in the definition `trace(f, *arg_types)` gives
    (traced again here, under a profiler: the numbering is the same)."""
    held: dict[int, tuple[Tracer, set[str]]] = {}  # id(tracer) -> it (kept alive), its names
    top = getattr(f, "__code__", None)

    def profile(frame: FrameType, event: str, arg: Any) -> None:
        code = frame.f_code
        if event == "return" and _is_user_code(code):
            # A helper's parameters name its caller's values, which have names of their own.
            parameters = () if code is top else code.co_varnames[: code.co_argcount + code.co_kwonlyargcount]
            for name, value in frame.f_locals.items():
                if isinstance(value, Tracer) and name not in parameters:
                    held.setdefault(id(value), (value, set()))[1].add(name)

    var_of: dict[int, Any] = {}
    previous = sys.getprofile()
    sys.setprofile(profile)
    try:
        trace_pytree(f, arg_types, var_of=var_of)
    finally:
        sys.setprofile(previous)
    named = {var_of[key].id: names.pop() for key, (_, names) in held.items() if key in var_of and len(names) == 1}
    return _unambiguous(named, max(var.id for var in var_of.values()) + 1 if var_of else 0)


def _is_user_code(code: CodeType) -> bool:
    """Neither shax's, nor a library's (numpy, typeguard), nor Python's own (inspect binds
    the arguments it checks to names of its own)."""
    name = code.co_filename
    return not (is_library_code(code) or name.startswith(_PYTHON_DIRS) or name.startswith("<frozen"))


def _unambiguous(named: Mapping[int, str], count: int) -> dict[int, str]:
    """`named` without the names given twice, or that are another binding's `xN`."""
    uses: dict[str, int] = {}
    for name in named.values():
        uses[name] = uses.get(name, 0) + 1
    return {
        var: name
        for var, name in named.items()
        if uses[name] == 1 and not (_DEFAULT_NAME.fullmatch(name) and name != f"x{var}" and int(name[1:]) < count)
    }


def names_in(
    defn: Definition,
    traced: Definition,
    names: Mapping[int, str],
    primal: Definition | None = None,
    primal_args: int = 0,
) -> dict[int, str]:
    """var id -> name in `defn`, a later stage's definition: its copies of the traced
    bindings named in `names`, each the only copy in `defn`, its first `primal_args`
    argument bindings (those that are the traced function's arguments), and its residual
    arguments saving a named value of `primal`."""
    by_operation: dict[Any, str] = {}  # (operation, which result) -> its name
    for b in traced.bindings:
        if not isinstance(b.prim, Arg):
            for k, var in enumerate(b.vars):
                if var.id in names:
                    by_operation[_operation(b), k] = names[var.id]
    args = {
        b.prim.index: names[b.vars[0].id] for b in traced.bindings if isinstance(b.prim, Arg) and b.vars[0].id in names
    }
    primal_names = names_in(primal, traced, names, primal_args=len(primal.arg_types)) if primal is not None else {}
    found: dict[int, str] = {}
    for b in defn.bindings:
        if isinstance(b.prim, Arg):
            var = b.vars[0]
            if b.prim.index < primal_args and b.prim.index in args:
                found[var.id] = args[b.prim.index]
            saved = _SAVES.match(b.origin or "")
            if saved and int(saved.group(1)) in primal_names:
                found[var.id] = primal_names[int(saved.group(1))]
        elif b.origin is None:
            for k, var in enumerate(b.vars):
                if (_operation(b), k) in by_operation:
                    found[var.id] = by_operation[_operation(b), k]
    return _unambiguous(found, max((v.id for b in defn.bindings for v in b.vars), default=-1) + 1)


def _operation(b: Binding) -> Any:
    return (b.source, b.prim.cons_key())

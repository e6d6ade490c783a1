"""`compile_definition`: a Definition -> a `Compiled`, the Python function generated for it
(`shax.codegen.generator`), compiled once.

Contract:
- `compiled(*args)` returns what `shax.evaluate(defn, *args)` returns, bit for bit: a list,
  one entry per output.
  With `fresh_outputs` (the transforms' programs), an output that is an argument or a
  view of one is a copy of what evaluate returns, so the caller may write into it.
- Arguments are checked as `evaluate` checks them (a `ShaxTypeError` at the user's line),
  cheaply: an array of the declared dtype and shape (a numpy scalar, for a scalar)
  passes the generated function's one-line test; anything else goes through
  `check_argument` (Python numbers become numpy values there, as in evaluate).
  Unless `checked=False`: a function that only generated code calls, with values of the
  declared types (a loop's body, once per iteration), takes them untested.
- While the `Compiled` lives, tracebacks through the generated function show its lines.
"""

from __future__ import annotations

import itertools
import linecache
import os
import threading
import weakref
from collections.abc import Callable
from types import CodeType
from typing import Any

import attrs
import numpy as np

from shax.codegen.generator import generate
from shax.core.errors import ShaxError, ShaxTypeError, at
from shax.core.gcpause import collector_paused
from shax.core.ir import Definition
from shax.core.location import current_source
from shax.core.types import INTEGERS, bool_, f32, f64, fits
from shax.core.well_typed import is_well_typed
from shax.stages import check_types, infer_types
from shax.tracing.evaluate import check_argument
from shax.tracing.tracer import Tracer
from shax.tracing.validation import expect_definition

# Generated code is named as a file in the shax package, so that errors raised while it
# checks its arguments point at the user's line that called it (see shax.core.location).
_PACKAGE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
# Numbers the generated files, whose names must differ (linecache holds each by its
# name): a lock, as itertools.count is not documented to be thread-safe.
_serial = itertools.count()
_serial_lock = threading.Lock()
# The Python numbers that stand for a scalar of each dtype (evaluate's `check_argument`).
_NUMBERS = {f32: (float, int), f64: (float, int), bool_: (bool,), **{d: (int,) for d in INTEGERS}}


@attrs.frozen(eq=False)
class Compiled:
    """A compiled Definition: `compiled(*args)` returns the list `evaluate` returns.

    `function` is the generated function itself: it checks its arguments' types, not their
    number (calling it with too few or too many raises Python's own TypeError)."""

    defn: Definition
    source: str
    function: Callable[..., list[Any]]

    def __call__(self, *args: Any) -> list[Any]:
        if len(args) != len(self.defn.arg_types):
            declared = ", ".join(map(str, self.defn.arg_types))
            message = f"{self.defn.name} takes {len(self.defn.arg_types)} argument(s) ({declared}), got {len(args)}"
            raise at(ShaxTypeError(message), current_source())
        return self.function(*args)

    def __repr__(self) -> str:
        return f"<compiled {self.defn.name}: {len(self.defn.bindings)} bindings>"


def compile_definition(defn: Definition, fresh_outputs: bool = False, checked: bool = True) -> Compiled:
    """`defn` (typed, or typed here) as a compiled Python function calling numpy. With
    `fresh_outputs`, an output that is (a view of) an argument is returned as a copy;
    without `checked`, its function does not test its arguments (generated code calls it)."""
    expect_definition("compile_definition", defn)
    if not is_well_typed(defn):  # else checked already, or built typed by a stage or pass
        defn = check_types(defn, "compile_definition") if defn.is_typed else infer_types(defn)
    with collector_paused():
        header, functions, namespace, name = generate(defn, _argument_checker(defn) if checked else None, fresh_outputs)
        # The functions of the definitions it calls (each with its own callees) come first.
        callees = dict.fromkeys(getattr(v, "shax_source", "") for v in list(namespace.values()))
        prefix = "".join(c + "\n" for c in callees if c)
        with _serial_lock:
            serial = next(_serial)
        filename = os.path.join(_PACKAGE, f"<codegen {name} #{serial}>")
        # One function compiled at a time: CPython's compiler holds a whole source's syntax
        # tree at once, and compiling 300,000 lines in one piece peaks 2 GB higher.
        before = prefix.count("\n") + len(header)  # lines above the function compiled next
        for function in functions:
            exec(_moved(compile(function, filename, "exec"), before), namespace)
            before += function.count("\n") + 1
        shown = prefix + "\n".join([*header, *functions]) + "\n"
        linecache.cache[filename] = (len(shown), None, shown.splitlines(keepends=True), filename)
        function = namespace[name]
        function.shax_source = shown  # what a caller's source shows for it
    compiled = Compiled(defn, shown, function)
    weakref.finalize(compiled, linecache.cache.pop, filename, None)  # tracebacks show its lines while it lives
    return compiled


def _moved(code: CodeType, lines: int) -> CodeType:
    """`code`, and the code it holds, as if its source began `lines` lines further down
    (a code object's line table counts from its first line)."""
    consts = tuple(_moved(c, lines) if isinstance(c, CodeType) else c for c in code.co_consts)
    return code.replace(co_firstlineno=code.co_firstlineno + lines, co_consts=consts)


def _argument_checker(defn: Definition) -> Callable[[int, Any], Any]:
    numbers = [_NUMBERS[t.dtype] if t.shape == () else () for t in defn.arg_types]

    def argument(k: int, value: Any) -> Any:
        """Argument k as evaluate takes it (a Python number becomes a numpy value), or an error.
        An ndarray subclass is taken as an ndarray (np.matrix would make `*` a matrix product)."""
        if type(value) in numbers[k] and fits(value, defn.arg_types[k].dtype):  # 300 is no u8
            return np.asarray(value, defn.arg_types[k].dtype.numpy)
        try:
            if isinstance(value, Tracer):
                message = f"{defn.name}: argument {k} is a tracer; compiled code runs on numpy values (use evaluate)"
                raise ShaxTypeError(message)
            value = check_argument(f"{defn.name}: argument {k}", defn.arg_types[k], value)
        except ShaxError as error:
            raise at(error, current_source()) from None
        return np.asarray(value) if isinstance(value, np.ndarray) else value

    return argument

"""`exported(defn)`: a typed Definition as a `JaxFunction`, the Python function of JAX
values that runs each binding's export rule (`shax.rules.export`, each under its
primitive's declaration), as `evaluate`
runs its eval rules: one walk over the bindings, each operation run once.

64-bit programs: JAX's default (x64 off) turns f64 and i64 into f32 and i32, so a
function whose program has a 64-bit type runs with x64 on (`jax.enable_x64`, the
context manager, or `jax.experimental.enable_x64` in older JAX): constants, casts and
numpy arguments keep their dtypes. Under a caller's `jax.jit` the arguments' types are
fixed before the function runs, so there x64 must already be on for 64-bit arguments
(an argument of another type than declared is a ShaxTypeError saying so); `shax.jit(f,
backend="xla")` turns it on itself. 32-bit programs run in either mode.

A definition is exported once while its function lives (`exported`); a called one is
held by its callers' functions and run through `jax.jit`, so it lowers to one StableHLO
function that every call site calls (a loop's body and a cond's branches are traced
inline instead, as JAX's own are: their rules, in `shax/control/`).
"""

from __future__ import annotations

import contextlib
import weakref
from collections.abc import Sequence
from typing import Any, cast

import jax
import jax.numpy as jnp
import numpy as np

from shax.control import callees
from shax.core.errors import ShaxError, ShaxTypeError, at
from shax.core.ir import Binding, Definition, type_of
from shax.core.location import current_source
from shax.core.primitive import Arg
from shax.core.types import TensorType, dtype_of_numpy, f64, fits, i64
from shax.core.walker import for_each_binding
from shax.rules.export import export_rules, install_lowering
from shax.tracing.validation import check_types, expect_definition

WIDE = frozenset({f64, i64})  # the dtypes JAX has only with x64 on


def x64() -> contextlib.AbstractContextManager[Any]:
    """JAX's x64 mode, on within the block: JAX's own context manager, entered on each
    call of a 64-bit program (a generator around it would cost as much again)."""
    enable = getattr(jax, "enable_x64", None)
    if enable is not None:  # JAX >= 0.7: jax.enable_x64(True), a context manager
        return cast(contextlib.AbstractContextManager[Any], enable(True))
    from jax.experimental import enable_x64  # type: ignore[attr-defined]

    return cast(contextlib.AbstractContextManager[Any], enable_x64())


class JaxFunction:
    """A Definition as a function of JAX values: `fn(*args)` is the list of its outputs.
    `defn` is the typed definition it runs (`given`, as given); `jitted` is `jax.jit` of
    it, run in the caller's x64 mode, which is how a call runs its callee."""

    def __init__(self, given: Definition, defn: Definition) -> None:
        self.given, self.defn = given, defn
        self.__name__ = self.__qualname__ = defn.name
        # id(callee) -> its function, held while this one lives
        self.callees = {id(callee): exported("to_jax", callee) for b in defn.bindings for callee in b.prim.runs()}
        # whether it, or a definition it calls, has a 64-bit value
        self.wide: bool = any(type_of(v).dtype in WIDE for b in defn.bindings for v in b.vars) or any(
            c.wide for c in self.callees.values()
        )

        def apply(*args: Any) -> list[Any]:
            return self.run(args)

        apply.__name__ = apply.__qualname__ = defn.name  # the StableHLO module's name
        self.jitted = jax.jit(apply)

    def __call__(self, *args: Any) -> list[Any]:
        defn = self.defn
        if len(args) != len(defn.arg_types):
            expected = ", ".join(map(str, defn.arg_types))
            message = f"to_jax: {defn.name} takes {len(defn.arg_types)} argument(s) ({expected}), got {len(args)}"
            raise at(ShaxTypeError(message), current_source())
        if self.wide and not wide_enabled():
            with x64():
                return self.run(args, x64_was_off=True)
        return self.run(args)

    def run(self, args: Sequence[Any], x64_was_off: bool = False) -> list[Any]:
        defn = self.defn
        values = [argument(defn, k, t, a, x64_was_off) for k, (t, a) in enumerate(zip(defn.arg_types, args))]
        env: dict[int, Any] = {}  # var id -> its JAX value

        def run(binding: Binding) -> None:
            prim = binding.prim
            if isinstance(prim, Arg):
                env[binding.vars[0].id] = values[prim.index]
                return
            operands = [env[a.id] for a in binding.args]
            if prim.multi_result:  # every result, from one run of its rule
                types = tuple(type_of(v) for v in binding.vars)
                env.update(zip([v.id for v in binding.vars], export_rules[prim](prim, operands, types), strict=True))
            else:
                env[binding.vars[0].id] = export_rules[prim](prim, operands, type_of(binding.vars[0]))

        for_each_binding("to_jax", defn.bindings, run, records=False)
        return [jnp.asarray(env[v.id]) for v in defn.outputs]


def argument(defn: Definition, k: int, declared: TensorType, value: Any, x64_was_off: bool) -> Any:
    """Argument k as a JAX value of its declared type: a Python number takes the declared
    dtype (weakly typed, as in evaluate); an array or JAX value must have it."""
    number = isinstance(value, (bool, int, float)) and not isinstance(value, np.generic)  # np.float64 keeps its type
    if number and declared.shape == () and fits(value, declared.dtype):
        return jnp.asarray(value, declared.dtype.numpy)
    what = f"to_jax: argument {k} of {defn.name}"
    try:
        given = TensorType(dtype_of_numpy(np.dtype(value.dtype)), tuple(value.shape))
    except (AttributeError, TypeError, ShaxError):
        message = f"{what} must be an array of type {declared}, got {value!r:.60}"
        raise at(ShaxTypeError(message), current_source()) from None
    if given != declared:
        hint = ""
        if declared.dtype in WIDE and given.shape == declared.shape and (x64_was_off or not wide_enabled()):
            hint = " (JAX made it 32-bit: turn x64 on around jax.jit, `with jax.enable_x64(True):`)"
        raise at(ShaxTypeError(f"{what} has type {given}, but {declared} was declared{hint}"), current_source())
    return value


def wide_enabled() -> bool:
    return bool(jax.config.read("jax_enable_x64"))


# id(definition) -> its exported function, while that lives: it holds the definition
# (`given`), so the id stays the definition's (held by a user's to_jax result, a jit's
# build, or the function of a caller, which holds those of its callees).
_exported: weakref.WeakValueDictionary[int, JaxFunction] = weakref.WeakValueDictionary()


def exported(what: str, defn: Definition) -> JaxFunction:
    """The JaxFunction of `defn` (typed first if it is not), one per definition."""
    expect_definition(what, defn)
    found = _exported.get(id(defn))
    if found is None or found.given is not defn:
        typed = callees.typed(defn) if not defn.is_typed else defn
        check_types(typed, what)
        found = _exported[id(defn)] = JaxFunction(defn, typed)
    return found


install_lowering(lambda defn: exported("to_jax", defn))

"""All printing: the original's format, Haskell `show` style.

    def medium(arg0 :: f32[6],        <- the original prints ", " after each argument
               arg1 :: f32[2, 2]) =
      let x0 :: f32[6] = arg0
          x1 :: f32[2, 6] = broadcast [1] [2,6] x0
      in [x14]

Types print `f32[2, 6]`; static parameters print like Haskell's `show`: `[2,6]`,
`[(1,0),(0,0)]`, `0.0`; constants print `fromList [] [2.0]`, elided when large.
"""

from __future__ import annotations

import functools
import itertools
import math
import os
import re
import sys
from collections import Counter, deque
from collections.abc import Iterator, Mapping, Sequence, Set
from typing import TYPE_CHECKING, Any

import attrs
import numpy as np

from shax.core.ir import Binding, Definition, Var
from shax.core.types import DType, TensorType

if TYPE_CHECKING:
    from shax.core.primitive import Primitive

# Constants up to this many elements are compared by value (hash-consing, CSE) and printed.
SMALL_CONSTANT = 16


def show_float(x: Any) -> str:
    """Haskell's `show` for a float: shortest round-trip digits, fixed notation
    for 0.1 <= |x| < 10^7, else `d.ddde-2`."""
    value = np.asarray(x)
    if not np.issubdtype(value.dtype, np.floating):
        value = value.astype(np.float64)
    v = value.item() if value.dtype == np.float64 else np.float32(value)
    if np.isnan(v):
        return "NaN"
    if np.isinf(v):
        return "Infinity" if v > 0 else "-Infinity"
    sign = "-" if np.signbit(v) else ""
    if v == 0:
        return sign + "0.0"
    mantissa, exponent = np.format_float_scientific(abs(v), unique=True, trim="-").split("e")
    digits = mantissa.replace(".", "")
    e = int(exponent) + 1  # value = 0.digits * 10^e, as in Haskell's floatToDigits
    if e < 0 or e > 7:
        return f"{sign}{digits[0]}.{digits[1:] or '0'}e{e - 1}"
    if e == 0:
        return f"{sign}0.{digits}"
    whole = digits[:e].ljust(e, "0")
    return f"{sign}{whole}.{digits[e:] or '0'}"


def show_scalar(x: Any) -> str:
    if isinstance(x, DType):
        return x.name
    if isinstance(x, (bool, np.bool_)):
        return "True" if x else "False"
    if isinstance(x, (int, np.integer)):
        return str(int(x))
    return show_float(x)


def show_list(items: Any) -> str:
    """Haskell's `show` for a list: `[1,2]`, or of pairs `[(1,0),(0,0)]`."""
    return "[" + ",".join(_show_item(item) for item in items) + "]"


def _show_item(item: Any) -> str:
    if isinstance(item, tuple):
        return "(" + ",".join(show_scalar(v) for v in item) + ")"
    return show_scalar(item)


def show_param(value: Any) -> str:
    return show_list(value) if isinstance(value, tuple) else show_scalar(value)


def show_array(value: np.ndarray | np.generic) -> str:
    """`fromList [2,2] [1.0,2.0,3.0,4.0]`, as the original shows arrays."""
    value = np.asarray(value)
    shape = show_list(value.shape)
    if value.size > SMALL_CONSTANT:
        return f"fromList {shape} [...]"
    return f"fromList {shape} [" + ",".join(show_scalar(v) for v in value.reshape(-1)) + "]"


def show_primitive(prim: Primitive, names: Mapping[int, str] | None = None) -> str:
    """The operation with its static parameters, e.g. `broadcast [1] [2,6]`: as the
    primitive shows itself (`Primitive.show`: a call names its callee as `names`, by the
    callee's identity, says), else its name then its fields."""
    shown = prim.show(names or {})
    if shown is not None:
        return shown
    params = [show_static(getattr(prim, field.name), names) for field in attrs.fields(type(prim)) if field.init]
    return " ".join([prim.name, *params])


def show_static(value: Any, names: Mapping[int, str] | None) -> str:
    """A static parameter; a definition shows as its printed name (it is printed before)."""
    if isinstance(value, Definition):
        return (names or {}).get(id(value), value.name)
    if isinstance(value, (str, TensorType)):
        return str(value)
    if isinstance(value, tuple) and any(isinstance(v, (Definition, TensorType)) for v in value):
        return "[" + ",".join(show_static(v, names) for v in value) + "]"
    return show_param(value)


def show_var(var: Var, var_names: Mapping[int, str] | None = None) -> str:
    """`x5 :: f32[2]`, or the var's name in `var_names` instead of `x5`."""
    name = var_names.get(var.id, f"x{var.id}") if var_names else f"x{var.id}"
    return name if var.type is None else f"{name} :: {var.type}"


def show_binding(
    binding: Binding, names: dict[int, str] | None = None, var_names: Mapping[int, str] | None = None
) -> str:
    """`x5 = sin x4`, or for an operation with several results `(x5, x6) = call f x4`
    (typed: `(x5 :: f32[8], x6 :: f32[]) = ...`); `names` names callees (by identity),
    `var_names` vars (by id)."""
    shown = (lambda a: var_names.get(a.id, f"x{a.id}")) if var_names else (lambda a: f"x{a.id}")
    operation = [show_primitive(binding.prim, names), *map(shown, binding.args)]
    return f"{show_defined(binding, var_names)} = {' '.join(operation)}"


def show_defined(binding: Binding, var_names: Mapping[int, str] | None = None) -> str:
    """What `binding` defines: `x5 :: f32[2]`, or `(x5 :: f32[2], x6 :: f32[])` for several."""
    if len(binding.vars) == 1:
        return show_var(binding.vars[0], var_names)
    return "(" + ", ".join(show_var(v, var_names) for v in binding.vars) + ")"


def show_definition(
    defn: Definition,
    provenance: bool = False,
    var_names: Mapping[int, str] | None = None,
    saved_names: Mapping[int, str] | None = None,
) -> str:
    """`defn` in the original's format, after every definition it calls (each once,
    callees before their callers, named as `shown_names` says). With `provenance`, each
    binding is followed by where it came from: `-- user.py:12, linearize rule of sin`;
    `var_names` (var id -> name) names `defn`'s vars instead of `xN`, and `saved_names`
    the primal values its residuals save (`residual: saves hidden of f`)."""
    callees = called_definitions(defn)
    names = shown_names(defn, callees)
    shown = [_show_one(d, names[id(d)], names, provenance) for d in callees]
    return "\n".join([*shown, _show_one(defn, names[id(defn)], names, provenance, var_names, saved_names)])


_SAVES = re.compile(r"(residual: saves )x(\d+)( of )")


def show_provenance(binding: Binding, saved_names: Mapping[int, str] | None = None) -> str:
    """Where `binding` came from: the user's line, and what emitted it (`traced`: the
    user's code itself; `argument`: the definition's own); a residual names the value it
    saves by `saved_names` (primal var id -> name) where it has one."""
    origin = binding.origin or ("argument" if binding.prim.structural else "traced")
    if saved_names:
        origin = _SAVES.sub(
            lambda m: m.group(1) + saved_names.get(int(m.group(2)), f"x{m.group(2)}") + m.group(3), origin
        )
    return ", ".join(p for p in (_relative(binding.source), origin) if p)


def _relative(source: str | None) -> str | None:
    """`file:line` with the file relative to the working directory, when inside it; a
    notebook cell's line as `In[3]:2`."""
    if source is None:
        return source
    cell = _notebook_cell(source)
    if cell is not None or not os.path.isabs(source):
        return cell or source
    return _relative_to(source, os.getcwd())


@functools.lru_cache(maxsize=1024)
def _relative_to(source: str, directory: str) -> str:
    """`_relative` in `directory`: a page shows hundreds of thousands of bindings from a few
    lines, and `os.path.relpath` is most of the time it takes to write one."""
    relative = os.path.relpath(source, directory)
    return source if relative.startswith("..") else relative


def _notebook_cell(source: str) -> str | None:
    """`In[3]:2` for line 2 of the cell run third, when IPython runs: it compiles each cell
    into a temporary file of its own, which it maps to the cell's execution count."""
    ipython = sys.modules.get("IPython")
    shell = ipython.get_ipython() if ipython is not None and hasattr(ipython, "get_ipython") else None
    cells = getattr(getattr(shell, "compile", None), "_filename_map", None)
    file, _, line = source.rpartition(":")
    if not isinstance(cells, dict) or file not in cells:
        return None
    return f"In[{cells[file]}]:{line}"


def shown_names(defn: Definition, callees: list[Definition]) -> dict[int, str]:
    """id(definition) -> its printed name, for `defn` and its `callees`: two different
    callees of one name are told apart by a suffix (`linear`, `linear_1`)."""
    names: dict[int, str] = {id(defn): defn.name}
    taken = {defn.name}
    for callee in callees:
        name, n = callee.name, 0
        while name in taken:
            n += 1
            name = f"{callee.name}_{n}"
        taken.add(name)
        names[id(callee)] = name
    return names


def called_definitions(defn: Definition) -> list[Definition]:
    """The definitions `defn` calls, directly or not, each once, every one after those it
    calls (an iterative post-order walk: linear in the bindings of them all)."""
    order: list[Definition] = []
    seen = {id(defn)}
    stack = [(defn, _uses(defn))]
    while stack:
        _, uses = stack[-1]
        for used in uses:
            if id(used) not in seen:
                seen.add(id(used))
                stack.append((used, _uses(used)))
                break
        else:
            done, _ = stack.pop()
            if done is not defn:
                order.append(done)
    return order


def _uses(defn: Definition) -> Iterator[Definition]:
    return (used for b in defn.bindings for used in b.prim.subdefinitions())


def _show_one(
    defn: Definition,
    name: str,
    names: dict[int, str],
    provenance: bool = False,
    var_names: Mapping[int, str] | None = None,
    saved_names: Mapping[int, str] | None = None,
) -> str:
    bindings = [show_binding(b, names, var_names) for b in defn.bindings]
    if provenance:
        width = max(map(len, bindings), default=0)
        bindings = [
            f"{text.ljust(width)}  -- {show_provenance(b, saved_names)}" for text, b in zip(bindings, defn.bindings)
        ]
    return _laid_out(defn, name, bindings, [show_var(v, var_names) for v in defn.outputs])


def _laid_out(defn: Definition, name: str, bindings: list[str], outputs: list[str]) -> str:
    """`def name(args) = let bindings in [outputs]`, aligned as the original prints it."""
    header = f"def {name}("
    indent = " " * len(header)
    args = [f"arg{k} :: {t}" for k, t in enumerate(defn.arg_types)]
    lines = [header + ", \n".join(args).replace("\n", "\n" + indent) + ") ="]
    lines.extend(("  let " if k == 0 else "      ") + text for k, text in enumerate(bindings))
    lines.append("  in [" + ", ".join(outputs) + "]")
    return "\n".join(lines)


def show_dup_drop(defn: Definition, linear: Set[int], unread: Sequence[int] = ()) -> str:
    """`defn`, a linear program whose linear values are the vars `linear` (by id), in the
    notation of "You Only Linearize Once": each linear value is used exactly once, so one
    read n times is first copied by n − 1 `dup`s, `(x31, x32) = dup x8`, and one never
    read is consumed, `() = drop x5`, as are the linear arguments at `unread` (which no
    binding reads in), `() = drop arg1`. Values of residuals alone are unrestricted (the
    paper's non-linear variables), and the definitions it calls print as they are."""
    uses = Counter(a.id for b in defn.bindings for a in b.args if a.id in linear)
    uses.update(v.id for v in defn.outputs if v.id in linear)
    fresh = itertools.count(max((v.id for b in defn.bindings for v in b.vars), default=-1) + 1)
    copies: dict[int, deque[str]] = {}  # var id of a linear value read twice or more -> its unread copies

    def read(var: Var) -> str:
        return copies[var.id].popleft() if var.id in copies else f"x{var.id}"

    callees = called_definitions(defn)
    names = shown_names(defn, callees)
    lines = [f"() = drop arg{k}" for k in unread]
    for b in defn.bindings:
        lines.append(f"{show_defined(b)} = {' '.join([show_primitive(b.prim, names), *map(read, b.args)])}")
        for var in b.vars:
            count = uses[var.id] if var.id in linear else 1
            if count == 0:
                lines.append(f"() = drop x{var.id}")
            copied, typed = f"x{var.id}", "" if var.type is None else f" :: {var.type}"
            for _ in range(count - 1):  # x -> (a, b), b -> (c, d), ...: one copy per read
                first, second = next(fresh), next(fresh)
                lines.append(f"(x{first}{typed}, x{second}{typed}) = dup {copied}")
                copies.setdefault(var.id, deque()).append(f"x{first}")
                copied = f"x{second}"
            if count > 1:
                copies[var.id].append(copied)
    shown = [_show_one(d, names[id(d)], names) for d in callees]
    return "\n".join([*shown, _laid_out(defn, names[id(defn)], lines, [read(v) for v in defn.outputs])])


def show_values(values: Any) -> str:
    """A list of arrays as the original prints them:

        [┌───────────────────┐
         │-86.82799 156.29037│
         │ 86.82799 156.29037│
         └───────────────────┘]

    each array in a box, the list in brackets."""
    return "[" + ",\n ".join("\n ".join(_box(np.asarray(v))) for v in values) + "]"


def _box(value: np.ndarray) -> list[str]:
    """The lines of one array's box: a row per row of a matrix (a vector or scalar is one
    row; higher ranks stack their matrices, a blank line between two), elements
    right-aligned to a common width and separated by one space."""
    # Sizes spelled out, not -1, which numpy cannot infer for an empty array.
    if value.ndim < 2:
        matrices = [value.reshape(1, value.size)]
    else:
        matrices = list(value.reshape(math.prod(value.shape[:-2]), *value.shape[-2:]))
    shown = [[[show_scalar(v) for v in row] for row in matrix] for matrix in matrices]
    width = max((len(s) for matrix in shown for row in matrix for s in row), default=0)
    rows: list[str] = []
    for k, matrix in enumerate(shown):
        if k:
            rows.append("")
        rows.extend(" ".join(s.rjust(width) for s in row) for row in matrix)
    inner = max(map(len, rows), default=0)
    return ["┌" + "─" * inner + "┐", *("│" + row.ljust(inner) + "│" for row in rows), "└" + "─" * inner + "┘"]

"""`generate`: a typed Definition -> the source of one Python function that calls numpy
directly (with the parts it calls, see `shax.codegen.chunks`), and the globals it runs in.

Contract:
- Each binding makes the numpy calls its eval rule makes (the codegen rules, registered
  under each primitive, say how; `shax.rules.codegen` is their vocabulary), and every value
  reaches a layout-sensitive call (matmul, sums) laid out as in evaluate; so results
  equal `evaluate`'s bit for bit, as numpy arrays or scalars alike.
- Each argument is tested in one line: an array of the declared dtype and shape (a
  numpy scalar, for a scalar) passes; anything else goes through the given `argument`
  (a global of the function), which returns it as evaluate takes it or raises. Without
  `argument` (None), no test: a function only generated code calls, with values of the
  declared types (a loop's body, called once per iteration).
- Constants, and values rules need (a pad's fill), are globals (`c3`) bound once.
- Bindings no output needs are skipped. A value is deleted once no later binding or
  output needs its memory. An elementwise ufunc writes its result into a dead operand
  (`out=`) that the function owns (not an argument, constant or broadcast, nor a view
  of one), whose memory nothing later reads, that has the result's type and is
  C-contiguous, as the result would be. A broadcast used only by elementwise ufuncs is left
  for numpy to stretch (no np.broadcast_to): beside an operand of the full shape, or told
  the shape by `out=np.empty(...)` where numpy would lay the result out C-contiguously.
- With `fresh_outputs` (the transforms' programs), an output that is an argument, or may
  view one's memory (a reshape, a transpose), is returned as a copy (`return [x0.copy()]`),
  as JAX returns new arrays: writing into a result never changes an argument. No other
  output is copied, nor any without it (a loop's body passes its carry on as it is).
- Linear time in the number of bindings.
"""

from __future__ import annotations

import builtins
import keyword
import re
from collections.abc import Callable
from typing import Any

import attrs
import numpy as np

from shax.codegen.chunks import Line, function_sources
from shax.core.ir import Binding, Definition, Var, type_of
from shax.core.primitive import Arg
from shax.core.printing import show_array
from shax.core.types import DTYPES, TensorType, bool_
from shax.core.walker import for_each_binding
from shax.primitives import Broadcast
from shax.rules.codegen import NAMESPACE, Elementwise, Memory, Operand, Site, codegen_rules, dtype_source, shape_source

# `x0.dtype is f32` tests against numpy's dtype singletons.
_DTYPE_GLOBALS = {d: "bool_" if d == bool_ else d.name for d in DTYPES}
_GLOBAL_NAME = re.compile(r"c\d+(_\d+)?")
EXTERNAL = -1  # the memory of arguments and constants: never written, never deleted


def generate(
    defn: Definition, argument: Callable[[int, Any], Any] | None, fresh_outputs: bool = False
) -> tuple[list[str], list[str], dict[str, Any], str]:
    """(header, functions, globals, the function's name) for the typed `defn`:
    `argument(k, value)` checks argument k when its one-line test fails (None: no tests). The header's
    comment lines, then the functions, joined by newlines, are the source."""
    return _Generator(defn, argument, fresh_outputs).generate()


class _Generator:
    """The source of one definition. State, by var id: `end` the last binding that reads the
    var's name (len(bindings) for outputs); `expr` its name in the source; `memory` the id
    of its memory block. By memory block: `owned` (may be written), `block_end` (the last
    binding that reads it through any name), `names` (local names to delete when it dies)."""

    def __init__(self, defn: Definition, argument: Callable[[int, Any], Any] | None, fresh_outputs: bool) -> None:
        self.defn = defn
        self.fresh_outputs = fresh_outputs
        self.bindings = defn.bindings
        self.namespace: dict[str, Any] = {**NAMESPACE, **{n: np.dtype(d.numpy) for d, n in _DTYPE_GLOBALS.items()}}
        self.checked = argument is not None
        if argument is not None:
            self.namespace["argument"] = argument
        self.constants: list[str] = []  # header comments: `# c3 = fromList [] [1.0]`
        self.params: list[str] = []
        self.types = {v.id: type_of(v) for b in defn.bindings for v in b.vars}  # var id -> its type
        self.end: dict[int, int] = {}
        self.live: list[bool] = []
        self.consumers: dict[int, list[int]] = {}
        self.expr: dict[int, str] = {}
        self.operands: dict[int, Operand] = {}  # var id -> its name, type and layout, once bound
        self.contiguous: dict[int, bool] = {}
        self.writable: dict[int, bool] = {}
        # implicit broadcast -> (its source as evaluate makes it, the name that source reads)
        self.stretched: dict[int, tuple[str, str]] = {}
        self.memory: dict[int, int] = {}
        self.of_argument: set[int] = set()  # var ids whose value is, or may view, an argument's memory
        self.owned: list[bool] = []
        self.block_end: list[int] = []
        self.names: list[list[str]] = []
        self.dying: dict[int, list[int]] = {}  # binding index -> blocks whose end it may be
        # The next number for what a binding of no result names (its statement, its constants).
        self.spare = max(self.types, default=-1) + 1

    def generate(self) -> tuple[list[str], list[str], dict[str, Any], str]:
        self._liveness()
        implicit = self._implicit_broadcasts()
        params = self._params()
        live = [i for i in range(len(self.bindings)) if self.live[i]]
        positions = iter(live)  # the walk's binding's index: the walk takes the live ones in order
        lines: list[Line] = []

        def emit(binding: Binding) -> None:
            i = next(positions)
            if binding.prim.multi_result:
                lines.extend(self._emit_results(i))
            else:
                line = self._emit(i, implicit)
                if line is not None:
                    lines.append(line)
            for var in binding.vars:  # as the bindings after it read them, whatever their uses
                v = var.id
                if v in self.expr:
                    self.operands[v] = Operand(self.expr[v], self.types[v], self.contiguous[v])

        for_each_binding("codegen", [self.bindings[i] for i in live], emit, records=False)
        name = self._function_name()
        checks = [self._check(k, p, t) for k, (p, t) in enumerate(zip(params, self.defn.arg_types)) if self.checked]
        outputs = [self.expr[v.id] for v in self.defn.outputs]
        copied = {self.expr[v.id] for v in self.defn.outputs if self.fresh_outputs and v.id in self.of_argument}
        functions = function_sources(name, params, checks, lines, outputs, copied)
        return self.constants, functions, self.namespace, name

    def _liveness(self) -> None:
        """Backwards: which bindings an output needs, and where each var is last read."""
        n = len(self.bindings)
        self.end = {v.id: n for v in self.defn.outputs}
        self.live = [False] * n
        for i in range(n - 1, -1, -1):
            binding = self.bindings[i]
            read = any(v.id in self.end for v in binding.vars)
            if read or binding.prim.has_effect():  # an effect runs, unread
                for v in binding.vars:
                    self.end.setdefault(v.id, i)
                self.live[i] = True
                for a in binding.args:
                    self.end.setdefault(a.id, i)
                    self.consumers.setdefault(a.id, []).append(i)

    def _implicit_broadcasts(self) -> set[int]:
        """Broadcasts (to rank >= 1) that no output returns and that every consumer stretches
        itself: an elementwise ufunc (given `out=` if need be), or np.where beside an
        operand, not a broadcast, of the result's shape."""
        n = len(self.bindings)
        broadcasts = {
            b.vars[0].id for i, b in enumerate(self.bindings) if self.live[i] and isinstance(b.prim, Broadcast)
        }

        def stretches(j: int, v: int) -> bool:
            binding = self.bindings[j]
            rule = codegen_rules[binding.prim]
            if not isinstance(rule, Elementwise):
                return False
            shape = self.types[binding.vars[0].id].shape
            return rule.ufunc or any(a.id not in broadcasts and self.types[a.id].shape == shape for a in binding.args)

        return {
            v
            for v in broadcasts
            if self.end[v] < n and self.types[v].rank > 0 and all(stretches(j, v) for j in self.consumers[v])
        }

    def _params(self) -> list[str]:
        """Argument k is named after the var its first `arg{k}` binding binds, else `a{k}`."""
        params = [f"a{k}" for k in range(len(self.defn.arg_types))]
        named = set()
        for i, binding in enumerate(self.bindings):
            if self.live[i] and isinstance(binding.prim, Arg) and binding.prim.index not in named:
                named.add(binding.prim.index)
                params[binding.prim.index] = f"x{binding.vars[0].id}"
        self.params = params
        return params

    def _check(self, k: int, param: str, declared: TensorType) -> str:
        if declared.rank == 0:
            test = f"type({param}) is not {dtype_source(declared.dtype)}"
        else:
            shape = shape_source(declared.shape)
            dtype = _DTYPE_GLOBALS[declared.dtype]
            test = f"type({param}) is not ndarray or {param}.dtype is not {dtype} or {param}.shape != {shape}"
        return f"if {test}:\n        {param} = argument({k}, {param})"

    def _block(self, owned: bool, end: int) -> int:
        block = len(self.owned)
        self.owned.append(owned)
        self.block_end.append(end)
        self.names.append([])
        self.dying.setdefault(end, []).append(block)
        return block

    def _extend(self, block: int, end: int) -> None:
        if block != EXTERNAL and end > self.block_end[block]:
            self.block_end[block] = end
            self.dying.setdefault(end, []).append(block)

    def _emit(self, i: int, implicit: set[int]) -> Line | None:
        binding = self.bindings[i]
        v = binding.vars[0].id
        if isinstance(binding.prim, Arg):
            self.expr[v], self.memory[v] = self.params[binding.prim.index], EXTERNAL
            self.of_argument.add(v)
            self.contiguous[v] = self.writable[v] = False
            return None
        operands = [self.operands[a.id] for a in binding.args]
        site = Site(self.types[v], v, implicit=v in implicit)
        rule = codegen_rules[binding.prim]
        reads: list[str] = []  # names the code reads besides its operands'
        if v in implicit:  # as evaluate makes it, for a consumer that cannot stretch it
            self.stretched[v] = (rule(binding.prim, Site(self.types[v], v), operands), operands[0].expr)
        if isinstance(rule, Elementwise) and rule.ufunc:
            operands = self._stretch(binding, operands, site, implicit, reads)
            site.reusable = self._reusable(i, binding, implicit)
        code = rule(binding.prim, site, operands)
        for name, value in site.constants:
            self.namespace[name] = value
            self.constants.append(f"# {name} = {_show_constant(value)}")
        alias = code.isidentifier()  # a name already bound: no statement
        self._record_memory(i, binding, site, operands, alias)
        if alias:
            self.expr[v] = code
            # the memory of the value it names, so that an alias of it keeps that value alive too
            self.memory[v] = next((self.memory[a.id] for a in binding.args if self.expr[a.id] == code), EXTERNAL)
            return self._line(i, None, code, binding, reads)
        self.expr[v] = name = f"x{v}"
        if self.types[v].shape and self.memory[v] != EXTERNAL:
            self.names[self.memory[v]].append(name)
        return self._line(i, name, code, binding, reads)

    def _emit_results(self, i: int) -> list[Line]:
        """An operation of several results: its statement `g5 = ...` binding the list of
        them, then `x5 = g5[0]` for each result read later (never overwritten: a result
        may be an operand, or share its memory), the last deleting `g5`."""
        binding = self.bindings[i]
        prim = binding.prim
        if binding.vars:
            first = binding.vars[0].id
        else:
            first, self.spare = self.spare, self.spare + 1
        name = f"g{first}"
        operands = [self.operands[a.id] for a in binding.args]
        site = Site(self.types[first] if binding.vars else TensorType(bool_, ()), first)
        code = codegen_rules[prim](prim, site, operands)
        for constant, value in site.constants:
            self.namespace[constant] = value
            self.constants.append(f"# {constant} = {_show_constant(value)}")
        reads = tuple(dict.fromkeys(o.expr for o in operands if o.expr not in self.namespace))
        lines = [Line(name, code, reads, ())]
        for k, var in enumerate(binding.vars):
            v = var.id
            if self.end[v] == i:  # no later binding reads it
                continue
            if site.memory is Memory.FRESH:  # new arrays (a call's), not owned: two results may be one array
                self.memory[v], self.contiguous[v], self.writable[v] = self._block(False, self.end[v]), False, False
            else:
                self._record_memory(i, binding, Site(self.types[v], v), operands, alias=False, v=v)
            self.expr[v] = f"x{v}"
            if self.types[v].rank > 0:
                self.names[self.memory[v]].append(f"x{v}")
            line = self._line(i, f"x{v}", f"{name}[{k}]", binding, [name], operands=False)
            assert line is not None, "a line that defines a name"
            lines.append(line)
        lines[-1] = attrs.evolve(lines[-1], dels=(*lines[-1].dels, name))
        return lines

    def _stretch(
        self, binding: Binding, operands: list[Operand], site: Site, implicit: set[int], reads: list[str]
    ) -> list[Operand]:
        """A ufunc with unstretched broadcasts among its operands, none other of the result's
        shape, is told that shape (`out=np.empty(...)`), where numpy would lay its result out
        C-contiguously; elsewhere it gets the broadcasts as evaluate makes them."""
        args, shape = binding.args, self.types[binding.vars[0].id].shape
        for a in args:  # none of them is a broadcast left to numpy: the most common case
            if a.id in implicit:
                break
        else:
            return operands
        if any(a.id not in implicit and self.types[a.id].shape == shape for a in args):
            return operands
        if self._c_ordered(args):
            site.allocate = True
            return operands
        stretched = []
        for a, operand in zip(args, operands):
            if a.id in implicit:
                code, source = self.stretched[a.id]
                operand = attrs.evolve(operand, expr=code)
                reads.append(source)
            stretched.append(operand)
        return stretched

    def _reusable(self, i: int, binding: Binding, implicit: set[int]) -> str | None:
        """An operand the result may overwrite: see the module's contract."""
        t = self.types[binding.vars[0].id]
        if not t.shape or not self._c_ordered(binding.args):
            return None
        for a in binding.args:
            block = self.memory[a.id]
            if (
                self.contiguous[a.id]
                and self.writable[a.id]
                and block != EXTERNAL
                and self.owned[block]
                and self.block_end[block] <= i
                and self.types[a.id] == t
                and a.id not in implicit
            ):
                return self.expr[a.id]
        return None

    def _c_ordered(self, args: tuple[Var, ...]) -> bool:
        """Whether numpy lays out what it computes from `args` C-contiguously: their strides
        other than 0 are in C order (see `Operand.contiguous`)."""
        for a in args:
            if not self.contiguous[a.id] and len(self.types[a.id].shape) > 1:
                return False
        return True

    def _record_memory(
        self, i: int, binding: Binding, site: Site, operands: list[Operand], alias: bool, v: int | None = None
    ) -> None:
        """The memory of `binding`'s result (its result `v`, for one of several)."""
        v = binding.vars[0].id if v is None else v
        end = self.end[v]
        if site.reused:
            reused = next(a.id for a in binding.args if self.expr[a.id] == site.reusable)
            self.memory[v], self.contiguous[v], self.writable[v] = self.memory[reused], True, True
            self._extend(self.memory[v], end)
        elif site.memory is Memory.FRESH:
            self.memory[v], self.contiguous[v], self.writable[v] = self._block(True, end), site.contiguous, True
        elif site.memory is Memory.VIEW and site.viewed is not None:  # set together, by Site.view
            viewed = binding.args[operands.index(site.viewed)].id
            self.memory[v], self.contiguous[v] = self.memory[viewed], site.contiguous
            if viewed in self.of_argument:
                self.of_argument.add(v)
            self.writable[v] = site.writable and self.writable[viewed]
            self._extend(self.memory[v], end)
        else:  # may share memory with any operand: keep them all alive while it lives
            for a in binding.args:
                self._extend(self.memory[a.id], end)
                if a.id in self.of_argument:
                    self.of_argument.add(v)
            self.memory[v] = EXTERNAL if alias else self._block(False, end)
            self.contiguous[v] = self.writable[v] = False

    def _line(
        self, i: int, defines: str | None, code: str, binding: Binding, extra: list[str], operands: bool = True
    ) -> Line | None:
        """The line of `binding` (`defines = code`), reading its operands (unless not
        `operands`: a result `x5 = g5[0]` reads only g5) and `extra`."""
        dels: list[str] = []
        blocks = self.dying.pop(i, None)
        if blocks is not None:
            for block in blocks:
                if self.block_end[block] == i:
                    dels += self.names[block]
                    self.names[block] = []
        if defines is None:
            return Line("", code, (), tuple(dels)) if dels else None
        expr, namespace = self.expr, self.namespace
        reads: list[str] = []
        for n in [*[expr[a.id] for a in binding.args if operands], *extra]:
            if n not in namespace and n not in reads:
                reads.append(n)
        return Line(defines, code, tuple(reads), tuple(dels))

    def _function_name(self) -> str:
        name = re.sub(r"\W", "_", self.defn.name) or "_"
        if name[0].isdigit() or keyword.iskeyword(name):
            name = "_" + name
        while name in self.namespace or hasattr(builtins, name) or _GLOBAL_NAME.fullmatch(name):
            name += "_"
        return name


def _show_constant(value: Any) -> str:
    """A global's header comment: an array as the printer shows it, a function by its name."""
    if hasattr(value, "dtype"):
        return show_array(value)
    if callable(value):
        return f"<function {getattr(value, '__qualname__', type(value).__name__)}>"
    return repr(value)

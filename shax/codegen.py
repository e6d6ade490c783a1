"""`compile_definition`: a Definition -> the source of one Python function that calls
numpy directly, compiled once.

    compiled = compile_definition(defn)
    compiled(*args)          # what shax.evaluate(defn, *args) gives: a list, one entry per output
    print(compiled.source)   # def medium(x0, x8): ... x2 = np.sin(x1) ... return [x14]

Contract:
- Results equal `evaluate`'s bit for bit, as numpy arrays or scalars alike: each binding
  makes the numpy calls its eval rule makes (the codegen rules, registered under each
  primitive, say how; `shax.rules.codegen` is their vocabulary), and every value reaches
  a layout-sensitive call (matmul, sums) laid out as in evaluate.
- Arguments are checked as `evaluate` checks them (a `ShaxTypeError`), cheaply: an array
  of the declared dtype and shape (a numpy scalar, for a scalar) passes one line of
  identity tests; anything else goes through `check_argument` (Python numbers become
  numpy values there, as in evaluate).
- Constants, and values rules need (a pad's fill), are globals (`c3`) bound once.
- Bindings no output needs are skipped. A value is deleted once no later binding or
  output needs its memory. An elementwise ufunc writes its result into a dead operand
  (`out=`) that the function owns (not an argument, constant or broadcast, nor a view
  of one), whose memory nothing later reads, that has the result's type and is
  C-contiguous, as the result would be. A broadcast used only by elementwise ufuncs is left
  for numpy to stretch (no np.broadcast_to): beside an operand of the full shape, or told
  the shape by `out=np.empty(...)` where numpy would lay the result out C-contiguously.
- Linear time in the number of bindings. CPython compiles one huge function
  superlinearly, so beyond `CHUNK` statements the body is split into functions that
  pass the values they share in a dict.
"""

from __future__ import annotations

import builtins
import itertools
import keyword
import linecache
import os
import re
import weakref
from collections.abc import Callable, Sequence
from typing import Any

import attrs
import numpy as np

from shax.errors import ShaxError, ShaxTypeError, at
from shax.evaluate import check_argument
from shax.gcpause import collector_paused
from shax.ir import Binding, Definition
from shax.location import current_source
from shax.primitive import Arg
from shax.primitives import Broadcast
from shax.printing import show_array
from shax.rules.codegen import NAMESPACE, Elementwise, Memory, Operand, Site, codegen_rules, dtype_source, shape_source
from shax.stages import infer_types
from shax.tracer import Tracer
from shax.types import DTYPES, TensorType, bool_, f32, f64, i32
from shax.validation import check_types

CHUNK = 2000  # statements per generated function

# Generated code is named as a file in this package, so that errors raised while it checks
# its arguments point at the user's line that called it (see shax.location).
_PACKAGE = os.path.dirname(os.path.abspath(__file__))
_serial = itertools.count()
# `x0.dtype is f32` tests against numpy's dtype singletons.
_DTYPE_GLOBALS = {d: "bool_" if d == bool_ else d.name for d in DTYPES}
_GLOBAL_NAME = re.compile(r"c\d+(_\d+)?")
EXTERNAL = -1  # the memory of arguments and constants: never written, never deleted
# The Python numbers that stand for a scalar of each dtype (evaluate's `check_argument`).
_NUMBERS = {f32: (float, int), f64: (float, int), i32: (int,), bool_: (bool,)}


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


def compile_definition(defn: Definition) -> Compiled:
    """`defn` (typed, or typed here) as a compiled Python function calling numpy."""
    defn = check_types(defn) if defn.is_typed else infer_types(defn)
    with collector_paused():
        source, namespace, name = _Generator(defn).generate()
        filename = os.path.join(_PACKAGE, f"<codegen {name} #{next(_serial)}>")
        linecache.cache[filename] = (len(source), None, source.splitlines(keepends=True), filename)
        exec(compile(source, filename, "exec"), namespace)
    compiled = Compiled(defn, source, namespace[name])
    weakref.finalize(compiled, linecache.cache.pop, filename, None)  # tracebacks show its lines while it lives
    return compiled


def _argument_checker(defn: Definition) -> Callable[[int, Any], Any]:
    numbers = [_NUMBERS[t.dtype] if t.shape == () else () for t in defn.arg_types]

    def argument(k: int, value: Any) -> Any:
        """Argument k as evaluate takes it (a Python number becomes a numpy value), or an error.
        An ndarray subclass is taken as an ndarray (np.matrix would make `*` a matrix product)."""
        if type(value) in numbers[k]:
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


@attrs.frozen
class _Line:
    """One binding's statement `defines = code` (none for an alias), which reads the
    local names `reads`, then `del dels`."""

    defines: str
    code: str
    reads: tuple[str, ...]
    dels: tuple[str, ...]


class _Generator:
    """The source of one definition. State, by var id: `end` the last binding that reads the
    var's name (len(bindings) for outputs); `expr` its name in the source; `memory` the id
    of its memory block. By memory block: `owned` (may be written), `block_end` (the last
    binding that reads it through any name), `names` (local names to delete when it dies)."""

    def __init__(self, defn: Definition) -> None:
        self.defn = defn
        self.bindings = defn.bindings
        self.namespace: dict[str, Any] = {**NAMESPACE, **{n: np.dtype(d.numpy) for d, n in _DTYPE_GLOBALS.items()}}
        self.namespace["argument"] = _argument_checker(defn)
        self.constants: list[str] = []  # header comments: `# c3 = fromList [] [1.0]`
        self.params: list[str] = []
        self.types = {b.var.id: b.var.type for b in defn.bindings}
        self.end: dict[int, int] = {}
        self.live: list[bool] = []
        self.consumers: dict[int, list[int]] = {}
        self.expr: dict[int, str] = {}
        self.contiguous: dict[int, bool] = {}
        self.writable: dict[int, bool] = {}
        # implicit broadcast -> (its source as evaluate makes it, the name that source reads)
        self.stretched: dict[int, tuple[str, str]] = {}
        self.memory: dict[int, int] = {}
        self.owned: list[bool] = []
        self.block_end: list[int] = []
        self.names: list[list[str]] = []
        self.dying: dict[int, list[int]] = {}  # binding index -> blocks whose end it may be

    def generate(self) -> tuple[str, dict[str, Any], str]:
        self._liveness()
        implicit = self._implicit_broadcasts()
        params = self._params()
        emitted = (self._emit(i, implicit) for i in range(len(self.bindings)) if self.live[i])
        lines = [line for line in emitted if line is not None]
        name = self._function_name()
        checks = [self._check(k, p, t) for k, (p, t) in enumerate(zip(params, self.defn.arg_types))]
        outputs = [self.expr[v.id] for v in self.defn.outputs]
        if len(lines) <= CHUNK:
            body = checks + [text for line in lines for text in _texts(line)] + [f"return [{', '.join(outputs)}]"]
            functions = [_function(name, params, body)]
        else:
            functions = _chunked(name, params, checks, lines, outputs)
        source = "\n".join([*self.constants, *functions]) + "\n"
        return source, self.namespace, name

    def _liveness(self) -> None:
        """Backwards: which bindings an output needs, and where each var is last read."""
        n = len(self.bindings)
        self.end = {v.id: n for v in self.defn.outputs}
        self.live = [False] * n
        for i in range(n - 1, -1, -1):
            binding = self.bindings[i]
            if binding.var.id in self.end:
                self.live[i] = True
                for a in binding.args:
                    self.end.setdefault(a.id, i)
                    self.consumers.setdefault(a.id, []).append(i)

    def _implicit_broadcasts(self) -> set[int]:
        """Broadcasts (to rank >= 1) that no output returns and that every consumer stretches
        itself: an elementwise ufunc (given `out=` if need be), or np.where beside an
        operand, not a broadcast, of the result's shape."""
        n = len(self.bindings)
        broadcasts = {b.var.id for i, b in enumerate(self.bindings) if self.live[i] and isinstance(b.prim, Broadcast)}

        def stretches(j: int, v: int) -> bool:
            binding = self.bindings[j]
            rule = codegen_rules[binding.prim]
            if not isinstance(rule, Elementwise):
                return False
            shape = binding.var.type.shape
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
                params[binding.prim.index] = f"x{binding.var.id}"
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
        self.owned.append(owned)
        self.block_end.append(-1)
        self.names.append([])
        block = len(self.owned) - 1
        self._extend(block, end)
        return block

    def _extend(self, block: int, end: int) -> None:
        if block != EXTERNAL and end > self.block_end[block]:
            self.block_end[block] = end
            self.dying.setdefault(end, []).append(block)

    def _emit(self, i: int, implicit: set[int]) -> _Line | None:
        binding = self.bindings[i]
        v = binding.var.id
        if isinstance(binding.prim, Arg):
            self.expr[v], self.memory[v] = self.params[binding.prim.index], EXTERNAL
            self.contiguous[v] = self.writable[v] = False
            return None
        operands = [Operand(self.expr[a.id], self.types[a.id], self.contiguous[a.id]) for a in binding.args]
        site = Site(binding.var.type, v, implicit=v in implicit)
        rule = codegen_rules[binding.prim]
        reads: list[str] = []  # names the code reads besides its operands'
        if v in implicit:  # as evaluate makes it, for a consumer that cannot stretch it
            self.stretched[v] = (rule(binding.prim, Site(binding.var.type, v), operands), operands[0].expr)
        if isinstance(rule, Elementwise) and rule.ufunc:
            operands = self._stretch(binding, operands, site, implicit, reads)
            site.reusable = self._reusable(i, binding, implicit)
        code = rule(binding.prim, site, operands)
        for name, value in site.constants:
            self.namespace[name] = value
            self.constants.append(f"# {name} = {show_array(value) if hasattr(value, 'dtype') else repr(value)}")
        self._record_memory(i, binding, site, operands, alias=code.isidentifier())
        if code.isidentifier():  # a name already bound: no statement
            self.expr[v] = code
            return self._line(i, None, code, binding, reads)
        self.expr[v] = name = f"x{v}"
        if binding.var.type.rank > 0 and self.memory[v] != EXTERNAL:
            self.names[self.memory[v]].append(name)
        return self._line(i, name, code, binding, reads)

    def _stretch(
        self, binding: Binding, operands: list[Operand], site: Site, implicit: set[int], reads: list[str]
    ) -> list[Operand]:
        """A ufunc with unstretched broadcasts among its operands, none other of the result's
        shape, is told that shape (`out=np.empty(...)`), where numpy would lay its result out
        C-contiguously; elsewhere it gets the broadcasts as evaluate makes them."""
        args, shape = binding.args, binding.var.type.shape
        if all(a.id not in implicit for a in args) or any(
            a.id not in implicit and self.types[a.id].shape == shape for a in args
        ):
            return operands
        if all(self.contiguous[a.id] or self.types[a.id].rank <= 1 for a in args):
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
        if not all(self.contiguous[a.id] or self.types[a.id].rank <= 1 for a in binding.args):
            return None
        for a in binding.args:
            block = self.memory[a.id]
            if (
                a.id not in implicit
                and self.types[a.id] == binding.var.type
                and binding.var.type.rank > 0
                and self.contiguous[a.id]
                and self.writable[a.id]
                and block != EXTERNAL
                and self.owned[block]
                and self.block_end[block] <= i
            ):
                return self.expr[a.id]
        return None

    def _record_memory(self, i: int, binding: Binding, site: Site, operands: list[Operand], alias: bool) -> None:
        v, end = binding.var.id, self.end[binding.var.id]
        if site.reused:
            reused = next(a.id for a in binding.args if self.expr[a.id] == site.reusable)
            self.memory[v], self.contiguous[v], self.writable[v] = self.memory[reused], True, True
            self._extend(self.memory[v], end)
        elif site.memory is Memory.FRESH:
            self.memory[v], self.contiguous[v], self.writable[v] = self._block(True, end), site.contiguous, True
        elif site.memory is Memory.VIEW:
            viewed = binding.args[operands.index(site.viewed)].id
            self.memory[v], self.contiguous[v] = self.memory[viewed], site.contiguous
            self.writable[v] = site.writable and self.writable[viewed]
            self._extend(self.memory[v], end)
        else:  # may share memory with any operand: keep them all alive while it lives
            for a in binding.args:
                self._extend(self.memory[a.id], end)
            self.memory[v] = EXTERNAL if alias else self._block(False, end)
            self.contiguous[v] = self.writable[v] = False

    def _line(self, i: int, defines: str | None, code: str, binding: Binding, extra: list[str]) -> _Line | None:
        dels: list[str] = []
        for block in self.dying.pop(i, ()):
            if self.block_end[block] == i:
                dels.extend(self.names[block])
                self.names[block] = []
        if defines is None:
            return _Line("", code, (), tuple(dels)) if dels else None
        names = [*(self.expr[a.id] for a in binding.args), *extra]
        reads = tuple(dict.fromkeys(n for n in names if n not in self.namespace))
        return _Line(defines, code, reads, tuple(dels))

    def _function_name(self) -> str:
        name = re.sub(r"\W", "_", self.defn.name) or "_"
        if name[0].isdigit() or keyword.iskeyword(name):
            name = "_" + name
        while name in self.namespace or hasattr(builtins, name) or _GLOBAL_NAME.fullmatch(name):
            name += "_"
        return name


def _texts(line: _Line, dels: Sequence[str] | None = None) -> list[str]:
    """The line's statement, then `del` of its `dels` (default: all)."""
    dels = line.dels if dels is None else dels
    texts = [f"{line.defines} = {line.code}"] if line.defines else []
    return texts + ([f"del {', '.join(dels)}"] if dels else [])


def _function(name: str, params: list[str], body: list[str]) -> str:
    return f"def {name}({', '.join(params)}):\n" + "\n".join("    " + text for text in body)


def _chunked(name: str, params: list[str], checks: list[str], lines: list[_Line], outputs: list[str]) -> list[str]:
    """The body as parts of CHUNK lines each, called in turn by the main function. A name
    read in a later part than its own goes through the dict `env`, popped by the last
    part that reads it."""
    parts = [lines[k : k + CHUNK] for k in range(0, len(lines), CHUNK)]
    last = len(parts) - 1
    defined_in = dict.fromkeys(params, -1)  # name -> its part (-1: the main function's)
    last_read: dict[str, int] = {}  # name -> the last part that reads it
    for k, part in enumerate(parts):
        for line in part:
            last_read.update(dict.fromkeys(line.reads, k))
            if line.defines:
                defined_in[line.defines] = k
    last_read.update((n, last) for n in outputs if n in defined_in)
    functions = [
        _part(f"{name}_part{k}", k, part, defined_in, last_read, k == last, outputs) for k, part in enumerate(parts)
    ]
    shared = [p for p in params if p in last_read]
    main = [*checks, "env = {" + ", ".join(f"{p!r}: {p}" for p in shared) + "}"]
    main += [f"{name}_part{k}(env)" for k in range(last)] + [f"return {name}_part{last}(env)"]
    return [*functions, _function(name, params, main)]


def _part(
    name: str,
    k: int,
    lines: list[_Line],
    defined_in: dict[str, int],
    last_read: dict[str, int],
    is_last: bool,
    outputs: list[str],
) -> str:
    """Part k: it loads what it reads of earlier parts, runs its lines, then stores what
    later parts read (the last part returns the outputs instead)."""
    body: list[str] = []
    here: set[str] = set()  # the names bound in this part so far

    def load(n: str) -> None:
        if n not in here and defined_in[n] < k:
            body.append(f"{n} = env.pop({n!r})" if last_read[n] == k else f"{n} = env[{n!r}]")
            here.add(n)

    for line in lines:
        for n in line.reads:
            load(n)
        if line.defines:
            here.add(line.defines)
        body += _texts(line, [d for d in line.dels if d in here])
    if is_last:
        for n in outputs:
            if n in defined_in:
                load(n)
        body.append(f"return [{', '.join(outputs)}]")
    else:
        body += [f"env[{line.defines!r}] = {line.defines}" for line in lines if last_read.get(line.defines, -1) > k]
    return _function(name, ["env"], body)

"""The generated statements laid out as Python functions: `function_sources` gives one
function, or, beyond `CHUNK` statements, several.

Contract:
- CPython compiles one huge function superlinearly, so a body of more than `CHUNK`
  lines is split into parts of `CHUNK` lines each, called in turn by the main function
  (which checks the arguments). A part is a function of the names it reads from the
  main function or earlier parts, and returns (as a tuple) the names it binds that later
  parts read; the main function binds what each part returns, and deletes a name after
  the last part that reads it. The last part returns the outputs.
- A part deletes only the names it holds; the lines, their order and their code are
  those of the one-function body. Linear time in the number of lines.
"""

from __future__ import annotations

from collections.abc import Sequence, Set

import attrs

CHUNK = 2000  # statements per generated function


@attrs.frozen
class Line:
    """One binding's statement `defines = code` (none for an alias), which reads the
    local names `reads`, then `del dels`."""

    defines: str
    code: str
    reads: tuple[str, ...]
    dels: tuple[str, ...]


def function_sources(
    name: str, params: list[str], checks: list[str], lines: list[Line], outputs: list[str], copied: Set[str]
) -> list[str]:
    """The function `name(params)`: its argument `checks`, then `lines`, then it returns
    the list of `outputs`, a copy of each one `copied`; the parts it calls, if any, come
    before it."""
    returned = _returned(outputs, copied)
    if len(lines) <= CHUNK:
        body = checks + [text for line in lines for text in _texts(line)] + [returned]
        return [_function(name, params, body)]
    return _chunked(name, params, checks, lines, outputs, returned)


def _returned(outputs: list[str], copied: Set[str]) -> str:
    return f"return [{', '.join(f'{n}.copy()' if n in copied else n for n in outputs)}]"


def _texts(line: Line, dels: Sequence[str] | None = None) -> list[str]:
    """The line's statement, then `del` of its `dels` (default: all)."""
    dels = line.dels if dels is None else dels
    texts: list[str] = []
    if line.defines:
        code = line.code
        if "\n" in code:  # a multi-line code (a loop) is statements, then the expression the line defines
            *texts, code = code.split("\n")
        texts.append(f"{line.defines} = {code}")
    if dels:
        texts.append(f"del {', '.join(dels)}")
    return texts


def _function(name: str, params: list[str], body: list[str]) -> str:
    return f"def {name}({', '.join(params)}):\n" + "\n".join("    " + text for text in body)


def _chunked(
    name: str, params: list[str], checks: list[str], lines: list[Line], outputs: list[str], returned: str
) -> list[str]:
    """The body as parts of CHUNK lines each, called in turn by the main function, which
    passes each part the names it reads of the arguments and of earlier parts."""
    parts = [lines[k : k + CHUNK] for k in range(0, len(lines), CHUNK)]
    last = len(parts) - 1
    defined_in = dict.fromkeys(params, -1)  # name -> its part (-1: the main function's)
    last_read: dict[str, int] = {}  # name -> the last part that reads it
    for k, part in enumerate(parts):
        for line in part:
            for n in line.reads:
                last_read[n] = k
            if line.defines:
                defined_in[line.defines] = k
    last_read.update((n, last) for n in outputs if n in defined_in)
    functions, main = [], list(checks)
    for k, part in enumerate(parts):
        inputs, body = _part(part, k, defined_in, outputs if k == last else None, returned)
        call = f"{name}_part{k}({', '.join(inputs)})"
        if k == last:
            main.append(f"return {call}")
        else:
            later = [line.defines for line in part if last_read.get(line.defines, -1) > k]
            names = ", ".join(later) + ("," if len(later) == 1 else "")  # a tuple, even of one
            body.append(f"return {names}" if later else "return")
            main.append(f"{names} = {call}" if later else call)
            dead = [n for n in inputs if last_read[n] == k and defined_in[n] >= 0]
            if dead:
                main.append(f"del {', '.join(dead)}")
        functions.append(_function(f"{name}_part{k}", inputs, body))
    return [*functions, _function(name, params, main)]


def _part(
    lines: list[Line], k: int, defined_in: dict[str, int], outputs: list[str] | None, returned: str
) -> tuple[list[str], list[str]]:
    """Part k's parameters (the names it reads of earlier parts, in the order it first
    reads them) and its body: its lines, then (the last part, given the `outputs`) the
    `returned` statement."""
    inputs: list[str] = []
    body: list[str] = []
    here: set[str] = set()  # the names this part holds so far

    def read(n: str) -> None:
        if n not in here:
            here.add(n)
            if defined_in[n] < k:
                inputs.append(n)

    for line in lines:
        for n in line.reads:
            read(n)
        if line.defines:
            here.add(line.defines)
        body += _texts(line, line.dels and [d for d in line.dels if d in here])
    if outputs is not None:
        for n in outputs:
            if n in defined_in:
                read(n)
        body.append(returned)
    return inputs, body

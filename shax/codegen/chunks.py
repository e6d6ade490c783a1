"""The generated statements laid out as Python functions: `function_sources` gives one
function, or, beyond `CHUNK` statements, several.

Contract:
- CPython compiles one huge function superlinearly, so a body of more than `CHUNK`
  lines is split into parts of `CHUNK` lines each, called in turn by the main function
  (which checks the arguments). The parts pass the values they share in a dict `env`:
  a name read in a later part than its own is stored there by its part, loaded by each
  part that reads it, and popped by the last one.
- A part deletes only the names it holds; the lines, their order and their code are
  those of the one-function body. Linear time in the number of lines.
"""

from __future__ import annotations

from collections.abc import Sequence

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
    name: str, params: list[str], checks: list[str], lines: list[Line], outputs: list[str]
) -> list[str]:
    """The function `name(params)`: its argument `checks`, then `lines`, then it returns
    the list of `outputs`; the parts it calls, if any, come before it."""
    if len(lines) <= CHUNK:
        body = checks + [text for line in lines for text in _texts(line)] + [f"return [{', '.join(outputs)}]"]
        return [_function(name, params, body)]
    return _chunked(name, params, checks, lines, outputs)


def _texts(line: Line, dels: Sequence[str] | None = None) -> list[str]:
    """The line's statement, then `del` of its `dels` (default: all)."""
    dels = line.dels if dels is None else dels
    # A multi-line code (a loop) is statements, then the expression the line defines.
    *statements, expression = line.code.split("\n")
    texts = [*statements, f"{line.defines} = {expression}"] if line.defines else []
    return texts + ([f"del {', '.join(dels)}"] if dels else [])


def _function(name: str, params: list[str], body: list[str]) -> str:
    return f"def {name}({', '.join(params)}):\n" + "\n".join("    " + text for text in body)


def _chunked(name: str, params: list[str], checks: list[str], lines: list[Line], outputs: list[str]) -> list[str]:
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
    lines: list[Line],
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
        if defined_in[n] < k:
            body.append(f"{n} = env.pop({n!r})" if last_read[n] == k else f"{n} = env[{n!r}]")
        here.add(n)

    for line in lines:
        for n in line.reads:
            if n not in here:
                load(n)
        if line.defines:
            here.add(line.defines)
        body += _texts(line, [d for d in line.dels if d in here])
    if is_last:
        for n in outputs:
            if n in defined_in and n not in here:
                load(n)
        body.append(f"return [{', '.join(outputs)}]")
    else:
        body += [f"env[{line.defines!r}] = {line.defines}" for line in lines if last_read.get(line.defines, -1) > k]
    return _function(name, ["env"], body or ["pass"])  # a part of deletions only may delete nothing it holds

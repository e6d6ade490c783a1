"""`shax.diff(before, after)`: what a stage or pass changed, aligned by provenance.

    --- medium (typed)
    +++ medium (rewritten)
      x6 :: f32[6, 2] = transpose [1,0] x4
    - x7 :: f32[2, 2] = dot x5 x6
    + x7 :: f32[1, 2, 6] = reshape [1,2,6] x5
    ...
    ~ x12 :: f32[2, 2] = mul x10 x11            (was: x9 = mul x7 x8)
      ... 3 unchanged

Binding numbers change from one definition to the next, so bindings are matched by
what they are: their provenance (the user's line and what emitted them, `Binding.origin`)
and their operation, the n-th such binding of one side with the n-th of the other. A
matched binding whose static parameters, type or operands (each operand known by its
own match) differ is changed (`~`); the others are added (`+`) or removed (`-`); runs of
unchanged ones are folded, `context` of them kept beside each change.
"""

from __future__ import annotations

import difflib
from collections.abc import Hashable, Sequence
from typing import Any

import attrs

from shax.core.errors import ShaxTypeError, at
from shax.core.ir import Binding, Definition, LinearizedDefinition
from shax.core.location import current_source
from shax.core.printing import show_binding, show_primitive, show_provenance


@attrs.frozen
class Diff:
    """The bindings of `after` against those of `before`, one line each, in order."""

    before: Definition
    after: Definition
    lines: tuple[tuple[str, str], ...]  # (mark, text): mark is " ", "+", "-", "~", or "." (folded)

    @property
    def changed(self) -> bool:
        return any(mark in "+-~" for mark, _ in self.lines)

    def counts(self) -> dict[str, int]:
        """How many bindings were added, removed, changed, and kept."""
        marks = [mark for mark, _ in self.lines]
        kept = sum(int(text.split()[1]) for mark, text in self.lines if mark == ".")
        return {"added": marks.count("+"), "removed": marks.count("-"), "changed": marks.count("~"),
                "unchanged": marks.count(" ") + kept}  # fmt: skip

    def __str__(self) -> str:
        counts = self.counts()
        header = [
            f"--- {self.before.name}",
            f"+++ {self.after.name}  ({counts['added']} added, {counts['removed']} removed, "
            f"{counts['changed']} changed, {counts['unchanged']} unchanged)",
        ]
        return "\n".join([*header, *(f"{mark} {text}" if mark != "." else f"  {text}" for mark, text in self.lines)])

    def _repr_html_(self) -> str:  # Jupyter
        from shax.tools.html import diff_html

        return diff_html(self)

    def _repr_pretty_(self, printer: object, cycle: bool) -> None:  # IPython
        printer.text(str(self))  # type: ignore[attr-defined]


def diff(before: Definition | LinearizedDefinition, after: Definition | LinearizedDefinition, context: int = 1) -> Diff:
    """`after` against `before` (a LinearizedDefinition is its primal definition)."""
    before, after = _definition("before", before), _definition("after", after)
    if isinstance(context, bool) or not isinstance(context, int) or context < 0:
        raise at(ShaxTypeError(f"diff: context must be a non-negative int, got {context!r}"), current_source())
    lines: list[tuple[str, str]] = []
    for mark, i, j in matched(before, after):
        if mark == "-":
            lines.append(("-", show_binding(before.bindings[i])))
        elif mark == "~":
            lines.append(("~", f"{show_binding(after.bindings[j])}    (was: {show_binding(before.bindings[i])})"))
        else:
            lines.append((mark, show_binding(after.bindings[j])))
    return Diff(before, after, tuple(_folded(lines, context)))


def matched(before: Definition, after: Definition, memo: dict[object, Any] | None = None) -> list[tuple[str, int, int]]:
    """The bindings of `after` against those of `before`, in order, as (mark, position in
    before, position in after): " " kept, "~" changed, "-" removed (-1 after), "+" added (-1
    before). A binding's type counts: one typed on one side only is changed (type
    inference, which types every binding, changes every one). `memo` keeps each
    definition's keys and contents for the next call (while the definitions live)."""
    memo = {} if memo is None else memo

    def keyed(defn: Definition) -> tuple[list[tuple[tuple[str, str], int]], list[Hashable]]:
        if id(defn) not in memo:
            keys = binding_keys(defn.bindings)
            memo[id(defn)] = (keys, _contents(defn, keys))
        found: tuple[list[tuple[tuple[str, str], int]], list[Hashable]] = memo[id(defn)]
        return found

    (old_keys, old_content), (new_keys, new_content) = keyed(before), keyed(after)
    found: list[tuple[str, int, int]] = []
    matcher = difflib.SequenceMatcher(None, old_keys, new_keys, autojunk=False)
    for tag, i0, i1, j0, j1 in matcher.get_opcodes():
        if tag == "equal":
            pairs = zip(range(i0, i1), range(j0, j1))
            found.extend((" " if old_content[i] == new_content[j] else "~", i, j) for i, j in pairs)
            continue
        found.extend(("-", i, -1) for i in range(i0, i1))
        found.extend(("+", -1, j) for j in range(j0, j1))
    return found


def _definition(what: str, defn: object) -> Definition:
    if isinstance(defn, LinearizedDefinition):
        return defn.primal
    if not isinstance(defn, Definition):
        message = f"diff: {what} must be a Definition or a LinearizedDefinition, got {type(defn).__name__}"
        raise at(ShaxTypeError(message), current_source())
    return defn


def binding_keys(bindings: Sequence[Binding]) -> list[tuple[tuple[str, str], int]]:
    """Each binding's identity across definitions: its provenance and operation, and how
    many bindings of that identity come before it (what `diff` matches, and the HTML view
    links across stages)."""
    seen: dict[tuple[str, str], int] = {}
    keys: list[tuple[tuple[str, str], int]] = []
    for b in bindings:
        identity = (show_provenance(b), b.prim.name)
        n = seen.get(identity, 0)
        seen[identity] = n + 1
        keys.append((identity, n))
    return keys


def _contents(defn: Definition, keys: Sequence[Hashable]) -> list[Hashable]:
    """Each binding's content, which a change is read from: the operation as printed, its
    type (None untyped), and each operand by its key."""
    key_of = {v.id: (k, j) for b, k in zip(defn.bindings, keys) for j, v in enumerate(b.vars)}
    return [
        (
            show_primitive(b.prim),
            tuple(v.type for v in b.vars),
            tuple(key_of.get(a.id) for a in b.args),
        )
        for b in defn.bindings
    ]


def _folded(lines: list[tuple[str, str]], context: int) -> list[tuple[str, str]]:
    """`lines` with each run of unchanged ones cut to `context` lines beside the changes."""
    changes = [k for k, (mark, _) in enumerate(lines) if mark != " "]
    keep = {k for c in changes for k in range(c - context, c + context + 1)}
    folded: list[tuple[str, str]] = []
    skipped = 0
    for k, line in enumerate(lines):
        if line[0] != " " or k in keep:
            if skipped:
                folded.append((".", f"... {skipped} unchanged"))
                skipped = 0
            folded.append(line)
        else:
            skipped += 1
    if skipped:
        folded.append((".", f"... {skipped} unchanged"))
    return folded

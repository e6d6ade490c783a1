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

The definitions an operation holds (a cond's branches, a loop's body, a callee) count
in its content, and a pass rewrites them too (`shax.passes.nested`): an operation whose
held definitions changed is changed, and under it each changed one is diffed in turn,
indented, after a heading line (mark ":") naming it:

    ~ x5 :: f32[3] = cond [f_false,f_true] x3 x4    (changed inside)
      in f_true:
        - x1 :: f32[3] = cos x0
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
    # (mark, text): mark is " ", "+", "-", "~", "." (folded), or ":" (a held definition's heading)
    lines: tuple[tuple[str, str], ...]

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
        body = [f"{mark} {text}" if mark not in ".:" else f"  {text}" for mark, text in self.lines]
        return "\n".join([*header, *body])

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
    return Diff(before, after, tuple(_lines(before, after, context, {}, "")))


# (mark, text, the lines of the definitions it holds that changed, indented)
_Line = tuple[str, str, list[tuple[str, str]]]


def _lines(
    before: Definition, after: Definition, context: int, memo: dict[object, Any], indent: str
) -> list[tuple[str, str]]:
    """`after` against `before`, folded, each changed held definition's lines under its holder
    (as deep as operations nest, not as long as a program)."""
    lines: list[_Line] = []
    for mark, i, j in matched(before, after, memo):
        if mark == "-":
            lines.append(("-", indent + show_binding(before.bindings[i]), []))
            continue
        now = show_binding(after.bindings[j])
        if mark != "~":
            lines.append((mark, indent + now, []))
            continue
        was = show_binding(before.bindings[i])
        inside = []
        for old, new in held_changes(before.bindings[i], after.bindings[j], memo):
            inside += [(":", f"{indent}  in {new.name}:"), *_lines(old, new, context, memo, indent + "    ")]
        lines.append(("~", indent + now + (f"    (was: {was})" if was != now else "    (changed inside)"), inside))
    return _folded(lines, context, indent)


def held_changes(before: Binding, after: Binding, memo: dict[object, Any]) -> list[tuple[Definition, Definition]]:
    """The definitions `after`'s operation holds that differ from those `before`'s held, in
    pairs (old, new): none when they hold different numbers of them."""
    olds, news = before.prim.subdefinitions(), after.prim.subdefinitions()
    if len(olds) != len(news):
        return []
    return [(old, new) for old, new in zip(olds, news) if _fingerprint(old, memo) != _fingerprint(new, memo)]


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
            memo[id(defn)] = (keys, _contents(defn, keys, memo), defn)  # `defn` kept: its id stays its own
        keys, contents, _ = memo[id(defn)]
        return keys, contents

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


def _contents(defn: Definition, keys: Sequence[Hashable], memo: dict[object, Any]) -> list[Hashable]:
    """Each binding's content, which a change is read from: the operation as printed, its
    type (None untyped), each operand by its key, and what the definitions it holds compute."""
    key_of = {v.id: (k, j) for b, k in zip(defn.bindings, keys) for j, v in enumerate(b.vars)}
    return [
        (
            show_primitive(b.prim),
            tuple(v.type for v in b.vars),
            tuple(key_of.get(a.id) for a in b.args),
            tuple(_fingerprint(held, memo) for held in b.prim.subdefinitions()),
        )
        for b in defn.bindings
    ]


def _fingerprint(defn: Definition, memo: dict[object, Any]) -> Hashable:
    """What a held definition computes, as `matched` compares it: its bindings' keys and
    contents and its outputs' keys (once per definition, kept in `memo`)."""
    if ("fingerprint", id(defn)) not in memo:
        keys = binding_keys(defn.bindings)
        key_of = {v.id: (k, j) for b, k in zip(defn.bindings, keys) for j, v in enumerate(b.vars)}
        outputs = tuple(key_of.get(v.id) for v in defn.outputs)
        memo[("fingerprint", id(defn))] = (defn, (tuple(keys), tuple(_contents(defn, keys, memo)), outputs))
    return memo[("fingerprint", id(defn))][1]


def _folded(lines: list[_Line], context: int, indent: str) -> list[tuple[str, str]]:
    """`lines` with each run of unchanged ones cut to `context` lines beside the changes,
    each line followed by the lines of what it holds."""
    changes = [k for k, (mark, _, _) in enumerate(lines) if mark != " "]
    keep = {k for c in changes for k in range(c - context, c + context + 1)}
    folded: list[tuple[str, str]] = []
    skipped = 0
    for k, (mark, text, inside) in enumerate(lines):
        if mark != " " or k in keep:
            if skipped:
                folded.append((".", f"{indent}... {skipped} unchanged"))
                skipped = 0
            folded += [(mark, text), *inside]
        else:
            skipped += 1
    if skipped:
        folded.append((".", f"{indent}... {skipped} unchanged"))
    return folded

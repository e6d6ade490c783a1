"""docs/you-only-linearize-once.md is true: its ```python blocks run, in order, in one
namespace, and each ```text block after one is what that block prints (exactly, up to
trailing spaces; a `...` line stands for lines left out, so the pieces between them
appear in order, the first at the start unless `...` opens the block, the last at the
end unless `...` closes it)."""

from __future__ import annotations

import contextlib
import io
import re
from pathlib import Path
from typing import Any

DOC = Path(__file__).resolve().parent.parent / "docs" / "you-only-linearize-once.md"
BLOCK = re.compile(r"^```(python|text)\n(.*?)^```$", flags=re.MULTILINE | re.DOTALL)


def pieces(shown: str) -> list[list[str]]:
    """The runs of lines between `...` lines (empty runs where `...` opens or closes)."""
    found: list[list[str]] = [[]]
    for line in shown.splitlines():
        if line == "...":
            found.append([])
        else:
            found[-1].append(line.rstrip())
    return found


def shows(output: str, shown: str) -> bool:
    """Whether `output` is `shown`, its `...` lines standing for any lines."""
    lines = [line.rstrip() for line in output.splitlines()]
    runs = pieces(shown)
    at = 0
    for k, run in enumerate(runs):
        if not run:
            continue
        anywhere = range(at, len(lines) - len(run) + 1) if k else range(0, 1)
        found = next((i for i in anywhere if lines[i : i + len(run)] == run), None)
        if found is None:
            return False
        at = found + len(run)
    return at == len(lines) or not runs[-1]


def test_the_walkthrough_prints_what_it_says() -> None:
    namespace: dict[str, Any] = {}
    output = None
    checked = 0
    for kind, body in BLOCK.findall(DOC.read_text()):
        if kind == "python":
            printed = io.StringIO()
            with contextlib.redirect_stdout(printed):
                exec(compile(body, str(DOC), "exec"), namespace)
            output = printed.getvalue()
        else:
            assert output is not None, f"a text block with no python block before it:\n{body}"
            assert shows(output, body), f"the block printed\n{output}\nnot\n{body}"
            output, checked = None, checked + 1
    assert checked >= 9


def test_the_comparison_reads_gaps() -> None:
    assert shows("a\nb\nc\n", "a\n...\nc\n")
    assert shows("a\nb\nc\n", "...\nb\n...\n")
    assert not shows("a\nb\nc\n", "b\n...\n")  # not at the start
    assert not shows("a\nb\nc\n", "...\nb\n")  # not at the end
    assert not shows("a\nb\nc\n", "a\nc\n")

"""The README's examples run as written, and the documentation stays inside the repository.

Every ```python block of README.md runs on its own, in a fresh interpreter, from the
repository root, as a reader pasting just that block would run it. README.md and the
files under docs/ point at nothing outside the repository or the project's planning (that
their paths, names and links resolve is tests/test_docs_paths.py's)."""

from __future__ import annotations

import importlib.util
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
README = ROOT / "README.md"


def python_blocks(text: str) -> list[str]:
    """The ```python blocks of a markdown text, in order."""
    return re.findall(r"^```python\n(.*?)^```$", text, flags=re.MULTILINE | re.DOTALL)


def test_the_readme_has_python_examples() -> None:
    assert len(python_blocks(README.read_text())) >= 5


def runnable(block: str) -> bool:
    """Whether this interpreter can run the block: one that imports JAX (an optional
    dependency, the `xla` extra) needs it installed."""
    return "import jax" not in block or importlib.util.find_spec("jax") is not None


@pytest.mark.slow
def test_every_readme_example_runs_on_its_own() -> None:
    # All at once: each is a Python process of its own.
    runs = [
        subprocess.Popen([sys.executable, "-c", block], cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        for block in python_blocks(README.read_text())
        if runnable(block)
    ]
    for number, run in enumerate(runs, start=1):
        _, error = run.communicate()
        assert run.returncode == 0, f"README.md python block {number} fails:\n{error.decode()}"


def documentation() -> list[Path]:
    return [README, *sorted(p for p in (ROOT / "docs").rglob("*") if p.is_file() and p.suffix != ".png")]


@pytest.mark.parametrize("path", documentation(), ids=lambda p: os.path.relpath(p, ROOT))
def test_documentation_points_at_nothing_outside_the_repository(path: Path) -> None:
    text = path.read_text()
    for outside in ("../shared", "DESIGN.md", "DESIGN leaves"):
        assert outside not in text, f"{path.relative_to(ROOT)} mentions {outside}"
    numbered = re.search(r"(?i)\bissues? #?\d+", text)
    assert numbered is None, f"{path.relative_to(ROOT)} speaks of {numbered.group()}: readers have no issues"

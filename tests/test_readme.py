"""The README's examples run as written, and the documentation stays inside the repository.

Every ```python block of README.md runs on its own, in a fresh namespace, from the
repository root, as a reader pasting just that block would run it. README.md and the
files under docs/ point at nothing outside the repository, and the README's links into
docs/architecture.md name sections that exist."""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
README = ROOT / "README.md"
ARCHITECTURE = ROOT / "docs" / "architecture.md"


def python_blocks(text: str) -> list[str]:
    """The ```python blocks of a markdown text, in order."""
    return re.findall(r"^```python\n(.*?)^```$", text, flags=re.MULTILINE | re.DOTALL)


def test_the_readme_has_python_examples() -> None:
    assert len(python_blocks(README.read_text())) >= 5


def test_every_readme_example_runs_on_its_own(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture) -> None:
    monkeypatch.chdir(ROOT)
    for number, block in enumerate(python_blocks(README.read_text()), start=1):
        first_line = block.splitlines()[0] if block.strip() else ""
        try:
            exec(compile(block, f"README.md, python block {number}", "exec"), {"__name__": "readme"})
        except Exception as error:  # any error: the block does not run as written
            pytest.fail(f"README.md python block {number} ({first_line!r}) raised {type(error).__name__}: {error}")
    capsys.readouterr()  # what the examples print is for readers


def documentation() -> list[Path]:
    return [README, *sorted(p for p in (ROOT / "docs").rglob("*") if p.is_file())]


@pytest.mark.parametrize("path", documentation(), ids=lambda p: os.path.relpath(p, ROOT))
def test_documentation_points_at_nothing_outside_the_repository(path: Path) -> None:
    text = path.read_text()
    for outside in ("../shared", "DESIGN.md"):
        assert outside not in text, f"{path.relative_to(ROOT)} mentions {outside}"


def anchor(heading: str) -> str:
    """GitHub's anchor for a markdown heading: lower case, punctuation dropped, spaces as dashes."""
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


def test_links_into_the_architecture_name_its_sections() -> None:
    prose = re.sub(r"^\s*```.*?^\s*```$", "", ARCHITECTURE.read_text(), flags=re.MULTILINE | re.DOTALL)
    headings = re.findall(r"^#+ (.*)$", prose, flags=re.MULTILINE)
    anchors = {anchor(h) for h in headings}
    links = re.findall(r"\(docs/architecture\.md#([^)]+)\)", README.read_text())
    assert links
    assert set(links) <= anchors, f"no such section: {sorted(set(links) - anchors)}"

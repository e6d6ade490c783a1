"""What the README and the docs name exists: every repository path they write
(`shax/tracing/tracer.py`, `tests/spec.py`, `benchmarks/checkpoint.py`, `docs/control-flow.md`, a
folder as `shax/rules/`), every dotted name under `shax` or `typeclasses` (a module, or an
attribute of one: `shax.control.callees`, `shax.rules.linearize.Zero`), and every link
between them, to a file and, after `#`, to one of its headings (GitHub's anchor).

Docs drift as code moves; these are the claims a machine can check."""

from __future__ import annotations

import importlib
import os
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
DOCUMENTS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]

# A path starts at one of the repository's top-level folders, not inside another path or a URL.
PATH = re.compile(r"(?<![\w./-])((?:shax|typeclasses|tests|benchmarks|examples|docs|\.ci)/[\w./-]*)")
DOTTED = re.compile(r"(?<![\w./-])((?:shax|typeclasses)(?:\.[A-Za-z_]\w*)+)")
LINK = re.compile(r"\]\(([^)\s]+)\)")
FENCE = re.compile(r"^\s*```.*?^\s*```$", flags=re.MULTILINE | re.DOTALL)


def named_paths(text: str) -> set[str]:
    """The repository paths a text writes (a sentence's full stop is not part of one)."""
    return {m.rstrip(".") for m in PATH.findall(text)}


def missing_paths(text: str) -> list[str]:
    return sorted(p for p in named_paths(text) if not (ROOT / p).exists())


def resolves(name: str) -> bool:
    """Whether a dotted name is a module, or an attribute of the longest module prefix it has."""
    parts = name.split(".")
    for k in range(len(parts), 0, -1):
        try:
            value: object = importlib.import_module(".".join(parts[:k]))
        except ModuleNotFoundError as error:
            if error.name is not None and not error.name.startswith(("shax", "typeclasses")):
                return True  # an optional dependency this interpreter lacks: not the docs' fault
            continue
        for attribute in parts[k:]:
            if not hasattr(value, attribute):
                return False
            value = getattr(value, attribute)
        return True
    return False


def missing_names(text: str) -> list[str]:
    return sorted(n for n in set(DOTTED.findall(text)) if not resolves(n))


def anchor(heading: str) -> str:
    """GitHub's anchor for a markdown heading: lower case, punctuation dropped, spaces as dashes."""
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


def anchors(path: Path) -> set[str]:
    prose = FENCE.sub("", path.read_text())
    return {anchor(h) for h in re.findall(r"^#+ (.*)$", prose, flags=re.MULTILINE)}


def broken_links(path: Path) -> list[str]:
    """The links of a document to a file that is not there or a section its target lacks."""
    broken = []
    for target in LINK.findall(FENCE.sub("", path.read_text())):
        if re.match(r"\w+:", target):  # a URL: not the repository's
            continue
        file, _, section = target.partition("#")
        linked = (path.parent / file).resolve() if file else path
        if not linked.exists() or (section and section not in anchors(linked)):
            broken.append(target)
    return broken


@pytest.mark.parametrize("path", DOCUMENTS, ids=lambda p: os.path.relpath(p, ROOT))
def test_every_path_a_document_names_exists(path: Path) -> None:
    missing = missing_paths(path.read_text())
    assert not missing, f"{path.relative_to(ROOT)} names paths that do not exist: {missing}"


@pytest.mark.parametrize("path", DOCUMENTS, ids=lambda p: os.path.relpath(p, ROOT))
def test_every_dotted_name_a_document_names_resolves(path: Path) -> None:
    missing = missing_names(path.read_text())
    assert not missing, f"{path.relative_to(ROOT)} names modules or attributes that do not exist: {missing}"


@pytest.mark.parametrize("path", DOCUMENTS, ids=lambda p: os.path.relpath(p, ROOT))
def test_every_link_of_a_document_resolves(path: Path) -> None:
    broken = broken_links(path)
    assert not broken, f"{path.relative_to(ROOT)} links to no such file or section: {broken}"


def test_the_checks_catch_a_made_up_path_name_and_link(tmp_path: Path) -> None:
    text = (
        "Tracing is in `shax/tracing/tracer.py` and `shax/made_up.py`; the specs in tests/spec.py, not in\n"
        "tests/nowhere/. `shax.tracing.tracer.apply` is there, `shax.tracing.tracer.no_such_thing` and\n"
        "`shax.no_such_module` are not. See [layers](docs/architecture.md#layers-and-imports).\n"
    )
    assert missing_paths(text) == ["shax/made_up.py", "tests/nowhere/"]
    assert missing_names(text) == ["shax.no_such_module", "shax.tracing.tracer.no_such_thing"]
    document = tmp_path / "doc.md"
    document.write_text("# Here\n\n[ok](#here), [no section](#there), [no file](missing.md), [web](https://x.org/a)\n")
    assert broken_links(document) == ["#there", "missing.md"]

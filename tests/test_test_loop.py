"""The test loop as the README tells it: its test command runs every test without
typeguard's plugin (pyproject's addopts), `slow` is a registered marker, and `.ci/run`
runs the README's typeguard command after its test command, on the tests not marked slow."""

from __future__ import annotations

import re
import shlex
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def readme_command(name: str) -> list[str]:
    """The command on the line after the ``` fence that follows `<!-- ci:name -->`, as .ci/run reads it."""
    found = re.search(rf"^<!-- ci:{name} -->\n```sh\n(.*)\n", (ROOT / "README.md").read_text(), re.MULTILINE)
    assert found, f"README.md has no ci:{name} command"
    return shlex.split(found.group(1))


def pytest_options() -> dict[str, object]:
    return tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["pytest"]["ini_options"]


def test_the_default_run_has_no_typeguard_and_the_slow_marker_is_registered() -> None:
    options = pytest_options()
    assert "typeguard" not in str(options["addopts"])
    assert "--strict-markers" in str(options["addopts"]), "a misspelt marker must fail, not silently select nothing"
    assert any(str(m).startswith("slow:") for m in options["markers"])  # type: ignore[attr-defined]


def test_the_readme_runs_every_test_and_ci_adds_a_typeguard_pass() -> None:
    install, _, test = " ".join(readme_command("test")).partition(" && ")
    assert install.startswith("pip install") and test.startswith("python -m pytest"), (install, test)
    assert " -m " not in test[len("python -m ") :] and "typeguard" not in test, f"every test, without typeguard: {test}"
    typeguard = readme_command("typeguard")
    assert typeguard[:4] == ["HYPOTHESIS_PROFILE=quick", "python", "-m", "pytest"], typeguard
    assert typeguard[typeguard.index("-m", 3) + 1] == "not slow"
    assert "--typeguard-packages=shax,typeclasses" in typeguard
    assert "--typeguard-collection-check-strategy=ALL_ITEMS" in typeguard
    run = (ROOT / ".ci" / "run").read_text()
    order = [run.index(f'eval "${name}_cmd"') for name in ("demo", "test", "typeguard")]
    assert order == sorted(order), ".ci/run runs the typeguard pass after the README's test command"

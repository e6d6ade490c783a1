"""The `shax` command: `shax trace|types FILE.py:FUNCTION TYPE...` prints a stage;
bad input exits with status 1 and a one-line message on stderr."""

from __future__ import annotations

import io
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from test_golden import golden_block

from shax.tools.cli import main

ROOT = Path(__file__).resolve().parents[1]
TYPED_MEDIUM = golden_block("medium_pipeline.txt", "After type inference:")


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, list[str], str]:
    status = main(list(argv))
    out, err = capsys.readouterr()
    return status, [line.rstrip() for line in out.splitlines()], err


@pytest.fixture(autouse=True)
def in_the_repository(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(ROOT)


def test_types_prints_the_typed_medium(capsys: pytest.CaptureFixture[str]) -> None:
    status, out, err = run(capsys, "types", "examples/medium.py:medium", "f32[6]", "f32[2,2]")
    assert (status, err) == (0, "")
    assert out == TYPED_MEDIUM


def test_trace_prints_the_untyped_medium(capsys: pytest.CaptureFixture[str]) -> None:
    status, out, err = run(capsys, "trace", "examples/medium.py:medium", "f32[6]", "f32[2, 2]")
    assert (status, err) == (0, "")
    assert out == golden_block("medium_pipeline.txt", "After tracing:")


BAD = [
    ("missing_file", ["types", "examples/nowhere.py:medium", "f32[6]", "f32[2,2]"], "nowhere.py"),
    ("missing_function", ["types", "examples/medium.py:large", "f32[6]", "f32[2,2]"], "large"),
    ("no_function_name", ["types", "examples/medium.py", "f32[6]", "f32[2,2]"], "FILE.py:FUNCTION"),
    ("not_python", ["types", "README.md:medium", "f32[6]", "f32[2,2]"], "README.md"),
    ("unreadable_type", ["types", "examples/medium.py:medium", "f32[6]", "f32[2,two]"], "f32[2,two]"),
    ("unknown_dtype", ["types", "examples/medium.py:medium", "f16[6]", "f32[2,2]"], "f16[6]"),
    ("shape_error", ["types", "examples/medium.py:medium", "f32[5]", "f32[2,2]"], "broadcast"),
    ("too_few_types", ["trace", "examples/medium.py:medium", "f32[6]"], "medium"),
]


@pytest.mark.parametrize(("argv", "mentioned"), [pytest.param(*bad[1:], id=bad[0]) for bad in BAD])
def test_bad_input_exits_with_1(capsys: pytest.CaptureFixture[str], argv: list[str], mentioned: str) -> None:
    status, out, err = run(capsys, *argv)
    assert status == 1
    assert out == []
    assert err.startswith("shax: ") and mentioned in err


def test_a_file_that_fails_to_import(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    broken = tmp_path / "broken.py"
    broken.write_text("def f(x:\n")
    status, out, err = run(capsys, "types", f"{broken}:f", "f32[2]")
    assert status == 1
    assert err.startswith("shax: ") and "broken.py" in err


@pytest.mark.slow
def test_the_module_runs_as_a_program() -> None:
    command = [sys.executable, "-m", "shax.tools.cli", "types", "examples/medium.py:medium", "f32[6]", "f32[2,2]"]
    done = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr
    assert [line.rstrip() for line in done.stdout.splitlines()] == golden_block(
        "medium_pipeline.txt", "After type inference:"
    )
    done = subprocess.run([*command[:-1], "f32[3,3]"], cwd=ROOT, capture_output=True, text=True, check=False)
    assert done.returncode == 1
    assert done.stderr.startswith("shax: ") and "Traceback" not in done.stderr


def test_demo_runs_descent_then_medium(capsys: pytest.CaptureFixture[str]) -> None:
    status, out, _ = run(capsys, "demo")
    assert status == 0
    assert out[0] == "def f(arg0 :: f32[]," and "Iteration 40: -0.5" in out
    assert out.index("Minimum value: -0.5") < out.index("After tracing:") < out.index("VJP:")


def test_an_error_in_the_users_function_is_one_message(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    (tmp_path / "user.py").write_text("def f(x):\n    return x / 0 if x is None else {}[x.shape]\n")
    status, out, err = run(capsys, "trace", f"{tmp_path / 'user.py'}:f", "f32[2]")
    assert (status, out) == (1, [])
    assert err.startswith("shax: KeyError: ") and "user.py:2" in err and "Traceback" not in err
    status, out, err = run(capsys, "--traceback", "trace", f"{tmp_path / 'user.py'}:f", "f32[2]")
    assert status == 1 and "Traceback (most recent call last)" in err


def test_a_reader_that_stops_early_ends_it_quietly() -> None:
    # `shax demo | head -1`
    demo = subprocess.Popen(
        [sys.executable, "-m", "shax.tools.cli", "demo"], cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE
    )
    assert demo.stdout is not None and demo.stderr is not None
    demo.stdout.readline()
    demo.stdout.close()
    assert demo.stderr.read() == b""
    assert demo.wait() in (0, 1)  # 0 if it wrote everything before the pipe closed


def test_explain_provenance_and_source_names(capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["explain", "examples/medium.py:medium", "f32[6]", "f32[2,2]", "--stages", "trace,linearized"]
    code, lines, _ = run(capsys, *argv, "--provenance", "--names", "source")
    assert code == 0
    bindings = [line for line in lines if " = " in line]
    assert bindings and all(" -- " in line for line in bindings)
    assert any("examples/medium.py:" in line and "linearize rule of sin" in line for line in lines)
    assert any("let x0 = arg0" in line for line in lines)  # medium names its values x0, x1, ... itself
    code, plain, _ = run(capsys, *argv)
    assert code == 0 and not any(" -- " in line for line in plain)


def test_explain_diff_shows_the_rewrites_as_a_diff(capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["explain", "examples/medium.py:medium", "f32[6]", "f32[2,2]", "--stages", "rewrites", "--diff"]
    code, lines, _ = run(capsys, *argv)
    assert code == 0
    assert lines[1:3] == ["--- medium", "+++ medium  (8 added, 2 removed, 2 changed, 11 unchanged)"]
    assert "- x7 :: f32[2, 2] = dot x5 x6" in lines and lines[-1] == "passes that changed nothing: none"


def test_explain_shows_its_progress_on_a_terminal(monkeypatch: pytest.MonkeyPatch) -> None:
    shown: list[str] = []

    class Terminal(io.StringIO):
        def isatty(self) -> bool:
            return True

    terminal = Terminal()
    monkeypatch.setattr(sys, "stderr", terminal)
    monkeypatch.setattr(sys, "stdout", io.StringIO())
    assert main(["explain", "examples/medium.py:medium", "f32[6]", "f32[2,2]", "--stages", "f", "--diff"]) == 0
    shown = re.findall(r"explain: ([a-z ]+)\.\.\.", terminal.getvalue())
    assert shown == ["tracing", "type inference", "rewrites", "linearize", "transpose", "zip", "evaluation", "diffs"]
    assert terminal.getvalue().rsplit("...", 1)[1].startswith("\r\033[K")  # cleared at the end


# The teaching flags: --stats, --dot, --svg (explain) and --plot (demo).
MEDIUM_ARGS = ["explain", "examples/medium.py:medium", "f32[6]", "f32[2,2]", "--stages", "f"]


def test_explain_stats_ends_with_each_stage(capsys: pytest.CaptureFixture[str]) -> None:
    code, lines, _ = run(capsys, *MEDIUM_ARGS, "--stats")
    assert code == 0
    start = lines.index("Stats:")
    assert lines[start + 1].split() == ["stage", "bindings", "flops", "residuals", "(bytes)", "peak", "live", "bytes"]
    rows = {line.split()[0]: line.split()[1:] for line in lines[start + 2 :]}
    assert list(rows) == ["tracing", "rewrites", "linearize", "transpose", "zip"]
    assert rows["tracing"] == ["13", "120", "-", "184"]  # tests/test_teaching.py works these out
    assert rows["linearize"][2:4] == ["9", "(304)"]
    code, plain, _ = run(capsys, *MEDIUM_ARGS)
    assert code == 0 and "Stats:" not in plain


def test_explain_dot_writes_the_graph(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    out = tmp_path / "medium.dot"
    code, lines, _ = run(capsys, *MEDIUM_ARGS, "--dot", str(out))
    assert code == 0 and lines[0] == "f(x):"
    text = out.read_text()
    assert text.startswith('digraph "medium" {') and text.count("subgraph cluster_") == 3
    assert '"def medium (primal)"' in text and '"def dmediumt (transposed)"' in text


@pytest.mark.skipif(shutil.which("dot") is None, reason="Graphviz's dot is not installed")
def test_explain_svg_draws_it(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    out = tmp_path / "medium.svg"
    code, _, err = run(capsys, *MEDIUM_ARGS, "--svg", str(out))
    assert code == 0 and all(line.startswith("shax explain: random --") for line in err.splitlines())
    assert "<svg" in out.read_text() and "x0 :: f32[6] = arg0" in out.read_text()


def test_explain_svg_without_graphviz_is_one_message(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("shax.tools.graphviz.shutil.which", lambda program: None)
    out = tmp_path / "medium.svg"
    code, lines, err = run(capsys, *MEDIUM_ARGS, "--svg", str(out))
    assert (code, lines) == (1, [])
    assert err.startswith("shax: ") and "Graphviz" in err and "graphviz" in err
    assert not out.exists()


def test_demo_plot_draws_the_descent_and_prints_the_same(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    pytest.importorskip("matplotlib")
    out = tmp_path / "descent.png"
    code, lines, _ = run(capsys, "demo", "--plot", str(out))
    assert code == 0
    assert out.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    _, plain, _ = run(capsys, "demo")
    assert lines == plain  # the golden transcript, digit for digit (tests/test_golden.py checks it)


@pytest.mark.parametrize(
    ("argv", "shown"),
    [
        (("explain", "examples/medium.py:medium", "f32[6", "f32[2,2]"), "the command line's 'f32[6'"),
        (("types", "examples/medium.py:nosuch", "f32[6]"), "the command line's 'examples/medium.py:nosuch'"),
        (("explain", *MEDIUM_ARGS[1:], "--inputs", "[[1]]"), "the command line"),
    ],
)
def test_an_input_error_is_located_on_the_command_line(
    capsys: pytest.CaptureFixture[str], argv: tuple[str, ...], shown: str
) -> None:
    code, lines, err = run(capsys, *argv)
    assert (code, lines) == (1, [])
    assert err.splitlines()[0].endswith(f"(at {shown})") and "test_cli.py" not in err


def test_the_console_script_is_not_the_users_line() -> None:
    result = subprocess.run(
        [sys.executable, "-m", "shax.tools.cli", "types", "examples/medium.py:medium", "f32[6]", "i32[x]"],
        cwd=ROOT, capture_output=True, text=True, check=False,
    )  # fmt: skip
    assert result.returncode == 1 and result.stderr.splitlines()[0].endswith("(at the command line's 'i32[x]')")


@pytest.mark.parametrize("option", ["--html", "--dot", "--svg"])
@pytest.mark.parametrize("where", ["missing/out.txt", "."])
def test_an_unwritable_output_is_refused_before_any_work(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, option: str, where: str
) -> None:
    path = tmp_path / where
    code, lines, err = run(capsys, *MEDIUM_ARGS, option, str(path))
    problem = "is a directory" if where == "." else f"the directory {tmp_path / 'missing'} does not exist"
    assert (code, lines, err) == (2, [], f"shax explain: {option} {path}: {problem}\n")


def test_an_unwritable_plot_is_refused_before_the_demo(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    path = tmp_path / "missing" / "descent.png"
    code, lines, err = run(capsys, "demo", "--plot", str(path))
    assert (code, lines) == (2, []) and err == f"shax demo: --plot {path}: the directory {path.parent} does not exist\n"

"""`shax.explain` and `shax explain`: the original's transcript (the first three stages
line for line, every header in order, every number), the boxed values, the CLI."""

from __future__ import annotations

import re
from typing import Any

import numpy as np
import pytest
from reverse_mode import CT, DF_DX, DFT_CT, F_X, ROOT, X, assert_f32_close, medium

import shax
from shax import f32
from shax.core.printing import show_values
from shax.tools.cli import main
from shax.tools.explain import HEADERS

GOLDEN = (ROOT / "tests" / "golden" / "medium_pipeline.txt").read_text()


def lines(text: str) -> list[str]:
    return [line.rstrip() for line in text.splitlines()]


def sections(text: str) -> dict[str, list[str]]:
    """Header -> the lines under it, up to the next header."""
    found: dict[str, list[str]] = {}
    current = None
    for line in lines(text):
        if line in HEADERS.values():
            current = found.setdefault(line, [])
        else:
            assert current is not None, f"text before the first header: {line!r}"
            current.append(line)
    return found


def numbers(block: list[str]) -> list[float]:
    return [float(n) for n in re.findall(r"-?\d+\.\d+(?:e-?\d+)?", "\n".join(block))]


@pytest.fixture(scope="module")
def explanation() -> shax.Explanation:
    return shax.explain(medium, f32[6], f32[2, 2], inputs=X, tangents=X, cotangents=CT)


def test_headers_in_the_originals_order(explanation: shax.Explanation) -> None:
    assert list(sections(str(explanation))) == list(sections(GOLDEN)) == list(HEADERS.values())


@pytest.mark.parametrize("key", ["trace", "types", "rewrites"])
def test_the_first_three_stages_are_the_originals(explanation: shax.Explanation, key: str) -> None:
    header = HEADERS[key]
    assert sections(str(explanation))[header] == sections(GOLDEN)[header]


@pytest.mark.parametrize("key", ["f", "df", "f_again", "dft", "vjp"])
def test_the_values_are_the_originals(explanation: shax.Explanation, key: str) -> None:
    header = HEADERS[key]
    got, expected = numbers(sections(str(explanation))[header]), numbers(sections(GOLDEN)[header])
    assert len(got) == len(expected)
    np.testing.assert_allclose(got, expected, rtol=1e-5)


def test_the_values_as_arrays(explanation: shax.Explanation) -> None:
    assert_f32_close(explanation.outputs, [F_X])
    assert_f32_close(explanation.output_tangents, [DF_DX])
    assert_f32_close(explanation.outputs_again, [F_X])
    assert_f32_close(explanation.input_cotangents, DFT_CT)
    assert_f32_close(explanation.vjp, [F_X, *DFT_CT])


def test_later_definitions_have_the_originals_signatures(explanation: shax.Explanation) -> None:
    """Not the same text as the original's, but the same arguments, each with its type,
    except two residuals: min's weights are max's swapped, so the linear programs share
    them, where the original saves all four."""
    ours, theirs = sections(str(explanation)), sections(GOLDEN)
    for key in ("linearized", "transposed", "zipped"):

        def signatures(block: list[str]) -> list[tuple[str, list[str]]]:
            defs = "\n".join(block).split("def ")[1:]
            return [(d.split("(")[0], re.findall(r"arg\d+ :: \w+\[[\d, ]*\]", d.split(") =")[0])) for d in defs]

        shared = [
            (name, args[:-2] if name.startswith("dmedium") else args) for name, args in signatures(theirs[HEADERS[key]])
        ]
        assert signatures(ours[HEADERS[key]]) == shared


@pytest.mark.parametrize("key", ["f", "dft", "vjp"])
def test_boxes_print_as_the_originals(key: str) -> None:
    """The golden numbers, printed by our box printer, give the golden text."""
    block = sections(GOLDEN)[HEADERS[key]]
    values = {"f": [F_X], "dft": list(DFT_CT), "vjp": [F_X, *DFT_CT]}[key]
    assert lines(show_values([np.asarray(v, np.float32) for v in values])) == block


def test_boxes_of_other_ranks() -> None:
    assert show_values([np.float64(2.5)]) == "[┌───┐\n │2.5│\n └───┘]"
    assert show_values([np.arange(4, dtype=np.int32).reshape(2, 1, 2)]) == "[┌───┐\n │0 1│\n │   │\n │2 3│\n └───┘]"
    assert show_values([np.array([True, False])]) == "[┌───────────┐\n │ True False│\n └───────────┘]"
    assert show_values([]) == "[]"


def test_show_selects_sections(explanation: shax.Explanation) -> None:
    assert explanation.show(["vjp", "f"]).splitlines()[0] == "f(x):"
    assert HEADERS["trace"] not in explanation.show(["vjp"])
    with pytest.raises(shax.ShaxValueError, match="unknown section"):
        explanation.show(["nope"])


def test_values_default_to_seeded_random_ones() -> None:
    one = shax.explain(medium, f32[6], f32[2, 2])
    assert str(one) == str(shax.explain(medium, f32[6], f32[2, 2]))
    assert str(one) != str(shax.explain(medium, f32[6], f32[2, 2], seed=1))
    assert [x.dtype for x in one.inputs] == [np.float32, np.float32]


def test_values_of_the_wrong_shape_or_count() -> None:
    with pytest.raises(shax.ShaxValueError, match=r"inputs\[1\] has shape \[4\], but its type is f32\[2, 2\]"):
        shax.explain(medium, f32[6], f32[2, 2], inputs=[X[0], np.ones(4)])
    with pytest.raises(shax.ShaxValueError, match="cotangents needs 1 value"):
        shax.explain(medium, f32[6], f32[2, 2], cotangents=[])


# The command -------------------------------------------------------------------------------

MEDIUM = f"{ROOT / 'examples' / 'medium.py'}:medium"


def run(capsys: Any, *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_shax_explain_prints_the_transcript(capsys: Any) -> None:
    x = "[[1, 2, 3, 4, 5, 6], [[1, 2], [3, 4]]]"
    code, out, _ = run(
        capsys, "explain", MEDIUM, "f32[6]", "f32[2,2]", "--inputs", x, "--tangents", x, "--cotangents", "[[5, 9]]"
    )
    assert code == 0
    assert sections(out)[HEADERS["rewrites"]] == sections(GOLDEN)[HEADERS["rewrites"]]
    np.testing.assert_allclose(
        numbers(sections(out)[HEADERS["vjp"]]), numbers(sections(GOLDEN)[HEADERS["vjp"]]), rtol=1e-5
    )


def test_shax_explain_chooses_stages_and_seeds(capsys: Any) -> None:
    code, out, _ = run(capsys, "explain", MEDIUM, "f32[6]", "f32[2,2]", "--stages", "f,dft")
    assert code == 0 and list(sections(out)) == [HEADERS["f"], HEADERS["dft"]]
    assert run(capsys, "explain", MEDIUM, "f32[6]", "f32[2,2]", "--stages", "f")[1] in out
    assert run(capsys, "explain", MEDIUM, "f32[6]", "f32[2,2]", "--stages", "f", "--seed", "3")[1] not in out


def test_shax_explain_reports_bad_input(capsys: Any) -> None:
    code, _, err = run(capsys, "explain", MEDIUM, "f32[6]", "f32[2,2]", "--stages", "nope")
    assert code == 1 and "unknown section(s) nope" in err
    code, _, err = run(capsys, "explain", MEDIUM, "f32[6]", "f32[2,2]", "--inputs", "[[1, 2]]")
    assert code == 1 and "inputs needs 2 value(s)" in err
    with pytest.raises(SystemExit):
        main(["explain", MEDIUM, "f32[6]", "f32[2,2]", "--inputs", "[1"])
    assert "not JSON" in capsys.readouterr().err


def test_the_example_runs_explain(capsys: Any) -> None:
    import runpy

    runpy.run_path(str(ROOT / "examples" / "medium.py"), run_name="__main__")
    out = capsys.readouterr().out
    assert out.startswith("On numpy arrays: [34.731194 67.46239 ]\nAfter tracing:\n")
    assert list(sections(out.split("\n", 1)[1].rsplit("\nEvaluated:", 1)[0])) == list(HEADERS.values())

"""`shax.stages.show_linear`: a linear program in the notation of "You Only Linearize
Once", each linear value used exactly once, with explicit `dup` and `drop`.

The printout is read back independently: which names are linear follows from the text
alone (a tangent argument, a `dup`'s copies, and the results of a binding reading a
linear name); each must be read exactly once (a `drop` reads it). Mapping each copy back
to what it copies and deleting the `dup`/`drop` lines gives the program's own print.
"""

from __future__ import annotations

import re
from collections import Counter
from typing import Any

import pytest
import typeguard
from hypothesis import given
from reverse_mode import rewritten_medium

import shax
from shax import checkpoint_policies as cp
from shax import f32, f64
from shax.stages import infer_types, jvp, linearize, show_linear, transpose, unzip
from shax.testing.strategies import Program, programs
from typeclasses import dot, reduce_sum, sin, tanh

NAME = re.compile(r"\bx\d+\b")
LINE = re.compile(r"^(?:  let |      )(?:(?P<defined>.+?) = (?P<operation>.*))$")


def bodies(text: str) -> list[list[str]]:
    """The let-lines of each definition printed in `text`, and its `in [...]` line last."""
    found: list[list[str]] = []
    for line in text.splitlines():
        if line.startswith("def "):
            found.append([])
        elif line.startswith("  let ") or found[-1] and line.startswith(("      ", "  in [")):
            found[-1].append(line)
    return found


def check_printout(text: str, num_linear: int) -> None:
    """Each linear name of the last definition printed in `text` is read exactly once,
    and without dup and drop it is the program printed as usual."""
    *_, body = bodies(text)
    linear: set[str] = set()
    reads: Counter[str] = Counter()
    for line in body[:-1]:
        match = LINE.match(line)
        assert match, line
        defined, operation = NAME.findall(match["defined"]), match["operation"].split()
        read = [w for w in operation if NAME.fullmatch(w)]
        reads.update(read)
        if operation[0] == "drop":
            assert defined == [] and (operation[1] in linear or re.fullmatch(r"arg\d+", operation[1]))
        elif operation[0] == "dup":
            assert read[0] in linear and len(defined) == 2
            linear.update(defined)
        elif re.fullmatch(r"arg\d+", operation[0]):
            if int(operation[0][3:]) < num_linear:
                linear.update(defined)
        elif linear & set(read):
            linear.update(defined)
    reads.update(NAME.findall(body[-1]))
    assert {name: reads[name] for name in linear} == dict.fromkeys(linear, 1)


def without_dup_drop(text: str) -> str:
    """`text` with every dup and drop line of its last definition (the callees' print as
    they are) deleted, and every copy named as what it copies."""
    at = text.rfind("\ndef ") + 1
    callees, last = text[:at], text[at:]
    source: dict[str, str] = {}
    kept = []
    for line in last.splitlines():
        match = LINE.match(line)
        if match and match["operation"].split()[0] in ("dup", "drop"):
            operation = match["operation"].split()
            for copy in NAME.findall(match["defined"]):
                source[copy] = source.get(operation[1], operation[1])
            if kept[-1].endswith("=") and line.startswith("  let "):  # `let () = drop arg1` opened the body
                kept.append("  let ")
            continue
        kept.append(line)
    undone = "\n".join(kept).replace("  let \n      ", "  let ")
    return callees + NAME.sub(lambda m: source.get(m[0], m[0]), undone)


def linear_of(fn: Any, *types: Any) -> shax.LinearizedDefinition:
    return linearize(shax.xpr(fn, *types))


def cases() -> dict[str, tuple[Any, int]]:
    medium = linearize(rewritten_medium())
    unzipped = unzip(jvp(rewritten_medium()), cp.nothing_saveable)
    return {
        "medium": (medium, 2),
        "medium transposed": (transpose(medium), 1),
        "medium, nothing_saveable": (unzipped, 2),
        "medium, nothing_saveable, transposed": (transpose(unzipped), 1),
        "x³": (linear_of(lambda x: x * x * x, f32[3]), 1),
    }


@pytest.mark.parametrize("name", list(cases()))
def test_each_linear_value_is_used_once(name: str) -> None:
    lin, num_linear = cases()[name]
    shown = show_linear(lin)
    check_printout(shown, num_linear)
    assert without_dup_drop(shown) == str(lin.linear)


def test_a_value_read_three_times_is_copied_twice() -> None:
    shown = show_linear(linear_of(lambda x: x * x * x, f32[3]))
    assert "(x9 :: f32[3], x10 :: f32[3]) = dup x1" in shown
    assert "(x11 :: f32[3], x12 :: f32[3]) = dup x10" in shown


def test_an_unread_tangent_is_dropped() -> None:
    lin = linear_of(lambda x, y: sin(x), f32[3], f32[3])
    shown = show_linear(lin)
    assert bodies(shown)[-1][0] == "  let () = drop arg1"
    check_printout(shown, 2)
    assert without_dup_drop(shown) == str(lin.linear)
    # transposed, the cotangent of y is a zero: no linear value to drop
    assert "drop" not in show_linear(transpose(lin))


def test_a_call_of_a_linear_callee_prints_the_callee_as_it_is() -> None:
    layer = shax.checkpoint(lambda h, w: tanh(dot(h, w)))
    lin = linear_of(lambda h, w: reduce_sum(layer(layer(h, w), w), [0, 1]), f64[2, 3], f64[3, 3])
    shown = show_linear(lin)
    callee, *_ = bodies(shown)
    assert not any(" dup " in line for line in callee)
    check_printout(shown, 2)


@given(programs(dtype=f64))
def test_generated_programs(program: Program) -> None:
    lin = linearize(infer_types(shax.trace(program.fn, *program.arg_types)))
    shown = show_linear(lin)
    check_printout(shown, len(program.arg_types))
    assert without_dup_drop(shown) == str(lin.linear)


@typeguard.suppress_type_checks
def test_a_program_that_is_not_linear_is_refused_naming_show_linear() -> None:
    defn = shax.xpr(lambda x: sin(x), f32[3])
    with pytest.raises(shax.ShaxTypeError, match=r"show_linear: .* is not linear: `x1 :: f32\[3\] = sin x0`"):
        show_linear(defn)
    with pytest.raises(shax.ShaxTypeError, match=r"show_linear: expected a Definition"):
        show_linear("medium")  # type: ignore[arg-type]

"""Sharing recovery: explicit sharing by identity, implicit sharing by hash-consing,
post-order numbering from the outputs, and linear time on huge and deeply shared DAGs."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import typeguard

import shax
from shax import f32, f64
from shax import primitives as P
from shax.core.ir import Definition
from shax.stages import check_types, infer_types
from shax.tools.cli import load_function
from typeclasses import broadcast, cos, sin

MEDIUM = Path(__file__).resolve().parents[1] / "examples" / "medium.py"


def count(defn: Definition, prim: type[P.Primitive]) -> int:
    return sum(isinstance(b.prim, prim) for b in defn.bindings)


def doubling(x):
    """x = x * x + x, 60 times: 2^60 paths from the output to the argument."""
    for _ in range(60):
        x = x * x + x
    return x


def test_exponentially_many_paths_trace_to_linear_size() -> None:
    defn = shax.trace(doubling, f64[()])
    assert len(defn.bindings) == 1 + 2 * 60
    assert count(defn, P.Mul) == count(defn, P.Add) == 60
    typed = infer_types(defn)
    x = np.float64(-0.5)
    (result,) = shax.evaluate(typed, x)
    assert result == doubling(x)


def long_chain(x):
    """100,000 operations, each on the previous one."""
    for _ in range(50_000):
        x = x * 0.5 + 1.0
    return x


# typeguard's instrumentation (the pytest plugin) costs about 8x per call, which at
# 100,000 operations is most of a minute; this test is about shax's own complexity.
@pytest.mark.slow
@typeguard.suppress_type_checks
def test_a_hundred_thousand_operations() -> None:
    defn = shax.trace(long_chain, f64[()])
    # The argument, the two shared constants, then the operations.
    assert len(defn.bindings) == 3 + 100_000
    typed = infer_types(defn)
    assert check_types(typed) is typed
    (result,) = shax.evaluate(typed, 3.0)
    assert result == long_chain(3.0)
    assert str(typed).count("\n") == len(typed.bindings) + 1


def test_explicit_sharing_by_identity() -> None:
    def f(x):
        y = sin(x)
        return y * y + y

    defn = shax.trace(f, f32[3])
    assert count(defn, P.Sin) == 1
    assert str(defn).splitlines()[1:] == [
        "  let x0 = arg0",
        "      x1 = sin x0",
        "      x2 = mul x1 x1",
        "      x3 = add x2 x1",
        "  in [x3]",
    ]


def test_implicit_sharing_by_hash_consing() -> None:
    defn = shax.trace(lambda x: sin(x) + sin(x), f32[3])
    assert count(defn, P.Sin) == 1
    assert str(defn).splitlines()[2:] == ["      x1 = sin x0", "      x2 = add x1 x1", "  in [x2]"]


def test_hash_consing_merges_equal_constants_and_parameters() -> None:
    def f(x):
        a = x * 2.0 + np.array([1.0, 2.0, 3.0], np.float32)
        b = x * 2.0 + np.array([1.0, 2.0, 3.0], np.float32)
        c = broadcast(a, [1], [2, 3]) - broadcast(b, [1], [2, 3])
        return c, broadcast(a, [1], [4, 3])

    defn = shax.trace(f, f32[3])
    assert count(defn, P.Constant) == 2
    assert count(defn, P.Mul) == count(defn, P.Add) == 1
    assert count(defn, P.Broadcast) == 2  # different static parameters are different operations


def test_constants_of_different_dtypes_are_not_merged() -> None:
    defn = shax.trace(lambda x, y: (x + 1.0, y + 1.0), f32[2], f64[2])
    constants = [b.prim.value for b in defn.bindings if isinstance(b.prim, P.Constant)]
    assert sorted(c.dtype.name for c in constants) == ["float32", "float64"]


def test_large_constants_with_different_values_stay_apart() -> None:
    """Large constants are not compared by value, but must never be mistaken for each other."""
    first = np.linspace(0.0, 1.0, 64)
    second = np.linspace(0.0, 2.0, 64)

    def f(x):
        return (x + first) * (x + second)

    defn = infer_types(shax.trace(f, f64[64]))
    assert count(defn, P.Constant) == 2
    assert count(defn, P.Add) == 2
    x = np.linspace(-1.0, 1.0, 64)
    np.testing.assert_array_equal(shax.evaluate(defn, x)[0], f(x))


def test_numbering_is_post_order_from_the_outputs() -> None:
    defn = shax.trace(lambda a, b: (cos(b) + a, a), f32[2], f32[2])
    assert str(defn).splitlines()[2:] == [
        "  let x0 = arg1",
        "      x1 = cos x0",
        "      x2 = arg0",
        "      x3 = add x1 x2",
        "  in [x3, x2]",
    ]


def test_an_output_returned_twice_is_one_binding() -> None:
    defn = shax.trace(lambda x: (sin(x), sin(x)), f32[2])
    assert len(defn.bindings) == 2
    assert [v.id for v in defn.outputs] == [1, 1]


def test_an_argument_reached_late_gets_a_late_number() -> None:
    medium = load_function(f"{MEDIUM}:medium")
    defn = shax.trace(medium, f32[6], f32[2, 2])
    by_var = {b.var.id: b.prim for b in defn.bindings}
    assert by_var[0] == P.Arg(0)
    assert by_var[8] == P.Arg(1)

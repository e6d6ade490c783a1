"""Every built-in primitive is drawn by a step of `shax.testing.strategies.programs()`, so
the properties over generated programs exercise every primitive's rules; and an
elementwise primitive needs no step written for it (`shax.testing.derived_steps`).

Each step maker (and the call and loop steps) draws a few examples from fixed values,
derandomized; each drawn step's program, traced by `shax.xpr` and linearized, has its
primitives collected, with those of the definitions they hold."""

from __future__ import annotations

import functools
import math
from collections.abc import Callable
from typing import Any

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import shax
from shax.core.ir import Definition
from shax.core.primitive import Primitive, all_primitives
from shax.core.types import DType, TensorType, f64
from shax.stages import linearize
from shax.testing import derived_steps
from shax.testing.strategies import (
    ARG_BOUND,
    StepMaker,
    Value,
    _call,
    _loop,
    _Scope,
    compile_program,
    step_families,
)

# Not drawn, each for its reason.
EXEMPT = {
    "DebugPrint": "shax.debug.print prints whenever a program runs: drawn, it would flood the test output",
}

VALUES = [(2, 3), (3,), (3, 3), (2, 2, 3), (3, 2)]
EXAMPLES = 6
CALL_EXAMPLES = 30  # calls and loops draw a kind each (5 callee kinds, 4 loop kinds)
WHERE = (
    "add a step for it to FAMILIES in shax/testing/strategies.py (or shax/testing/structured_steps.py), "
    "in the family where it belongs (a family named nonsmooth... if it is not differentiable everywhere), "
    "or exempt it in EXEMPT here with the reason"
)


def primitives_in(defn: Definition) -> set[type[Primitive]]:
    """The primitives of `defn`'s bindings and of the definitions they hold, at any depth."""
    found: set[type[Primitive]] = set()
    seen: set[int] = set()
    todo = [defn]
    while todo:
        d = todo.pop()
        if id(d) in seen:
            continue
        seen.add(id(d))
        for binding in d.bindings:
            found.add(type(binding.prim))
            todo.extend(binding.prim.subdefinitions())
    return found


def drawn_by(maker: StepMaker, dtype: DType, differentiate: bool, examples: int = EXAMPLES) -> set[type[Primitive]]:
    """The primitives of the programs of one step `maker` draws, `examples` of them,
    derandomized: traced, and (if `differentiate`) linearized too."""
    found: set[type[Primitive]] = set()
    types = [TensorType(dtype, s) for s in VALUES]

    @settings(
        max_examples=examples, derandomize=True, database=None, deadline=None, suppress_health_check=list(HealthCheck)
    )
    @given(st.data())
    def draw(data: st.DataObject) -> None:
        values = [Value(s, ARG_BOUND) for s in VALUES]
        made = maker(data.draw, values, dtype)
        if made is None:
            return
        fn = compile_program(len(VALUES), [made[0]], [len(VALUES)])
        defn = shax.xpr(fn, *types)
        found.update(primitives_in(defn))
        if differentiate:
            lin = linearize(defn)
            found.update(primitives_in(lin.primal) | primitives_in(lin.linear))

    draw()
    return found


def _scoped(step: Callable[..., Any]) -> StepMaker:
    """A call or loop step, of a scope drawing its callee's or body's steps from one family."""
    return lambda draw, values, dtype: step(draw, values, _Scope(dtype, ("unary", "nonsmooth"), []))


@functools.cache
def coverage() -> dict[type[Primitive], str]:
    """Each primitive drawn, and the first step that drew it."""
    makers = [(f"{family}.{name}", maker) for family, steps in step_families().items() for name, maker in steps.items()]
    makers += [("call", _scoped(_call)), ("loop", _scoped(_loop))]
    first: dict[type[Primitive], str] = {}
    for where, maker in makers:
        scoped = where in ("call", "loop")  # their linear programs hold custom_vjp_linear
        for prim in drawn_by(maker, f64, differentiate=scoped, examples=CALL_EXAMPLES if scoped else EXAMPLES):
            first.setdefault(prim, where)
    return first


def built_in() -> list[type[Primitive]]:
    return [p for p in all_primitives() if p.__module__.startswith("shax.")]


def test_every_built_in_primitive_is_drawn_by_a_step() -> None:
    drawn = coverage()
    missing = sorted(p.__name__ for p in built_in() if p not in drawn and p.__name__ not in EXEMPT)
    assert not missing, f"drawn by no step of shax.testing.strategies.programs(): {', '.join(missing)}; {WHERE}"


def test_exempt_primitives_exist_and_are_not_drawn() -> None:
    names = {p.__name__: p for p in built_in()}
    assert set(EXEMPT) <= set(names), f"EXEMPT names no primitive: {sorted(set(EXEMPT) - set(names))}"
    drawn = [name for name in EXEMPT if names[name] in coverage()]
    assert not drawn, f"exempt, yet drawn (by {[coverage()[names[n]] for n in drawn]}): {drawn}; drop it from EXEMPT"


def test_every_elementwise_primitive_has_a_derived_step() -> None:
    derived = {name for steps in derived_steps.families().values() for name in steps}
    missing = sorted(p.__name__ for p in derived_steps.pointwise_primitives() if p.__name__ not in derived)
    assert not missing, f"no range found where these elementwise primitives are finite and vary: {missing}"


# A new elementwise primitive, declared with no step written for it
log_sqrt = shax.extend.elementwise_primitive(
    "coverage_log_sqrt", numpy=lambda x: np.log(np.sqrt(x)), derivative=lambda x, out: 0.5 / x
)


def test_a_new_elementwise_primitive_gets_a_smooth_step_where_it_is_finite() -> None:
    """Its derived step keeps log √x's operand positive, and draws it."""
    (cls,) = [p for p in all_primitives() if p.name == "coverage_log_sqrt"]
    found = derived_steps.domain(cls, f64)
    assert found is not None and found.smooth, found
    (c, r), bound = found.ranges[0], found.bound
    assert c - r > 0 and bound >= abs(math.log(math.sqrt(c + r))), found
    assert cls in drawn_by(derived_steps.derived_step(cls, smooth=True), f64, differentiate=True)
    assert log_sqrt(np.float64(4.0)) == math.log(2.0)

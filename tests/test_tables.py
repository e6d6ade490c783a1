"""The primitive declarations are complete: every primitive has a rule in every stage's
table (registered, or derived from its traits), a spec row in tests/spec.py, and every
typeclass function a method in every instance, so that no user meets a missing rule as
a KeyError or a missing method as an AttributeError.

Structural primitives (`arg`) are handled by each stage itself and need no entries;
there is no other way to exempt a primitive from a table. A variadic primitive (`call`)
has its arity and linearity per operation: checked on the operations its spec row makes.
"""

from __future__ import annotations

import attrs
import numpy as np
import pytest
from spec import FORWARD_ONLY, SPECS

import shax
import typeclasses as tc
from shax import primitives as P
from shax.core.primitive import implementing
from shax.rules import TABLES, transpose_rules
from shax.rules.transpose import not_linear
from shax.rules.zeros import ZeroInstance
from shax.stages import infer_types, linearize, transpose
from shax.tracing.checked_numpy import checked_numpy_instance
from shax.tracing.tracer import tracer_instance
from typeclasses.numpy_instance import numpy_instance

# The built-in primitives (tests declare primitives of their own, `test_extend`).
PRIMITIVES = [p for p in P.all_primitives() if p.__module__.startswith("shax.")]
TABLED = [p for p in PRIMITIVES if not p.structural]
INSTANCES = [numpy_instance, checked_numpy_instance, tracer_instance, ZeroInstance()]


def test_all_primitives_finds_the_declared_ones() -> None:
    assert {P.Arg, P.Constant, P.Sin, P.Add, P.Select, P.DotGeneral, P.Pad, P.Log1p} <= set(PRIMITIVES)
    assert not {P.Primitive, P.Pointwise} & set(PRIMITIVES)
    assert len({p.__name__ for p in PRIMITIVES}) == len(PRIMITIVES)


@pytest.mark.parametrize("table", sorted(TABLES))
def test_every_primitive_has_a_rule(table: str) -> None:
    missing = [p.__name__ for p in TABLED if not TABLES[table].covers(p)]
    assert not missing, f"no {table} rule for {missing}"


def test_a_second_rule_for_a_primitive_is_refused() -> None:
    with pytest.raises(shax.ShaxValueError, match="sin: a second linearize rule"):
        TABLES["linearize"].register(P.Sin)(lambda *args: None)


def test_a_missing_rule_is_a_named_error() -> None:
    with pytest.raises(shax.ShaxError, match="arg: no codegen rule"):
        TABLES["codegen"][P.Arg(0)]


def operations(prim: type[P.Primitive]) -> list[P.Primitive]:
    """The operations of a variadic primitive its spec row makes: those its cases apply, and
    those of their linear and transposed programs (a call of a derivative is linear)."""
    spec = SPECS[prim]
    found = []
    for case in spec.cases:
        defn = infer_types(shax.trace(case.apply, *spec.arg_types(case, spec.dtypes[0])))
        lin = linearize(defn, [k for k, t in enumerate(defn.arg_types) if t.dtype.is_float])  # cond's index is not
        transposed = () if prim in FORWARD_ONLY else (transpose(lin).linear,)
        for d in (defn, lin.linear, *transposed):
            found += [b.prim for b in d.bindings if isinstance(b.prim, prim)]
    return found


def is_linear(linearity: tuple[P.Linearity, ...]) -> bool:
    return P.Linearity.LINEAR in linearity or P.Linearity.BILINEAR in linearity


def test_linear_primitives_have_written_transpose_rules() -> None:
    """The others' rule is derived: it says they are not linear (div is linear in its numerator).
    A variadic primitive's linearity is per operation: written if any of its operations is linear."""
    for p in TABLED:
        if p.variadic:
            linear = any(is_linear(op.operand_linearity) for op in operations(p))
        else:
            linear = is_linear(p.linearity)
        assert transpose_rules.is_registered(p) == linear, p.__name__
        assert (transpose_rules.rule_for_class(p) is not not_linear) == linear, p.__name__


def test_every_primitive_has_a_spec_row() -> None:
    missing = [p.__name__ for p in PRIMITIVES if p not in SPECS]
    assert not missing, f"no row in tests/spec.py for {missing}"
    assert set(SPECS) <= set(PRIMITIVES)


@pytest.mark.parametrize("prim", PRIMITIVES, ids=lambda p: p.__name__)
def test_primitive_declares_name_linearity_arity(prim: type[P.Primitive]) -> None:
    assert attrs.has(prim)
    assert isinstance(prim.name, str) and prim.name
    if not prim.variadic:
        assert all(isinstance(operand, P.Linearity) for operand in prim.linearity)
        assert prim.arity == len(prim.linearity)
    ops = operations(prim) if prim.variadic else []
    assert ops or not prim.variadic, "a variadic primitive's spec row makes operations of it"
    for op in ops:
        assert all(isinstance(operand, P.Linearity) for operand in op.operand_linearity)
        assert op.arity == len(op.operand_linearity)
        linear = tuple(k for k, operand in enumerate(op.operand_linearity) if operand is P.Linearity.LINEAR)
        bilinear = tuple(k for k, operand in enumerate(op.operand_linearity) if operand is P.Linearity.BILINEAR)
        assert (op.linear_operands, op.bilinear_operands) == (linear, bilinear), op


@pytest.mark.parametrize("prim", [p for p in PRIMITIVES if p.function is not None], ids=lambda p: p.__name__)
def test_a_primitive_implements_a_declared_typeclass_function(prim: type[P.Primitive]) -> None:
    method = tc.method_of(prim.function)
    assert method in tc.FUNCTIONS
    assert implementing(method) is prim


@pytest.mark.parametrize("instance", INSTANCES, ids=lambda i: type(i).__name__)
def test_every_instance_has_every_typeclass_function(instance: tc.Instance) -> None:
    missing = [name for name in tc.FUNCTIONS if not callable(getattr(instance, name, None))]
    assert not missing, f"{type(instance).__name__} lacks {missing}"


def test_a_lacking_instance_is_a_named_error_not_an_attribute_error_only() -> None:
    class Partial(tc.Instance):
        def level(self, value: object) -> int:
            return 0

    with pytest.raises(tc.MissingMethodError, match="sin: the Partial typeclass instance does not implement it"):
        Partial().sin(np.float32(1.0))

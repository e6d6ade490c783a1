"""Rule-table completeness: every primitive has an entry in every stage's table
(`shax.rules.TABLES`, which grows as stages are added) and a spec row in tests/spec.py.

Structural primitives (`arg`) are handled by each stage itself and need no entries;
there is no other way to exempt a primitive from a table.
"""

from __future__ import annotations

import attrs
import pytest
from spec import SPECS

from shax import primitives as P
from shax.rules import TABLES

PRIMITIVES = P.all_primitives()
TABLED = [p for p in PRIMITIVES if not p.structural]


def test_all_primitives_finds_the_leaves() -> None:
    assert {P.Arg, P.Constant, P.Sin, P.Add, P.Select, P.DotGeneral, P.Pad} <= set(PRIMITIVES)
    assert not {P.Primitive, P.Unary, P.Binary} & set(PRIMITIVES)


@pytest.mark.parametrize("table", sorted(TABLES))
def test_every_primitive_has_a_rule(table: str) -> None:
    missing = [p.__name__ for p in TABLED if p not in TABLES[table]]
    assert not missing, f"no {table} rule for {missing}"


@pytest.mark.parametrize("table", sorted(TABLES))
def test_tables_hold_only_primitives(table: str) -> None:
    """Rules keyed by an abstract class (Unary) or a non-primitive would never be found."""
    stray = [getattr(k, "__name__", repr(k)) for k in TABLES[table] if k not in TABLED]
    assert not stray, f"{table} table has entries for {stray}"


def test_every_primitive_has_a_spec_row() -> None:
    missing = [p.__name__ for p in PRIMITIVES if p not in SPECS]
    assert not missing, f"no row in tests/spec.py for {missing}"
    assert set(SPECS) <= set(PRIMITIVES)


@pytest.mark.parametrize("prim", PRIMITIVES, ids=lambda p: p.__name__)
def test_primitive_declares_name_linearity_arity(prim: type[P.Primitive]) -> None:
    assert attrs.has(prim)
    assert isinstance(prim.name, str) and prim.name
    assert isinstance(prim.linearity, P.Linearity)
    assert isinstance(prim.arity, int) and prim.arity >= 0

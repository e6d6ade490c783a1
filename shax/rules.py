"""The per-primitive rule tables, one per stage, keyed by primitive class.

Rules are registered right under their primitive, in its family module
(`shax/primitives/*.py`), with the decorators below. Stages look rules up with
`rule_for`, which turns a missing entry into a `ShaxError` naming the stage.

    type_rules:       prim, *operand types -> result TensorType
    eval_rules:       prim, *operand values -> result value (through the typeclass functions)
    linearize_rules:  prim, primal operands, tangent operands, primal result -> result tangent
                      (tracers of the primal and of the linear trace; `shax.linear` says more)
    transpose_rules:  prim, result cotangent, *operands -> one cotangent (or None) per operand
                      (an operand is a `shax.linear.Linear` marker, or a value if not linear)
    batch_rules:      prim, operands, their batch axes (int, or None if unbatched; at least one
                      int) -> (the result for the whole batch, its batch axis or None)
                      (tracers of the batched trace; `shax.batching` says more)
    codegen_rules:    prim, site, *operands -> the source of a Python expression making the
                      numpy calls of the eval rule (`shax.pysource` says more)
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any, TypeVar

from shax.errors import ShaxError

if TYPE_CHECKING:
    from shax.primitives.base import Primitive
    from shax.types import TensorType

R = TypeVar("R", bound=Callable[..., Any])

type_rules: dict[type, Callable[..., TensorType]] = {}
eval_rules: dict[type, Callable[..., Any]] = {}
linearize_rules: dict[type, Callable[..., Any]] = {}
transpose_rules: dict[type, Callable[..., Any]] = {}
batch_rules: dict[type, Callable[..., Any]] = {}
codegen_rules: dict[type, Callable[..., str]] = {}

TABLES: dict[str, dict[type, Callable[..., Any]]] = {
    "type": type_rules,
    "eval": eval_rules,
    "linearize": linearize_rules,
    "transpose": transpose_rules,
    "batch": batch_rules,
    "codegen": codegen_rules,
}


def _registrar(table: dict[type, Callable[..., Any]]) -> Callable[..., Callable[[R], R]]:
    def register(*prim_classes: type) -> Callable[[R], R]:
        def decorate(rule: R) -> R:
            for cls in prim_classes:
                table[cls] = rule
            return rule

        return decorate

    return register


type_rule = _registrar(type_rules)
eval_rule = _registrar(eval_rules)
linearize_rule = _registrar(linearize_rules)
transpose_rule = _registrar(transpose_rules)
batch_rule = _registrar(batch_rules)
codegen_rule = _registrar(codegen_rules)


def rule_for(table: str, prim: Primitive) -> Callable[..., Any]:
    """The `table` rule of `prim`, or a ShaxError saying which stage lacks it."""
    try:
        return TABLES[table][type(prim)]
    except KeyError:
        raise ShaxError(f"{prim.name}: no {table} rule for this primitive") from None

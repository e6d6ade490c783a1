"""The per-primitive rules of every stage: one `RuleTable` per stage, keyed by primitive
class, each module holding a table, the `Protocol` its rules follow, and the vocabulary
they are written with.

    types       type_rules       prim, operand types -> result type
    evaluate    eval_rules       prim, operand values -> result value (default: the
                                 primitive's typeclass function)
    linearize   linearize_rules  prim, primals, tangents, primal result -> result tangent
                zero_rules       prim, operands (some symbolic zeros) -> result
                                 (both derived from linearity where it decides them)
    transpose   transpose_rules  prim, result cotangent, operands -> operand cotangents
    batch       batch_rules      prim, operands, batch axes -> batched result, its axis
    codegen     codegen_rules    prim, site, operands -> Python source of the numpy calls
    cost        cost_rules       prim, operand types, result type -> flops (`shax.stats`)
    export      export_rules     prim, JAX operands, result type -> JAX value (`shax.export`;
                                 derived from an elementwise declaration's `export=`)

Rules are registered right under their primitive, in its family module
(`shax/primitives/*.py`), with each table's decorator (`@linearize_rule(Sin)`).
"""

from shax.rules.batch import batch_rule, batch_rules
from shax.rules.codegen import codegen_rule, codegen_rules
from shax.rules.cost import cost_rule, cost_rules
from shax.rules.evaluate import eval_rule, eval_rules
from shax.rules.export import export_rule, export_rules
from shax.rules.linearize import linearize_rule, linearize_rules, zero_rule, zero_rules
from shax.rules.table import RuleTable
from shax.rules.transpose import transpose_rule, transpose_rules
from shax.rules.types import type_rule, type_rules

# stage -> its table, for the completeness tests and `shax.extend`
TABLES: dict[str, RuleTable] = {
    "type": type_rules,
    "eval": eval_rules,
    "linearize": linearize_rules,
    "zero": zero_rules,
    "transpose": transpose_rules,
    "batch": batch_rules,
    "codegen": codegen_rules,
    "cost": cost_rules,
    "export": export_rules,
}

__all__ = [
    "TABLES", "RuleTable", "batch_rule", "batch_rules", "codegen_rule", "codegen_rules", "eval_rule", "eval_rules",
    "linearize_rule", "linearize_rules", "transpose_rule", "transpose_rules", "type_rule", "type_rules",
    "zero_rule", "zero_rules",
    "cost_rule", "cost_rules", "export_rule", "export_rules",
]  # fmt: skip

"""From a tracer DAG to let-bindings, keeping every shared node as one binding.

Nodes are numbered in post-order from the outputs, operands left to right, each
the first time it is reached: this reproduces the original's "After tracing"
numbering. The results of an operation with several (a call, a loop) are bound
together, by one binding, when the first of them is reached, and numbered in order.
The walk is iterative and visits each node once, so a DAG with 2^60 paths or 100,000
operations takes linear time and no recursion.
"""

from __future__ import annotations

from collections.abc import Sequence

from shax.core.builder import Builder
from shax.core.ir import Var
from shax.tracing.tracer import Tracer


def recover_sharing(
    builder: Builder,
    outputs: Sequence[Tracer],
    typed: bool = False,
    var_of: dict[int, Var] | None = None,
    effects: Sequence[Tracer] = (),
) -> list[Var]:
    """Emit a binding per node reachable from `effects` (first, in their order, so effects
    are bound in the order they ran) or from `outputs`; return the outputs' vars.
    With `typed`, bindings carry the types the tracer computed (no need to infer them).
    `var_of`, if given, is filled with id(node) -> the var bound to it."""
    if var_of is None:
        var_of = {}
    for output in (*effects, *outputs):
        if id(output) in var_of:
            continue
        # The path from the output to the node being visited: each node with an iterator
        # over its operands, resumed where it stopped when the operand's subtree is bound.
        stack = [(output, iter(output.args))]
        while stack:
            node, operands = stack[-1]
            for operand in operands:
                if id(operand) not in var_of:
                    stack.append((operand, iter(operand.args)))
                    break
            else:  # every operand is bound
                stack.pop()
                args = tuple([var_of[id(a)] for a in node.args])
                siblings = node.siblings
                if siblings is None:
                    var_of[id(node)] = builder.emit(
                        node.prim, args, node.type if typed else None, node.source, node.origin
                    )
                else:  # every result of the operation, bound by one binding
                    types = [s.type if typed else None for s in siblings]
                    bound = builder.emit_results(node.prim, args, types, node.source, node.origin)
                    var_of.update(zip(map(id, siblings), bound))
    return [var_of[id(o)] for o in outputs]

"""Constant folding: typed Definition -> typed Definition.

A binding whose operands are all constants becomes the constant it evaluates to,
computed by the numpy method of its eval rule, with no check per operation as the
definition is typed (`add c1 c2` with `c1 = fromList [] [2.0]`, `c2 = fromList [] [3.0]`
becomes `fromList [] [5.0]`). A
broadcast of a constant to more than SMALL_CONSTANT elements stays a broadcast: folding
it would only spend memory. Constants left unused afterwards are removed (`dce`, as
in the original). One forward sweep: linear time in the bindings (plus the cost of
evaluating what is folded).
"""

from __future__ import annotations

import numpy as np

from shax.core.builder import Builder
from shax.core.errors import ShaxError, ShaxTypeError, at
from shax.core.ir import Binding, Definition, Var, type_of
from shax.core.printing import show_binding
from shax.passes.dce import dce
from shax.passes.nested import reaching_in
from shax.passes.rewrite import keep, keep_one, rewrite
from shax.primitives import SMALL_CONSTANT, Arg, Broadcast, Constant
from shax.rules.evaluate import numpy_rules


@reaching_in
def fold_constants(defn: Definition) -> Definition:
    value_of: dict[int, np.ndarray] = {}  # output var id -> its value, for vars bound to constants

    def fold(builder: Builder, binding: Binding, args: tuple[Var, ...]) -> Var | tuple[Var, ...]:
        prim = binding.prim
        if prim.multi_result:  # a call or loop of constants runs when the program runs
            return keep(builder, binding, args)
        t = type_of(binding.var)
        if isinstance(prim, Constant):
            var = keep_one(builder, binding, args)
            value_of[var.id] = prim.value
            return var
        foldable = (
            not isinstance(prim, Arg)
            and not prim.effectful  # a print of constants prints when the program runs
            and all(a.id in value_of for a in args)
        )
        if not foldable or (isinstance(prim, Broadcast) and t.size > SMALL_CONSTANT):
            return keep(builder, binding, args)
        try:
            with np.errstate(all="ignore"):  # inf and nan fold to what evaluation would give
                value = np.asarray(numpy_rules[prim](prim, [value_of[a.id] for a in args]), t.dtype.numpy)
        except (ShaxError, ArithmeticError, ValueError, TypeError) as error:
            message = f"fold_constants: in `{show_binding(binding)}`: {type(error).__name__}: {error}"
            raise at(ShaxTypeError(message), binding.source) from error
        var = builder.emit(Constant(value), (), t, binding.source)
        value_of[var.id] = value
        return var

    return dce(rewrite("fold_constants", defn, fold))

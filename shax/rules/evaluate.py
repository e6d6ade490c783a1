"""Evaluation rules: a primitive and its operands' values -> its result's value.

A primitive that implements a typeclass function is evaluated by calling it
(`prim.apply`): numpy operands compute a value through the numpy instance, tracer
operands record the operation (so evaluating a definition on tracers inlines it into
their trace, which is how transforms compose). Only primitives without a typeclass
function (constants) register a rule of their own.

The few primitives that implement no typeclass function and still record themselves on
tracers (`debug_print`, `checkpoint_name`) do it through `record`, whose recorder the
tracer installs when it is imported: dispatch cannot reach the tracer without a function,
and rules know no tracer.

`numpy_rules` are the same rules for numpy operands whose types are known to fit (the
definition passed its type rules): typeclasses' numpy method itself, without dispatch
or the checks shax's numpy instance makes per call, as compiled code calls it.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Protocol

import attrs

import typeclasses as tc
from shax.core.primitive import Primitive
from shax.rules.table import RuleTable
from typeclasses.numpy_instance import numpy_instance


class EvalRule(Protocol):
    def __call__(self, prim: Any, operands: Sequence[Any], /) -> Any: ...


def apply_function(prim: Primitive, operands: Sequence[Any]) -> Any:
    """The default rule: the primitive's typeclass function on the operands."""
    return prim.apply(*operands)


def _derive(cls: type[Primitive]) -> EvalRule | None:
    function = cls.function
    if function is None:
        return None
    if attrs.fields(cls):
        return apply_function

    def call(prim: Primitive, operands: Sequence[Any]) -> Any:  # no static arguments: the function alone
        return function(*operands)

    return call


eval_rules: RuleTable[EvalRule] = RuleTable("eval", _derive)
eval_rule = eval_rules.register


class Recorder(Protocol):
    def __call__(self, prim: Primitive, operands: Sequence[Any], open_trace: bool, /) -> Any: ...


def _nothing_traced(prim: Primitive, operands: Sequence[Any], open_trace: bool, /) -> None:
    return None  # until the tracer is loaded, no value is a tracer and no trace is open


# The recorder `record` calls: `shax.tracing.tracer`'s, once it is imported (one entry).
_recorders: list[Recorder] = [_nothing_traced]


def install_recorder(recorder: Recorder) -> None:
    """Called by `shax.tracing.tracer` as it is imported: how `record` records."""
    _recorders[:] = [recorder]


def record(prim: Primitive, operands: Sequence[Any], open_trace: bool = False) -> Any:
    """`prim` recorded on `operands` in the trace of the innermost tracer among them; with
    no tracer among them, in the innermost open trace if `open_trace` (an effect on
    constants inside `jit`). None if nothing records it: the caller computes the value."""
    return _recorders[0](prim, operands, open_trace)


def _derive_numpy(cls: type[Primitive]) -> EvalRule:
    function = cls.function
    if function is None or eval_rules.is_registered(cls):  # a rule of its own
        return eval_rules.rule_for_class(cls)
    method = getattr(numpy_instance, str(tc.method_of(function)), None)
    if method is None:  # no numpy method: the typeclass function decides
        return eval_rules.rule_for_class(cls)
    if attrs.fields(cls):
        return lambda prim, operands: method(*operands, *prim.static_args())
    return lambda prim, operands: method(*operands)


numpy_rules: RuleTable[EvalRule] = RuleTable("eval", _derive_numpy)

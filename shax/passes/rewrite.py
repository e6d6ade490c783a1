"""The walk every pass shares.

`rewrite(pass_name, defn, rule)` first checks that `defn` is typed and well formed
(raising a ShaxError that names the pass and the binding), then `walk`s it: the
bindings are visited in order and the rule maps each one, given its operands' vars in
the output, to the output var that holds its value (a tuple of them, one per result,
for an operation of several results), emitting any new bindings through one Builder.
The output is renumbered x0, x1, ... in emission order, and `xk = argj` bindings stay
bindings. One pass over the bindings, no recursion: linear time.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from shax.core.builder import Builder
from shax.core.errors import ShaxTypeError, at
from shax.core.gcpause import collector_paused
from shax.core.ir import Binding, Definition, Var, type_of
from shax.core.location import current_source
from shax.core.primitive import Primitive
from shax.core.printing import show_binding
from shax.core.well_typed import is_well_typed, mark_well_typed
from shax.primitives import Reshape
from shax.rules.types import result_type
from shax.tracing.validation import check_types, expect_definition

# builder, binding, its operands' output vars -> the output var holding its value (for a
# `multi_result` primitive, a tuple of them)
Rule = Callable[[Builder, Binding, tuple[Var, ...]], Var | tuple[Var, ...]]


def check_input(pass_name: str, defn: Definition) -> None:
    """Nothing if `defn` is typed and every annotation agrees with the type rules;
    else a ShaxError naming `pass_name` and the offending binding."""
    expect_definition(pass_name, defn)
    if is_well_typed(defn):  # checked already, or built typed by a stage or pass
        return
    for binding in defn.bindings:
        if any(
            v.type is None for v in binding.vars
        ):  # the caller's mistake, at the caller's line (the binding is fine)
            message = f"{pass_name}: in `{show_binding(binding)}`: untyped binding; run shax.stages.infer_types first"
            raise at(ShaxTypeError(message), current_source())
    check_types(defn, pass_name)


def rewrite(pass_name: str, defn: Definition, rule: Rule) -> Definition:
    check_input(pass_name, defn)
    return walk(defn, rule, pass_name)


@collector_paused()
def walk(defn: Definition, rule: Rule, origin: str | None = None) -> Definition:
    """`defn` rebuilt by `rule`, binding by binding (`defn` must be well formed); the
    bindings `rule` adds come from `origin` (the pass)."""
    builder = Builder(origin)
    new_var: dict[int, Var] = {}  # input var id -> the output var holding its value
    for binding in defn.bindings:
        out = rule(builder, binding, tuple(new_var[a.id] for a in binding.args))
        if isinstance(out, Var):
            new_var[binding.vars[0].id] = out
        else:
            new_var.update(zip([v.id for v in binding.vars], out, strict=True))
    # Returned vars keep the input's style: annotated only if they were.
    outputs = [new_var[v.id] if v.type is not None else Var(new_var[v.id].id) for v in defn.outputs]
    # Each binding is a well-typed one's, or typed by its type rule (`emit_typed`).
    return mark_well_typed(builder.build(defn.name, defn.arg_types, outputs))


def keep(builder: Builder, binding: Binding, args: tuple[Var, ...]) -> Var | tuple[Var, ...]:
    """The binding itself, on its operands' output vars: its var (its vars, for an
    operation of several results)."""
    kept = builder.keep_all(binding, args)
    return kept if binding.prim.multi_result else kept[0]


def keep_one(builder: Builder, binding: Binding, args: tuple[Var, ...]) -> Var:
    """`keep` for a binding of one result."""
    return builder.keep(binding, args)


def emit_typed(builder: Builder, prim: Primitive, args: Sequence[Var], source: str | None) -> Var:
    """A new binding, typed by its primitive's type rule."""
    return builder.emit(prim, args, result_type(prim, *(type_of(a) for a in args)), source)


def reshaped(builder: Builder, x: Var, shape: Sequence[int], source: str | None) -> Var:
    """`x` reshaped to `shape`, emitting a reshape only when the shape changes."""
    if x.type is not None and x.type.shape == tuple(shape):
        return x
    return emit_typed(builder, Reshape(shape), (x,), source)

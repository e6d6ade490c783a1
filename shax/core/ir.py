"""The typed let-IR. Definitions are values: stages return new ones and never mutate.

def medium(arg0 :: f32[6], arg1 :: f32[2, 2]) =
  let x0 :: f32[6] = arg0
      ...
  in [x14]
"""

from __future__ import annotations

import html
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import attrs

from shax.core.errors import ShaxTypeError
from shax.core.types import TensorType

if TYPE_CHECKING:
    from shax.core.primitive import Primitive


@attrs.frozen(repr=False)
class Var:
    """Variable `x{id}`; its type is known after type inference. Equality is by id."""

    id: int
    type: TensorType | None = attrs.field(default=None, eq=False)

    def __repr__(self) -> str:
        return f"x{self.id}" if self.type is None else f"x{self.id} :: {self.type}"


# How Jupyter shows a definition: the page of `shax.tools.html`, a later layer (it runs the
# stages), which installs itself when imported, as `import shax` does.
_html_views: list[Callable[[Definition | LinearizedDefinition], str]] = []


def install_html_view(view: Callable[[Definition | LinearizedDefinition], str]) -> None:
    """Show definitions in Jupyter with `view` (`shax.tools.html` installs its page)."""
    _html_views[:] = [view]


def _html_view(value: Definition | LinearizedDefinition) -> str:
    if not _html_views:  # `shax.tools.html` not imported: the printed text
        return f"<pre>{html.escape(str(value))}</pre>"
    return _html_views[0](value)


def type_of(var: Var) -> TensorType:
    """The type of `var`, a var of a typed definition (stages and passes check that on entry)."""
    if var.type is None:
        raise ShaxTypeError(f"x{var.id} is untyped; run shax.stages.infer_types first")
    return var.type


# The origin of a binding `shax.stages.unzip` copies into the linear program because the
# checkpoint policy did not save its value (then the rule or line that first made it):
# the backward pass's recomputation, which `shax.stats` counts as `recomputed_flops`.
RECOMPUTED = "recomputed by the checkpoint policy"


def _as_vars(value: Any) -> tuple[Any, ...]:
    """A binding's vars as a tuple: one Var given is one result (anything else but a list
    is kept as one, for validation to name)."""
    return tuple(value) if isinstance(value, (tuple, list)) else (value,)


@attrs.frozen(repr=False)
class Binding:
    """`var = prim args`, or `(x5, x6) = prim args` for an operation with several results
    (a call of a definition returning two values, a loop, a cond): one binding defines
    every result of one operation, as a jaxpr equation has several outvars. `vars` are
    the results in order (a single Var given is one result); `source` is the user's
    file:line that wrote the operation, and `origin` what emitted it: None for the user's
    own code (tracing), else a stage's rule (`linearize rule of sin`), a pass
    (`materialize_broadcasts`) or what a residual saves."""

    vars: tuple[Var, ...] = attrs.field(converter=_as_vars)
    prim: Primitive
    args: tuple[Var, ...]
    source: str | None = attrs.field(default=None, eq=False)
    origin: str | None = attrs.field(default=None, eq=False)

    @property
    def var(self) -> Var:
        """The one var a single-result binding defines."""
        if len(self.vars) != 1:
            raise ShaxTypeError(f"{self.prim.name} defines {len(self.vars)} vars, not one: read binding.vars")
        return self.vars[0]

    @property
    def recomputed(self) -> bool:
        """Whether a checkpoint policy recomputes this value in the backward pass (`RECOMPUTED`)."""
        return self.origin is not None and self.origin.startswith(RECOMPUTED)

    def __repr__(self) -> str:
        from shax.core.printing import show_binding

        return show_binding(self)


@attrs.frozen(repr=False)
class Definition:
    """A named function: argument types, bindings in dependency order, returned vars.

    Arguments enter through `arg{k}` bindings, as in the original's printout."""

    name: str
    arg_types: tuple[TensorType, ...]
    bindings: tuple[Binding, ...]
    outputs: tuple[Var, ...]

    @property
    def inputs(self) -> tuple[Var | None, ...]:
        """The var each argument is read into (its first `arg` binding; None if it is never
        read): PopXL's `graph.inputs`, naming the arguments in `inputs_dict` and `grads_required`."""
        from shax.core.primitive import Arg

        found: list[Var | None] = [None] * len(self.arg_types)
        for b in self.bindings:
            if isinstance(b.prim, Arg) and found[b.prim.index] is None:
                found[b.prim.index] = b.vars[0]
        return tuple(found)

    @property
    def is_typed(self) -> bool:
        return all(v.type is not None for b in self.bindings for v in b.vars)

    def bound_vars(self) -> dict[int, Var]:
        """var id -> the var as its binding defines it (with its type, once typed)."""
        return {v.id: v for b in self.bindings for v in b.vars}

    def output_types(self) -> tuple[TensorType, ...]:
        """The types of the returned vars (the definition must be typed)."""
        bound = self.bound_vars()
        return tuple(type_of(bound[v.id]) for v in self.outputs)

    def with_output_types(self) -> Definition:
        """The same definition with its returned vars annotated (`in [x5 :: f32[]]`)."""
        bound = self.bound_vars()
        return attrs.evolve(
            self, outputs=tuple(Var(v.id, bound[v.id].type if v.id in bound else None) for v in self.outputs)
        )

    def __str__(self) -> str:
        from shax.core.printing import show_definition

        return show_definition(self)

    __repr__ = __str__

    def _repr_html_(self) -> str:  # Jupyter: bindings that highlight their provenance on a click
        return _html_view(self)


@attrs.frozen(repr=False)
class LinearizedDefinition:
    """The primal returns outputs then `num_residuals` residuals; the linear
    definition takes one tangent per differentiated primal argument (all, by default),
    then the residuals."""

    primal: Definition
    linear: Definition
    num_residuals: int

    def __str__(self) -> str:
        return f"{self.primal}\n{self.linear}"

    __repr__ = __str__

    def _repr_html_(self) -> str:  # Jupyter
        return _html_view(self)

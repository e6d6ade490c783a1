"""A custom_jvp rule must be linear in the tangents (JAX's contract). Linearize builds the
function's derivative from the rule linearized in its tangents at zero tangents
(`shax.control.callees.custom_derivative`), which is the rule only if the rule is linear; the
structure of that linearization tells when it is not, instead of zeros without a word:

- a residual (what its linear part reads besides the tangents) computed from a tangent:
  the derivative in the tangents varies with them (`t * t`, `sin(t)`);
- an output tangent computed from no tangent that is not zero (`1.0`, `ones_like(x)`,
  `cos(x)`): an affine map, whose constant linearizing drops.
"""

from __future__ import annotations

from collections.abc import Collection

from shax.core.errors import ShaxTypeError
from shax.core.ir import Binding, Definition, LinearizedDefinition
from shax.core.primitive import Arg, Linearity
from shax.primitives import Constant


def check_linear_rule(rule: Definition, lin: LinearizedDefinition, tangents: Collection[int], shown: str) -> None:
    """Nothing if `rule` (primals, tangents) -> (outputs, output tangents), linearized in
    its argument positions `tangents` as `lin`, is linear in them; else a ShaxTypeError
    naming the rule as `shown`."""
    m = len(rule.outputs) // 2
    primal = lin.primal
    computed = _from_tangents(primal, tangents)
    step = _nonlinear_step(rule, tangents)
    # The residuals of an operation holding definitions (a call, a loop) come out of it
    # whole, read from the tangents or not: only an operation of known linearity decides.
    if step is not None and any(v.id in computed for v in primal.outputs[2 * m :]):
        raise ShaxTypeError(f"{_must(shown)}, but it {step}")
    zero = _zeros(primal)
    types = rule.output_types()
    for k, v in enumerate(primal.outputs[m : 2 * m]):
        if types[m + k].dtype.is_float and v.id not in computed and v.id not in zero:
            raise ShaxTypeError(
                f"{_must(shown)}, but its output tangent {k} does not depend on the tangents and is not zero"
            )


def _must(shown: str) -> str:
    return f"custom_jvp: the jvp rule {shown} must return output tangents linear in the tangents"


def _from_tangents(defn: Definition, tangents: Collection[int]) -> set[int]:
    """The ids of the vars of `defn` computed from its arguments at `tangents`."""
    found: set[int] = set()
    for b in defn.bindings:
        if isinstance(b.prim, Arg) and b.prim.index in tangents or any(a.id in found for a in b.args):
            found.update(v.id for v in b.vars)
    return found


def _zeros(defn: Definition) -> set[int]:
    """The ids of the vars of `defn` that are zero whatever its arguments: zero constants,
    linear operations of zeros and products with a zero factor."""
    found: set[int] = set()
    for b in defn.bindings:
        if _is_zero(b, found):
            found.update(v.id for v in b.vars)
    return found


def _is_zero(b: Binding, zeros: set[int]) -> bool:
    if isinstance(b.prim, Constant):
        return not b.prim.value.any()
    kinds = b.prim.operand_linearity
    linear = [a.id in zeros for a, kind in zip(b.args, kinds) if kind is Linearity.LINEAR]
    factors = [a.id in zeros for a, kind in zip(b.args, kinds) if kind is Linearity.BILINEAR]
    return any(factors) or (bool(linear) and all(linear))


def _nonlinear_step(rule: Definition, tangents: Collection[int]) -> str | None:
    """What the rule does to its tangents that is not linear: the first such operation of
    known linearity (not one holding definitions), if any."""
    computed: set[int] = set()
    for b in rule.bindings:
        touched = [kind for a, kind in zip(b.args, b.prim.operand_linearity) if a.id in computed]
        if b.prim.subdefinitions():
            touched = []
        elif any(k not in (Linearity.LINEAR, Linearity.BILINEAR) for k in touched):
            return f"applies {b.prim.name} to a tangent"
        if touched.count(Linearity.BILINEAR) > 1:
            return f"multiplies two tangents ({b.prim.name})"
        if isinstance(b.prim, Arg) and b.prim.index in tangents or any(a.id in computed for a in b.args):
            computed.update(v.id for v in b.vars)
    return None

"""The operations that hold definitions: `call` (a callee), `cond` (branches), `scan` and
`while` (bodies), `custom_jvp`, `custom_vjp` and `custom_vjp_linear` (a function and its
derivative rules), each one primitive of several results on `Control`, with what the
stages make of the definitions it holds (`callees`, `loop_bodies`, `cond_branches`).

Their rules run stages, evaluation and codegen on those definitions, so this layer sits
above them: it imports them at module level, and nothing below imports it. The layers
below see these operations through the traits every primitive has (`subdefinitions`,
`show`, `pruned`, `callee`), never by class."""

from shax.control.call import Call
from shax.control.cond import Cond
from shax.control.custom import CustomJVP, CustomVJP, CustomVJPLinear, Rule
from shax.control.loops import Scan, While

__all__ = ["Call", "Cond", "CustomJVP", "CustomVJP", "CustomVJPLinear", "Rule", "Scan", "While"]

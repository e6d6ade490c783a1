"""Exercise mode of `shax.explain`: the page with the bindings one rule emitted left blank,
for the learner to fill in.

    shax.explain(f, f32[3]).exercise("sin")          # in a notebook: the page (_repr_html_)
    shax explain FILE:FN TYPES --exercise sin --html out.html

A rule is named by its primitive (`"sin"`: the linearize rule of sin and the transpose
rule of sin) or by its whole origin (`"linearize rule of sin"`, `"transpose rule of
mul"`): the bindings whose `origin` it is are hidden in the linearized and transposed
programs, each a box to type it in, which the page checks by evaluating the answer on the
values it holds (`shax.tools.html_check`); in the zipped program they show as `?`. The page
holds no text view and no diff (they would show the answers).
"""

from __future__ import annotations

import math
import re
from typing import TYPE_CHECKING

import attrs

from shax.core.errors import ShaxTypeError, ShaxValueError, at
from shax.core.location import current_source

if TYPE_CHECKING:
    from shax.core.ir import Definition
    from shax.tools.explain import Explanation

ANSWERED, HIDDEN = 1, 2  # a blank with a box to answer in; a blank shown as `?`
_RULE = re.compile(r"(linearize|transpose) rule of (\S+)$")
VALUES_LIMIT = 200_000  # elements of a program with blanks, beyond which the page would hold too many values


@attrs.frozen(eq=False)
class Exercise:
    """An explanation with the bindings of `rule` blank (`Explanation.exercise`)."""

    explanation: Explanation
    rule: str
    origins: frozenset[str]  # the `origin`s of the hidden bindings
    # id(definition) -> var id -> ANSWERED or HIDDEN
    blanks: dict[int, dict[int, int]] = attrs.field(factory=dict)

    @property
    def num_blanks(self) -> int:
        """How many bindings the learner fills in."""
        return sum(mode == ANSWERED for blanks in self.blanks.values() for mode in blanks.values())

    def _repr_html_(self) -> str:  # Jupyter
        from shax.tools.html import explanation_html

        return explanation_html(self.explanation, self)

    def to_html(self) -> str:
        """The whole page `shax explain ... --exercise RULE --html OUT` writes."""
        from shax.tools.html import explanation_html, page

        return page(explanation_html(self.explanation, self), f"shax exercise: {self.rule}")


def exercise(e: Explanation, rule: str) -> Exercise:
    """`e` with the bindings emitted by `rule` blank (see the module's docstring)."""
    if not isinstance(rule, str):
        raise at(ShaxTypeError(f"exercise: the rule must be a str such as 'sin', got {rule!r:.60}"), current_source())
    answered = (e.linearized.primal, e.linearized.linear, e.transposed.primal, e.transposed.linear)
    emitted = {m.group(0) for d in answered for b in d.bindings if (m := _RULE.match(b.origin or ""))}
    named = _RULE.match(rule)
    origins = {rule} if named else {f"linearize rule of {rule}", f"transpose rule of {rule}"}
    if not origins & emitted:
        rules = sorted({_RULE.match(o).group(2) for o in emitted})  # type: ignore[union-attr]
        message = (
            f"exercise: no binding of {e.traced.name}'s linearized or transposed program came from the "
            f"{'rule' if named else 'rules'} {' or '.join(sorted(origins))}; the rules there are of "
            f"{', '.join(rules) or 'no primitive'}"
        )
        raise at(ShaxValueError(message), current_source())
    blanks: dict[int, dict[int, int]] = {}
    for defn, mode in [*((d, ANSWERED) for d in answered), (e.zipped, HIDDEN)]:
        hidden = {b.vars[0].id: mode for b in defn.bindings if b.vars and b.origin in origins}
        if hidden and mode == ANSWERED:
            _check_size(defn)
        if hidden:
            blanks.setdefault(id(defn), hidden)
    return Exercise(e, rule, frozenset(origins & emitted), blanks)


def _check_size(defn: Definition) -> None:
    """The page holds every value of a program with blanks: refuse one too large for a page."""
    elements = sum(math.prod(v.type.shape) for b in defn.bindings for v in b.vars if v.type is not None)
    if elements > VALUES_LIMIT:
        message = (
            f"exercise: the program {defn.name} holds {elements} elements, more than the {VALUES_LIMIT} an exercise "
            "page holds to check answers with; explain the function at smaller shapes"
        )
        raise at(ShaxValueError(message), current_source())

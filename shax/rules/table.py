"""`RuleTable`: one stage's rules, keyed by primitive class.

A rule is registered once, right under its primitive (`@linearize_rule(Sin)`); a second
registration for the same primitive is refused, so two modules cannot silently disagree.
A primitive without a registered rule may still have one *derived* from its traits (its
linearity, its typeclass function): each table says how, and derives it on first use.
Looking up a rule that is neither registered nor derivable is a `ShaxError` naming the
primitive and the stage, never a `KeyError`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Generic, TypeVar

from shax.core.errors import ShaxError, ShaxValueError
from shax.core.primitive import Primitive

R = TypeVar("R")


class RuleTable(Generic[R]):
    def __init__(self, stage: str, derive: Callable[[type[Primitive]], R | None] | None = None) -> None:
        self.stage = stage
        self._derive = derive
        self._registered: dict[type[Primitive], R] = {}  # primitive class -> its rule, as registered
        self._rules: dict[type[Primitive], R] = {}  # primitive class -> its rule, registered or derived

    def register(self, *classes: type[Primitive]) -> Callable[[R], R]:
        """A decorator registering its rule for each of `classes`."""

        def decorate(rule: R) -> R:
            for cls in classes:
                self.add(cls, rule)
            return rule

        return decorate

    def add(self, cls: type[Primitive], rule: R) -> None:
        if cls in self._registered:
            raise ShaxValueError(f"{cls.name}: a second {self.stage} rule for {cls.__qualname__}")
        self._registered[cls] = self._rules[cls] = rule

    def __getitem__(self, prim: Primitive) -> R:
        """The rule for `prim`'s class (every operation of a stage comes here)."""
        try:
            return self._rules[type(prim)]
        except KeyError:
            return self.rule_for_class(type(prim))

    def rule_for_class(self, cls: type[Primitive]) -> R:
        rule = self._rules.get(cls)
        if rule is None and self._derive is not None:
            rule = self._derive(cls)
            if rule is not None:
                self._rules[cls] = rule
        if rule is None:
            raise ShaxError(f"{cls.name}: no {self.stage} rule for this primitive")
        return rule

    def covers(self, cls: type[Primitive]) -> bool:
        """Whether `cls` has a rule here, registered or derived."""
        try:
            self.rule_for_class(cls)
        except ShaxError:
            return False
        return True

    def is_registered(self, cls: type[Primitive]) -> bool:
        """Whether `cls`'s rule was registered, not derived."""
        return cls in self._registered

    @contextmanager
    def replaced(self, cls: type[Primitive], rule: R) -> Iterator[None]:
        """Within this block, `cls`'s rule is `rule` (to try a rule out, or test a stage)."""
        saved = self._registered.get(cls), self._rules.get(cls)
        self._registered[cls] = self._rules[cls] = rule
        try:
            yield
        finally:
            for table, old in zip((self._registered, self._rules), saved):
                if old is None:
                    table.pop(cls, None)
                else:
                    table[cls] = old

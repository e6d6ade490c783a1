"""What every primitive is, as data: a frozen attrs class with

- `name`, how bindings print it (`sin`, `dot_general`);
- `function`, the typeclass function it implements (`tc.sin`): the tracer's instance
  of that function records this primitive, and its default evaluation rule calls it;
- `linearity`, one entry per operand, from which the linearize and transpose defaults,
  the symbolic-zero rules and the operand checks of transpose are derived;
- the traits the passes read (`commutative`, `neutral`, `broadcasting`, `forwarded`);
- its static parameters, as typed attrs fields (`Reshape.shape`), in the order the
  typeclass function takes them after its operands.

This module is a leaf: the IR, the rule tables and the stages import it, and it imports
none of them. `Arg`, the structural primitive every definition reads its arguments
with, lives here too. Concrete primitives register themselves as they are declared
(`all_primitives`); `shax.primitives` declares the built-in ones, `shax.extend` helps
users declare theirs.
"""

from __future__ import annotations

import enum
import operator
from collections.abc import Callable, Mapping, Sequence
from inspect import getattr_static
from typing import TYPE_CHECKING, Any, ClassVar

import attrs
import numpy as np

import typeclasses as tc
from shax.core.derived import has_effects
from shax.core.errors import ShaxError, ShaxTypeError, ShaxValueError, at, named
from shax.core.location import current_source

if TYPE_CHECKING:
    from shax.core.ir import Definition, Var
    from shax.core.types import TensorType

    # a pass run on a held definition (`with_rewritten`); a name that only exists for type
    # checkers, as `Definition` here, so that typeguard leaves it to them
    Rewrite = Callable[[Definition], Definition]


class Linearity(enum.Enum):
    """How a primitive depends on one of its operands, the others held fixed."""

    # Linear, jointly with the primitive's other LINEAR operands: add's two, select's branches.
    LINEAR = "linear"
    # Linear in this operand alone, every other operand fixed: each factor of mul, dot_general.
    BILINEAR = "bilinear"
    NONLINEAR = "nonlinear"
    # Locally constant, so its derivative is zero: select's predicate, eq's operands, signum's.
    NON_DIFFERENTIABLE = "non-differentiable"


# (module, qualified name, typeclass function) -> the primitive class declared so: the last
# declaration wins, as attrs replaces a class by its slotted copy and a module may be
# reloaded; two declarations for two typeclass functions of one name are two primitives.
_declared: dict[tuple[str, str, object], type[Primitive]] = {}


@attrs.frozen
class Primitive:
    name: ClassVar[str]
    linearity: ClassVar[tuple[Linearity, ...]]
    arity: ClassVar[int]  # the number of operands: len(linearity), set on declaration
    # The typeclass function this primitive implements (None: reached only by stages).
    function: ClassVar[Callable[..., Any] | None] = None
    # Structural primitives (`arg`) are handled by each stage itself, not by rule tables.
    structural: ClassVar[bool] = False
    # Pass traits. cse: `f x y` repeats `f y x`.
    commutative: ClassVar[bool] = False
    # forward_identities: (e, positions): `f` with the constant e (all elements 0 or 1) at
    # one of these operand positions passes the other operand on (x * 1, x + 0, x / 1).
    neutral: ClassVar[tuple[int, tuple[int, ...]] | None] = None
    # Operands broadcast against each other like numpy's (materialize_broadcasts).
    broadcasting: ClassVar[bool] = False
    # A result of its operand's type is its operand (reshape, slice, pad, ... to the same shape).
    same_type_is_identity: ClassVar[bool] = False
    # Arithmetic on numbers: a boolean operand beside a number is 0 and 1 of its dtype (the tracer casts it).
    booleans_as_numbers: ClassVar[bool] = False
    # An operation with several results (a call, a loop, a cond, eigh): one binding defines
    # them all (`Binding.vars`), and every rule takes or gives one entry per result: its type
    # rule a tuple of types, its evaluation rule a list of values, its linearize rule a list
    # of tangents, its transpose rule a list of cotangents, its batch rule a list of values
    # and one of axes, its codegen rule an expression giving a list.
    multi_result: ClassVar[bool] = False
    # Its number of operands and their linearity are per operation (fields), not per class.
    variadic: ClassVar[bool] = False
    # Cost traits (`shax.rules.cost`): one flop per result element; only moves data (no flops).
    elementwise: ClassVar[bool] = False
    shape_only: ClassVar[bool] = False
    # An effect (debug_print): running it does more than compute its result, so every pass
    # keeps it though nothing reads the result, never merges two, and runs effects in order.
    effectful: ClassVar[bool] = False

    # The positions of the LINEAR and of the BILINEAR operands, set on declaration.
    linear_operands: ClassVar[tuple[int, ...]] = ()
    bilinear_operands: ClassVar[tuple[int, ...]] = ()

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if "linearity" in cls.__dict__ and not cls.variadic:
            cls.arity = len(cls.linearity)
            cls.linear_operands = cls.positions(Linearity.LINEAR)
            cls.bilinear_operands = cls.positions(Linearity.BILINEAR)
        if "name" in cls.__dict__:  # concrete; families (Unary, Binary) leave it to their members
            _declared[(cls.__module__, cls.__qualname__, cls.function)] = cls

    # Derived from linearity.

    @classmethod
    def positions(cls, linearity: Linearity) -> tuple[int, ...]:
        """The operand positions of that linearity."""
        return tuple(k for k, operand in enumerate(cls.linearity) if operand is linearity)

    @property
    def operand_linearity(self) -> tuple[Linearity, ...]:
        """The linearity of this operation's operands (a variadic primitive's is per operation)."""
        return self.linearity

    # The typeclass boundary: `function(*operands, *static_args())` runs this primitive.

    def static_args(self) -> tuple[Any, ...]:
        """The static parameters as the typeclass function takes them, after the operands."""
        return _fields_getter(type(self))(self)

    @classmethod
    def from_static_args(cls, *args: Any) -> Primitive:
        """The primitive for the typeclass function's static arguments (static_args' inverse)."""
        return cls(*args)

    def apply(self, *operands: Any) -> Any:
        """This operation on `operands`, through its typeclass function: numpy values give a
        value, tracers record it (the default evaluation rule)."""
        function = type(self).function
        if function is None:
            raise ShaxError(f"{self.name}: implements no typeclass function, so it cannot be applied")
        return function(*operands, *self.static_args())

    # Identity and errors.

    def cons_key(self) -> Any:
        """What identifies this operation for hash-consing and CSE."""
        return self

    def forwarded(self, args: Sequence[Var], out: TensorType) -> int | None:
        """The position of the operand this operation passes on unchanged, if any
        (forward_identities), given its operand vars and result type."""
        if self.same_type_is_identity and args[0].type == out:
            return 0
        return None

    def forwarded_results(self) -> tuple[int | None, ...]:
        """For an operation of several results: per result, the position of the operand
        it passes on unchanged, if any (forward_identities); () when none does."""
        return ()

    def show(self, names: Mapping[int, str]) -> str | None:
        """How a binding prints this operation with its static parameters, `names` naming
        definitions by identity (None: the printer's form, its name then its fields)."""
        return None

    def pruned(self, read: Sequence[bool]) -> tuple[Primitive, tuple[int, ...]] | None:
        """For an operation of several results some of which nothing reads (`read` per
        result): one computing fewer, and the positions of the results it keeps (dce).
        None: it computes them all."""
        return None

    def hoisted(self) -> Hoisting | None:
        """For a loop some of whose carries only add up a product of per-step values
        (`acc = acc + dot_general(a, b)`): the loop that stacks the factors instead, and
        how each sum is one product of the stacks after it (hoist_accumulations). None:
        it carries no such sum."""
        return None

    def callee(self) -> Definition | None:
        """The definition computing this operation's results from its operands as they
        are (a call's), which inlining copies in its place; None for most."""
        return None

    def subdefinitions(self) -> tuple[Definition, ...]:
        """The definitions this operation holds (a call's callee; a loop's body, a branch;
        a custom derivative's rule): printing shows each once, before the definitions
        that use it."""
        return ()

    def with_rewritten(self, rewrite: Rewrite) -> Primitive:
        """This operation holding `rewrite`'s result in place of each definition it holds
        (a pass reaching into a branch, a body, a callee; `rewrite` keeps each one's
        signature): itself when it holds none, or `rewrite` returns each as it was."""
        return self

    def runs(self) -> tuple[Definition, ...]:
        """Of `subdefinitions`, those evaluating this operation runs (not a derivative
        rule, which only differentiating it uses)."""
        return self.subdefinitions()

    def has_effect(self) -> bool:
        """Whether running this operation has an effect: it is `effectful`, or a definition
        it runs (a loop's body, a callee) has an effectful binding."""
        if self.effectful:
            return True
        return any(map(has_effects, self.runs()))

    def fail(self, message: str, *operand_types: TensorType, error: type[ShaxError] = ShaxTypeError) -> ShaxError:
        """An error naming this primitive and its operand types."""
        operands = ", ".join(map(str, operand_types))
        return error(f"{self.name}: {message}" + (f" (operands: {operands})" if operand_types else ""))


@attrs.frozen
class Hoisted:
    """A sum a loop no longer carries (`Primitive.hoisted`): its result `result` is its
    operand `init` plus `total` of the stacked `terms` (the step's product, contracting
    the step axis too), each `("operand", k)`, the loop's operand k, or `("result", k)`,
    the rewritten loop's result k."""

    result: int
    init: int
    total: Primitive
    terms: tuple[tuple[str, int], ...]


@attrs.frozen
class Hoisting:
    """A loop rewritten so (`Primitive.hoisted`): `prim` takes the operands at positions
    `operands`; its first results are the old ones at positions `results`, then come
    the factors it stacks; each of `sums` rebuilds one old result after it."""

    prim: Primitive
    operands: tuple[int, ...]
    results: tuple[int, ...]
    sums: tuple[Hoisted, ...]


# primitive class -> the function reading its attrs fields, in order, as a tuple
_getters: dict[type[Primitive], Callable[[Primitive], tuple[Any, ...]]] = {}


def _fields_getter(cls: type[Primitive]) -> Callable[[Primitive], tuple[Any, ...]]:
    getter = _getters.get(cls)  # evaluation asks once per binding: built once per class
    if getter is None:
        names = [field.name for field in attrs.fields(cls)]
        if len(names) > 1:
            getter = operator.attrgetter(*names)
        else:
            getter = lambda prim: tuple(getattr(prim, name) for name in names)
        _getters[cls] = getter
    return getter


def all_primitives() -> list[type[Primitive]]:
    """Every primitive declared so far, built-in and user-declared, by class name."""
    return sorted(_declared.values(), key=lambda c: (c.__name__, c.__module__))


def implementing(method: str) -> type[Primitive] | None:
    """The primitive implementing the typeclass function whose instance method is `method`."""
    # The latest first: a redeclared one replaces its old self. Over a copy, which another
    # thread declaring a primitive meanwhile cannot change.
    for cls in reversed(tuple(_declared.values())):
        if cls.function is not None and tc.method_of(cls.function) == method:
            return cls
    return None


class DerivedInstance(tc.Instance):
    """A typeclass instance whose method for each typeclass function is derived, on first
    use, from the primitive implementing it (`derive`), then kept as a plain method.
    Threads using a method first at the same time each derive it and set it: methods that
    do the same, so whichever is kept serves them all."""

    def derive(self, cls: type[Primitive], method: str) -> Callable[..., Any]:
        raise NotImplementedError

    def __getattr__(self, method: str) -> Any:
        cls = None if method.startswith("_") else implementing(method)
        if cls is None:
            return super().__getattr__(method)
        setattr(type(self), method, self.derive(cls, method))
        return getattr(self, method)


def primitive_method(
    cls: type[Primitive],
    method: str,
    run: Callable[[Primitive, tuple[Any, ...]], Any],
    build: Callable[..., Primitive] | None = None,
) -> Callable[..., Any]:
    """The instance method `method` of the typeclass function `cls` implements: its first
    `cls.arity` arguments are the operands, the rest the static arguments, from which
    `build` (`cls.from_static_args` by default) makes the primitive; it returns
    `run(primitive, operands)`. A class without static parameters has one primitive."""
    arity, make = cls.arity, build or cls.from_static_args
    inherited = getattr_static(cls, "from_static_args") is getattr_static(Primitive, "from_static_args")
    if not attrs.fields(cls) and inherited:
        prim = cls()

        def call(self: Any, *operands: Any) -> Any:
            return run(prim, operands)

    else:

        def call(self: Any, *args: Any) -> Any:
            return run(make(*args[arity:]), args[:arity])

    call.__name__ = method
    return call


def from_user_args(cls: type[Primitive]) -> Callable[..., Primitive]:
    """`cls.from_static_args` for static arguments a user gave (to its typeclass function),
    whose errors name the operation and the user's line."""

    def build(*params: Any) -> Primitive:
        try:
            return cls.from_static_args(*params)
        except ShaxError as error:
            raise at(named(error, cls.name), current_source()) from None
        except (TypeError, ValueError) as error:
            message = f"{cls.name}: bad static parameters {params!r}: {error}"
            raise at(ShaxTypeError(message), current_source()) from None

    return build


def ints(values: Any) -> tuple[int, ...]:
    """A static parameter that is a list of ints, as a tuple."""
    if isinstance(values, (str, bytes, bytearray)):  # sequences, but not of ints (b"ab" would be (97, 98))
        raise ShaxValueError(f"expected a list of ints, got {values!r}")
    try:
        items = tuple(values)
    except TypeError:
        raise ShaxValueError(f"expected a list of ints, got {values!r}") from None
    if all(type(v) is int for v in items):  # the common case, checked first: stages build many
        return items
    if not all(isinstance(v, (int, np.integer)) and not isinstance(v, bool) for v in items):
        raise ShaxValueError(f"expected a list of ints, got {values!r}")
    return tuple(int(v) for v in items)


def integer(value: Any) -> int:
    """A static parameter that is one int (an axis, a count)."""
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, np.integer)):
        raise ShaxValueError(f"expected an int, got {value!r}")
    return int(value)


def sizes(values: Any) -> tuple[int, ...]:
    """A static parameter that is a shape: a list of non-negative ints, as a tuple."""
    items = ints(values)
    if min(items, default=0) < 0:
        raise ShaxValueError(f"expected a shape (non-negative ints), got {values!r}")
    return items


def number(value: Any) -> float:
    """A static parameter that is a number (a bool, int or float, Python's or numpy's), as a float."""
    if not isinstance(value, (bool, int, float, np.bool_, np.integer, np.floating)):
        raise ShaxValueError(f"expected a number, got {value!r}")
    try:
        return float(value)
    except OverflowError:
        raise ShaxValueError(f"expected a number that converts to a float, got {value!r}") from None


def int_pairs(values: Sequence[Any]) -> tuple[tuple[int, int], ...]:
    """A static parameter that is a list of (lo, hi) int pairs, as a tuple of pairs."""
    try:
        pairs = tuple(ints(p) for p in values)
    except (ShaxValueError, TypeError):
        raise ShaxValueError(f"expected a list of (lo, hi) int pairs, got {values!r}") from None
    if not all(len(p) == 2 for p in pairs):
        raise ShaxValueError(f"expected a list of (lo, hi) int pairs, got {values!r}")
    return tuple((lo, hi) for lo, hi in pairs)


@attrs.frozen
class Arg(Primitive):
    """`x0 = arg0`: the value of argument `index`. Each stage reads arguments itself."""

    name: ClassVar[str] = "arg"
    linearity: ClassVar[tuple[Linearity, ...]] = ()
    structural: ClassVar[bool] = True
    index: int

    def show(self, names: Mapping[int, str]) -> str:
        return f"arg{self.index}"

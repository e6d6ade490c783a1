"""`shax.custom_jvp` and `shax.custom_vjp`: a function with a derivative rule of its own,
with JAX's API.

    @shax.custom_jvp
    def log1pexp(x):
        return log(1.0 + exp(x))

    @log1pexp.defjvp
    def log1pexp_jvp(primals, tangents):
        (x,), (dx,) = primals, tangents
        return log1pexp(x), dx * (1.0 - 1.0 / (1.0 + exp(x)))

On numpy values the function just runs. Traced, a call is one operation holding the
function's definition and its rule (`shax.control.custom`), both traced once per
argument types; every transform then uses the rule. `nondiff_argnums` are Python values
(hashable, part of what is traced), passed to the function and, first, to the rule
(`rule(*nondiff, primals, tangents)`, `fwd(*args)`, `bwd(*nondiff, residuals, ct)`).
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable, Hashable, Sequence
from typing import Any, SupportsIndex

import attrs
import numpy as np

from shax.control.custom import CustomJVP, CustomVJP, Rule
from shax.core.errors import ShaxError, ShaxTypeError, ShaxValueError, at, named
from shax.core.ir import Definition
from shax.core.location import current_source
from shax.core.pytree import TreeDef, flatten, unflatten
from shax.core.types import TensorType
from shax.passes import cleanup
from shax.tracing.trace import check_arity, check_function, function_location, function_name
from shax.tracing.tracer import Tracer, apply_all
from shax.transforms.arguments import abstract_arguments
from shax.transforms.staging import stage

# numpy's integers too, as JAX takes them
ArgNums = Sequence[SupportsIndex] | SupportsIndex | None


@attrs.frozen
class _Built:
    prim: CustomJVP | CustomVJP
    out_tree: TreeDef


class _Custom:
    """What custom_jvp and custom_vjp share: the function, its static arguments, and
    what was traced per argument types."""

    kind = "custom"

    def __init__(self, fun: Callable[..., Any], nondiff_argnums: ArgNums = ()) -> None:
        check_function(self.kind, fun)
        self.fun = fun
        self.name = function_name(fun)
        self.nondiff_argnums = self._checked_argnums(nondiff_argnums)
        self._built: dict[Hashable, _Built] = {}
        functools.update_wrapper(self, fun)

    def _checked_argnums(self, given: Any) -> tuple[int, ...]:
        """`nondiff_argnums` as sorted positions: an int or a sequence of them (None, as in JAX,
        none), each naming a parameter of the function if its number of them is fixed."""
        given = () if given is None else given
        entries = [given] if _is_index(given) else given
        if isinstance(given, (str, bytes)) or not isinstance(entries, Sequence) or not all(map(_is_index, entries)):
            message = f"{self.kind}: nondiff_argnums must be non-negative ints, got {given!r}"
            raise at(ShaxValueError(message), current_source())
        positions = tuple(sorted({int(k) for k in entries}))
        try:
            parameters = inspect.signature(self.fun).parameters.values()
        except (TypeError, ValueError):  # a builtin without a signature: checked at the call
            return positions
        kinds = [p.kind for p in parameters]
        if positions and inspect.Parameter.VAR_POSITIONAL not in kinds:
            count = sum(
                k in (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD) for k in kinds
            )
            beyond = [k for k in positions if k >= count]
            if beyond:
                shown = f"{getattr(self.fun, '__name__', self.name)}{inspect.signature(self.fun)}"
                message = f"{self.kind} {self.name}: nondiff_argnums {beyond} name no argument of {shown}"
                raise at(ShaxValueError(message), current_source())
        return positions

    def __call__(self, *args: Any) -> Any:
        self._check_arguments(args)
        if any(k >= len(args) for k in self.nondiff_argnums):
            message = (
                f"{self.kind} {self.name}: nondiff_argnums {list(self.nondiff_argnums)} given {len(args)} argument(s)"
            )
            raise at(ShaxTypeError(message), current_source())
        static = tuple(args[k] for k in self.nondiff_argnums)
        primals = tuple(a for k, a in enumerate(args) if k not in self.nondiff_argnums)
        leaves, _ = flatten(primals)
        if not any(isinstance(leaf, Tracer) for leaf in leaves):
            return self.fun(*args)  # on values it just runs
        self._check_ready()
        leaves, in_tree, types = abstract_arguments(f"{self.kind} {self.name}", primals)
        try:
            key = (in_tree, types, static)
            hash(key)
        except TypeError:
            message = f"{self.kind} {self.name}: its nondiff arguments must be hashable, got {static!r}"
            raise at(ShaxTypeError(message), current_source()) from None
        built = self._built.get(key)
        if built is None:
            try:
                built = self._build(static, in_tree, types)
            except ShaxError as error:
                raise at(error, current_source()) from None
            self._built[key] = built
        return unflatten(built.out_tree, apply_all(built.prim, *leaves))

    def _check_ready(self) -> None:
        raise NotImplementedError

    def _check_arguments(self, args: tuple[Any, ...]) -> None:
        """Arguments the function's signature cannot take are a ShaxError, on values as traced."""
        check_arity(self.kind, "", self.fun, _positions(len(args)))

    def _check_rule(self, role: str, rule: Callable[..., Any], *given: str) -> None:
        """`rule` can take the nondiff arguments, then `given`: checked when it is defined."""
        check_function(f"{self.kind} {self.name}.def{self.kind[-3:]}", rule)
        check_arity(f"{self.kind} {self.name}", role, rule, [*_positions(len(self.nondiff_argnums)), *given])

    def _build(self, static: tuple[Any, ...], in_tree: TreeDef, types: tuple[TensorType, ...]) -> _Built:
        raise NotImplementedError

    def _with_static(self, static: tuple[Any, ...], primals: Sequence[Any]) -> list[Any]:
        """The function's whole argument list: the static values back at their positions."""
        args = list(primals)
        for k, value in zip(self.nondiff_argnums, static):
            args.insert(k, value)
        return args

    def _staged(
        self, what: str, fn: Callable[..., Any], user: Callable[..., Any], in_tree: TreeDef, types: Sequence[TensorType]
    ) -> Any:
        """`fn` (calling the user's `user`) traced; an error in what it returns locates `user`."""
        signature = inspect.signature(fn)  # fn's own arguments are the ones checked
        fn.__wrapped__ = user  # type: ignore[attr-defined]  # function_location unwraps
        fn.__signature__ = signature  # type: ignore[attr-defined]
        try:
            staging = stage(fn, in_tree, tuple(types))
        except ShaxError as error:
            if str(error).startswith(f"{self.kind} {self.name}: "):  # named already
                raise
            raise named(error, f"{self.kind} {self.name}: its {what}") from None
        if staging.captured:
            message = (
                f"{self.kind} {self.name}: its {what} uses {len(staging.captured)} value(s) traced outside it; "
                "pass them as arguments (or as nondiff_argnums)"
            )
            raise ShaxTypeError(message)
        return staging

    def _function(self, static: tuple[Any, ...], in_tree: TreeDef, types: Sequence[TensorType]) -> Any:
        staging = self._staged("function", lambda *p: self.fun(*self._with_static(static, p)), self.fun, in_tree, types)
        return staging, _renamed(staging.typed, self.name)


class custom_jvp(_Custom):  # noqa: N801 - JAX's name
    """A function whose forward derivative is `rule` (`f.defjvp(rule)`)."""

    kind = "custom_jvp"

    def __init__(self, fun: Callable[..., Any], nondiff_argnums: ArgNums = ()) -> None:
        super().__init__(fun, nondiff_argnums)
        self.jvp: Callable[..., Any] | None = None

    def defjvp(self, jvp: Callable[..., Any]) -> Callable[..., Any]:
        """Use `jvp(*nondiff, primals, tangents) -> (outputs, output tangents)` as the rule."""
        self._check_rule("the jvp rule", jvp, "primals", "tangents")
        self.jvp, self._built = jvp, {}
        return jvp

    def _check_ready(self) -> None:
        if self.jvp is None:
            message = f"custom_jvp {self.name}: no rule; define one with {self.name}.defjvp"
            raise at(ShaxTypeError(message), current_source())

    def _build(self, static: tuple[Any, ...], in_tree: TreeDef, types: tuple[TensorType, ...]) -> _Built:
        staging, defn = self._function(static, in_tree, types)
        rule_fn = self.jvp
        assert rule_fn is not None
        n = len(types)

        def rule(*leaves: Any) -> Any:
            primals = unflatten(in_tree, leaves[:n])
            tangents = unflatten(in_tree, leaves[n:])
            result = rule_fn(*static, tuple(primals), tuple(tangents))
            if not (isinstance(result, (tuple, list)) and len(result) == 2):
                raise ShaxTypeError(f"custom_jvp {self.name}: its rule must return (outputs, output tangents)")
            return tuple(result)

        def traced_rule() -> Definition:
            pairs = self._staged("rule", rule, rule_fn, _flat(2 * n), [*types, *types])
            outputs, tangents = _halves(pairs.out_tree, "rule's (outputs, output tangents)", self.name)
            _check_matches(f"custom_jvp {self.name}: its rule's outputs", outputs, staging.out_tree)
            _check_matches(f"custom_jvp {self.name}: its rule's output tangents", tangents, staging.out_tree)
            # As JAX: the outputs and their tangents have the function's output types.
            m = len(defn.outputs)
            got = pairs.typed.output_types()
            for k, want in enumerate(defn.output_types()):
                for what, t in (("output", got[k]), ("output tangent", got[m + k])):
                    if t != want:
                        message = f"its rule's {what} {k} is {t}, but the function's output {k} is {want}"
                        raise ShaxTypeError(f"custom_jvp {self.name}: {message}")
            return _renamed(pairs.typed, function_name(rule_fn))

        traced = Rule(traced_rule, function_name(rule_fn), function_location(rule_fn))
        return _Built(CustomJVP(defn, traced), staging.out_tree)


class custom_vjp(_Custom):  # noqa: N801 - JAX's name
    """A function whose reverse derivative is given by `f.defvjp(fwd, bwd)`."""

    kind = "custom_vjp"

    def __init__(self, fun: Callable[..., Any], nondiff_argnums: ArgNums = ()) -> None:
        super().__init__(fun, nondiff_argnums)
        self.fwd: Callable[..., Any] | None = None
        self.bwd: Callable[..., Any] | None = None

    def defvjp(self, fwd: Callable[..., Any], bwd: Callable[..., Any]) -> None:
        """`fwd(*args) -> (outputs, residuals)`; `bwd(*nondiff, residuals, output
        cotangents) -> a tuple of cotangents, one per (differentiable) argument`."""
        check_function(f"{self.kind} {self.name}.defvjp", fwd)
        self._check_rule("bwd", bwd, "residuals", "cotangents")
        self.fwd, self.bwd, self._built = fwd, bwd, {}

    def _check_ready(self) -> None:
        if self.fwd is None or self.bwd is None:
            message = f"custom_vjp {self.name}: no rule; define one with {self.name}.defvjp"
            raise at(ShaxTypeError(message), current_source())

    def _build(self, static: tuple[Any, ...], in_tree: TreeDef, types: tuple[TensorType, ...]) -> _Built:
        staging, defn = self._function(static, in_tree, types)
        fwd_fn, bwd_fn = self.fwd, self.bwd
        assert fwd_fn is not None and bwd_fn is not None
        check_arity(f"custom_vjp {self.name}", "fwd", fwd_fn, _positions(len(static) + len(in_tree.children)))

        def fwd(*primals: Any) -> Any:
            result = fwd_fn(*self._with_static(static, primals))
            if not (isinstance(result, (tuple, list)) and len(result) == 2):
                raise ShaxTypeError(f"custom_vjp {self.name}: its fwd must return (outputs, residuals)")
            return tuple(result)

        m = len(defn.outputs)
        output_types = defn.output_types()
        staged: dict[str, Any] = {}  # fwd's staging, once traced

        def forward() -> Any:
            if "fwd" not in staged:
                found = staged["fwd"] = self._staged("fwd", fwd, fwd_fn, in_tree, types)
                outputs, _ = _halves(found.out_tree, "fwd's (outputs, residuals)", self.name)
                _check_matches(f"custom_vjp {self.name}: its fwd's outputs", outputs, staging.out_tree)
            return staged["fwd"]

        def bwd(*leaves: Any) -> Any:
            residuals = forward().out_tree.children[1]
            count = residuals.num_leaves
            res = unflatten(residuals, leaves[:count])
            cts = unflatten(staging.out_tree, leaves[count:])
            result = bwd_fn(*static, res, cts)
            if not isinstance(result, (tuple, list)) or len(result) != len(in_tree.children):
                given = f"a {type(result).__name__}" if not isinstance(result, (tuple, list)) else len(result)
                raise ShaxTypeError(
                    f"custom_vjp {self.name}: its bwd must return a tuple of {len(in_tree.children)} cotangent(s), "
                    f"one per argument, got {given}"
                )
            # None is a zero cotangent, as in JAX.
            return _zeros_for_none(tuple(result), in_tree, types)

        def traced_bwd() -> Definition:
            residual_types = forward().typed.output_types()[m:]
            backward = self._staged(
                "bwd", bwd, bwd_fn, _flat(len(residual_types) + m), [*residual_types, *output_types]
            )
            _check_matches(f"custom_vjp {self.name}: its bwd's cotangents", backward.out_tree, in_tree)
            for k, (got, want) in enumerate(zip(backward.typed.output_types(), types)):
                if got != want:
                    message = f"its bwd's cotangent {k} is {got}, but argument {k} is {want}"
                    raise ShaxTypeError(f"custom_vjp {self.name}: {message}")
            return _renamed(backward.typed, function_name(bwd_fn))

        fwd_rule = Rule(lambda: _renamed(forward().typed, function_name(fwd_fn)), function_name(fwd_fn))
        bwd_rule = Rule(traced_bwd, function_name(bwd_fn))
        return _Built(CustomVJP(defn, fwd_rule, bwd_rule), staging.out_tree)


def _is_index(k: Any) -> bool:
    """An argument's position: a non-negative int (a numpy one too), not a bool."""
    return isinstance(k, (int, np.integer)) and not isinstance(k, (bool, np.bool_)) and bool(k >= 0)


def _positions(n: int) -> list[str]:
    """How an arity error names n arguments of the function (its nondiff ones among them)."""
    return [f"args[{k}]" for k in range(n)]


def _renamed(defn: Definition, name: str) -> Definition:
    return cleanup(attrs.evolve(defn, name=name)) if defn.name != name else cleanup(defn)


def _flat(n: int) -> TreeDef:
    """The tree of n leaves passed as n arguments."""
    return flatten(tuple(range(n)))[1]


def _halves(tree: TreeDef, what: str, name: str) -> tuple[TreeDef, TreeDef]:
    children = tree.children
    if len(children) != 2:
        raise ShaxTypeError(f"{name}: its {what} must be a pair")
    return children[0], children[1]


def _check_matches(what: str, tree: TreeDef, expected: TreeDef) -> None:
    if tree != expected:
        raise ShaxTypeError(f"{what} have the structure {tree}, but the function's is {expected}")


def _zeros_for_none(cotangents: tuple[Any, ...], in_tree: TreeDef, types: Sequence[TensorType]) -> tuple[Any, ...]:
    """Each None among `cotangents` (one per argument subtree) as zeros of its leaves' types."""
    filled = []
    leaf = 0
    for ct, child in zip(cotangents, in_tree.children):
        count = child.num_leaves
        if ct is None:
            ct = unflatten(child, [np.zeros(t.shape, t.dtype.numpy) for t in types[leaf : leaf + count]])
        filled.append(ct)
        leaf += count
    return tuple(filled)

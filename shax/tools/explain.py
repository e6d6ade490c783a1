"""`shax.explain`: the whole pipeline on one function, printed like the original's transcript.

    print(shax.explain(medium, f32[6], f32[2, 2], inputs=x, tangents=x, cotangents=[ct]))

traces `f`, infers types, rewrites (canonicalizing `dot`s, lowering `reduce_sum`),
linearizes, evaluates f(x) and df(dx), transposes, evaluates dft(ct), zips the primal
and the transpose into one VJP definition and evaluates it. Values not given are drawn
from a seeded generator. `str()` prints every section; `show(keys)` only some of them.
"""

from __future__ import annotations

import reprlib
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import attrs
import numpy as np

from shax.core.errors import ShaxError, ShaxTypeError, ShaxValueError, a_type, at
from shax.core.ir import Definition, LinearizedDefinition
from shax.core.location import current_source
from shax.core.printing import show_definition, show_values
from shax.core.types import TensorType, bool_
from shax.passes import apply_passes
from shax.stages import evaluate_linearized, infer_types, jvp, linearize, transpose, unzip, zip_definitions
from shax.tools.diff import diff as diff_of
from shax.tools.exercise import Exercise, exercise
from shax.tools.naming import names_in, source_names
from shax.tools.stats import PipelineStats, pipeline_stats
from shax.tracing.evaluate import evaluate
from shax.tracing.trace import check_function, trace

REWRITES = ("canonicalize_dot_general", "lower_reductions_to_sums_of_slices")

# section key -> its header, in the order of the transcript (the original spells "Ziped")
HEADERS = {
    "trace": "After tracing:",
    "types": "After type inference:",
    "rewrites": "After rewrites (canonicalizing `dot`s and lowering `reduce_sum` to pointwise `+` and `slice`):",
    "linearized": "Linearized definition(s):",
    "f": "f(x):",
    "df": "df(dx):",
    "transposed": "Transposed definition(s):",
    "f_again": "f(x) (again):",
    "dft": "dft(ct):",
    "zipped": "Ziped primal and transpose:",
    "vjp": "VJP:",
}
# stages="yolo" only, after the rewrites: You Only Linearize Once's first two steps, which
# linearize does at once
YOLO_HEADERS = {
    "jvp": "JVP (forward mode: each binding followed by its tangent's):",
    "unzipped": "Unzipped (the JVP's primal and linear parts; the residuals are what the policy saves):",
}
EVERY_HEADER = {**HEADERS, **YOLO_HEADERS}  # section key -> its header, for every section there is


@attrs.frozen(eq=False)  # it holds arrays, which do not compare to a bool
class Explanation:
    """Every stage's result for one function and one set of values."""

    traced: Definition
    typed: Definition
    rewritten: Definition
    linearized: LinearizedDefinition
    transposed: LinearizedDefinition
    zipped: Definition
    inputs: tuple[np.ndarray, ...]
    tangents: tuple[np.ndarray, ...]
    cotangents: tuple[np.ndarray, ...]
    outputs: tuple[Any, ...]  # f(x)
    output_tangents: tuple[Any, ...]  # df(dx)
    outputs_again: tuple[Any, ...]  # f(x), from the transposed LinearizedDefinition
    input_cotangents: tuple[Any, ...]  # dft(ct)
    vjp: tuple[Any, ...]  # the zipped definition's results: f(x), then dft(ct)
    provenance: bool = False  # each binding followed by where it came from
    # id(a definition above) -> its vars' names from the user's code (names="source")
    var_names: Mapping[int, Mapping[int, str]] = attrs.field(factory=dict)
    # Each stage shown as a diff from the one before (diff=True), and the rewrites that
    # changed nothing.
    as_diffs: bool = False
    unchanged_passes: tuple[str, ...] = ()
    with_stats: bool = False  # show() ends with each stage's stats
    # stages="yolo": the JVP program and its unzipped parts (None by default)
    jvp: Definition | None = None
    unzipped: LinearizedDefinition | None = None

    def section_keys(self) -> list[str]:
        """The keys of this explanation's sections, in transcript order."""
        return list(self._section_makers())

    def sections(self, keys: Sequence[str] | None = None) -> dict[str, str]:
        """Section key -> its text, in transcript order: the sections named by `keys`, all
        of them by default. Only those are printed: a million-element array takes seconds."""
        makers = self._section_makers()
        return {k: make() for k, make in makers.items() if keys is None or k in keys}

    def _section_makers(self) -> dict[str, Callable[[], str]]:
        makers = self._transcript_makers()
        if self.jvp is None or self.unzipped is None:
            return makers
        jvp_defn, unzipped = self.jvp, self.unzipped
        yolo = {"jvp": lambda: self._shown(jvp_defn), "unzipped": lambda: self._shown(unzipped)}
        keys = list(makers)
        at_rewrites = keys.index("rewrites") + 1
        return {k: {**makers, **yolo}[k] for k in [*keys[:at_rewrites], *yolo, *keys[at_rewrites:]]}

    def _transcript_makers(self) -> dict[str, Callable[[], str]]:
        shown = self._shown
        if self.as_diffs:
            nothing = ", ".join(self.unchanged_passes) or "none"
            return {
                "trace": lambda: shown(self.traced),
                "types": lambda: str(diff_of(self.traced, self.typed)),
                "rewrites": lambda: f"{diff_of(self.typed, self.rewritten)}\npasses that changed nothing: {nothing}",
                "linearized": lambda: "\n".join(
                    [
                        str(diff_of(self.rewritten, self.linearized.primal)),
                        shown(self.linearized.linear, self.linearized.primal),
                    ]
                ),
                "f": lambda: show_values(self.outputs),
                "df": lambda: show_values(self.output_tangents),
                "transposed": lambda: (
                    f"(primal: as linearized)\n{shown(self.transposed.linear, self.transposed.primal)}"
                ),
                "f_again": lambda: show_values(self.outputs_again),
                "dft": lambda: show_values(self.input_cotangents),
                "zipped": lambda: str(diff_of(self.transposed.primal, self.zipped)),
                "vjp": lambda: show_values(self.vjp),
            }
        return {
            "trace": lambda: shown(self.traced),
            "types": lambda: shown(self.typed),
            "rewrites": lambda: shown(self.rewritten),
            "linearized": lambda: shown(self.linearized),
            "f": lambda: show_values(self.outputs),
            "df": lambda: show_values(self.output_tangents),
            "transposed": lambda: shown(self.transposed),
            "f_again": lambda: show_values(self.outputs_again),
            "dft": lambda: show_values(self.input_cotangents),
            "zipped": lambda: shown(self.zipped),
            "vjp": lambda: show_values(self.vjp),
        }

    def _shown(self, defn: Definition | LinearizedDefinition, saved: Definition | None = None) -> str:
        """`defn` as printed; `saved` is the primal program whose values its residuals receive."""
        if isinstance(defn, LinearizedDefinition):
            return f"{self._shown(defn.primal)}\n{self._shown(defn.linear, defn.primal)}"
        saved_names = self.var_names.get(id(saved)) if saved is not None else None
        return show_definition(defn, self.provenance, self.var_names.get(id(defn)), saved_names)

    def show(self, keys: Sequence[str] | None = None) -> str:
        """The sections named by `keys` (all of them by default), each under its header."""
        known = ", ".join(EVERY_HEADER)
        if keys is not None and (isinstance(keys, str) or not isinstance(keys, (list, tuple))):
            message = f"explain: show takes a list of section names ({known}), got {reprlib.repr(keys)}"
            raise at(ShaxTypeError(message), current_source())
        unknown = [str(k) for k in keys or () if not isinstance(k, str) or k not in EVERY_HEADER]
        if unknown:
            message = f"explain: unknown section(s) {', '.join(unknown)}; the sections are {known}"
            raise at(ShaxValueError(message), current_source())
        shown = [f"{EVERY_HEADER[k]}\n{text}" for k, text in self.sections(keys).items()]
        if self.with_stats:
            shown.append(f"Stats:\n{self.stats()}")
        return "\n".join(shown)

    def to_dot(self) -> str:
        """The Graphviz DOT text of reverse mode (`shax.to_dot`): the linearized primal, its
        linear and its transposed programs, the residuals joining them."""
        from shax.tools.graphviz import Part, graph

        r = self.linearized.num_residuals
        parts = [
            Part(self.linearized.primal, "primal", residual_outputs=r),
            Part(self.linearized.linear, "linear", residual_args=r),
            Part(self.transposed.linear, "transposed", residual_args=self.transposed.num_residuals),
        ]
        if self.transposed.primal is not self.linearized.primal:
            parts.insert(2, Part(self.transposed.primal, "primal", residual_outputs=self.transposed.num_residuals))
        return graph(self.traced.name, parts)

    def stats(self) -> PipelineStats:
        """Per stage: its bindings, flops, residuals and their bytes, and peak live bytes (`shax.stats`)."""
        return pipeline_stats(self)

    def exercise(self, rule: str) -> Exercise:
        """The page with the bindings `rule` emitted left blank, for the learner to fill in
        and the page to check (`shax.tools.exercise`): `rule` names a primitive (`"sin"`: its
        linearize and transpose rules) or one rule (`"transpose rule of mul"`)."""
        return exercise(self, rule)

    def __str__(self) -> str:
        return self.show()

    def _repr_html_(self) -> str:  # Jupyter: each stage collapsible, bindings linked by provenance
        from shax.tools.html import explanation_html

        return explanation_html(self)

    def to_html(self) -> str:
        """The whole page `shax explain ... --html OUT` writes: every stage, self-contained."""
        from shax.tools.html import explanation_html, page

        return page(explanation_html(self), f"shax explain {self.traced.name}")


def explain(
    f: Callable[..., Any],
    *arg_types: TensorType | str,
    inputs: Sequence[Any] | None = None,
    tangents: Sequence[Any] | None = None,
    cotangents: Sequence[Any] | None = None,
    seed: int = 0,
    provenance: bool = False,
    names: str | None = None,
    diff: bool = False,
    progress: Callable[[str], object] | None = None,
    stats: bool = False,
    stages: str = "default",
    policy: Callable[..., bool] | None = None,
) -> Explanation:
    """Run every stage on `f` at `arg_types`; evaluate at `inputs` (x), `tangents` (dx)
    and output `cotangents` (ct), each one value per argument (per output for ct). With
    `provenance`, every printed binding is followed by where it came from: the user's
    line, and the stage's rule or the pass that emitted it (`linearize rule of sin`).
    With `names="source"`, a value the function (or a helper it calls) assigned to a
    variable prints under that name where it is unambiguous (`z` for `z = x + y`). With
    `diff`, each stage prints as a diff from the one before (`shax.diff`), and the
    rewrites that changed nothing are listed. With `stats`, the printout ends with each
    stage's bindings, flops, residuals and peak live bytes (`Explanation.stats()`).
    `progress`, if given, is called with the name of each step as it begins (the CLI
    shows them on a terminal). With `stages="yolo"`, the sections "JVP" and "Unzipped"
    follow the rewrites: "You Only Linearize Once"'s forward mode (`shax.stages.jvp`) and
    its unzipping (`shax.stages.unzip`, by the checkpoint `policy`: default, save
    everything, which gives linearize's programs) before the transpose."""
    check_function("explain", f)
    if not isinstance(provenance, bool):
        raise at(ShaxTypeError(f"explain: provenance must be a bool, got {provenance!r}"), current_source())
    if not isinstance(diff, bool):
        raise at(ShaxTypeError(f"explain: diff must be a bool, got {diff!r}"), current_source())
    if not isinstance(stats, bool):
        raise at(ShaxTypeError(f"explain: stats must be a bool, got {stats!r}"), current_source())
    if names is not None and names != "source":
        message = f"explain: names must be None (x0, x1, ...) or 'source' (the user's names), got {names!r}"
        raise at(ShaxValueError(message), current_source())
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or seed < 0:
        raise at(ShaxValueError(f"explain: seed must be a non-negative int, got {seed!r}"), current_source())
    if progress is not None and not callable(progress):
        message = f"explain: progress must be None or a function called with each step's name, got {progress!r:.60}"
        raise at(ShaxTypeError(message), current_source())
    if stages not in ("default", "yolo"):
        message = (
            f"explain: stages must be 'default' or 'yolo' (adding the JVP and Unzipped sections), got {stages!r:.60}"
        )
        raise at(ShaxValueError(message), current_source())
    if policy is not None and (stages != "yolo" or not callable(policy)):
        message = f"explain: policy is a checkpoint policy (a function) for stages='yolo', got {policy!r:.60}"
        raise at(ShaxTypeError(message), current_source())
    report = progress or (lambda stage: None)
    report("tracing")
    traced = trace(f, *arg_types)
    report("type inference")
    typed = infer_types(traced)
    report("rewrites")
    rewritten = apply_passes(typed, REWRITES)
    jvp_defn = unzipped = None
    if stages == "yolo":
        report("jvp")
        jvp_defn = jvp(rewritten)
        report("unzip")
        unzipped = unzip(jvp_defn, policy)
    report("linearize")
    linearized = linearize(rewritten)
    report("transpose")
    transposed = transpose(linearized)
    report("zip")
    zipped = zip_definitions(transposed)
    report("evaluation")
    rng = np.random.default_rng(seed)
    output_types = rewritten.output_types()
    x = _values("inputs", typed.arg_types, inputs, rng)
    dx = _values("tangents", typed.arg_types, tangents, rng)
    ct = _values("cotangents", output_types, cotangents, rng)
    outputs, output_tangents = evaluate_linearized(linearized, x, dx)
    outputs_again, input_cotangents = evaluate_linearized(transposed, x, ct)
    vjp = evaluate(zipped, *x, *ct)
    var_names = {}
    if names == "source":
        report("names")
        user = source_names(f, arg_types)
        n = len(typed.arg_types)
        var_names = {
            id(traced): user,
            **{id(d): names_in(d, traced, user, primal_args=n) for d in (typed, rewritten, linearized.primal, zipped)},
            **{
                id(lin.linear): names_in(lin.linear, traced, user, primal=lin.primal)
                for lin in (linearized, transposed)
            },
        }
    if diff:
        report("diffs")
    unchanged_passes = _unchanged_passes(typed) if diff else ()
    return Explanation(
        traced, typed, rewritten, linearized, transposed, zipped, x, dx, ct,
        tuple(outputs), tuple(output_tangents), tuple(outputs_again), tuple(input_cotangents), tuple(vjp),
        provenance, var_names, diff, unchanged_passes, stats, jvp_defn, unzipped,
    )  # fmt: skip


def _unchanged_passes(typed: Definition) -> tuple[str, ...]:
    """The rewrites that change nothing, each applied after the ones before it."""
    unchanged = []
    current = typed
    for name in REWRITES:
        after = apply_passes(current, [name])
        if not diff_of(current, after).changed:
            unchanged.append(name)
        current = after
    return tuple(unchanged)


def _values(
    what: str, types: Sequence[TensorType], given: Sequence[Any] | None, rng: np.random.Generator
) -> tuple[np.ndarray, ...]:
    """The `given` values as arrays of `types`, or random ones (normal floats, small ints)."""
    if given is None:
        return tuple(_random(t, rng) for t in types)
    expected = ", ".join(map(str, types))
    if not isinstance(given, (list, tuple)):
        message = f"explain: {what} must be a list of {len(types)} value(s) ({expected}), got {a_type(given)}"
        raise at(ShaxTypeError(message), current_source())
    if len(given) != len(types):
        message = f"explain: {what} needs {len(types)} value(s) ({expected}), got {len(given)}"
        raise at(ShaxValueError(message), current_source())
    try:
        return tuple(_array(f"explain: {what}[{k}]", t, value) for k, (t, value) in enumerate(zip(types, given)))
    except ShaxError as error:
        raise at(error, current_source()) from None


def _array(what: str, t: TensorType, value: Any) -> np.ndarray:
    """`value` (an array, a number, or nested lists of numbers) as an array of type `t`:
    its numbers must convert to t's dtype within their kind (ints to floats, not floats to
    ints, nor complex numbers or strings to anything), and its shape must be t's."""
    try:
        array = np.asarray(value)
    except ValueError:  # nested lists of different lengths
        raise ShaxTypeError(f"{what} is not an array: {reprlib.repr(value)}") from None
    target = np.dtype(t.dtype.numpy)
    # Ints go to any integer dtype (numpy's same_kind refuses int64 to uint8), within its range (below).
    integers = array.dtype.kind in "biu" and target.kind in "iu"
    if array.dtype.kind not in "biuf" or not (integers or np.can_cast(array.dtype, target, "same_kind")):
        raise ShaxTypeError(f"{what} holds {array.dtype} values, which do not convert to {t}: {reprlib.repr(value)}")
    if array.shape != t.shape:
        raise ShaxValueError(f"{what} has shape {list(array.shape)}, but its type is {t}")
    limits = np.iinfo(target) if target.kind in "iu" else None
    if limits is not None and array.size and (array.min() < limits.min or array.max() > limits.max):
        raise ShaxValueError(f"{what} holds values beyond the range of {t}")
    return array.astype(target, copy=False)


def _random(t: TensorType, rng: np.random.Generator) -> np.ndarray:
    if t.dtype.is_float:
        return rng.standard_normal(t.shape).astype(t.dtype.numpy)
    if t.dtype == bool_:
        return rng.random(t.shape) < 0.5
    low = 0 if np.dtype(t.dtype.numpy).kind == "u" else -3  # unsigned: no negative values to wrap around
    return rng.integers(low, 4, t.shape).astype(t.dtype.numpy)

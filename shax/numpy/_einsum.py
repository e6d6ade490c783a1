"""numpy's `einsum`, on numpy values and tracers alike, lowered to existing typeclass
functions (no primitive of its own), so its derivatives, batching and codegen are theirs.

Each operand's subscripts are labels, one per axis; `...` stands for the axes no letter
names, broadcast between operands as numpy's (aligned at the end, size 1 stretching).
The sum over every label missing from the output of the product of the operands is
computed in steps:

- a label repeated within an operand takes the diagonal (`ii->i`): the two axes are
  flattened to n² elements, padded to n·(n + 1) and read as n rows of n + 1, whose first
  column is the diagonal (element k·(n + 1)). Exact, and linear: pad, reshape and slice;
- a label in one operand only and not in the output is summed there (`reduce_sum`);
- operands are contracted pairwise by one `dot_general` each, the pair with the smallest
  result first (a greedy order): labels both share that the output or another operand
  needs are batch axes, the other shared ones are contracted (a shared label of size 1
  in one operand is first broadcast to the other's size, as numpy stretches it);
- the result's remaining labels are put in the output's order (`transpose`).

Operands of several dtypes are first converted to numpy's common one (`np.result_type`, as
numpy's einsum computes), each conversion a visible `convert_element_type`.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np

import typeclasses as tc
from shax.core.errors import ShaxError, ShaxTypeError, ShaxValueError, at
from shax.core.location import current_source
from shax.core.types import DType
from shax.numpy._elementwise import as_array
from shax.numpy._options import CASTINGS, ORDERS, one_of
from shax.tracing.promotion import common_operands

__all__ = ["einsum"]

_LETTERS = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"


def einsum(
    subscripts: Any,
    *operands: Any,
    out: None = None,
    dtype: None = None,
    order: str = "K",
    casting: str = "safe",
    optimize: Any = False,
) -> Any:
    """numpy's einsum: `einsum("ij,jk->ik", a, b)`, implicit output (`"ij,jk"`: the labels
    appearing once, in alphabetical order, after the broadcast `...` axes), or numpy's
    interleaved form `einsum(a, [0, 1], b, [1, 2], [0, 2])`. `order`, `casting` and
    `optimize` are validated as numpy's and change nothing (results are the same values;
    the contraction order is shax's own); an `out` array or a `dtype` to compute in is refused."""
    if not isinstance(subscripts, str):
        subscripts, operands = _interleaved(subscripts, operands)
    if out is not None or dtype is not None:
        option = "out" if out is not None else "dtype"
        raise _fail(subscripts, f"{option}= is not supported (cast the operands with astype)", ShaxTypeError)
    one_of("einsum", "order", order, ORDERS)
    one_of("einsum", "casting", casting, CASTINGS)
    _check_optimize(optimize)
    named = f"einsum {subscripts!r}"
    values: list[Any] = [np.asarray(o) if isinstance(o, (bool, int, float)) else as_array(o, named) for o in operands]
    shapes = [tuple(tc.shape(v)) for v in values]
    inputs, output = _parse(subscripts, shapes)
    sizes = _sizes(subscripts, inputs, shapes)
    values = list(common_operands(named, values))
    _check_bools(subscripts, values, inputs, output)
    terms = [_distinct(v, labels) for v, labels in zip(values, inputs)]
    while len(terms) > 1:
        i, j = _cheapest_pair([labels for _, labels in terms], set(output), sizes)
        needed = {label for k, (_, labels) in enumerate(terms) if k not in (i, j) for label in labels} | set(output)
        pair = _contract(*terms[i], *terms[j], needed, sizes)
        terms = [pair, *(term for k, term in enumerate(terms) if k not in (i, j))]
    value, labels = _summed(*terms[0], set(output))
    if labels != output:
        value = tc.transpose(value, [labels.index(label) for label in output])
    # numpy's einsum gives a rank-0 result as a numpy scalar, as its reductions do.
    return value[()] if isinstance(value, np.ndarray) and value.ndim == 0 else value


def _check_optimize(optimize: Any) -> None:
    """numpy's `optimize`: a bool, a strategy's name, or a path from np.einsum_path."""
    if isinstance(optimize, (bool, np.bool_)) or (isinstance(optimize, str) and optimize in ("greedy", "optimal")):
        return
    if isinstance(optimize, (list, tuple)) and list(optimize[:1]) == ["einsum_path"]:
        return
    message = f"optimize must be a bool, 'greedy', 'optimal' or a path from np.einsum_path (got {optimize!r})"
    raise _fail(None, message)


def _fail(subscripts: str | None, message: str, error: type[ShaxError] = ShaxValueError) -> ShaxError:
    named = "einsum" if subscripts is None else f"einsum {subscripts!r}"
    return at(error(f"{named}: {message}"), current_source())


# Subscripts ----------------------------------------------------------------------------


def _interleaved(first: Any, rest: tuple[Any, ...]) -> tuple[str, tuple[Any, ...]]:
    """numpy's `einsum(op0, sublist0, op1, sublist1, ..., [sublistout])` as subscripts
    and operands: label k (0 ≤ k < 52) is the k-th of A..Z a..z, `...` is Ellipsis."""
    if not rest:
        given = type(first).__name__
        raise _fail(
            None, f"takes subscripts (a str) or operands each followed by its sublist, got {given}", ShaxTypeError
        )
    items = [first, *rest]
    operands, sublists = items[0::2], items[1::2]
    output = operands.pop() if len(items) % 2 else None

    def letters(sublist: Any) -> str:
        if not isinstance(sublist, (list, tuple)):
            given = type(sublist).__name__
            raise _fail(
                None, f"a sublist of axis labels must be a list of ints and Ellipsis, got {given}", ShaxTypeError
            )
        out = []
        for k in sublist:
            if k is Ellipsis:
                out.append("...")
            elif isinstance(k, (int, np.integer)) and not isinstance(k, bool) and 0 <= k < len(_LETTERS):
                out.append(_LETTERS[k])
            else:
                raise _fail(None, f"a label must be an int in [0, 52) or Ellipsis, got {k!r} in {list(sublist)!r}")
        return "".join(out)

    subscripts = ",".join(letters(s) for s in sublists)
    return (subscripts if output is None else f"{subscripts}->{letters(output)}"), tuple(operands)


def _parse(subscripts: str, shapes: list[tuple[int, ...]]) -> tuple[list[list[str]], list[str]]:
    """Each operand's labels, one per axis, and the output's. The axes of an operand's `...`
    get the labels ".k" of the broadcast axes, k counted so that they align at the end."""
    text = "".join(subscripts.split())
    lhs, arrow, rhs = text.partition("->")
    if "->" in rhs or "-" in lhs or ">" in lhs:
        raise _fail(subscripts, "'->' must appear at most once, between the inputs and the output")
    parts = lhs.split(",")
    if len(parts) != len(shapes):
        raise _fail(subscripts, f"names {len(parts)} operand(s), but {len(shapes)} were given")
    letters = [_letters(subscripts, part, f"operand {k}") for k, part in enumerate(parts)]
    spans = []
    for k, (labels, shape) in enumerate(zip(letters, shapes)):
        named = sum(1 for label in labels if label != "...")
        span = len(shape) - named
        if span < 0 or (span > 0 and "..." not in labels):
            raise _fail(subscripts, f"operand {k} has {len(shape)} axes (shape {shape}) for {parts[k]!r}")
        spans.append(span)
    rank = max(spans, default=0)
    inputs = [_expanded(labels, span, rank) for labels, span in zip(letters, spans)]
    if arrow:
        output = _letters(subscripts, rhs, "the output")
        if "..." not in output and rank > 0:
            raise _fail(subscripts, "the output needs '...' for the operands' broadcast axes")
        if len(set(output)) != len(output):
            raise _fail(subscripts, f"the output {rhs!r} repeats a label")
        missing = [label for label in output if label != "..." and not any(label in labels for labels in letters)]
        if missing:
            raise _fail(subscripts, f"the output's label {missing[0]!r} is in no operand")
        return inputs, _expanded(output, rank, rank)
    counts: dict[str, int] = {}
    for labels in letters:
        for label in labels:
            counts[label] = counts.get(label, 0) + 1
    once = sorted(label for label, n in counts.items() if n == 1 and label != "...")
    return inputs, _expanded(["...", *once], rank, rank)


def _letters(subscripts: str, part: str, where: str) -> list[str]:
    """`part` as its labels: letters, and `...` at most once."""
    labels: list[str] = []
    rest = part
    while rest:
        if rest.startswith("..."):
            if "..." in labels:
                raise _fail(subscripts, f"{where} has '...' twice")
            labels.append("...")
            rest = rest[3:]
        elif rest[0] in _LETTERS:
            labels.append(rest[0])
            rest = rest[1:]
        else:
            what = "a '.' outside '...'" if rest[0] == "." else f"{rest[0]!r}, which is no letter"
            raise _fail(subscripts, f"{where} has {what}")
    return labels


def _expanded(labels: list[str], span: int, rank: int) -> list[str]:
    """`...` replaced by the labels of the last `span` of the `rank` broadcast axes."""
    broadcast = [f".{k}" for k in range(rank - span, rank)]
    out: list[str] = []
    for label in labels:
        out.extend(broadcast if label == "..." else [label])
    return out


def _sizes(subscripts: str, inputs: list[list[str]], shapes: list[tuple[int, ...]]) -> dict[str, int]:
    """Each label's size: equal wherever it appears, except that 1 stretches (numpy's
    broadcasting); within one operand, a repeated label's axes must agree exactly."""
    sizes: dict[str, int] = {}
    for k, (labels, shape) in enumerate(zip(inputs, shapes)):
        own: dict[str, int] = {}
        for label, n in zip(labels, shape):
            if own.setdefault(label, n) != n:
                raise _fail(subscripts, f"operand {k}'s axes labelled {label!r} differ in size ({own[label]}, {n})")
        for label, n in own.items():
            m = sizes.setdefault(label, n)
            if m != n and 1 not in (m, n):
                name = "a '...' axis" if label.startswith(".") else f"label {label!r}"
                raise _fail(subscripts, f"{name} has sizes {m} and {n}, which do not broadcast (shapes {shapes})")
            sizes[label] = max(m, n) if 1 in (m, n) else n
    return sizes


def _check_bools(subscripts: str, values: list[Any], inputs: list[list[str]], output: list[str]) -> None:
    """No sums or products of bools (the operands are in one dtype, numpy's common one)."""
    if _dtype(values[0]) == np.dtype(bool) and (len(values) > 1 or sorted(inputs[0]) != sorted(output)):
        raise _fail(subscripts, "bool operands are not summed or multiplied (cast them with astype)", ShaxTypeError)


def _dtype(value: Any) -> np.dtype[Any]:
    dtype = getattr(value, "dtype", None)
    return np.dtype(dtype.numpy) if isinstance(dtype, DType) else np.asarray(value).dtype


# Lowering ------------------------------------------------------------------------------


def _distinct(value: Any, labels: list[str]) -> tuple[Any, list[str]]:
    """The operand with each repeated label's axes replaced by their diagonal (one axis,
    last)."""
    while len(set(labels)) != len(labels):
        label = next(label for label in labels if labels.count(label) > 1)
        first = labels.index(label)
        second = labels.index(label, first + 1)
        value = _diagonal(value, first, second)
        labels = [lab for k, lab in enumerate(labels) if k not in (first, second)] + [label]
    return value, labels


def _diagonal(x: Any, a: int, b: int) -> Any:
    """x[..., k, ..., k, ...] over k, axes a and b (of one size n) replaced by one last axis:
    in the flattened n × n block, element k·(n + 1) is the diagonal's k-th, so padding the
    n² elements to n·(n + 1) and reading them as n rows of n + 1 puts it in column 0."""
    shape = list(tc.shape(x))
    rest = [k for k in range(len(shape)) if k not in (a, b)]
    n, m = shape[a], math.prod(shape[k] for k in rest)
    block = tc.reshape(tc.transpose(x, [*rest, a, b]), [m, n * n])
    rows = tc.reshape(tc.pad(block, [(0, 0), (0, n)], 0), [m, n, n + 1])
    return tc.reshape(tc.slice(rows, [0, 0, 0], [m, n, 1]), [*(shape[k] for k in rest), n])


def _cheapest_pair(terms: list[list[str]], output: set[str], sizes: dict[str, int]) -> tuple[int, int]:
    """The two operands whose contraction is smallest (the first such pair, in order):
    a greedy order, which keeps intermediates small where left to right would build an
    outer product first (`i,j,ij->`)."""

    def size(i: int, j: int) -> int:
        others = {label for k, labels in enumerate(terms) if k not in (i, j) for label in labels}
        kept = (set(terms[i]) | set(terms[j])) & (others | output)
        return math.prod(sizes[label] for label in kept)

    pairs = [(i, j) for j in range(len(terms)) for i in range(j)]
    return min(pairs, key=lambda pair: size(*pair))


def _summed(value: Any, labels: list[str], needed: set[str]) -> tuple[Any, list[str]]:
    """The labels not `needed` summed out."""
    gone = [k for k, label in enumerate(labels) if label not in needed]
    if not gone:
        return value, labels
    return tc.reduce_sum(value, gone), [label for label in labels if label in needed]


def _stretched(value: Any, labels: list[str], sizes: dict[str, int], shared: Sequence[str]) -> Any:
    """The value with its axes of the `shared` labels broadcast to their full size."""
    shape = list(tc.shape(value))
    full = [sizes[label] if label in shared else n for label, n in zip(labels, shape)]
    return value if full == shape else tc.broadcast_to(value, full)


def _contract(
    x: Any, xl: list[str], y: Any, yl: list[str], needed: set[str], sizes: dict[str, int]
) -> tuple[Any, list[str]]:
    """x · y over the labels both have and nothing `needed` later (the output or a later
    operand) has; the shared needed ones are batch axes. Result labels: batch, x's, y's."""
    x, xl = _summed(x, xl, needed | set(yl))
    y, yl = _summed(y, yl, needed | set(xl))
    shared = [label for label in xl if label in yl]
    x, y = _stretched(x, xl, sizes, shared), _stretched(y, yl, sizes, shared)
    batch = [label for label in shared if label in needed]
    contracted = [label for label in shared if label not in needed]
    dims = (
        [xl.index(label) for label in contracted],
        [yl.index(label) for label in contracted],
        [xl.index(label) for label in batch],
        [yl.index(label) for label in batch],
    )
    labels = [*batch, *(label for label in xl if label not in shared), *(label for label in yl if label not in shared)]
    return tc.dot_general(x, y, dims), labels

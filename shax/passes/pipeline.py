"""Running passes by name (the original's `applyPasses`) and the default cleanup.

    apply_passes(defn, ["canonicalize_dot_general", "lower_reductions_to_sums_of_slices"])
    cleanup(defn)   # what stages such as zip apply to the programs they build

Passes run left to right (the original composed its list right to left with `foldr (.)`;
a Python list reads in order).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from shax.errors import ShaxValueError
from shax.ir import Definition
from shax.passes.canonicalize_dot_general import canonicalize_dot_general
from shax.passes.cse import cse
from shax.passes.dce import dce
from shax.passes.fold_constants import fold_constants
from shax.passes.forward_identities import forward_identities
from shax.passes.lower_reductions import lower_reductions_to_sums_of_slices
from shax.passes.materialize_broadcasts import materialize_broadcasts

Pass = Callable[[Definition], Definition]

# pass name -> the pass
PASSES: dict[str, Pass] = {
    p.__name__: p
    for p in (
        dce, cse, fold_constants, forward_identities, materialize_broadcasts, canonicalize_dot_general,
        lower_reductions_to_sums_of_slices,
    )
}  # fmt: skip

# Forwarding identities first exposes repeats to cse (`sin (reshape x)` with an identity
# reshape repeats `sin x`); cse and forwarding leave dead bindings for dce.
CLEANUP = ("forward_identities", "cse", "dce")


def apply_passes(defn: Definition, names: Sequence[str]) -> Definition:
    """`defn` through the passes named, in order."""
    unknown = [name for name in names if name not in PASSES]
    if unknown:
        raise ShaxValueError(f"apply_passes: unknown pass(es) {', '.join(unknown)}; the passes are {', '.join(PASSES)}")
    for name in names:
        defn = PASSES[name](defn)
    return defn


def cleanup(defn: Definition) -> Definition:
    """The default cleanup: forward identities, then cse, then dce."""
    return apply_passes(defn, CLEANUP)

"""Rewrite passes: each a pure function from a typed Definition to a typed Definition,
renumbered x0, x1, and so on. Each module states its pass's contract.

    dce, cse, fold_constants, fold_negations, forward_identities, materialize_broadcasts,
    canonicalize_dot_general, lower_reductions_to_sums_of_slices, inline, hoist_accumulations
    apply_passes(defn, names), cleanup(defn)
    bind_arguments(defn, values)    (not in PASSES: it takes values)
"""

from shax.passes.bind_arguments import bind_arguments
from shax.passes.canonicalize_dot_general import canonicalize_dot_general
from shax.passes.cse import cse
from shax.passes.dce import dce
from shax.passes.fold_constants import fold_constants
from shax.passes.fold_negations import fold_negations
from shax.passes.forward_identities import forward_identities
from shax.passes.hoist_accumulations import hoist_accumulations
from shax.passes.inline import inline
from shax.passes.lower_reductions import lower_reductions_to_sums_of_slices
from shax.passes.materialize_broadcasts import materialize_broadcasts
from shax.passes.pipeline import CLEANUP, PASSES, apply_passes, cleanup

__all__ = [
    "CLEANUP", "PASSES", "apply_passes", "bind_arguments", "canonicalize_dot_general", "cleanup", "cse", "dce",
    "fold_constants", "fold_negations", "forward_identities", "hoist_accumulations", "inline",
    "lower_reductions_to_sums_of_slices", "materialize_broadcasts",
]  # fmt: skip

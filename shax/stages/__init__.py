"""The stages of the pipeline, each a pure function on definitions."""

from shax.stages.batch import batch
from shax.stages.check_linear import check_linear, show_linear
from shax.stages.infer_types import infer_types
from shax.stages.jvp import jvp
from shax.stages.linearize import evaluate_linearized, linearize
from shax.stages.transpose import transpose
from shax.stages.unzip import unzip
from shax.stages.zip import zip_definitions
from shax.tracing.validation import check_types

__all__ = [
    "batch",
    "check_linear",
    "check_types",
    "evaluate_linearized",
    "infer_types",
    "jvp",
    "linearize",
    "show_linear",
    "transpose",
    "unzip",
    "zip_definitions",
]

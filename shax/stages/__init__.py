"""The stages of the pipeline, each a pure function on definitions."""

from shax.stages.infer_types import check_types, infer_types

__all__ = ["check_types", "infer_types"]

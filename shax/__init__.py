"""shax: a typed, functional EDSL for automatic differentiation, after the Haskell shax.

Trace a function (`shax.trace(medium, f32[6], f32[2, 2])`), type it
(`shax.stages.infer_types`), rewrite it (`shax.passes`), differentiate it
(`shax.stages.linearize`, `transpose`, `zip_definitions`) and run it (`shax.evaluate`);
`shax.explain` prints every stage.
"""

import sys as _sys

import shax.core as _core
import shax.tracing as _tracing
from shax import (
    export,  # shax.export.to_jax; imports jax only when called
    lax,
    nn,
    numpy,
    optimizers,
    passes,
    primitives,
    random,
    stages,
    testing,  # no hypothesis needed
    tree,
    tree_util,
)
from shax.core import typeclass_errors as _typeclass_errors  # noqa: F401 - typeclasses' errors become ShaxErrors
from shax.core.errors import ShaxError, ShaxTypeError, ShaxValueError
from shax.core.ir import Binding, Definition, LinearizedDefinition, Var
from shax.core.types import DType, TensorType, bool_, f32, f64, i32, i64, u8, u32
from shax.primitives import extend
from shax.stages import checkpoint_policies
from shax.tools import plot as _tools_plot
from shax.tools.diff import Diff, diff
from shax.tools.exercise import Exercise
from shax.tools.explain import Explanation, explain
from shax.tools.graphviz import to_dot
from shax.tools.stats import PipelineStats, PolicyStats, Stats, policy_stats, stats
from shax.tracing import checked_numpy as _checked_numpy  # noqa: F401 - registers shax's numpy instance
from shax.tracing.evaluate import evaluate
from shax.tracing.trace import trace
from shax.tracing.tracer import Tracer
from shax.transforms import (
    CallSiteInfo,
    GradGraphInfo,
    autodiff,
    call,
    call_with_info,
    custom_jvp,
    custom_vjp,
    grad,
    hessian,
    jacfwd,
    jacrev,
    jit,
    jvp,
    linearize,
    stop_gradient,
    subgraph,
    value_and_grad,
    vjp,
    vmap,
    xpr,
)
from shax.transforms import debug_print as debug
from shax.transforms.checkpoint import checkpoint, checkpoint_name, remat
from shax.transforms.conditionals import cond, switch
from shax.transforms.saved_residuals import saved_residuals
from shax.transforms.structured_loops import fori_loop, scan, while_loop

# The paths of the flat layout before the layered folders, still importable: the examples
# and docs named `from shax.plot import ...` and the IR's modules (`from shax.ir import
# Definition`). Not the CLI's: `python -m shax.tools.cli` runs it as a program, which
# must not be imported first. None of these names is a function of shax's
# (`shax.evaluate`, `shax.explain` and `shax.stats` are, so their old paths are gone).
# Public modules at JAX's paths whose files sit in their layers' folders: `shax.debug`
# (`jax.debug`), `shax.extend` (`jax.extend`), `shax.checkpoint_policies`
# (`jax.checkpoint_policies`), importable as `import shax.debug` too.
for _path, _module in {"debug": debug, "extend": extend, "checkpoint_policies": checkpoint_policies}.items():
    _sys.modules.setdefault(f"shax.{_path}", _module)

for _old, _new in {
    "plot": _tools_plot, "ir": _core.ir, "primitive": _core.primitive, "types": _core.types,
    "errors": _core.errors, "printing": _core.printing, "tracer": _tracing.tracer,
}.items():  # fmt: skip
    _sys.modules.setdefault(f"shax.{_old}", _new)
    globals().setdefault(_old, _new)

__all__ = [
    "Binding", "DType", "extend", "Definition", "Exercise", "Explanation", "LinearizedDefinition", "ShaxError",
    "ShaxTypeError",
    "ShaxValueError", "TensorType", "Tracer", "Var", "bool_", "evaluate", "explain", "f32", "f64", "i32",
    "i64", "u8", "u32", "grad", "jit", "jvp", "linearize", "nn", "numpy", "optimizers", "passes", "primitives",
    "random", "stages",
    "trace", "value_and_grad", "vjp", "vmap", "xpr", "CallSiteInfo", "call", "call_with_info", "subgraph",
    "GradGraphInfo", "autodiff", "Diff", "diff", "custom_jvp", "custom_vjp",
    "hessian", "jacfwd", "jacrev", "stop_gradient",
    "testing",
    "Stats", "PipelineStats", "stats", "to_dot",
    "scan", "fori_loop", "while_loop",
    "export",
    "cond", "switch",
    "lax",
    "tree", "tree_util",
    "debug",
    "checkpoint", "remat", "checkpoint_policies", "checkpoint_name", "saved_residuals", "PolicyStats", "policy_stats",
]  # fmt: skip

"""shax: a typed, functional EDSL for automatic differentiation, after the Haskell shax.

import shax
from shax import f32
defn = shax.trace(medium, f32[6], f32[2, 2])     # After tracing
typed = shax.stages.infer_types(defn)           # After type inference
shax.evaluate(typed, x, y)
"""

from shax import passes, primitives, stages
from shax.errors import ShaxError, ShaxTypeError, ShaxValueError
from shax.evaluate import evaluate
from shax.explain import Explanation, explain
from shax.ir import Binding, Definition, LinearizedDefinition, Var
from shax.tracer import Tracer
from shax.tracing import trace
from shax.types import DType, TensorType, bool_, f32, f64, i32

__all__ = [
    "Binding", "DType", "Definition", "Explanation", "LinearizedDefinition", "ShaxError", "ShaxTypeError",
    "ShaxValueError", "TensorType", "Tracer", "Var", "bool_", "evaluate", "explain", "f32", "f64", "i32",
    "passes", "primitives", "stages", "trace",
]  # fmt: skip

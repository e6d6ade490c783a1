"""`shax.optimizers`: two kinds of optimizer.

- Full-loop helpers on `f(params)` (`descent`): `gradient_descent`, `momentum` and `adam`
  run a whole descent and print the original's `Iteration k: value` lines.
- Gradient transformations, optax's shape (`transforms`, `aliases`, `schedules`):
  `tx = sgd(0.1, momentum=0.9)`, `state = tx.init(params)`,
  `updates, state = tx.update(grads, state, params)`, `apply_updates(params, updates)`,
  for minibatch steps that `jit`; `chain`, `clip_by_global_norm`, schedules as learning rates.

`adam` here is the loop (its callers keep working); optax's `adam(learning_rate, ...)` is
`shax.optimizers.optax.adam`, in the namespace that holds every optax name
(`import shax.optimizers.optax as optax`). The other optax names are free here and are
the same functions in both places.
"""

from shax.optimizers import optax
from shax.optimizers.aliases import adagrad, adamw, rmsprop, sgd
from shax.optimizers.descent import History, adam, gradient_descent, momentum
from shax.optimizers.schedules import (
    constant_schedule,
    cosine_decay_schedule,
    exponential_decay,
    join_schedules,
    linear_schedule,
    polynomial_schedule,
    warmup_cosine_decay_schedule,
)
from shax.optimizers.transforms import (
    EmptyState,
    GradientTransformation,
    ScaleByAdamState,
    ScaleByRmsState,
    ScaleByRssState,
    ScaleByRStdDevState,
    ScaleByScheduleState,
    TraceState,
    add_decayed_weights,
    apply_updates,
    chain,
    clip_by_global_norm,
    global_norm,
    identity,
    scale,
    scale_by_adam,
    scale_by_learning_rate,
    scale_by_rms,
    scale_by_rss,
    scale_by_schedule,
    scale_by_stddev,
    trace,
)

__all__ = [
    "History", "adam", "gradient_descent", "momentum", "optax",
    "EmptyState", "GradientTransformation", "ScaleByAdamState", "ScaleByRStdDevState", "ScaleByRmsState",
    "ScaleByRssState", "ScaleByScheduleState", "TraceState", "adagrad", "adamw", "add_decayed_weights",
    "apply_updates", "chain", "clip_by_global_norm", "constant_schedule", "cosine_decay_schedule",
    "exponential_decay", "global_norm", "identity", "join_schedules", "linear_schedule", "polynomial_schedule",
    "rmsprop", "scale", "scale_by_adam", "scale_by_learning_rate", "scale_by_rms", "scale_by_rss",
    "scale_by_schedule", "scale_by_stddev", "sgd", "trace", "warmup_cosine_decay_schedule",
]  # fmt: skip

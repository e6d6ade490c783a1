"""optax's names, all of them optax's optimizers and transformations: `import
shax.optimizers.optax as optax` and write optax code (`optax.adam(1e-3)`). The one name
`shax.optimizers` gives to something else is `adam`, its full-loop helper; the others
are the same functions there."""

from shax.optimizers.aliases import adagrad, adam, adamw, rmsprop, sgd
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
    "EmptyState", "GradientTransformation", "ScaleByAdamState", "ScaleByRStdDevState", "ScaleByRmsState",
    "ScaleByRssState", "ScaleByScheduleState", "TraceState", "adagrad", "adam", "adamw", "add_decayed_weights",
    "apply_updates", "chain", "clip_by_global_norm", "constant_schedule", "cosine_decay_schedule",
    "exponential_decay", "global_norm", "identity", "join_schedules", "linear_schedule", "polynomial_schedule",
    "rmsprop", "scale", "scale_by_adam", "scale_by_learning_rate", "scale_by_rms", "scale_by_rss",
    "scale_by_schedule", "scale_by_stddev", "sgd", "trace", "warmup_cosine_decay_schedule",
]  # fmt: skip

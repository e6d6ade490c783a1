"""Hypothesis profiles: `ci` (the default) keeps the suite to a few minutes on 2 cores;
`HYPOTHESIS_PROFILE=thorough` explores many more generated programs."""

import os

from hypothesis import HealthCheck, settings

settings.register_profile(
    "ci", max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow], derandomize=True
)
settings.register_profile("thorough", max_examples=1000, deadline=None, suppress_health_check=[HealthCheck.too_slow])
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))

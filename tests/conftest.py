"""Hypothesis profiles: `ci` (the default) keeps the suite to about two minutes on 2 cores;
`quick` draws a quarter as many examples, for CI's second pass under typeguard's plugin
(which checks annotations, three times slower: the properties were checked at `ci`'s size
in the first pass) or a quicker loop; `HYPOTHESIS_PROFILE=thorough` explores many more
generated programs."""

import os

from hypothesis import HealthCheck, settings

settings.register_profile(
    "ci", max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow], derandomize=True
)
settings.register_profile("quick", settings.get_profile("ci"), max_examples=10)
settings.register_profile("thorough", max_examples=1000, deadline=None, suppress_health_check=[HealthCheck.too_slow])
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))

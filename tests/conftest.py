"""Hypothesis profiles: `ci` (the default) keeps the suite to about two minutes on 2 cores;
`quick` draws a quarter as many examples, for CI's second pass under typeguard's plugin
(which checks annotations, three times slower: the properties were checked at `ci`'s size
in the first pass) or a quicker loop; `HYPOTHESIS_PROFILE=thorough` explores many more
generated programs. And `jax_x64`, the fixture of tests comparing with JAX in float64."""

import os
from collections.abc import Iterator
from typing import Any

import pytest
from hypothesis import HealthCheck, settings

settings.register_profile(
    "ci", max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow], derandomize=True
)
settings.register_profile("quick", settings.get_profile("ci"), max_examples=10)
settings.register_profile("thorough", max_examples=1000, deadline=None, suppress_health_check=[HealthCheck.too_slow])
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))


@pytest.fixture
def jax_x64() -> Iterator[Any]:
    """JAX with x64 on for the test, as it was after (the test skipped without JAX)."""
    jax = pytest.importorskip("jax")
    before = jax.config.jax_enable_x64
    jax.config.update("jax_enable_x64", True)
    try:
        yield jax
    finally:
        jax.config.update("jax_enable_x64", before)

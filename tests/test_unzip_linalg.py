"""unzip(jvp(f)) prints as linearize(f) for the decompositions too: their linearize rules
cross the transposes of eigh's, qr's and svd's factors as residuals, as the JVP program
computes them on the primal side (generated programs found vᵀ recomputed in the linear
program instead)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import shax
import shax.numpy as snp
from shax.stages import infer_types, jvp, linearize, unzip


def spd(a: Any) -> Any:
    return a @ snp.swapaxes(a, -1, -2) + 3.0 * np.eye(3)


FUNCTIONS: dict[str, tuple[Callable[[Any], Any], tuple[int, ...]]] = {
    "eigh vectors": (lambda a: snp.linalg.eigh(spd(a))[1], (3, 3)),
    "eigh values": (lambda a: snp.linalg.eigh(spd(a))[0], (2, 3, 3)),
    "qr q": (lambda a: snp.linalg.qr(a)[0], (3, 2)),
    "qr r": (lambda a: snp.linalg.qr(a)[1], (3, 3)),
    "svd u tall": (lambda a: snp.linalg.svd(a, full_matrices=False)[0], (3, 2)),
    "svd vh wide": (lambda a: snp.linalg.svd(a, full_matrices=False)[2], (2, 3)),
    "svd s": (lambda a: snp.linalg.svd(a, full_matrices=False)[1], (3, 2)),
}


@pytest.mark.parametrize("name", sorted(FUNCTIONS))
def test_unzip_of_jvp_is_linearize_for_decompositions(name: str) -> None:
    f, shape = FUNCTIONS[name]
    defn = infer_types(shax.trace(f, shax.f64[shape]))
    lin, unzipped = linearize(defn), unzip(jvp(defn))
    assert str(unzipped) == str(lin)
    assert unzipped.num_residuals == lin.num_residuals

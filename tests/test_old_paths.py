"""The module paths of the flat layout before the layered folders stay importable: the
examples and docs named them (`from shax.plot import plot_descent`), and users' code may."""

from __future__ import annotations

import importlib

import pytest

import shax


@pytest.mark.parametrize(
    ("old", "new"),
    [
        ("shax.plot", "shax.tools.plot"),
        ("shax.ir", "shax.core.ir"),
        ("shax.primitive", "shax.core.primitive"),
        ("shax.types", "shax.core.types"),
        ("shax.errors", "shax.core.errors"),
        ("shax.printing", "shax.core.printing"),
        ("shax.tracer", "shax.tracing.tracer"),
    ],
)
def test_an_old_path_is_the_moved_module(old: str, new: str) -> None:
    assert importlib.import_module(old) is importlib.import_module(new)
    assert getattr(shax, old.split(".")[1]) is importlib.import_module(new)


def test_the_functions_of_shax_stay_functions() -> None:
    assert callable(shax.evaluate) and callable(shax.explain) and callable(shax.stats) and callable(shax.trace)
    from shax.ir import Definition

    assert Definition is shax.Definition

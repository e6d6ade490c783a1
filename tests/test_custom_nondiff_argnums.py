"""`nondiff_argnums` of `custom_jvp` and `custom_vjp`: None means none (as JAX, whose
default is `()` and which treats None so); each entry an int (not a bool) naming an
argument, else a ShaxError at the user's line."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import typeguard

import shax

HERE = re.escape(Path(__file__).name)


def product(x: Any, y: Any) -> Any:
    return x * y


@pytest.mark.parametrize("kind", [shax.custom_jvp, shax.custom_vjp])
def test_none_means_no_nondiff_arguments(kind: Any) -> None:
    f = kind(product, nondiff_argnums=None)
    assert f.nondiff_argnums == ()
    assert f(3.0, 2.0) == 6.0


def test_none_differentiates_every_argument_with_the_rule() -> None:
    f = shax.custom_jvp(product, nondiff_argnums=None)
    f.defjvp(lambda p, t: (p[0] * p[1], t[0] * p[1] + p[0] * t[1]))
    assert shax.grad(f, wrt=(0, 1))(3.0, 2.0) == (2.0, 3.0)


def test_a_numpy_int_names_an_argument() -> None:
    f = shax.custom_jvp(product, nondiff_argnums=(np.int64(0),))
    f.defjvp(lambda n, p, t: (n * p[0], n * t[0]))
    assert f.nondiff_argnums == (0,) and type(f.nondiff_argnums[0]) is int
    assert shax.grad(lambda y: f(3.0, y))(2.0) == 3.0


@pytest.mark.parametrize("kind", [shax.custom_jvp, shax.custom_vjp])
@pytest.mark.parametrize("bad", [(True,), (1.0,), ("0",), "0", 1.5, (-1,), [None]])
@typeguard.suppress_type_checks
def test_an_entry_that_is_not_an_argument_number(kind: Any, bad: Any) -> None:
    pattern = rf"{kind.__name__}: nondiff_argnums must be non-negative ints.* \(at .*{HERE}:\d+\)"
    with pytest.raises(shax.ShaxValueError, match=pattern):
        kind(product, nondiff_argnums=bad)


@pytest.mark.parametrize("kind", [shax.custom_jvp, shax.custom_vjp])
def test_an_entry_beyond_the_functions_parameters(kind: Any) -> None:
    pattern = rf"{kind.__name__} product: nondiff_argnums \[2\] name no argument of product\(x.* \(at .*{HERE}:\d+\)"
    with pytest.raises(shax.ShaxValueError, match=pattern):
        kind(product, nondiff_argnums=(2,))


def test_a_function_of_any_arguments_is_checked_at_the_call() -> None:
    f = shax.custom_jvp(lambda *args: args[0] * args[-1], nondiff_argnums=(2,))
    pattern = rf"custom_jvp f: nondiff_argnums \[2\] given 2 argument\(s\) \(at .*{HERE}:\d+\)"
    with pytest.raises(shax.ShaxTypeError, match=pattern):
        f(1.0, 2.0)

"""Property tests of a user's shax code, with `shax.testing` (`pip install 'shax[testing]'`).

Three properties, each a hypothesis test that pytest collects (`pytest examples/property_tests.py`)
or `main()` runs:

1. The gradient of a small network's loss matches finite differences (`check_grads`, to
   second order, at arrays drawn by `arrays`).
2. `vmap` of any generated program equals a Python loop over the batch (`programs`).
3. A function with a hand-written derivative rule (`softplus`, with `shax.custom_jvp`)
   has the derivative finite differences and autodiff of its formula give.

Run: python examples/property_tests.py
"""

from __future__ import annotations

from typing import Any

import numpy as np
from hypothesis import given, reject, settings
from hypothesis import strategies as st

import shax
from shax import f64
from shax.testing import NotSmooth, check_grads
from shax.testing.strategies import Program, arrays, programs
from typeclasses import dot, logaddexp, logistic, reduce_sum, tanh

# 1. Gradients against finite differences ---------------------------------------------------


def loss(w: Any, b: Any, x: Any) -> Any:
    """A one-layer network's squared output, summed over a batch of 4 examples."""
    hidden = tanh(dot(x, w) + b)
    return reduce_sum(hidden * hidden, [0, 1])


@given(arrays(f64[3, 2]), arrays(f64[2]), arrays(f64[4, 3]))
def test_gradients_match_finite_differences(w: np.ndarray, b: np.ndarray, x: np.ndarray) -> None:
    check_grads(loss, (w, b, x), order=2)  # jvp and vjp, and their own derivatives


# 2. vmap against a loop ---------------------------------------------------------------------


@given(programs(smooth=True, max_outputs=1), st.data())
def test_vmap_equals_a_loop(program: Program, data: st.DataObject) -> None:
    batch = [data.draw(arrays(shax.TensorType(t.dtype, (3, *t.shape)))) for t in program.arg_types]
    looped = np.stack([program.fn(*(x[i] for x in batch)) for i in range(3)])
    np.testing.assert_allclose(shax.vmap(program.fn)(*batch), looped, rtol=1e-9, atol=1e-9)


# 3. A hand-written derivative rule against finite differences and autodiff -----------------


# softplus(x) = log(1 + eˣ), computed without overflow; its derivative, by hand, is the
# logistic function eˣ / (1 + eˣ).
@shax.custom_jvp
def softplus(x: Any) -> Any:
    return logaddexp(0.0, x)


@softplus.defjvp
def softplus_jvp(primals: Any, tangents: Any) -> Any:
    (x,), (dx,) = primals, tangents
    return softplus(x), logistic(x) * dx


def softplus_by_its_formula(x: Any) -> Any:
    return logaddexp(0.0, x)  # differentiated by shax's autodiff


@given(arrays(f64[5], bound=20.0))
def test_the_rule_matches_finite_differences(x: np.ndarray) -> None:
    try:
        check_grads(softplus, (x,), order=2)
    except NotSmooth:  # finite differences cannot tell at this x: draw another
        reject()


@given(arrays(f64[5], bound=20.0), arrays(f64[5]))
def test_the_rule_matches_autodiff(x: np.ndarray, dx: np.ndarray) -> None:
    _, by_rule = shax.jvp(softplus, (x,), (dx,))
    _, by_autodiff = shax.jvp(softplus_by_its_formula, (x,), (dx,))
    np.testing.assert_allclose(by_rule, by_autodiff, rtol=1e-12, atol=1e-15)


PROPERTIES = (
    test_gradients_match_finite_differences,
    test_vmap_equals_a_loop,
    test_the_rule_matches_finite_differences,
    test_the_rule_matches_autodiff,
)


def main(max_examples: int = 50, log: Any = print) -> None:
    for test in PROPERTIES:
        settings(max_examples=max_examples, deadline=None)(test)()
        if log is not None:
            log(f"{test.__name__}: {max_examples} examples passed")


if __name__ == "__main__":
    main()

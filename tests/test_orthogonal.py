"""shax.nn.initializers.orthogonal: JAX's values for the same key (jax 0.10,
`jax.nn.initializers.orthogonal(...)(jax.random.PRNGKey(7), shape, jnp.float32)`, stored),
orthonormal rows or columns; and `import shax.nn.initializers`, shax.nn being a package."""

from __future__ import annotations

import numpy as np
import pytest

import shax
from shax import random
from shax.nn import initializers

# (shape, keyword arguments, JAX's values); scale 2 where column_axis is given
JAX = [
    (
        (3, 3),
        {},
        [
            [0.92069209, 0.34078068, -0.19024861],
            [-0.28757206, 0.92189229, 0.25964811],
            [-0.26387176, 0.18434578, -0.94677788],
        ],
    ),
    (
        (2, 4),
        {},
        [[0.48498118, -0.55484688, 0.66152722, -0.13899633], [0.8673014, 0.36940759, -0.33230522, -0.02999173]],
    ),
    (
        (4, 2),
        {},
        [[0.48498118, 0.8673014], [-0.55484688, 0.36940759], [0.66152722, -0.33230522], [-0.13899633, -0.02999173]],
    ),
    (
        (2, 3, 4),
        {},
        [
            [
                [0.19409943, 0.60996079, 0.12758942, 0.03117257],
                [0.26475683, 0.05219248, -0.10045482, -0.06780975],
                [-0.63557065, -0.30595246, -0.46502733, 0.11535895],
            ],
            [
                [0.22718121, -0.63562405, 0.57570595, 0.29436359],
                [-0.10958284, 0.26958188, -0.0069348, 0.92766434],
                [0.65165901, -0.23435944, -0.65260535, 0.18415076],
            ],
        ],
    ),
    (
        (3, 2, 2),
        {"column_axis": 0},
        [
            [[0.63150644, -0.19724682], [-0.1809907, -1.87870574]],
            [[1.77205074, 0.74396539], [-0.15205361, 0.53219461]],
            [[-0.30049849, 0.27361339], [-1.95738971, 0.05883473]],
        ],
    ),
]


@pytest.mark.parametrize(("shape", "kwargs", "expected"), JAX, ids=[str(row[0]) for row in JAX])
def test_orthogonal_gives_jax_values(shape: tuple[int, ...], kwargs: dict[str, int], expected: list[object]) -> None:
    init = initializers.orthogonal(scale=2.0 if kwargs else 1.0, **kwargs)
    got = init(random.PRNGKey(7), shape)
    assert got.dtype == np.float32 and got.shape == shape
    np.testing.assert_allclose(got, np.array(expected, np.float32), rtol=0, atol=4e-7)


def test_orthogonal_rows_or_columns_are_orthonormal_in_float64_and_under_jit() -> None:
    init = initializers.orthogonal()
    wide = init(random.PRNGKey(1), (3, 5), np.float64)
    np.testing.assert_allclose(wide @ wide.T, np.eye(3), atol=1e-14)
    tall = shax.jit(lambda key: init(key, (5, 3)))(random.PRNGKey(1))
    np.testing.assert_allclose(tall.T @ tall, np.eye(3), atol=1e-6)
    assert np.array_equal(init(random.PRNGKey(1), (0, 3)), np.zeros((0, 3), np.float32))


def test_orthogonal_refuses_what_jax_refuses() -> None:
    with pytest.raises(shax.ShaxValueError, match="orthogonal: needs a shape of at least 2 axes"):
        initializers.orthogonal()(random.PRNGKey(0), (3,))
    with pytest.raises(shax.ShaxValueError, match="orthogonal: column_axis 2 is not an axis"):
        initializers.orthogonal(column_axis=2)(random.PRNGKey(0), (3, 3))
    with pytest.raises(shax.ShaxTypeError, match="orthogonal: dtype must be a float dtype shax has"):
        initializers.orthogonal()(random.PRNGKey(0), (3, 3), np.int32)


def test_shax_nn_initializers_imports_as_a_module() -> None:
    import shax.nn.initializers as module  # shax.nn was a module, which made this an error
    from shax.nn import relu

    assert module is initializers is shax.nn.initializers and relu is shax.nn.relu

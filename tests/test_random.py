"""shax.random against jax.random: the values JAX 0.10.2 gives for the key PRNGKey(1701)
(threefry-2x32, `jax_threefry_partitionable` on, its default), computed once and stored
here. Bits, keys and integers are equal; the floats made with erfinv, log or erf (normal,
gumbel, truncated_normal) agree within a few ulps. Keys are values: the same draws under
jit, vmap (a batch of keys) and grad, and nothing is frozen when a function is traced."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import shax
import shax.random as jr

KEY = jr.PRNGKey(1701)
EPS = float(np.finfo(np.float32).eps)

# Computed with jax.random (JAX 0.10.2, CPU, 32-bit mode).
JAX = {
    "key": [0, 1701],
    "key_neg": [0, 4294967293],
    "split": [[741045208, 1847055613], [85238482, 2594297577]],
    "split23": [
        [[741045208, 1847055613], [85238482, 2594297577], [56197195, 961309823]],
        [[927208350, 676898860], [4000152724, 2426625787], [3270721456, 929585804]],
    ],
    "fold_in": [1826000603, 2251772682],
    "bits": [[1111271205, 2679469115, 974515252], [521976754, 2127438447, 4120601916]],
    "bits_u8": [37, 59, 52, 178],
    "bits_scalar": 1111271205,
    "uniform": [
        [0.2587379217147827, 0.6238625049591064, 0.2268970012664795],
        [0.12153208255767822, 0.49533283710479736, 0.959402322769165],
    ],
    "uniform_range": [-0.7063103914260864, 1.1193125247955322, -0.8655149936676025, -1.3923395872116089],
    "normal": [
        [-0.6472411155700684, 0.3156411051750183, -0.7491047382354736, -1.167362093925476],
        [-0.01169903390109539, 1.7437922954559326, -1.5497627258300781, -1.0837270021438599],
    ],
    "randint": [9, 15, 14, 11, 9, 10, -2, 7],
    "randint_u8": [244, 62, 153, 22, 168],
    "randint_wide": [1344773876, -692612290, 1666829977, 1975938582, 1123755432],
    "bernoulli": [True, False, True, True, True, False, True, True],
    "bernoulli_p": [False, False, True],
    "permutation": [9, 1, 8, 6, 11, 5, 4, 0, 10, 2, 7, 3],
    "permutation_2d": [[1.0, 0.0, 2.0, 3.0], [5.0, 4.0, 6.0, 7.0], [9.0, 8.0, 10.0, 11.0]],
    "permutation_big": [445, 1512, 367, 1945, 1547, 1182, 119, 174, 1246, 624],
    "choice": [2, 8, 7, 4],
    "choice_noreplace": [9, 1, 8, 6],
    "gumbel": [-0.3015402853488922, 0.7511464953422546, -0.3942417502403259, -0.7455390095710754, 0.3530738353729248],
    "categorical": [1, 2],
    "categorical_shape": [1, 2, 2, 2, 1, 2],
    "truncated_normal": [
        -0.6136739253997803,
        0.3008268475532532,
        -0.7084811925888062,
        -1.0859413146972656,
        -0.011166771873831749,
        1.5422979593276978,
    ],
    "vmap_split": [
        [[640098973, 1052701527], [1786472918, 773143027]],
        [[3828095130, 873170542], [3211585628, 3923475298]],
        [[4115921361, 417534406], [751486426, 3707305559]],
    ],
    "vmap_uniform": [
        [0.09609699249267578, 0.26730823516845703],
        [0.813104510307312, 0.3387385606765747],
        [0.9284806251525879, 0.938266396522522],
    ],
}

DRAWS: dict[str, Any] = {
    "key": lambda k: jr.PRNGKey(1701),
    "key_neg": lambda k: jr.key(-3),
    "split": lambda k: jr.split(k),
    "split23": lambda k: jr.split(k, (2, 3)),
    "fold_in": lambda k: jr.fold_in(k, 12345),
    "bits": lambda k: jr.bits(k, (2, 3)),
    "bits_u8": lambda k: jr.bits(k, (4,), np.uint8),
    "bits_scalar": lambda k: jr.bits(k),
    "uniform": lambda k: jr.uniform(k, (2, 3)),
    "uniform_range": lambda k: jr.uniform(k, (4,), minval=-2.0, maxval=3.0),
    "randint": lambda k: jr.randint(k, (8,), -3, 17),
    "randint_u8": lambda k: jr.randint(k, (5,), 0, 256, np.uint8),
    "randint_wide": lambda k: jr.randint(k, (5,), -(2**31), 2**31 - 1),
    "bernoulli": lambda k: jr.bernoulli(k, 0.5, (8,)),
    "bernoulli_p": lambda k: jr.bernoulli(k, np.array([0.1, 0.5, 0.9], np.float32)),
    "permutation": lambda k: jr.permutation(k, 12),
    "permutation_2d": lambda k: jr.permutation(k, np.arange(12.0, dtype=np.float32).reshape(3, 4), axis=1),
    "choice": lambda k: jr.choice(k, 10, (4,)),
    "choice_noreplace": lambda k: jr.choice(k, 10, (4,), replace=False),
    "categorical": lambda k: jr.categorical(k, np.log(np.array([[0.2, 0.3, 0.5], [0.7, 0.2, 0.1]], np.float32))),
    "categorical_shape": lambda k: jr.categorical(k, np.array([0.0, 1.0, 2.0], np.float32), shape=(6,)),
}
NEAR: dict[str, Any] = {
    "normal": lambda k: jr.normal(k, (2, 4)),
    "gumbel": lambda k: jr.gumbel(k, (5,)),
    "truncated_normal": lambda k: jr.truncated_normal(k, -2.0, 2.0, (6,)),
}
DTYPES = {
    "key": np.uint32, "split": np.uint32, "fold_in": np.uint32, "bits": np.uint32, "bits_u8": np.uint8,
    "uniform": np.float32, "randint": np.int32, "randint_u8": np.uint8, "bernoulli": np.bool_,
    "permutation": np.int32, "choice": np.int32, "categorical": np.int32,
}  # fmt: skip


@pytest.mark.parametrize("name", sorted(DRAWS))
def test_the_same_key_gives_jaxs_values(name: str) -> None:
    got = np.asarray(DRAWS[name](KEY))
    expected = np.asarray(JAX[name], got.dtype)
    np.testing.assert_array_equal(got, expected)
    if name in DTYPES:
        assert got.dtype == DTYPES[name]


@pytest.mark.parametrize("name", sorted(NEAR))
def test_floats_through_erfinv_and_log_are_jaxs_within_a_few_ulps(name: str) -> None:
    got = np.asarray(NEAR[name](KEY))
    assert got.dtype == np.float32
    np.testing.assert_allclose(got, np.asarray(JAX[name], np.float32), rtol=4 * EPS, atol=4 * EPS)


def test_a_permutation_of_more_than_1625_takes_two_rounds_as_jaxs() -> None:
    assert jr.permutation(KEY, 2000)[:10].tolist() == JAX["permutation_big"]


@pytest.mark.parametrize("name", ["split", "fold_in", "bits", "uniform", "randint", "bernoulli", "permutation"])
@pytest.mark.parametrize("backend", ["numpy", "xla"])
def test_jit_gives_the_same_values(name: str, backend: str) -> None:
    if backend == "xla":
        pytest.importorskip("jax")
    got = shax.jit(DRAWS[name], backend=backend)(KEY)
    np.testing.assert_array_equal(np.asarray(got), np.asarray(JAX[name], np.asarray(got).dtype))


def test_jit_of_normal_is_evaluates_value() -> None:
    np.testing.assert_array_equal(shax.jit(NEAR["normal"])(KEY), NEAR["normal"](KEY))


def test_nothing_is_frozen_when_tracing() -> None:
    draw = shax.jit(lambda k: jr.uniform(k, (3,)))
    first, second = jr.split(KEY)
    np.testing.assert_array_equal(draw(first), jr.uniform(first, (3,)))
    np.testing.assert_array_equal(draw(second), jr.uniform(second, (3,)))
    assert not np.array_equal(draw(first), draw(second))


def test_vmap_over_a_batch_of_keys_is_jaxs() -> None:
    keys = jr.split(KEY, 3)
    np.testing.assert_array_equal(shax.vmap(jr.split)(keys), np.asarray(JAX["vmap_split"], np.uint32))
    uniform = shax.vmap(lambda k: jr.uniform(k, (2,)))(keys)
    np.testing.assert_array_equal(uniform, np.asarray(JAX["vmap_uniform"], np.float32))


def test_a_seed_inside_jit_makes_the_key_jax_makes() -> None:
    np.testing.assert_array_equal(shax.jit(jr.PRNGKey)(np.int32(-3)), np.asarray(JAX["key_neg"], np.uint32))
    np.testing.assert_array_equal(shax.jit(lambda k, d: jr.fold_in(k, d))(KEY, np.int32(12345)), JAX["fold_in"])


def test_keys_pass_through_grad_undifferentiated() -> None:
    def loss(w: Any, key: Any) -> Any:
        noise = jr.normal(key, (3,))
        mask = jr.bernoulli(jr.fold_in(key, 1), 0.5, (3,))
        return (w * noise * mask).sum()

    w = np.array([1.0, 2.0, 3.0], np.float32)
    expected = jr.normal(KEY, (3,)) * jr.bernoulli(jr.fold_in(KEY, 1), 0.5, (3,))
    np.testing.assert_allclose(shax.grad(loss)(w, KEY), expected, rtol=0, atol=0)
    np.testing.assert_allclose(shax.jit(shax.grad(loss))(w, KEY), expected, rtol=0, atol=0)


def test_uniform_float64_is_jaxs_64_bit_construction() -> None:
    # JAX's 64-bit mode: the pair of words at each element's counter (split's keys are those
    # pairs), high word first, its top 52 bits under 1.0's exponent, minus 1
    words = np.asarray(JAX["split23"], np.uint64)
    wide = (words[..., 0] << np.uint64(32)) | words[..., 1]
    expected = ((wide >> np.uint64(12)) | np.uint64(0x3FF0000000000000)).view(np.float64) - 1.0
    np.testing.assert_array_equal(jr.uniform(KEY, (2, 3), np.float64), expected)
    normal = jr.normal(KEY, (1000,), np.float64)
    assert normal.dtype == np.float64 and abs(float(normal.mean())) < 0.1 and abs(float(normal.std()) - 1) < 0.1


BAD: list[tuple[str, Any, type[Exception], str]] = [
    ("float key", lambda: jr.split(np.zeros(2)), shax.ShaxTypeError, r"split: a key is a u32\[2\] array.*f64\[2\]"),
    ("int key", lambda: jr.uniform(np.array([0, 1], np.int32)), shax.ShaxTypeError, r"uniform: .*i32\[2\]"),
    ("list key", lambda: jr.normal([0, 1]), shax.ShaxTypeError, r"normal: a key is a u32\[2\] array.*list"),
    ("short key", lambda: jr.bits(np.zeros(3, np.uint32)), shax.ShaxValueError, r"bits: takes one key.*u32\[3\]"),
    ("batch", lambda: jr.split(jr.split(KEY)), shax.ShaxValueError, r"split: .*u32\[2, 2\].*vmap"),
    ("float seed", lambda: jr.PRNGKey(1.5), shax.ShaxTypeError, r"PRNGKey: a seed is an integer scalar"),
    ("array seed", lambda: jr.key(np.arange(2)), shax.ShaxTypeError, r"key: a seed is an integer scalar"),
    ("fold_in range", lambda: jr.fold_in(KEY, -1), shax.ShaxValueError, r"fold_in: the Python int -1 does not fit"),
    ("bits dtype", lambda: jr.bits(KEY, (2,), np.int32), shax.ShaxValueError, r"bits: dtype must be an unsigned"),
    ("uniform dtype", lambda: jr.uniform(KEY, (2,), np.int32), shax.ShaxTypeError, r"uniform: dtype must be a float"),
    ("randint i64", lambda: jr.randint(KEY, (2,), 0, 3, np.int64), shax.ShaxTypeError, r"randint: .*64-bit"),
    ("shape", lambda: jr.normal(KEY, (2, -1)), shax.ShaxTypeError, r"normal: a shape is a sequence"),
    ("bounds", lambda: jr.uniform(KEY, (2,), minval=np.zeros(3)), shax.ShaxValueError, r"uniform: .*\(3,\)"),
    ("choice", lambda: jr.choice(KEY, 3, (5,), replace=False), shax.ShaxValueError, r"choice: .*5.*3"),
]


@pytest.mark.parametrize(("label", "call", "error", "message"), BAD, ids=[b[0] for b in BAD])
def test_bad_keys_and_arguments_are_shax_errors_at_the_users_line(
    label: str, call: Any, error: type[Exception], message: str
) -> None:
    with pytest.raises(error, match=message) as raised:
        call()
    assert "test_random.py:" in str(raised.value)


def test_a_traced_float_key_is_refused_naming_its_type() -> None:
    with pytest.raises(shax.ShaxTypeError, match=r"split: .*f32\[2\]"):
        shax.jit(jr.split)(np.zeros(2, np.float32))

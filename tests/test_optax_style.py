"""shax.optimizers' gradient transformations against optax: a jitted minibatch step of a
small MLP reaches optax's losses, and the schedules give optax's rates.

The expected values were computed once with optax 0.2.8 on JAX 0.10 (CPU, f32), in a
throwaway environment (optax is no dependency), by the same MLP, data and steps as
`train` below, each config written with optax's own functions of the same names."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
import typeguard

import shax
import shax.numpy as snp
import shax.optimizers as so
import shax.optimizers.optax as optax
from shax import ShaxTypeError, ShaxValueError
from shax.tree_util import tree_map

rng = np.random.default_rng(0)
X = rng.normal(size=(8, 3)).astype(np.float32)
Y = rng.normal(size=(8, 2)).astype(np.float32)
P = {
    "w1": (rng.normal(size=(3, 4)) * 0.5).astype(np.float32),
    "b1": np.zeros(4, np.float32),
    "w2": (rng.normal(size=(4, 2)) * 0.5).astype(np.float32),
    "b2": np.zeros(2, np.float32),
}

# (loss before each of 6 steps, then on all the data after them); schedules at steps 0..8
OPTAX = {
    "sgd": [
        0.7904327511787415,
        0.5622355937957764,
        0.6900585889816284,
        0.47640079259872437,
        0.6293248534202576,
        0.4254269003868103,
        0.47192203998565674,
    ],
    "sgd_nesterov": [
        0.7904327511787415,
        0.5779895782470703,
        0.5643469095230103,
        0.4548565149307251,
        0.46466222405433655,
        0.4315361976623535,
        0.38991016149520874,
    ],
    "adam": [
        0.7904327511787415,
        0.5829184651374817,
        0.5265207886695862,
        0.4778757095336914,
        0.4140165448188782,
        0.4465947449207306,
        0.398223876953125,
    ],
    "adam_nesterov": [
        0.7904327511787415,
        0.6113981008529663,
        0.4983351230621338,
        0.4795699417591095,
        0.40995970368385315,
        0.4417155086994171,
        0.3856360912322998,
    ],
    "adamw": [
        0.7904327511787415,
        0.5824452042579651,
        0.5227234363555908,
        0.4787173271179199,
        0.41144344210624695,
        0.4482939541339874,
        0.3989682197570801,
    ],
    "rmsprop": [
        0.7904327511787415,
        0.5682227611541748,
        0.668319046497345,
        0.4869638681411743,
        0.6128374934196472,
        0.4433668255805969,
        0.488095760345459,
    ],
    "rmsprop_centered": [
        0.7904327511787415,
        0.5693286061286926,
        0.5995795130729675,
        0.4720813035964966,
        0.49340078234672546,
        0.4196643829345703,
        0.4134816527366638,
    ],
    "adagrad": [
        0.7904327511787415,
        0.5921590328216553,
        0.5987380743026733,
        0.4590831696987152,
        0.5354750156402588,
        0.40450116991996765,
        0.4157869219779968,
    ],
    "clipped_warmup_cosine": [
        0.7904327511787415,
        0.5593294501304626,
        0.6850469708442688,
        0.43404704332351685,
        0.4063389003276825,
        0.45832115411758423,
        0.40971454977989197,
    ],
    "staircase": [
        0.7904327511787415,
        0.5804779529571533,
        0.6330350637435913,
        0.41243603825569153,
        0.5931645035743713,
        0.3632834255695343,
        0.45546865463256836,
    ],
    "schedule exponential_decay": [
        0.20000000298023224,
        0.20000000298023224,
        0.20000000298023224,
        0.1587401032447815,
        0.12599210441112518,
        0.10000000149011612,
        0.07937005162239075,
        0.06299605220556259,
        0.05000000074505806,
    ],
    "schedule exponential_decay_staircase_end": [
        0.20000000298023224,
        0.20000000298023224,
        0.10000000149011612,
        0.10000000149011612,
        0.05999999865889549,
        0.05999999865889549,
        0.05999999865889549,
        0.05999999865889549,
        0.05999999865889549,
    ],
    "schedule cosine_decay": [
        1.0,
        0.836322009563446,
        0.4855431914329529,
        0.20742791891098022,
        0.10820675641298294,
        0.10000000149011612,
        0.10000000149011612,
        0.10000000149011612,
        0.10000000149011612,
    ],
    "schedule warmup_cosine": [
        0.0,
        0.05000000074505806,
        0.10000000149011612,
        0.08681981265544891,
        0.05499999597668648,
        0.023180196061730385,
        0.010000000707805157,
        0.010000000707805157,
        0.010000000707805157,
    ],
    "schedule linear": [1.0, 1.0, 0.75, 0.5, 0.25, 0.0, 0.0, 0.0, 0.0],
}

CONFIGS: dict[str, Callable[[Any], Any]] = {
    "sgd": lambda o: o.sgd(0.1),
    "sgd_nesterov": lambda o: o.sgd(0.1, momentum=0.9, nesterov=True),
    "adam": lambda o: o.adam(0.05),
    "adam_nesterov": lambda o: o.adam(0.05, nesterov=True),
    "adamw": lambda o: o.adamw(0.05, weight_decay=0.1),
    "rmsprop": lambda o: o.rmsprop(0.01),
    "rmsprop_centered": lambda o: o.rmsprop(0.01, centered=True, momentum=0.5),
    "adagrad": lambda o: o.adagrad(0.1),
    "clipped_warmup_cosine": lambda o: o.chain(
        o.clip_by_global_norm(0.5), o.adam(o.warmup_cosine_decay_schedule(0.0, 0.1, 2, 6, end_value=0.01))
    ),
    "staircase": lambda o: o.sgd(o.exponential_decay(0.2, 2, 0.5, staircase=True)),
}
SCHEDULES: dict[str, Callable[[], Any]] = {
    "exponential_decay": lambda: so.exponential_decay(0.2, 3, 0.5, transition_begin=2),
    "exponential_decay_staircase_end": lambda: so.exponential_decay(0.2, 2, 0.5, staircase=True, end_value=0.06),
    "cosine_decay": lambda: so.cosine_decay_schedule(1.0, 5, alpha=0.1, exponent=2.0),
    "warmup_cosine": lambda: so.warmup_cosine_decay_schedule(0.0, 0.1, 2, 6, end_value=0.01),
    "linear": lambda: so.linear_schedule(1.0, 0.0, 4, transition_begin=1),
}


def loss(p: dict[str, Any], x: Any, y: Any) -> Any:
    h = snp.tanh(x @ p["w1"] + p["b1"])
    return snp.mean((h @ p["w2"] + p["b2"] - y) ** 2)


def train(tx: Any, jitted: bool = True) -> list[float]:
    def step(p: Any, s: Any, x: Any, y: Any) -> Any:
        value, g = shax.value_and_grad(loss, argnums=0)(p, x, y)
        updates, s = tx.update(g, s, p)
        return so.apply_updates(p, updates), s, value

    run = shax.jit(step) if jitted else step
    p, s, losses = P, tx.init(P), []
    for k in range(6):
        rows = slice((k % 2) * 4, (k % 2) * 4 + 4)
        p, s, value = run(p, s, X[rows], Y[rows])
        losses.append(float(value))
    return [*losses, float(loss(p, X, Y))]


@pytest.mark.parametrize("name", sorted(CONFIGS))
def test_a_jitted_training_step_reaches_optax_numbers(name: str) -> None:
    np.testing.assert_allclose(train(CONFIGS[name](optax)), OPTAX[name], rtol=2e-6)


def test_unjitted_steps_agree_and_the_state_is_a_pytree_of_f32_and_i32() -> None:
    tx = optax.adam(0.05)
    np.testing.assert_allclose(train(tx, jitted=False), OPTAX["adam"], rtol=2e-6)
    state = tx.init(P)
    assert isinstance(state[0], so.ScaleByAdamState) and state[1] == so.EmptyState()
    assert state[0].count.dtype == np.int32 and state[0].mu["w1"].dtype == np.float32
    assert len(shax.tree.leaves(state)) == 1 + 2 * 4


@pytest.mark.parametrize("name", sorted(SCHEDULES))
def test_schedules_are_optax_and_run_traced(name: str) -> None:
    schedule = SCHEDULES[name]()
    expected = OPTAX[f"schedule {name}"]
    values = [float(schedule(np.int32(c))) for c in range(9)]
    np.testing.assert_allclose(values, expected, rtol=1e-6)
    traced = shax.jit(schedule)
    np.testing.assert_allclose([float(traced(np.int32(c))) for c in range(9)], expected, rtol=1e-6)


def test_the_free_names_are_optax_s_and_adam_stays_the_loop() -> None:
    assert so.sgd is optax.sgd and so.chain is optax.chain and so.apply_updates is optax.apply_updates
    assert so.adam is not optax.adam
    params, value = so.adam(lambda x: (x * x).sum(), np.ones(2, np.float32), lr=0.1, iters=2, log=None)
    np.testing.assert_allclose(params, [0.8004122, 0.8004122], rtol=1e-6)  # two steps of about lr each
    assert so.constant_schedule(0.3)(5) == 0.3


def test_chain_of_scale_and_clip() -> None:
    g = {"a": np.array([3.0, 4.0], np.float32)}
    tx = so.chain(so.clip_by_global_norm(1.0), so.scale(-2.0))
    updates, state = tx.update(g, tx.init(g))
    np.testing.assert_allclose(updates["a"], [-1.2, -1.6], rtol=1e-6)
    assert state == (so.EmptyState(), so.EmptyState())
    np.testing.assert_allclose(float(so.global_norm(g)), 5.0)


def test_bad_input_is_a_shax_error() -> None:
    with typeguard.suppress_type_checks():  # shax's own checks, as users meet them
        tx = optax.adam(0.1)
        state = tx.init(P)
        other = {"w": np.zeros(3, np.float32)}
        with pytest.raises(
            ShaxValueError, match=r"scale_by_adam: the updates have the structure \{'w': \*\}, but the state"
        ):
            tx.update(other, state)
        with pytest.raises(
            ShaxValueError, match=r"scale_by_adam: leaf 0 of the updates is float32\[2\], but the state"
        ):
            tx.update({**P, "b1": np.zeros(2, np.float32)}, state)
        with pytest.raises(ShaxValueError, match="chain: the state must be the tuple of 2 states"):
            tx.update(P, state[0])
        with pytest.raises(ShaxValueError, match="scale_by_adam: the state must be the ScaleByAdamState"):
            tx.update(P, (so.EmptyState(), so.EmptyState()))
        with pytest.raises(ShaxValueError, match="add_decayed_weights: update needs the parameters"):
            so.adamw(0.1).update(P, so.adamw(0.1).init(P))
        with pytest.raises(ShaxTypeError, match="sgd: learning_rate must be a number"):
            so.sgd("0.1")
        with pytest.raises(ShaxValueError, match="adam: b1 must be finite|scale_by_adam: b1 must be finite"):
            optax.adam(0.1, b1=float("nan"))
        with pytest.raises(ShaxValueError, match="cosine_decay_schedule: decay_steps must be an int from 1"):
            so.cosine_decay_schedule(0.1, 0)
        with pytest.raises(ShaxTypeError, match="chain: argument 0 must be a GradientTransformation"):
            so.chain(so.sgd)
        with pytest.raises(ShaxTypeError, match="apply_updates: the parameters and updates must be pytrees of arrays"):
            so.apply_updates({"a": "x"}, {"a": 1.0})
        assert tree_map(float, so.apply_updates({"a": np.float32(1)}, {"a": np.float32(0.5)})) == {"a": 1.5}

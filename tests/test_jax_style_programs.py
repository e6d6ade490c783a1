"""Programs written the way JAX's tutorials write them — the autodiff cookbook's kinds of
code, "thinking in JAX", control flow, custom derivatives, the quickstart's MLP — each run
twice with only its imports changed: once as `import jax; import jax.numpy as jnp; from
jax import lax, random`, once as `import shax as jax; import shax.numpy as jnp; from shax
import lax, random`. A program is a function of those four names; its results (values and
dtypes) must be JAX's. The float64 programs run with `jax_enable_x64` (restored after);
the quickstart runs in JAX's default float32 (random's default dtype in both). Where shax
differs on purpose (README, "Coming from JAX"), the program says so where it happens."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import numpy as np
import pytest

import shax

jax = pytest.importorskip("jax")

Program = Callable[[Any, Any, Any, Any], Any]


def _shax_names() -> tuple[Any, Any, Any, Any]:
    import shax.numpy as jnp
    from shax import lax, random

    return shax, jnp, lax, random


def _jax_names() -> tuple[Any, Any, Any, Any]:
    import jax.numpy as jnp
    from jax import lax, random

    return jax, jnp, lax, random


def _x64(enabled: bool) -> Iterator[None]:
    before = jax.config.jax_enable_x64
    jax.config.update("jax_enable_x64", enabled)
    try:
        yield
    finally:
        jax.config.update("jax_enable_x64", before)


@pytest.fixture
def x64() -> Iterator[None]:
    yield from _x64(True)


@pytest.fixture
def x32() -> Iterator[None]:
    yield from _x64(False)


def _leaves(tree: Any) -> list[Any]:
    if isinstance(tree, dict):
        return [leaf for key in sorted(tree) for leaf in _leaves(tree[key])]
    if isinstance(tree, (tuple, list)):
        return [leaf for item in tree for leaf in _leaves(item)]
    return [tree]


def _same(program: Program, rtol: float = 1e-12, atol: float = 1e-12) -> None:
    """The program's results under shax are JAX's: the same structure, dtypes and values."""
    # JAX runs the whole program under one jit: the same values, a few seconds less of its
    # op-by-op dispatch
    ours, theirs = program(*_shax_names()), jax.jit(lambda: program(*_jax_names()))()
    assert type(ours) is type(theirs) or isinstance(theirs, jax.Array)
    our_leaves, their_leaves = _leaves(ours), _leaves(theirs)
    assert len(our_leaves) == len(their_leaves)
    for k, (got, want) in enumerate(zip(our_leaves, their_leaves)):
        got, want = np.asarray(got), np.asarray(want)
        assert got.dtype == want.dtype and got.shape == want.shape, (k, got.dtype, want.dtype, got.shape, want.shape)
        np.testing.assert_allclose(got, want, rtol=rtol, atol=atol, err_msg=f"result {k}")


# The autodiff cookbook's kinds of code -------------------------------------------------------

RNG = np.random.default_rng(0)
INPUTS = RNG.normal(size=(4, 3))
TARGETS = np.array([True, True, False, True])
W0, B0 = RNG.normal(size=3), np.float64(0.1)


def logistic_regression(jax: Any, jnp: Any, lax: Any, random: Any) -> Any:
    def sigmoid(x):
        return 0.5 * (jnp.tanh(x / 2) + 1)

    def predict(W, b, inputs):
        return sigmoid(jnp.dot(inputs, W) + b)

    def loss(W, b):
        preds = predict(W, b, INPUTS)
        label_probs = preds * TARGETS + (1 - preds) * (1 - TARGETS)
        return -jnp.sum(jnp.log(label_probs))

    W_grad = jax.grad(loss, argnums=0)(W0, B0)
    W_grad_too, b_grad = jax.grad(loss, (0, 1))(W0, B0)
    value, grads = jax.value_and_grad(loss, (0, 1))(W0, B0)
    # argnums=0 spelled out: shax's grad differentiates every float parameter by default
    step = jax.jit(lambda W, b: W - 0.1 * jax.grad(loss, argnums=0)(W, b))(W0, B0)
    return W_grad, W_grad_too, b_grad, value, grads, step


def jacobians_and_hessians(jax: Any, jnp: Any, lax: Any, random: Any) -> Any:
    def f(W):
        return jnp.tanh(jnp.dot(INPUTS, W)) ** 2

    def scalar(W):
        return jnp.sum(jnp.sin(W) * jnp.exp(W[::-1]))

    def hvp(g, x, v):
        return jax.jvp(jax.grad(g), (x,), (v,))[1]

    return (
        jax.jacfwd(f)(W0),
        jax.jacrev(f)(W0),
        jax.hessian(scalar)(W0),
        jax.jacfwd(jax.jacrev(scalar))(W0),
        hvp(scalar, W0, jnp.ones(3)),
    )


def per_example_gradients(jax: Any, jnp: Any, lax: Any, random: Any) -> Any:
    def loss_one(params, x, y):
        w, b = params
        return (jnp.dot(x, w) + b - y) ** 2

    params = (W0, B0)
    ys = jnp.arange(4.0)
    per_example = jax.vmap(jax.grad(loss_one, argnums=0), in_axes=(None, 0, 0))(params, INPUTS, ys)
    batched_loss = jax.jit(jax.vmap(loss_one, in_axes=(None, 0, 0)))(params, INPUTS, ys)
    return per_example, batched_loss


def jvp_and_vjp(jax: Any, jnp: Any, lax: Any, random: Any) -> Any:
    def f(x, y):
        return jnp.sin(x) * y, jnp.cos(x).sum() + y[0]

    x, y = jnp.linspace(0.0, 1.0, 3), jnp.array([2.0, -1.0, 0.5])
    primals_out, tangents_out = jax.jvp(f, (x, y), (jnp.ones(3), jnp.zeros(3)))
    out, f_vjp = jax.vjp(f, x, y)
    cotangents = f_vjp((jnp.ones(3), 1.0))
    y_lin, f_jvp = jax.linearize(lambda x: jnp.exp(x) @ y, x)
    return primals_out, tangents_out, out, cotangents, y_lin, f_jvp(jnp.ones(3))


# Thinking in JAX: pure functions, jnp arrays, .at[...] ----------------------------------------


def thinking_in_jax(jax: Any, jnp: Any, lax: Any, random: Any) -> Any:
    x = jnp.arange(10.0)
    y = x.at[2].set(10.0)
    z = y.at[::3].add(1.0).at[-1].set(-y[-1])
    repeated = z.at[jnp.array([0, 1, 1])].add(0.5)  # repeated indices add up
    read = z.at[jnp.array([1, 3])].get()

    def norm(X):
        X = X - X.mean(0)
        return X / X.std(0)

    @jax.jit
    def selu(x, alpha=1.67, lmbda=1.05):
        return lmbda * jnp.where(x > 0, x, alpha * jnp.exp(x) - alpha)

    def power(x, n):
        for _ in range(n):
            x = x * x
        return x

    fast_power = jax.jit(power, static_argnums=1)
    return x, y, z, repeated, read, jax.jit(norm)(INPUTS), selu(jnp.linspace(-1.0, 1.0, 5)), fast_power(x[3], 3)


# Control flow ------------------------------------------------------------------------------


def control_flow(jax: Any, jnp: Any, lax: Any, random: Any) -> Any:
    def relu_or_square(x):
        return lax.cond(x > 0, lambda x: x * x, lambda x: -x, x)

    def cumulative_sum(xs):
        def step(carry, x):
            carry = carry + x
            return carry, carry

        return lax.scan(step, 0.0, xs)

    def sum_of_first(n, xs):
        return lax.fori_loop(0, n, lambda i, total: total + xs[i], 0.0)

    def collatz_steps(n):
        def body(state):
            n, steps = state
            return jnp.where(n % 2 == 0, n // 2, 3 * n + 1), steps + 1

        return lax.while_loop(lambda state: state[0] != 1, body, (n, 0))

    xs = jnp.array([1.0, -2.0, 3.5, 0.25], dtype=jnp.float32)
    return (
        jax.jit(relu_or_square)(2.0),
        jax.grad(relu_or_square)(-3.0),
        jax.vmap(relu_or_square)(xs),
        jax.jit(cumulative_sum)(xs),
        jax.grad(lambda xs: cumulative_sum(xs)[1].sum())(xs),
        jax.jit(sum_of_first)(3, xs),
        jax.grad(lambda xs: sum_of_first(2, xs))(xs),  # the bound closed over: see the test below
        jax.jit(collatz_steps)(27),
        lax.switch(1, [jnp.sin, jnp.cos, jnp.exp], 0.5),
    )


# Custom derivatives ----------------------------------------------------------------------


def custom_derivatives(jax: Any, jnp: Any, lax: Any, random: Any) -> Any:
    @jax.custom_jvp
    def log1pexp(x):
        return jnp.log(1.0 + jnp.exp(x))

    @log1pexp.defjvp
    def log1pexp_jvp(primals, tangents):
        (x,), (x_dot,) = primals, tangents
        return log1pexp(x), (1 - 1 / (1 + jnp.exp(x))) * x_dot

    @jax.custom_vjp
    def clip_gradient(lo, hi, x):
        return x

    def clip_gradient_fwd(lo, hi, x):
        return x, (lo, hi)

    def clip_gradient_bwd(res, g):
        lo, hi = res
        return None, None, jnp.clip(g, lo, hi)

    clip_gradient.defvjp(clip_gradient_fwd, clip_gradient_bwd)

    def clipped_sin(x):
        return clip_gradient(-0.75, 0.75, jnp.sin(3 * x))

    xs = jnp.array([0.0, 2.0, 10.0, 100.0], dtype=jnp.float32)
    return (
        jax.grad(log1pexp)(100.0),
        jax.jit(jax.grad(log1pexp))(3.0),
        jax.vmap(jax.jit(jax.grad(log1pexp)))(xs),
        jax.jvp(log1pexp, (3.0,), (1.0,)),
        jax.grad(jax.grad(log1pexp))(0.5),
        jax.grad(clipped_sin)(0.1),
        jax.vmap(jax.grad(clipped_sin))(jnp.linspace(0.0, 1.0, 5, dtype=jnp.float32)),
    )


@pytest.mark.parametrize(
    "program",
    [
        logistic_regression,
        jacobians_and_hessians,
        per_example_gradients,
        jvp_and_vjp,
        thinking_in_jax,
    ],
)
def test_float64_program_is_jaxs(x64: None, program: Program) -> None:
    _same(program)


# Python numbers as arguments (`grad(f)(3.0)`) are f32 in shax, as in JAX without x64
# (README, "Coming from JAX"); arrays are made f32 explicitly, as numpy's default is f64.
@pytest.mark.parametrize("program", [control_flow, custom_derivatives])
def test_float32_program_is_jaxs(x32: None, program: Program) -> None:
    _same(program, rtol=1e-6, atol=1e-6)


# The quickstart's MLP, in float32 -------------------------------------------------------------

IMAGES = RNG.normal(size=(6, 8)).astype(np.float32)
LABELS = np.array([0, 2, 1, 1, 0, 2])


def quickstart_mlp(jax: Any, jnp: Any, lax: Any, random: Any) -> Any:
    def random_layer_params(m, n, key, scale=1e-1):
        w_key, b_key = random.split(key)
        return scale * random.normal(w_key, (n, m)), scale * random.normal(b_key, (n,))

    def init_network_params(sizes, key):
        keys = random.split(key, len(sizes))
        return [random_layer_params(m, n, k) for m, n, k in zip(sizes[:-1], sizes[1:], keys)]

    params = init_network_params([8, 5, 3], random.PRNGKey(0))

    def predict(params, image):
        activations = image
        for w, b in params[:-1]:
            activations = jax.nn.relu(jnp.dot(w, activations) + b)
        final_w, final_b = params[-1]
        logits = jnp.dot(final_w, activations) + final_b
        return logits - jax.nn.logsumexp(logits)

    batched_predict = jax.vmap(predict, in_axes=(None, 0))

    def loss(params, images, targets):
        return -jnp.mean(batched_predict(params, images) * targets)

    # shax's grad differentiates every float parameter unless told (README, "Coming from
    # JAX"): argnums=0 is JAX's default, spelled out so the program means the same in both
    @jax.jit
    def update(params, x, y):
        grads = jax.grad(loss, argnums=0)(params, x, y)
        return [(w - 0.5 * dw, b - 0.5 * db) for (w, b), (dw, db) in zip(params, grads)]

    targets = jax.nn.one_hot(LABELS, 3)
    losses = []
    for _ in range(2):
        losses.append(loss(params, IMAGES, targets))
        params = update(params, IMAGES, targets)
    predicted = jnp.argmax(batched_predict(params, IMAGES), axis=1)
    return params, jnp.stack(losses), predicted.astype(jnp.int32), targets


@pytest.mark.slow
def test_quickstart_mlp_is_jaxs_in_float32(x32: None) -> None:
    _same(quickstart_mlp, rtol=1e-5, atol=1e-6)


def test_accuracy_dtype_is_numpys_as_documented(x32: None) -> None:
    """`mean(argmax(...) == labels)`: f64 in shax (numpy's mean of bools), JAX's f32."""

    def accuracy(jax: Any, jnp: Any, lax: Any, random: Any) -> Any:
        return jax.jit(lambda logits: jnp.mean(jnp.argmax(logits, axis=1) == LABELS))(IMAGES[:, :3])

    ours, theirs = accuracy(*_shax_names()), accuracy(*_jax_names())
    assert np.asarray(ours).dtype == np.float64 and np.asarray(theirs).dtype == np.float32
    assert float(ours) == pytest.approx(float(theirs))


def test_default_grad_differs_as_documented(x64: None) -> None:
    """JAX's `grad(loss)(params, x)` is d/dparams; shax's differentiates every float argument."""

    def both(jax: Any, jnp: Any, lax: Any, random: Any) -> Any:
        def loss(w, x):
            return jnp.sum(jnp.tanh(x @ w))

        return jax.grad(loss)(W0, INPUTS), jax.grad(loss, argnums=0)(W0, INPUTS)

    (ours_all, ours_w), (theirs, theirs_w) = both(*_shax_names()), both(*_jax_names())
    assert isinstance(ours_all, tuple) and len(ours_all) == 2
    np.testing.assert_allclose(ours_all[0], theirs, rtol=1e-12)
    np.testing.assert_allclose(ours_w, theirs_w, rtol=1e-12)


def test_int_arguments_are_traced_as_documented() -> None:
    """JAX's grad runs f on its non-differentiated arguments' values, so `fori_loop(0, n, ...)`
    with n an argument has a fixed trip count; shax traces every argument (n an i32 value),
    making it a while loop, which reverse mode refuses with a ShaxError saying so."""
    from shax import lax

    def sum_of_first(n: Any, xs: Any) -> Any:
        return lax.fori_loop(0, n, lambda i, total: total + xs[i], 0.0)

    xs = np.arange(3.0)
    with pytest.raises(shax.ShaxTypeError, match="reverse-mode differentiation .* of a while loop is not supported"):
        shax.grad(sum_of_first, argnums=1)(2, xs)
    np.testing.assert_array_equal(shax.grad(lambda xs: sum_of_first(2, xs))(xs), [1.0, 1.0, 0.0])

"""shax.export.to_jax: every primitive has an export rule, and every spec row (tests/spec.py)
computes through JAX what `shax.evaluate` computes (to float tolerance; exactly for
integers and booleans); transformed programs, calls and 64-bit programs export too;
`jax.jit` of the function lowers to StableHLO.

The tests without JAX (`test_export_without_jax.py`) check the error when it is missing."""

from __future__ import annotations

import gc
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import typeguard
from hypothesis import given
from spec import SPECS, Spec
from test_primitives import rng_for

import shax
from shax import control as C
from shax import f32, f64, i64
from shax import primitives as P
from shax.export import export_rules, to_jax
from shax.testing.strategies import Program, programs
from typeclasses import argmax, argsort, cos, dot, max, min, pow, reduce_max, reduce_sum, rem, scatter, sin

jax = pytest.importorskip("jax")
from shax.export.lowering import x64  # noqa: E402 - after the skip: it imports jax

PRIMITIVES = [p for p in P.all_primitives() if p.__module__.startswith("shax.") and not p.structural]
SPEC_ROWS = [pytest.param(spec, id=spec.prim.__name__) for spec in SPECS.values()]


def assert_close(got: Any, expected: Any) -> None:
    """Same dtype and shape; values to float tolerance, integers and booleans exactly."""
    got, expected = np.asarray(got), np.asarray(expected)
    assert (got.dtype, got.shape) == (expected.dtype, expected.shape)
    if got.dtype == np.float32:
        np.testing.assert_allclose(got, expected, rtol=2e-6, atol=1e-6)
    elif got.dtype == np.float64:
        np.testing.assert_allclose(got, expected, rtol=1e-13, atol=1e-14)
    else:
        np.testing.assert_array_equal(got, expected)


def exported_results(defn: shax.Definition, *args: Any) -> list[Any]:
    """`defn` run through `jax.jit(to_jax(defn))`, with x64 on (shax has f64 and i64)."""
    with x64():
        return list(jax.jit(to_jax(defn))(*args))


def test_every_primitive_has_an_export_rule() -> None:
    missing = [p.__name__ for p in PRIMITIVES if not export_rules.covers(p)]
    assert not missing, f"no export rule for {missing}"


# A primitive's rows (each case in each dtype) in one `jax.jit`: compiling is most of the
# time, and one compilation of them all takes half as long as one each.
@pytest.mark.slow
@pytest.mark.parametrize("spec", SPEC_ROWS)
def test_every_spec_row_exports(spec: Spec) -> None:
    rows = [(case, dtype) for case in spec.cases for dtype in spec.dtypes]
    defns = [shax.stages.infer_types(shax.trace(case.apply, *spec.arg_types(case, dtype))) for case, dtype in rows]
    values = [spec.sample(case, dtype, rng_for(spec.prim.__name__, case.label, dtype.name)) for case, dtype in rows]
    exported = [to_jax(defn) for defn in defns]
    with x64():
        results = jax.jit(lambda args: [f(*a) for f, a in zip(exported, args)])(values)
    for (case, dtype), defn, args, (got,) in zip(rows, defns, values, results, strict=True):
        (expected,) = shax.evaluate(defn, *args)
        try:
            assert_close(got, expected)
        except AssertionError as error:
            error.add_note(f"spec row {spec.prim.__name__}-{case.label}-{dtype.name}")
            raise


def medium(x0: Any, x8: Any) -> Any:
    x1 = shax.numpy.broadcast_to(x0, (2, 6))
    x2 = sin(x1)
    x4 = x2 + cos(x2)
    x7 = dot(shax.numpy.exp(x4), x4.T)
    return reduce_sum(max(x7 * x8, x7 + x8) - min(x7 * x8, x7 + x8), [0])


X0, X8 = np.arange(1, 7, dtype=np.float32), np.arange(1, 5, dtype=np.float32).reshape(2, 2)


def test_to_jax_runs_the_seed_function_and_its_gradient() -> None:
    defn = shax.xpr(medium, X0, X8)
    (value,) = to_jax(defn)(X0, X8)  # eagerly
    np.testing.assert_allclose(value, [34.731194, 67.46239], rtol=1e-6)
    grad = shax.xpr(shax.grad(lambda x, y: reduce_sum(medium(x, y), [0])), X0, X8)
    for got, expected in zip(exported_results(grad, X0, X8), shax.evaluate(grad, X0, X8)):
        assert_close(got, expected)


def test_jit_of_the_export_lowers_to_stablehlo() -> None:
    text = jax.jit(to_jax(shax.xpr(medium, X0, X8))).lower(X0, X8).as_text()
    assert "stablehlo.dot_general" in text and "stablehlo.sine" in text and "tensor<2x6xf32>" in text


def test_every_stage_output_exports() -> None:
    # the untyped trace (typed once), the typed one, the linear, transposed and zipped programs
    traced = shax.trace(medium, f32[6], f32[2, 2])
    typed = shax.stages.infer_types(traced)
    lin = shax.stages.linearize(typed)
    transposed = shax.stages.transpose(lin)
    zipped = shax.stages.zip_definitions(transposed)
    ct = np.ones(2, np.float32)
    for defn in (traced, typed, lin.primal, zipped):
        args = (X0, X8, ct)[: len(defn.arg_types)]
        for got, expected in zip(exported_results(defn, *args), shax.evaluate(defn, *args)):
            assert_close(got, expected)
    residuals = shax.evaluate(lin.primal, X0, X8)[1:]
    for defn, args in ((lin.linear, (X0, X8, *residuals)), (transposed.linear, (ct, *residuals))):
        for got, expected in zip(exported_results(defn, *args), shax.evaluate(defn, *args)):
            assert_close(got, expected)


def test_calls_export_once_per_callee() -> None:
    @shax.subgraph
    def layer(w: Any, x: Any) -> Any:
        return shax.numpy.tanh(x @ w)

    def net(w: Any, x: Any) -> Any:
        return reduce_sum(layer(w, layer(w, x)), [0, 1])

    w, x = np.eye(3, dtype=np.float32) * 0.5, np.ones((2, 3), np.float32)
    ws = np.stack([w, -w])
    for fn, args in ((net, (w, x)), (shax.grad(net), (w, x)), (shax.vmap(shax.grad(net), (0, None)), (ws, x))):
        defn = shax.xpr(fn, *args)
        assert any(isinstance(b.prim, C.Call) for b in defn.bindings)
        for got, expected in zip(exported_results(defn, *args), shax.evaluate(defn, *args)):
            assert_close(got, expected)
    text = jax.jit(to_jax(shax.xpr(net, w, x))).lower(w, x).as_text()
    assert text.count("func.func") == 2  # main and the one callee, called twice


def test_64_bit_programs_export_with_x64_on() -> None:
    def f(x: Any, n: Any) -> Any:
        return sin(x) * n.astype(np.float64) + 1e-300

    x, n = np.linspace(0, 1, 4), np.arange(4, dtype=np.int64) + 2**40
    defn = shax.xpr(f, x, n)
    assert defn.arg_types == (f64[4], i64[4])
    (got,) = to_jax(defn)(x, n)  # eagerly: the function turns x64 on itself
    assert_close(got, shax.evaluate(defn, x, n)[0])
    (jitted,) = exported_results(defn, x, n)
    assert_close(jitted, shax.evaluate(defn, x, n)[0])


def test_64_bit_arguments_under_jit_without_x64_are_a_clear_error() -> None:
    if jax.config.read("jax_enable_x64"):
        pytest.skip("x64 is on in this process")
    defn = shax.xpr(lambda x: sin(x), np.zeros(3))
    with pytest.raises(shax.ShaxTypeError, match="f64.*x64"):
        jax.jit(to_jax(defn))(np.zeros(3))


SPECIAL = np.array([0.0, -0.0, 1.0, -1.0, 2.0, 0.5, np.inf, -np.inf, np.nan], np.float32)


@pytest.mark.parametrize(
    "fn",
    [
        lambda x, y: min(x, y),
        lambda x, y: max(x, y),
        lambda x, y: pow(x, y),
        lambda x, y: shax.numpy.arctan2(x, y),
        lambda x, y: rem(x, y),
        lambda x, y: argmax(x + y, 1),
        lambda x, y: argsort(x * y, 1),
        lambda x, y: reduce_max(x * y, [0]),
        lambda x, y: shax.numpy.round(x * 0.5 + y),
        lambda x, y: shax.numpy.sign(x * y),
    ],
)
def test_special_values_follow_evaluate(fn: Any) -> None:
    # every pair of the special values, NaNs and signed zeros included
    x, y = np.meshgrid(SPECIAL, SPECIAL, indexing="ij")
    defn = shax.xpr(fn, x, y)
    (got,) = exported_results(defn, x, y)
    with np.errstate(all="ignore"):
        (expected,) = shax.evaluate(defn, x, y)
    assert_close(got, expected)


def test_scatter_keeps_the_last_of_repeated_positions() -> None:
    x = np.zeros((3, 2), np.float32)
    i = np.array([1, 1, -2, 7, 2, 1], np.int32)  # 1, 1, 1 (from -2), 2 (clamped), 2, 1
    u = np.arange(12, dtype=np.float32).reshape(6, 2) - 6
    defn = shax.xpr(lambda x, i, u: scatter(x, i, u, 0, 0), x, i, u)
    (got,) = exported_results(defn, x, i, u)
    np.testing.assert_array_equal(got, [[0, 0], [4, 5], [2, 3]])
    assert_close(got, shax.evaluate(defn, x, i, u)[0])


# A user's primitive, declared without an export rule (as control flow's may be)
cube = shax.extend.elementwise_primitive("export_cube", numpy=lambda x: x**3, derivative=lambda x, out: 3 * x * x)


def test_a_primitive_without_an_export_rule_is_a_named_error() -> None:
    defn = shax.xpr(lambda x: cube(x) * 2.0, np.zeros(3, np.float32))
    with pytest.raises(
        shax.ShaxError, match=r"to_jax: in `x\d+ :: f32\[3\] = export_cube x\d+`: export_cube: no export"
    ):
        to_jax(defn)(np.zeros(3, np.float32))


def test_bad_arguments_are_shax_errors() -> None:
    fn = to_jax(shax.xpr(medium, X0, X8))
    with pytest.raises(shax.ShaxTypeError, match="takes 2 argument"):
        fn(X0)
    with pytest.raises(shax.ShaxTypeError, match=r"argument 1 of medium has type f64\[2, 2\], but f32\[2, 2\]"):
        fn(X0, X8.astype(np.float64))
    with pytest.raises(shax.ShaxTypeError, match="must be an array"):
        fn(X0, "x")
    with typeguard.suppress_type_checks(), pytest.raises(shax.ShaxTypeError, match="expected a Definition"):
        to_jax(medium)  # type: ignore[arg-type]


@pytest.mark.slow
def test_the_data_parallel_example_shards_per_example_gradients_over_8_devices() -> None:
    # a process of its own: the example sets XLA's device count before importing JAX
    example = Path(__file__).resolve().parents[1] / "examples" / "data_parallel.py"
    run = subprocess.run([sys.executable, str(example)], capture_output=True, text=True, timeout=600)
    assert run.returncode == 0, run.stderr
    lines = run.stdout.splitlines()
    assert len(lines) == 4 and all("on 8 devices, P('batch',); equal to numpy's" in line for line in lines)


def test_jit_with_the_xla_backend_matches_the_numpy_backend() -> None:
    def loss(params: dict[str, Any], x: Any) -> Any:
        return reduce_sum(shax.numpy.tanh(x @ params["w"] + params["b"]) ** 2.0, [0, 1])

    params = {"w": np.linspace(-1, 1, 12, dtype=np.float32).reshape(3, 4), "b": np.ones(4, np.float32)}
    x = np.linspace(0, 1, 6, dtype=np.float32).reshape(2, 3)
    per_example = shax.vmap(shax.grad(loss), in_axes=(None, 0))
    for fn, args in ((loss, (params, x)), (shax.grad(loss), (params, x)), (per_example, (params, np.stack([x, -x])))):
        xla, numpy_jit = shax.jit(fn, backend="xla"), shax.jit(fn)
        got, expected = xla(*args), numpy_jit(*args)
        for g, e in zip(shax.core.pytree.flatten(got)[0], shax.core.pytree.flatten(expected)[0]):
            assert isinstance(g, jax.Array)
            assert_close(g, e)
        assert xla(*args) is not None and len(xla._fast) == 1  # built once, found by its key
        # the JAX arrays it returns go back in; the second call reuses what the first built
        again = xla(*jax.device_put(args))
        for g, e in zip(shax.core.pytree.flatten(again)[0], shax.core.pytree.flatten(expected)[0]):
            assert_close(g, e)
    text = shax.jit(shax.grad(loss), backend="xla").source(params, x)
    assert text.startswith("module @jit_grad_loss") and "stablehlo.tanh" in text


def test_jit_with_the_xla_backend_takes_numbers_64_bit_values_and_composes() -> None:
    f = shax.jit(lambda x, y: sin(x) * y, backend="xla")
    assert_close(f(np.float32(0.5), 2.0), np.float32(np.sin(np.float32(0.5)) * 2))  # 2.0 weakly typed: f32
    x64_value = f(np.float64(0.5), 2.0)  # an f64 program: x64 on while it runs
    assert x64_value.dtype == np.float64
    np.testing.assert_allclose(x64_value, np.sin(0.5) * 2, rtol=1e-15)
    assert f(np.float32(1.0), 3.0) is not None and len(f._fast) == 2  # numbers: the fast path
    g = shax.jit(lambda n: n + 1, backend="xla")
    assert g(3) == 4 and g(3).dtype == np.int32
    with pytest.raises(shax.ShaxValueError, match="the Python int 1099511627776 does not fit i32"):
        g(2**40)  # found by the key of 3, but it does not fit
    # inside another transform it inlines, as the numpy backend does
    assert_close(shax.grad(lambda x: f(x, 3.0))(np.float32(0.5)), np.float32(3 * np.cos(np.float32(0.5))))


def test_jit_with_the_xla_backend_runs_inside_jax_transforms() -> None:
    f = shax.jit(lambda x: reduce_sum(sin(x) * x, [0]), backend="xla")
    x = np.linspace(0, 1, 3, dtype=np.float32)
    assert_close(jax.grad(f)(jax.numpy.asarray(x)), (np.cos(x) * x + np.sin(x)).astype(np.float32))
    assert_close(jax.jit(jax.vmap(f))(np.stack([x, x])), np.full(2, (np.sin(x) * x).sum(), np.float32))


def test_a_callee_with_64_bit_values_turns_x64_on_for_its_caller() -> None:
    @shax.subgraph
    def tiny(x: Any) -> Any:  # 1e-300 is 0 in f32: the f64 steps must stay f64
        return (x.astype(np.float64) * 1e-300 * 1e300).astype(np.float32)

    x = np.ones(3, np.float32)
    defn = shax.xpr(lambda x: tiny(x) + 1.0, x)
    assert all(t.dtype == f32 for t in (*defn.arg_types, *defn.output_types()))
    assert_close(to_jax(defn)(x)[0], np.full(3, 2.0, np.float32))
    assert_close(shax.jit(lambda x: tiny(x) + 1.0, backend="xla")(x), np.full(3, 2.0, np.float32))


@given(programs())
def test_generated_programs_export(program: Program) -> None:
    # f64 programs, calls included: XLA's elementary functions may differ in the last bits
    defn = shax.stages.infer_types(shax.trace(program.fn, *program.arg_types))
    with np.errstate(all="ignore"):
        expected = shax.evaluate(defn, *program.args)
    got = exported_results(defn, *program.args)
    for g, e in zip(got, expected):
        g, e = np.asarray(g), np.asarray(e)
        assert (g.dtype, g.shape) == (e.dtype, e.shape)
        np.testing.assert_allclose(g, e, rtol=1e-9, atol=1e-9)


def test_exported_functions_live_as_long_as_their_users_hold_them() -> None:
    from shax.export.lowering import _exported

    defn = shax.xpr(lambda x: sin(x) + 1.0, X0)
    fn = to_jax(defn)
    assert to_jax(defn) is fn  # one per definition
    key = id(defn)
    del fn, defn
    gc.collect()
    assert key not in _exported

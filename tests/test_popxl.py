"""PopXL's graph-level autodiff (`shax.autodiff`, its user guide's section 10.1): the
gradient graph of a definition, called on the activations of a call of it, against
`shax.grad` of the same function; grads_provided, grads_required, the GradGraphInfo's
maps, and gradient graphs of called definitions built once and reused."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest
import typeguard

import shax
import shax.numpy as snp
from shax import f64, i32
from shax.control import Call, callees
from shax.core.ir import Definition, Var
from shax.core.printing import called_definitions
from shax.tools.cli import load_function

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"


def typed(fn: Any, *types: Any, name: str | None = None) -> Definition:
    return shax.stages.infer_types(shax.trace(fn, *types, name=name))


def vars_of(defn: Definition) -> list[Var]:
    """The vars `defn` reads its arguments into (it reads every one)."""
    found = defn.inputs
    assert all(v is not None for v in found), defn
    return [v for v in found if v is not None]


def rng_arrays(*shapes: tuple[int, ...], seed: int = 0) -> list[np.ndarray]:
    rng = np.random.default_rng(seed)
    return [rng.normal(size=shape) for shape in shapes]


# -- Listing 10.1: examples/popxl_linear.py


def example() -> Any:
    return load_function(f"{EXAMPLES / 'popxl_linear.py'}:main").__globals__


def test_example_gradients_are_shax_grad_of_the_summed_output() -> None:
    module = example()
    y, grads_x, grads_w, grads_b = module["main"](log=None)
    x, W, b = module["data"]()
    np.testing.assert_allclose(y, x @ W + b, rtol=1e-6)
    expected = shax.grad(lambda x, W, b: snp.sum(module["linear"](x, W, b)), wrt=(0, 1, 2))(x, W, b)
    for got, want in zip([grads_x, grads_w, grads_b], expected, strict=True):
        np.testing.assert_allclose(got, want, rtol=1e-6)


def test_example_traced_main_calls_the_forward_and_gradient_graphs() -> None:
    module = example()
    main_program = shax.xpr(module["program"], shax.f32[2, 2], shax.f32[2, 2], shax.f32[2])
    calls = [b.prim.defn.name for b in main_program.bindings if isinstance(b.prim, Call)]
    assert calls == ["linear", "dlineart"]  # the gradient graph's three outputs, one call
    for got, want in zip(shax.evaluate(main_program, *module["data"]()), module["main"](log=None), strict=True):
        np.testing.assert_allclose(got, want, rtol=1e-6)


def test_a_grad_seed_of_eight_scales_the_gradients_by_eight() -> None:
    module = example()
    linear_graph, W_var, b_var = module["linear_graph"], module["W_var"], module["b_var"]
    x, W, b = module["data"]()
    fwd_call_info = shax.call_with_info(linear_graph, x, inputs_dict={W_var: W, b_var: b})
    bwd_graph_info = shax.autodiff(linear_graph)
    activations = bwd_graph_info.inputs_dict(fwd_call_info)
    seeded = shax.call(bwd_graph_info.graph, 8 * np.ones((2, 2), np.float32), inputs_dict=activations)
    for got, want in zip(seeded, module["main"](log=None)[1:], strict=True):
        np.testing.assert_allclose(got, 8 * want, rtol=1e-6)


# -- grads_provided, grads_required, expected_inputs and expected_outputs


def two_outputs(x: Any, w: Any) -> tuple[Any, Any]:
    h = snp.tanh(x * w)
    return h * h, snp.sin(x) + w


TWO = typed(two_outputs, f64[3], f64[3], name="two")
X, W = rng_arrays((3,), (3,))
SEEDS = rng_arrays((3,), (3,), seed=1)


def pulled_back(provided: list[int], required: list[int]) -> list[np.ndarray]:
    """shax.grad of the provided outputs against their seeds, for the required arguments."""

    def loss(x: Any, w: Any) -> Any:
        outputs = two_outputs(x, w)
        return sum(snp.sum(outputs[k] * SEEDS[k]) for k in provided)

    return list(shax.grad(loss, wrt=tuple(required))(X, W))


def gradients(info: shax.GradGraphInfo, provided: list[int]) -> tuple[Any, ...]:
    fwd = shax.call_with_info(TWO, X, W)
    return shax.call(info.graph, *(SEEDS[k] for k in provided), inputs_dict=info.inputs_dict(fwd))


@pytest.mark.parametrize("by", ["var", "position"])
@pytest.mark.parametrize("provided", [[0], [1], [1, 0], [0, 1]])
def test_grads_provided_takes_those_outputs_cotangents_in_that_order(by: str, provided: list[int]) -> None:
    keys = [TWO.outputs[k] for k in provided] if by == "var" else provided
    info = shax.autodiff(TWO, grads_provided=keys)
    assert info.graph.arg_types[: len(provided)] == tuple(TWO.output_types()[k] for k in provided)
    np.testing.assert_allclose(gradients(info, provided), pulled_back(provided, [0, 1]), rtol=1e-12)


@pytest.mark.parametrize("by", ["var", "position"])
@pytest.mark.parametrize("required", [[0], [1], [1, 0]])
def test_grads_required_returns_those_arguments_gradients_in_that_order(by: str, required: list[int]) -> None:
    arguments = vars_of(TWO)
    keys = [arguments[k] for k in required] if by == "var" else required
    info = shax.autodiff(TWO, grads_required=keys)
    assert [v.id for v in info.expected_outputs] == [arguments[k].id for k in required]
    np.testing.assert_allclose(gradients(info, [0, 1]), pulled_back([0, 1], required), rtol=1e-12)


def test_one_output_provided_and_one_argument_required() -> None:
    info = shax.autodiff(TWO, grads_provided=[TWO.outputs[1]], grads_required=[1])
    np.testing.assert_allclose(gradients(info, [1]), pulled_back([1], [1]), rtol=1e-12)


@pytest.mark.parametrize("provided", [None, [0], [1]])
@pytest.mark.parametrize("required", [None, [0], [1]])
def test_expected_inputs_are_the_forward_graphs_activations_the_gradient_graph_reads(
    provided: list[int] | None, required: list[int] | None
) -> None:
    info = shax.autodiff(TWO, grads_provided=provided, grads_required=required)
    forward, n = info.forward_with_activations, len(TWO.outputs)
    assert info.original_graph is TWO
    # forward_with_activations: the original's outputs, then the activations, which expected_inputs name
    assert [v.id for v in forward.outputs[n:]] == [v.id for v in info.expected_inputs]
    values = shax.evaluate(forward, X, W)
    np.testing.assert_allclose(values[:n], shax.evaluate(TWO, X, W), rtol=1e-15)
    # the gradient graph: the provided outputs' cotangents, then the expected inputs, each read
    cts = n if provided is None else len(provided)
    assert len(info.graph.arg_types) == cts + len(info.expected_inputs)
    assert info.graph.arg_types[cts:] == forward.output_types()[n:]
    assert all(v is not None for v in info.graph.inputs[cts:])
    # expected_outputs: the required arguments, named by the original's argument vars
    wanted = [0, 1] if required is None else required
    assert [v.id for v in info.expected_outputs] == [vars_of(TWO)[k].id for k in wanted]
    assert info.graph.output_types() == tuple(TWO.arg_types[k] for k in wanted)


def test_only_the_needed_activations_are_expected() -> None:
    # d(sin x + w) = cos x dx + dw: the second output's gradient graph reads cos x alone
    info = shax.autodiff(TWO, grads_provided=[1])
    assert len(info.expected_inputs) == 1
    np.testing.assert_allclose(shax.evaluate(info.forward_with_activations, X, W)[2], np.cos(X), rtol=1e-15)


def test_an_int_argument_gets_no_gradient_and_an_int_output_no_cotangent_unless_listed() -> None:
    mixed = typed(lambda x, n: (x * 2.0, n + 1), f64[3], i32[3], name="mixed")
    info = shax.autodiff(mixed, grads_provided=[0])
    assert [v.id for v in info.expected_outputs] == [vars_of(mixed)[0].id]
    fwd = shax.call_with_info(mixed, X, np.arange(3, dtype=np.int32))
    (dx,) = shax.call(info.graph, SEEDS[0], inputs_dict=info.inputs_dict(fwd))
    np.testing.assert_allclose(dx, 2 * SEEDS[0])


# -- the maps from forward tensors to gradient tensors


def test_fwd_graph_ins_to_grad_parent_outs_is_keyed_by_the_forward_graphs_argument_vars() -> None:
    info = shax.autodiff(TWO)
    fwd = shax.call_with_info(TWO, X, W)
    grad_call = shax.call_with_info(info.graph, *SEEDS, inputs_dict=info.inputs_dict(fwd))
    mapping = info.fwd_graph_ins_to_grad_parent_outs(grad_call)
    x_var, w_var = vars_of(TWO)
    dx, dw = pulled_back([0, 1], [0, 1])
    np.testing.assert_allclose(mapping[x_var], dx, rtol=1e-12)
    np.testing.assert_allclose(mapping[w_var], dw, rtol=1e-12)


def test_fwd_parent_ins_to_grad_parent_outs_on_numpy_arrays() -> None:
    info = shax.autodiff(TWO)
    x, w = X.copy(), W.copy()
    fwd = shax.call_with_info(TWO, x, w)
    grad_call = shax.call_with_info(info.graph, *SEEDS, inputs_dict=info.inputs_dict(fwd))
    mapping = info.fwd_parent_ins_to_grad_parent_outs(fwd, grad_call)
    dx, dw = pulled_back([0, 1], [0, 1])
    assert len(mapping) == 2
    np.testing.assert_allclose(mapping[x], dx, rtol=1e-12)
    np.testing.assert_allclose(mapping[w], dw, rtol=1e-12)
    with pytest.raises(KeyError):
        mapping[X]  # an equal array is not the caller's tensor


def test_fwd_parent_ins_to_grad_parent_outs_on_tracers() -> None:
    info = shax.autodiff(TWO)

    def program(x: Any, w: Any) -> tuple[Any, Any]:
        u, v = snp.exp(x), w * 3.0
        fwd = shax.call_with_info(TWO, u, v)
        grad_call = shax.call_with_info(info.graph, *SEEDS, inputs_dict=info.inputs_dict(fwd))
        mapping = info.fwd_parent_ins_to_grad_parent_outs(fwd, grad_call)
        return mapping[u], mapping[v]

    got = shax.jit(program)(X, W)
    u, v = np.exp(X), W * 3.0

    def loss(x: Any, w: Any) -> Any:
        return sum(snp.sum(o * s) for o, s in zip(two_outputs(x, w), SEEDS))

    np.testing.assert_allclose(got, shax.grad(loss, wrt=(0, 1))(u, v), rtol=1e-12)


def test_a_tensor_passed_twice_maps_to_the_sum_of_its_gradients() -> None:
    info = shax.autodiff(TWO)
    fwd = shax.call_with_info(TWO, X, X)
    grad_call = shax.call_with_info(info.graph, *SEEDS, inputs_dict=info.inputs_dict(fwd))
    mapping = info.fwd_parent_ins_to_grad_parent_outs(fwd, grad_call)
    assert len(mapping) == 1
    expected = shax.grad(lambda x: sum(snp.sum(o * s) for o, s in zip(two_outputs(x, x), SEEDS)))(X)
    np.testing.assert_allclose(mapping[X], expected, rtol=1e-12)


def test_inputs_dict_in_a_trace_computes_the_forward_pass_once() -> None:
    info = shax.autodiff(TWO)

    def program(x: Any, w: Any) -> tuple[Any, ...]:
        fwd = shax.call_with_info(TWO, x, w)
        return (*fwd.outputs, *shax.call(info.graph, *SEEDS, inputs_dict=info.inputs_dict(fwd)))

    defn = shax.xpr(program, X, W)
    forward_calls = {b.args for b in defn.bindings if isinstance(b.prim, Call) and b.prim.defn.name == "two"}
    assert len(forward_calls) == 1
    np.testing.assert_allclose(shax.evaluate(defn, X, W)[2:], pulled_back([0, 1], [0, 1]), rtol=1e-12)


# -- graphs A and B both calling C


def c_fn(x: Any, w: Any) -> tuple[Any]:
    return (snp.tanh(x * w),)


C = typed(c_fn, f64[3], f64[3], name="C")


def a_fn(x: Any, w: Any) -> Any:
    (h,) = shax.call(C, x, w)
    (h2,) = shax.call(C, h, w)
    return snp.sum(h2 * x)


def b_fn(x: Any, w: Any) -> Any:
    (h,) = shax.call(C, snp.sin(x), w)
    return snp.sum(h * h)


def a_inlined(x: Any, w: Any) -> Any:
    return snp.sum(snp.tanh(snp.tanh(x * w) * w) * x)


def b_inlined(x: Any, w: Any) -> Any:
    h = snp.tanh(snp.sin(x) * w)
    return snp.sum(h * h)


A = typed(a_fn, f64[3], f64[3], name="A")
B = typed(b_fn, f64[3], f64[3], name="B")


def autodiff_gradients(info: shax.GradGraphInfo, graph: Definition) -> tuple[Any, ...]:
    fwd = shax.call_with_info(graph, X, W)
    return shax.call(info.graph, 1.0, inputs_dict=info.inputs_dict(fwd))


def test_c_gradient_graph_built_once_and_reused_by_a(monkeypatch: pytest.MonkeyPatch) -> None:
    built: list[str] = []
    transposed = callees._transposed

    def counting(defn: Definition, linear: int) -> Definition:
        built.append(defn.name)
        return transposed(defn, linear)

    monkeypatch.setattr(callees, "_transposed", counting)
    c = typed(c_fn, f64[3], f64[3], name="C")  # a C no other test differentiated
    a = typed(lambda x, w: snp.sum(shax.call(c, shax.call(c, x, w)[0], w)[0] * x), f64[3], f64[3], name="A")
    b = typed(lambda x, w: snp.sum(shax.call(c, snp.sin(x), w)[0] ** 2), f64[3], f64[3], name="B")

    info_b, info_c = shax.autodiff(b, return_all_grad_graphs=True)
    assert (info_b.original_graph, info_c.original_graph) == (b, c)
    info_a = shax.autodiff(a, called_graphs_grad_info={c: info_c})
    assert built.count("dC") == 1
    assert built.count("dA") == built.count("dB") == 1
    calls_of_c = {id(b.prim.defn) for b in info_a.graph.bindings if isinstance(b.prim, Call)}
    assert calls_of_c == {id(info_c.graph)}
    assert any(d is info_c.graph for d in called_definitions(info_b.graph))
    np.testing.assert_allclose(autodiff_gradients(info_a, a), shax.grad(a_inlined, wrt=(0, 1))(X, W), rtol=1e-12)
    np.testing.assert_allclose(autodiff_gradients(info_b, b), shax.grad(b_inlined, wrt=(0, 1))(X, W), rtol=1e-12)


def test_return_all_grad_graphs_lists_the_called_definitions_infos() -> None:
    infos = shax.autodiff(A, return_all_grad_graphs=True)
    assert [info.original_graph for info in infos] == [A, C]
    info_c = infos[1]
    fwd = shax.call_with_info(C, X, W)
    dx, dw = shax.call(info_c.graph, SEEDS[0], inputs_dict=info_c.inputs_dict(fwd))
    expected = shax.grad(lambda x, w: snp.sum(c_fn(x, w)[0] * SEEDS[0]), wrt=(0, 1))(X, W)
    np.testing.assert_allclose([dx, dw], expected, rtol=1e-12)


def test_a_and_b_gradients_are_those_of_the_inlined_functions() -> None:
    np.testing.assert_allclose(autodiff_gradients(shax.autodiff(A), A), shax.grad(a_inlined, wrt=(0, 1))(X, W))
    np.testing.assert_allclose(autodiff_gradients(shax.autodiff(B), B), shax.grad(b_inlined, wrt=(0, 1))(X, W))


# -- errors


def test_a_bad_grads_required_key_is_a_shax_error() -> None:
    bad_keys: list[Any] = [[TWO.outputs[0]], [2], [-1], "x", [0, 0]]
    for bad in bad_keys:
        with pytest.raises(shax.ShaxError):
            shax.autodiff(TWO, grads_required=bad)


def test_a_bad_grads_provided_key_is_a_shax_error() -> None:
    bad_keys: list[Any] = [[vars_of(TWO)[0]], [2], [1, 1]]
    for bad in bad_keys:
        with pytest.raises(shax.ShaxError):
            shax.autodiff(TWO, grads_provided=bad)


def test_a_non_float_required_argument_or_provided_output_is_a_shax_error() -> None:
    mixed = typed(lambda x, n: (x * 2.0, n + 1), f64[3], i32[3], name="mixed")
    with pytest.raises(shax.ShaxError, match="not a float"):
        shax.autodiff(mixed, grads_required=[1])
    with pytest.raises(shax.ShaxError, match="not a float"):
        shax.autodiff(mixed, grads_provided=[1])


def test_a_grad_graph_info_for_the_wrong_graph_is_a_shax_error() -> None:
    other = typed(lambda x, w: (snp.cos(x + w),), f64[3], f64[3], name="other")  # C's signature
    with pytest.raises(shax.ShaxError, match="is for other, not for C"):
        shax.autodiff(A, called_graphs_grad_info={C: shax.autodiff(other)})
    with pytest.raises(shax.ShaxError, match="GradGraphInfo"):
        shax.autodiff(A, called_graphs_grad_info={C: shax.autodiff(C, grads_required=[0])})
    with typeguard.suppress_type_checks(), pytest.raises(shax.ShaxError, match="GradGraphInfo"):
        # as users run shax, without typeguard
        shax.autodiff(A, called_graphs_grad_info={C: "info"})  # type: ignore[dict-item]


def test_inputs_dict_of_another_graphs_call_site_is_a_shax_error() -> None:
    other = typed(lambda x, w: (snp.cos(x + w),), f64[3], f64[3], name="other")
    with pytest.raises(shax.ShaxError, match="calls other"):
        shax.autodiff(C).inputs_dict(shax.call_with_info(other, X, W))


# -- forward_graph is the graph autodiff was given; a graph's inputs name its arguments


def test_forward_graph_is_the_definition_autodiff_was_given() -> None:
    assert shax.autodiff(TWO).forward_graph is TWO
    assert shax.autodiff(TWO, grads_provided=[1], grads_required=[0]).forward_graph is TWO
    untyped = shax.trace(c_fn, f64[3], f64[3], name="untyped_c")
    assert shax.autodiff(untyped).forward_graph is untyped
    infos = shax.autodiff(A, return_all_grad_graphs=True)
    assert [info.forward_graph for info in infos] == [A, C] and infos[1].forward_graph is C


def test_called_graphs_grad_info_keyed_by_forward_graph_as_popxl() -> None:
    c = typed(c_fn, f64[3], f64[3], name="C")
    b = typed(lambda x, w: snp.sum(shax.call(c, snp.sin(x), w)[0] ** 2), f64[3], f64[3], name="B")
    a = typed(lambda x, w: snp.sum(shax.call(c, shax.call(c, x, w)[0], w)[0] * x), f64[3], f64[3], name="A")
    _, info_c = shax.autodiff(b, return_all_grad_graphs=True)
    info_a = shax.autodiff(a, called_graphs_grad_info={info_c.forward_graph: info_c})  # PopXL's usage
    calls_of_c = {id(b.prim.defn) for b in info_a.graph.bindings if isinstance(b.prim, Call)}
    assert calls_of_c == {id(info_c.graph)}
    np.testing.assert_allclose(autodiff_gradients(info_a, a), shax.grad(a_inlined, wrt=(0, 1))(X, W), rtol=1e-12)


def test_an_untyped_graphs_info_is_keyed_by_it() -> None:
    untyped = shax.trace(c_fn, f64[3], f64[3], name="untyped_c")
    info = shax.autodiff(untyped)
    caller = typed(lambda x, w: snp.sum(shax.call(untyped, x, w)[0]), f64[3], f64[3], name="caller")
    info_caller = shax.autodiff(caller, called_graphs_grad_info={info.forward_graph: info})
    assert any(d is info.graph for d in called_definitions(info_caller.graph))
    expected = shax.grad(lambda x, w: snp.sum(snp.tanh(x * w)), wrt=(0, 1))(X, W)
    np.testing.assert_allclose(autodiff_gradients(info_caller, caller), expected, rtol=1e-12)


def test_a_graphs_inputs_name_its_arguments_as_popxl_graph_inputs() -> None:
    x_var, w_var = TWO.inputs
    assert [x_var, w_var] == vars_of(TWO)
    assert [v.type for v in TWO.inputs] == list(TWO.arg_types)
    fwd = shax.call_with_info(TWO, X, inputs_dict={w_var: W})
    np.testing.assert_allclose(fwd.outputs, shax.evaluate(TWO, X, W), rtol=1e-15)
    info = shax.autodiff(TWO, grads_required=[w_var])
    assert [v.id for v in info.expected_outputs] == [w_var.id]
    unread = typed(lambda x, w: (x * 2.0,), f64[3], f64[3], name="unread")
    assert unread.inputs[1] is None  # an argument the graph never reads has no var

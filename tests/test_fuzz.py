"""Bad input at every public entry point: each call returns normally or raises a
`shax.ShaxError` naming the caller's line (a line of the fuzz's files); nothing else
escapes, and no call changes the values it was given.

Each entry point has a good call (`Call`), which must succeed. The fuzz replaces some
of its arguments with generated bad values (tests/fuzzing.py's `BAD`: None, strings,
bytes, lists, dicts, objects, arrays of other dtypes, ranks and shapes, NaN and
infinities, huge ints, negative and out-of-range axes, wrong pytree structures,
definitions of the other kind), and, where the number of arguments is data
(`evaluate`'s, a transformed function's, `vjp_fn`'s), drops or adds one. The entry
points are read off `shax.__all__`, `shax.stages`, `shax.passes`, `shax.optimizers`,
the typeclass functions of `typeclasses.__all__` (on numpy values and inside a traced
function), and `shax.numpy`, `shax.nn` and the tracer's array methods
(tests/fuzz_numpy.py); `test_every_public_name_is_fuzzed` fails when a new public name
has no driver.

A call that Python's own signature binding refuses (a required parameter of a shax
function left out) stays Python's TypeError, as in numpy and JAX, so the fuzz varies
the number of arguments only where it is data.
"""

from __future__ import annotations

import importlib.util
import inspect
import typing
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
from fuzz_lax import CONTROL, LAX
from fuzz_numpy import LINALG, METHODS, NN, NUMPY, public_methods
from fuzz_trees import NOT_CALLED_IN_OPTIMIZERS, OPTIMIZERS_OPTAX, TREE_NAMES, TREE_UTIL
from fuzzing import (
    BAD,
    CALL_INFO,
    COMPILED,
    DEFN,
    EXPLANATION,
    F_JVP,
    FLAGS,
    GRAD_CALL_INFO,
    GRAD_INFO,
    INTEGERS,
    LIN,
    MEDIUM,
    PAIR,
    PAIR_ARGS,
    SMALL_COUNTS,
    TRANSPOSED,
    TYPED,
    VJP_FN,
    XS,
    Call,
    X,
    Y,
    attempt,
    energy,
    integers,
    loss,
    pair,
    traceable,
)  # fmt: skip
from hypothesis import given, settings
from hypothesis import strategies as st

import shax
import shax.nn
import shax.numpy
import shax.random
import shax.testing.strategies
import typeclasses
from shax import f32, optimizers, passes, stages
from shax.codegen import compile_definition
from shax.core.ir import Definition, LinearizedDefinition
from shax.tools.cli import main

# Entry points -----------------------------------------------------------------------------


def transformed(transform: Callable[..., Any], arity: int = 1) -> Callable[..., Any]:
    """`transform(*its_args)(*call_args)`, the first `arity` arguments the transform's."""
    return lambda *args: transform(*args[:arity])(*args[arity:])


def vmap_with_axis(fn: Any, axis: Any, *args: Any) -> Any:
    return shax.vmap(fn, axis=axis)(*args)


def jit_source(fn: Any, *args: Any) -> Any:
    return shax.jit(fn).source(*args)


def hand_built_definition(name: Any, arg_types: Any, bindings: Any, outputs: Any) -> Any:
    return stages.infer_types(Definition(name, arg_types, bindings, outputs))


def hand_built_linearized(primal: Any, linear: Any, num_residuals: Any) -> Any:
    return stages.transpose(LinearizedDefinition(primal, linear, num_residuals))


def dtype_indexed(dtype: shax.DType) -> Callable[[Any], Any]:
    return lambda shape: dtype[shape]


def inside_trace(function: Callable[..., Any], first: int = 1) -> Callable[..., Any]:
    """`function(*args, **kwargs)` run inside a trace: its positional arguments from `first`
    on that are arrays of a shax dtype become tracers of their types (a call's operands)."""

    def call(*args: Any, **kwargs: Any) -> Any:
        arrays = [k for k in range(first, len(args)) if traceable(args[k])]

        def f(*tracers: Any) -> Any:
            given = list(args)
            for k, tracer in zip(arrays, tracers):
                given[k] = tracer
            result = function(*given, **kwargs)
            return [r for r in shax_leaves(result) if isinstance(r, shax.Tracer)] or [tracers[0] if tracers else 0.0]

        return shax.trace(f, *(shax.TensorType.of(args[k]) for k in arrays))

    return call


def shax_leaves(result: Any) -> list[Any]:
    """The values a call gave back: its outputs, or a call site's (`CallSiteInfo.outputs`)."""
    if isinstance(result, shax.CallSiteInfo):
        return list(result.outputs)
    return list(result) if isinstance(result, (tuple, list)) else [result]


def subgraph_call(fn: Any, *args: Any) -> Any:
    return shax.subgraph(fn)(*args)


def checkpoint_call(fn: Any, policy: Any, *args: Any) -> Any:
    return shax.checkpoint(fn, policy=policy)(*args)


def named_pair(x: Any, y: Any) -> Any:
    return pair(shax.checkpoint_name(x, "x"), y)


def scan_step(carry: Any, x: Any) -> Any:
    return pair(carry, x), carry * x


def fori_step(i: Any, value: Any) -> Any:
    return pair(value, value)


def while_loop_counted(cond: Any, step: Any, init: Any) -> Any:
    """A while loop of at most 3 steps, whatever its carry (a bad one must not loop for ever)."""
    counted_cond = cond if not callable(cond) else lambda c: cond(c[1])
    counted_step = step if not callable(step) else lambda c: (step(c[1], c[0]), c[1] + np.int32(1))
    return shax.while_loop(counted_cond, counted_step, (init, np.int32(0)))


def while_cond(count: Any) -> Any:
    return count < np.int32(3)


# For fori_loop's bounds: a bound of 2**62 is valid, and would run for ever.
LOOP_BOUNDS = BAD.filter(lambda v: not (isinstance(v, (int, np.integer)) and abs(v) > 5))


def cond_other(x: Any, y: Any) -> Any:
    return typeclasses.mul(x, y)


def gradient_at_call_site(defn: Any, x: Any, y: Any, seed: Any) -> Any:
    """PopXL's autodiff flow: call `defn` with its call site's information, build its
    gradient graph, call that on the seed and the call site's activations."""
    forward = shax.call_with_info(defn, x, y)
    info = shax.autodiff(defn)
    return shax.call(info.graph, seed, inputs_dict=info.inputs_dict(forward))


def custom_jvp_call(fn: Any, *args: Any) -> Any:
    """`fn` given a rule (its own derivative, by autodiff) and called under grad-like use."""
    f = shax.custom_jvp(fn)
    f.defjvp(lambda primals, tangents: shax.jvp(fn, tuple(primals), tuple(tangents)))
    return f(*args)


def custom_vjp_call(fn: Any, *args: Any) -> Any:
    f = shax.custom_vjp(fn)
    f.defvjp(lambda *a: (fn(*a), a), lambda a, ct: shax.vjp(fn, *a)[1](ct))
    return f(*args)


def with_options(transform: Callable[..., Any]) -> Callable[..., Any]:
    """`transform(fn, argnums=, has_aux=)(*args)`."""
    return lambda fn, argnums, has_aux, *args: transform(fn, argnums=argnums, has_aux=has_aux)(*args)


def by_keyword(transform: Callable[..., Any]) -> Callable[..., Any]:
    """`transform(fn)(*args, **kwargs)`: arguments by keyword."""
    return lambda fn, *args, **kwargs: transform(fn)(*args, **kwargs)


def static_jit(fn: Any, static_argnums: Any, static_argnames: Any, *args: Any, **kwargs: Any) -> Any:
    return shax.jit(fn, static_argnums=static_argnums, static_argnames=static_argnames)(*args, **kwargs)


def energy_aux(x: Any, y: Any) -> Any:
    return energy(x, y), {"pair": pair(x, y), "y": (y,)}


def scaled(x: Any, n: Any, *, scale: Any = 1.0) -> Any:
    for _ in range(n if isinstance(n, int) and 0 <= n < 4 else 1):
        x = typeclasses.mul(x, scale)
    return x


def run_cli(*argv: str) -> int:
    try:
        return main(list(argv))
    except SystemExit as stopped:  # argparse's usage errors: a message, status 2, no traceback
        assert stopped.code == 2, stopped
        return 2


CLI_WORDS = ["trace", "types", "explain", MEDIUM, "f32[6]", "f32[2,2]", "--inputs", "--seed", "--stages"]
CLI_ARGUMENTS = st.one_of(
    st.sampled_from([*CLI_WORDS, "--exercise", "sin"]),
    st.text(max_size=6),
    st.sampled_from(["[1", "[[1, 2]]", '[["a"]]', "[[1, 2, 3, 4, 5, 6], [[1, 2], [3, 4]]]", "-1", "f,dft", "{}"]),
)

SHAX: dict[str, Call] = {
    "evaluate": Call(shax.evaluate, (TYPED, X), variadic=True),
    "evaluate (i32, bool)": Call(shax.evaluate, (INTEGERS, 3, FLAGS), variadic=True),
    "explain": Call(
        shax.explain, (loss, f32[3]), {"inputs": [X], "tangents": [Y], "cotangents": [2.0], "seed": 3}, variadic=True
    ),
    "Explanation": Call(EXPLANATION.show, (["f", "vjp"],)),
    "grad": Call(transformed(shax.grad, 2), (energy, (0, "y"), X, Y), variadic=True),
    "value_and_grad": Call(transformed(shax.value_and_grad, 2), (energy, None, X, Y), variadic=True),
    "vjp": Call(shax.vjp, (pair, X, Y), variadic=True),
    "vjp_fn": Call(VJP_FN, (X,), variadic=True),
    "jvp": Call(shax.jvp, (pair, (X, Y), (Y, X))),
    "linearize": Call(shax.linearize, (pair, X, Y), variadic=True),
    "f_jvp": Call(F_JVP, (Y, X), variadic=True),
    "vmap": Call(transformed(shax.vmap, 3), (pair, (0, None), 0, XS, X), variadic=True),
    "vmap(axis=)": Call(vmap_with_axis, (pair, 1, XS.T, XS.T), variadic=True),
    "jit": Call(transformed(shax.jit), (pair, X, Y), variadic=True),
    "jit (i32, bool)": Call(transformed(shax.jit), (integers, 3, FLAGS), variadic=True),
    "jit.source": Call(jit_source, (pair, X, f32[3]), variadic=True),
    "trace": Call(shax.trace, (pair, f32[3], "f32[3]"), {"name": "pair"}, variadic=True),
    "xpr": Call(shax.xpr, (pair, X, f32[3]), variadic=True),
    "TensorType": Call(shax.TensorType, (f32, (2, 3))),
    "TensorType.parse": Call(shax.TensorType.parse, ("f32[2, 3]",)),
    "Definition": Call(hand_built_definition, (DEFN.name, DEFN.arg_types, DEFN.bindings, DEFN.outputs)),
    "LinearizedDefinition": Call(hand_built_linearized, (LIN.primal, LIN.linear, LIN.num_residuals)),
    **{
        name: Call(dtype_indexed(getattr(shax, name)), ((2, 3),))
        for name in ("f32", "f64", "i32", "i64", "u8", "u32", "bool_")
    },
    "call": Call(shax.call, (PAIR, X, Y), variadic=True, variants=(inside_trace(shax.call),)),
    "call (inputs_dict)": Call(
        shax.call, (PAIR, X), {"inputs_dict": {PAIR_ARGS[1]: Y}}, variants=(inside_trace(shax.call),)
    ),
    "call_with_info": Call(
        shax.call_with_info, (PAIR,), {"inputs_dict": {0: X, 1: Y}}, variants=(inside_trace(shax.call_with_info),)
    ),
    "CallSiteInfo.graph_to_parent": Call(CALL_INFO.graph_to_parent, (PAIR_ARGS[0],)),
    "subgraph": Call(subgraph_call, (pair, X, Y), variadic=True, variants=(inside_trace(subgraph_call),)),
    "autodiff": Call(
        shax.autodiff,
        (PAIR,),
        {
            "grads_provided": [0],
            "grads_required": [PAIR_ARGS[1], 0],
            "called_graphs_grad_info": {PAIR: GRAD_INFO},
            "return_all_grad_graphs": True,
        },
    ),
    "autodiff at a call site": Call(
        gradient_at_call_site, (PAIR, X, Y, X), variants=(inside_trace(gradient_at_call_site),)
    ),
    "GradGraphInfo.inputs_dict": Call(GRAD_INFO.inputs_dict, (CALL_INFO,)),
    "GradGraphInfo.fwd_graph_ins_to_grad_parent_outs": Call(
        GRAD_INFO.fwd_graph_ins_to_grad_parent_outs, (GRAD_CALL_INFO,)
    ),
    "GradGraphInfo.fwd_parent_ins_to_grad_parent_outs": Call(
        GRAD_INFO.fwd_parent_ins_to_grad_parent_outs, (CALL_INFO, GRAD_CALL_INFO)
    ),
    "diff": Call(shax.diff, (PAIR, LIN), {"context": 2}),
    "custom_jvp": Call(custom_jvp_call, (pair, X, Y), variadic=True, variants=(inside_trace(custom_jvp_call),)),
    "custom_vjp": Call(custom_vjp_call, (pair, X, Y), variadic=True, variants=(inside_trace(custom_vjp_call),)),
    "explain (provenance, names, diff)": Call(
        shax.explain, (loss, f32[3]), {"provenance": True, "names": "source", "diff": True}, variadic=True
    ),
    # JAX's transform options
    "grad (argnums, has_aux)": Call(with_options(shax.grad), (energy_aux, (0, -1), True, X, Y), variadic=True),
    "value_and_grad (argnums, has_aux)": Call(
        with_options(shax.value_and_grad), (energy_aux, -1, True, X, Y), variadic=True
    ),
    "vjp (has_aux)": Call(shax.vjp, (energy_aux, X, Y), {"has_aux": True}, variadic=True),
    "jvp (has_aux)": Call(shax.jvp, (energy_aux, (X, Y), (Y, X)), {"has_aux": True}),
    "linearize (has_aux)": Call(shax.linearize, (energy_aux, X, Y), {"has_aux": True}, variadic=True),
    "jit (static arguments)": Call(static_jit, (scaled, 1, "scale", X, 2), {"scale": 0.5}, variadic=True),
    "jit (keywords)": Call(by_keyword(shax.jit), (pair, X), {"y": Y}, variadic=True),
    "grad (keywords)": Call(by_keyword(shax.grad), (energy, X), {"y": Y}, variadic=True),
    "jacfwd": Call(with_options(shax.jacfwd), (pair, (0, 1), False, X, Y), variadic=True),
    "jacrev": Call(with_options(shax.jacrev), (pair, 0, False, X, Y), variadic=True),
    "hessian": Call(with_options(shax.hessian), (energy, -1, False, X, Y), variadic=True),
    "stop_gradient": Call(shax.stop_gradient, (X,), variants=(inside_trace(shax.stop_gradient, first=0),)),
    "stats": Call(shax.stats, (LIN,)),
    "checkpoint": Call(checkpoint_call, (pair, shax.checkpoint_policies.dots_saveable, X, Y), variadic=True),
    "remat": Call(checkpoint_call, (pair, None, X, Y), variadic=True, variants=(inside_trace(checkpoint_call, 2),)),
    "checkpoint_name": Call(shax.checkpoint_name, (X, "x"), variants=(inside_trace(shax.checkpoint_name, first=0),)),
    "checkpoint_policies": Call(
        checkpoint_call, (named_pair, shax.checkpoint_policies.save_only_these_names("x"), X, Y), variadic=True
    ),
    "saved_residuals": Call(shax.saved_residuals, (energy, X, Y), variadic=True),
    "policy_stats": Call(
        shax.policy_stats, (energy, X, Y), {"policies": [shax.checkpoint_policies.dots_saveable]}, variadic=True
    ),
    "to_dot": Call(shax.to_dot, (LIN,), {"transposed": True}),
    "explain (stats)": Call(shax.explain, (loss, f32[3]), {"stats": True}, variadic=True),
    "Explanation.stats": Call(EXPLANATION.stats, ()),
    "Explanation.to_dot": Call(EXPLANATION.to_dot, ()),
    "Explanation.exercise": Call(EXPLANATION.exercise, ("sin",)),
    "scan": Call(shax.scan, (scan_step, X, XS), {"reverse": True}, variants=(inside_trace(shax.scan),)),
    "fori_loop": Call(
        shax.fori_loop,
        (0, 3, fori_step, X),
        bad={0: LOOP_BOUNDS, 1: LOOP_BOUNDS},
        variants=(inside_trace(shax.fori_loop, 3),),
    ),
    "while_loop": Call(while_loop_counted, (while_cond, fori_step, X), variants=(inside_trace(while_loop_counted, 2),)),
    "cond": Call(shax.cond, (np.bool_(True), pair, cond_other, X, Y), variants=(inside_trace(shax.cond, 3),)),
    "switch": Call(shax.switch, (np.int32(1), [pair, cond_other], X, Y), variants=(inside_trace(shax.switch, 2),)),
}
STAGES: dict[str, Call] = {
    "batch": Call(stages.batch, (TYPED, 0, 2, 0)),
    "check_types": Call(stages.check_types, (TYPED,)),
    "evaluate_linearized": Call(stages.evaluate_linearized, (LIN, [X], [Y])),
    "infer_types": Call(stages.infer_types, (DEFN,)),
    "jvp": Call(stages.jvp, (PAIR,), {"wrt": [1]}),
    "unzip": Call(stages.unzip, (stages.jvp(PAIR),), {"policy": shax.checkpoint_policies.nothing_saveable}),
    "check_linear": Call(stages.check_linear, (LIN,)),
    "show_linear": Call(stages.show_linear, (LIN,)),
    "linearize": Call(stages.linearize, (PAIR,), {"wrt": [1]}),
    "transpose": Call(stages.transpose, (LIN,)),
    "zip_definitions": Call(stages.zip_definitions, (TRANSPOSED,)),
}
PASSES: dict[str, Call] = {
    **{name: Call(getattr(passes, name), (PAIR,)) for name in [*passes.PASSES, "cleanup"]},
    "apply_passes": Call(passes.apply_passes, (PAIR, ["cse", "dce"])),
    "bind_arguments": Call(passes.bind_arguments, (PAIR, {1: Y})),
}
OPTIMIZERS: dict[str, Call] = {
    name: Call(
        getattr(optimizers, name),
        (loss, [X]),
        {"lr": 0.1, "iters": 2, "log": None, "history": True, "keep_params": True},
        bad={"iters": SMALL_COUNTS},
    )
    for name in ("gradient_descent", "momentum", "adam")
} | OPTIMIZERS_OPTAX
OTHERS: dict[str, Call] = {
    "compile_definition": Call(compile_definition, (PAIR,)),
    "compiled": Call(COMPILED, (X, Y), variadic=True),
    "cli": Call(
        run_cli,
        ("explain", MEDIUM, "f32[6]", "f32[2,2]", "--seed", "1"),
        variadic=True,
        bad={k: CLI_ARGUMENTS for k in range(7)},
    ),
}
TESTING: dict[str, Call] = {
    "check_grads": Call(
        shax.testing.check_grads, (pair, (X, Y)), {"order": 2, "modes": ("fwd", "rev"), "atol": 0.0, "rtol": None}
    ),
}
STRATEGIES: dict[str, Call] = {
    "dtypes": Call(shax.testing.strategies.dtypes),
    "tensor_types": Call(
        shax.testing.strategies.tensor_types, (f32,), {"min_rank": 0, "max_rank": 2, "min_side": 1, "max_side": 3}
    ),
    "arrays": Call(shax.testing.strategies.arrays, (f32[2, 3],), {"bound": 2.0}),
    "programs": Call(
        shax.testing.strategies.programs,
        (f32,),
        {"smooth": True, "calls": False, "max_args": 2, "max_outputs": 1, "max_steps": 4},
    ),
}
# Names the namespaces below export with no driver of their own, and why.
NOT_CALLED_IN_NAMESPACES = {
    "testing.NotSmooth": "an exception class",
    "testing.strategies.Program": "made by programs(), for users to read (and annotate with)",
    "numpy.ndarray": "the class of shax.numpy's arrays (numpy's with .at), made by asarray and array",
    **{f"numpy.{n}": "numpy's own dtype class, a name" for n in shax.numpy.DTYPE_NAMES},
    **NOT_CALLED_IN_OPTIMIZERS,
}

# shax.export and jit's XLA backend, when JAX (the `xla` extra) is installed.
HAS_JAX = importlib.util.find_spec("jax") is not None


def exported_call(defn: Any, *args: Any) -> Any:
    return shax.export.to_jax(defn)(*args)


def jit_with_backend(fn: Any, backend: Any, *args: Any) -> Any:
    return shax.jit(fn, backend=backend)(*args)


def xla_jit_source(fn: Any, *args: Any) -> Any:
    return shax.jit(fn, backend="xla").source(*args)


EXPORT: dict[str, Call] = {"to_jax": Call(exported_call, (TYPED, X), variadic=True)}
XLA: dict[str, Call] = {
    "jit (xla)": Call(jit_with_backend, (pair, "xla", X, Y), variadic=True),
    "jit (xla, i32, bool)": Call(jit_with_backend, (integers, "xla", 3, FLAGS), variadic=True),
    "jit.source (xla)": Call(xla_jit_source, (pair, X, f32[3]), variadic=True),
}
OTHERS.update({f"export.{k}": c for k, c in EXPORT.items()} if HAS_JAX else {})
OTHERS.update(XLA if HAS_JAX else {"jit (backend)": Call(jit_with_backend, (pair, "numpy", X, Y), variadic=True)})

# Names of `shax.__all__` with no driver of their own, and why.
NOT_CALLED = {
    "ShaxError": "an exception class",
    "ShaxTypeError": "an exception class",
    "ShaxValueError": "an exception class",
    "Tracer": "made by tracing, never by users",
    "DType": "the dtypes are fixed values, indexed by the f32, ..., bool_ drivers",
    "Var": "a part of a Definition: the Definition driver builds bad ones",
    "Binding": "a part of a Definition: the Definition driver builds bad ones",
    "primitives": "primitive classes are parts of a Definition: stages check hand-built ones (test_errors.py)",
    "extend": "declares primitives for the whole process; tests/test_extend.py covers its errors",
    "CallSiteInfo": "made by call_with_info (its graph_to_parent has a driver)",
    "GradGraphInfo": "made by autodiff (its methods have drivers)",
    "Diff": "made by diff",
    "Stats": "made by stats",
    "PipelineStats": "made by Explanation.stats",
    "PolicyStats": "made by policy_stats",
    "Exercise": "made by Explanation.exercise",
}
# shax.random: a key, and each function's good call, on numpy values and with the key traced.
KEY = shax.random.PRNGKey(0)
RANDOM_CALLS: dict[str, tuple[Any, ...]] = {
    "PRNGKey": (3,),
    "key": (3,),
    "split": (KEY, 3),
    "fold_in": (KEY, 5),
    "bits": (KEY, (2, 3)),
    "uniform": (KEY, (2, 3), np.float32, -1.0, 2.0),
    "normal": (KEY, (2, 3)),
    "randint": (KEY, (4,), 0, 10),
    "bernoulli": (KEY, 0.3, (4,)),
    "categorical": (KEY, np.log(np.arange(1.0, 7.0, dtype=np.float32)).reshape(2, 3)),
    "permutation": (KEY, np.arange(6.0, dtype=np.float32).reshape(2, 3), 1),
    "choice": (KEY, 5, (3,)),
    "truncated_normal": (KEY, -1.0, 1.0, (3,)),
    "gumbel": (KEY, (3,)),
}
RANDOM: dict[str, Call] = {
    name: Call(getattr(shax.random, name), args, variants=(inside_trace(getattr(shax.random, name), first=0),))
    for name, args in RANDOM_CALLS.items()
}


def initialized(make: Callable[..., Any]) -> Callable[..., Any]:
    """An initializer's constructor called with its defaults, then the initializer."""
    return lambda key, shape, dtype=None: make()(key, shape, dtype)


INITIALIZERS: dict[str, Call] = {
    name: Call(
        getattr(shax.nn.initializers, name)
        if name in ("zeros", "ones")
        else initialized(getattr(shax.nn.initializers, name)),
        (KEY, (3, 4)),
    )
    for name in shax.nn.initializers.__all__
    if name not in ("variance_scaling", "constant")
}
INITIALIZERS["variance_scaling"] = Call(
    lambda scale, mode, distribution, key, shape: shax.nn.initializers.variance_scaling(scale, mode, distribution)(
        key, shape
    ),
    (2.0, "fan_in", "normal", KEY, (3, 4)),
)
INITIALIZERS["constant"] = Call(
    lambda value, key, shape: shax.nn.initializers.constant(value)(key, shape), (0.5, KEY, (2,))
)
# shax.debug.print: on numpy values (it prints) and inside a trace (it records)
DEBUG: dict[str, Call] = {
    "print": Call(
        shax.debug.print, ("x = {} y = {:.2f}", X, np.float32(2.0)), variants=(inside_trace(shax.debug.print),)
    )
}
NAMESPACES = {
    "debug": (shax.debug, DEBUG),
    "stages": (stages, STAGES),
    "random": (shax.random, RANDOM),
    "nn.initializers": (shax.nn.initializers, INITIALIZERS),
    "passes": (passes, PASSES),
    "optimizers": (optimizers, OPTIMIZERS),
    "numpy": (shax.numpy, NUMPY),
    "numpy.linalg": (shax.numpy.linalg, LINALG),
    "nn": (shax.nn, NN),
    "testing": (shax.testing, TESTING),
    "testing.strategies": (shax.testing.strategies, STRATEGIES),
    "export": (shax.export, EXPORT),
    "lax": (shax.lax, {**LAX, **{name: SHAX[name] for name in CONTROL}}),
    "tree_util": (shax.tree_util, TREE_UTIL),
    "tree": (shax.tree, TREE_NAMES),
}

# Typeclass functions: operands are f32 arrays (or, traced, tracers of their types); the
# calls of the functions with static parameters, or particular operands, are spelled out.
A23 = np.arange(1, 7, dtype=np.float32).reshape(2, 3)
U23 = A23.astype(np.uint32)
TYPECLASS_CALLS: dict[str, tuple[Any, ...]] = {
    "reshape": (A23, (3, 2)),
    "broadcast": (X, [1], [2, 3]),
    "transpose": (A23, [1, 0]),
    "slice": (A23, [0, 1], [2, 3]),
    "pad": (A23, [(1, 0), (0, 2)], 0.0),
    "concatenate": (A23, A23, 1),
    "convert_element_type": (A23, np.float64),
    "rev": (A23, [1]),
    "reduce_sum": (A23, [1]),
    **{name: (A23, [1]) for name in ("reduce_max", "reduce_min", "reduce_prod", "mean", "var")},
    **{name: (A23, 1) for name in ("argmax", "argmin", "argsort")},
    "select": (A23 > 2, A23, -A23),
    "dot_general": (A23, A23, ((1,), (1,), (), ())),
    "dot": (A23, A23.T),
    "matmul": (A23, A23.T),
    **{name: (A23 / 8,) for name in ("arccos", "arcsin", "arctanh")},
    "quot": (A23.astype(np.int32), np.int32([3, -2, 5])),
    "logical_and": (A23 > 2, A23 > 4),
    "logical_or": (A23 > 2, A23 > 4),
    "logical_not": (A23 > 2,),
    "where": (A23 > 2, A23, -A23),
    **{name: (U23, U23 + 3) for name in ("bitwise_and", "bitwise_or", "bitwise_xor")},
    "bitwise_not": (U23,),
    **{name: (U23, U23 + 30) for name in ("shift_left", "shift_right_logical", "shift_right_arithmetic")},
    "bitcast_convert_type": (A23, np.uint32),
    "gather": (A23, np.array([2, 0], np.int32), 1, 0),
    "dynamic_slice": (A23, np.array([1, 0], np.int32), [1, 2]),
    "dynamic_update_slice": (A23, A23[:1, :2], np.array([1, 0], np.int32)),
    "conv_general_dilated": (
        A23.reshape(1, 1, 2, 3),
        A23[:1, :2].reshape(1, 1, 1, 2),
        [1, 1],
        [(0, 0), (1, 0)],
        [1, 1],
        [1, 1],
        ((0, 1, 2, 3),) * 3,
        1,
        1,
    ),
    **{name: (A23, [2, 2], [1, 1], [(0, 0), (1, 0)]) for name in ("reduce_window_sum", "reduce_window_max")},
    **{name: (A23, np.array([2, 0], np.int32), A23[:, :2], 1, 0) for name in ("scatter", "scatter_add")},
}


def typeclass_functions() -> dict[str, Callable[..., Any]]:
    return {name: typeclasses.FUNCTIONS[name][0] for name in typeclasses.__all__ if name in typeclasses.FUNCTIONS}


def operand_positions(function: Callable[..., Any]) -> list[int]:
    """The positions of the parameters a typeclass function dispatches on (typed by a TypeVar)."""
    hints = typing.get_type_hints(function)
    parameters = inspect.signature(function).parameters
    return [k for k, name in enumerate(parameters) if isinstance(hints.get(name), typing.TypeVar)]


def typeclass_call(function: Callable[..., Any]) -> tuple[Any, ...]:
    name = function.__name__
    if name in TYPECLASS_CALLS:
        return TYPECLASS_CALLS[name]
    positions = operand_positions(function)
    assert len(positions) == len(inspect.signature(function).parameters), f"{name}: spell out its call"
    return tuple(A23 + 0.5 for _ in positions)


def traced(function: Callable[..., Any]) -> Callable[..., Any]:
    """`function` run inside a trace: its operands that are arrays of a shax dtype become
    tracers of their types, everything else is passed on as it is."""
    positions = operand_positions(function)

    def call(*args: Any) -> Any:
        arrays = [k for k in positions if k < len(args) and traceable(args[k])]

        def f(*tracers: Any) -> Any:
            given = list(args)
            for k, tracer in zip(arrays, tracers):
                given[k] = tracer
            return function(*given)

        return shax.trace(f, *(shax.TensorType.of(args[k]) for k in arrays))

    return call


TYPECLASSES: dict[str, Call] = {
    f"tc.{name}": Call(fn, typeclass_call(fn), variants=(traced(fn),)) for name, fn in typeclass_functions().items()
}

ENTRY_POINTS: dict[str, Call] = {
    **SHAX,
    **{f"stages.{k}": c for k, c in STAGES.items()},
    **{f"passes.{k}": c for k, c in PASSES.items()},
    **{f"optimizers.{k}": c for k, c in OPTIMIZERS.items()},
    **{f"numpy.{k}": c for k, c in NUMPY.items()},
    **{f"numpy.linalg.{k}": c for k, c in LINALG.items()},
    **{f"nn.{k}": c for k, c in NN.items()},
    **{f"random.{k}": c for k, c in RANDOM.items()},
    **{f"nn.initializers.{k}": c for k, c in INITIALIZERS.items()},
    **{f"debug.{k}": c for k, c in DEBUG.items()},
    **{f"lax.{k}": c for k, c in LAX.items()},
    **{f"Tracer.{k}": c for k, c in METHODS.items()},
    **{f"testing.{k}": c for k, c in TESTING.items()},
    **{f"testing.strategies.{k}": c for k, c in STRATEGIES.items()},
    **{f"tree_util.{k}": c for k, c in TREE_UTIL.items()},
    **{f"tree.{k}": c for k, c in TREE_NAMES.items()},
    **OTHERS,
    **TYPECLASSES,
}


# Tests ----------------------------------------------------------------------------------


def public_callables(module: Any) -> set[str]:
    """The callables a module exports: in its `__all__`, or else the public functions it defines."""
    if hasattr(module, "__all__"):
        return {n for n in module.__all__ if callable(getattr(module, n))}
    return {
        n
        for n, v in vars(module).items()
        if not n.startswith("_") and inspect.isfunction(v) and v.__module__ == module.__name__
    }


def test_every_public_name_is_fuzzed() -> None:
    missing = set(shax.__all__) - set(SHAX) - set(NOT_CALLED) - set(NAMESPACES)
    assert not missing, f"no fuzz driver for shax.{', shax.'.join(sorted(missing))}"
    for name, (module, calls) in NAMESPACES.items():
        missing = {n for n in public_callables(module) - set(calls) if f"{name}.{n}" not in NOT_CALLED_IN_NAMESPACES}
        assert not missing, f"no fuzz driver for shax.{name}.{', '.join(sorted(missing))}"
    missing = {f"tc.{n}" for n in typeclass_functions()} - set(TYPECLASSES)
    assert not missing, f"no fuzz driver for {', '.join(sorted(missing))}"
    missing = public_methods() - set(METHODS)
    assert not missing, f"no fuzz driver for the tracer's {', '.join(sorted(missing))}"


@pytest.mark.parametrize("entry", sorted(ENTRY_POINTS))
def test_the_good_call_succeeds(entry: str) -> None:
    # So that the fuzz below starts from calls that reach each entry point's work.
    call = ENTRY_POINTS[entry]
    for function in (call.function, *call.variants):
        result = function(*call.args, **call.kwargs)
        if entry == "cli":
            assert result == 0


# A share of the profile's examples for each of the many entry points (ci: 13 each, the
# whole test about 30 s of CPU, most of it hypothesis drawing the bad values: slow).
@pytest.mark.slow
@pytest.mark.parametrize("entry", sorted(ENTRY_POINTS))
@pytest.mark.filterwarnings("ignore::RuntimeWarning")  # numpy's, on extreme values (exp overflowing): its own way
@settings(max_examples=max(1, settings.default.max_examples // 3))
@given(data=st.data())
def test_bad_input_raises_a_shax_error(entry: str, data: st.DataObject) -> None:
    call = ENTRY_POINTS[entry]
    function = data.draw(st.sampled_from((call.function, *call.variants)), label="function")
    args, kwargs = list(call.args), dict(call.kwargs)
    slots: list[int | str] = [*range(len(args)), *kwargs]
    chosen = data.draw(st.sets(st.sampled_from(slots), min_size=1) if slots else st.just(set()), label="bad")
    for slot in sorted(chosen, key=str):
        strategy = call.bad.get(slot, BAD)
        if isinstance(slot, int):
            args[slot] = data.draw(strategy, label=f"argument {slot}")
        else:
            kwargs[slot] = data.draw(strategy, label=slot)
    if call.variadic:
        change = data.draw(st.sampled_from([0, 0, -1, 1]), label="arity")
        if change < 0:
            args.pop()
        elif change > 0:
            args.append(data.draw(call.bad.get(len(args), BAD), label="extra argument"))
    attempt(entry, function, tuple(args), kwargs)

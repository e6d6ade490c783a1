"""PopXL's autodiff (Listing 10.1 of its user guide) in shax: the gradient graph of a
Linear layer's forward graph, called on the activations of one call of it.

A definition traced from a Python function takes the place of PopXL's `Module`: its
graph inputs are the function's arguments, named by the vars they are read into (as
`linear.W` and `linear.b` name PopXL's graph inputs in `inputs_dict`).

    python examples/popxl_linear.py
"""

from typing import Any

import numpy as np

import shax
from shax import f32


def linear(x: Any, W: Any, b: Any) -> Any:
    return x @ W + b


# create graph: the forward graph of x @ W + b, typed, and its inputs W and b (the vars they are read into)
linear_graph = shax.stages.infer_types(shax.trace(linear, f32[2, 2], f32[2, 2], f32[2]))
_, W_var, b_var = linear_graph.inputs


def program(x: Any, W: Any, b: Any) -> tuple[Any, Any, Any, Any]:
    """Listing 10.1's main program: y, and the gradients of sum(y) (a seed of ones)."""
    fwd_call_info = shax.call_with_info(linear_graph, x, inputs_dict={W_var: W, b_var: b})
    y = fwd_call_info.outputs[0]

    # get the gradients from autodiff
    bwd_graph_info = shax.autodiff(linear_graph)
    grad_seed = np.ones((2, 2), np.float32)
    activations = bwd_graph_info.inputs_dict(fwd_call_info)
    grads_x, grads_w, grads_b = shax.call(bwd_graph_info.graph, grad_seed, inputs_dict=activations)
    return y, grads_x, grads_w, grads_b


def data(seed: int = 0) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(x, W, b) as the listing draws them."""
    rng = np.random.default_rng(seed)
    x = rng.normal(0, 1, (2, 2)).astype(np.float32)
    W = rng.normal(0, 0.1, (2, 2)).astype(np.float32)
    b = rng.normal(0, 0.4, (2,)).astype(np.float32)
    return x, W, b


def main(log: Any = print) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Print the forward graph, the gradient graph and the traced main program; run the
    program on numpy values; returns (y, grads_x, grads_w, grads_b)."""
    info = shax.autodiff(linear_graph)
    main_program = shax.xpr(program, f32[2, 2], f32[2, 2], f32[2])
    results = program(*data())
    if log is not None:
        log(f"The forward graph:\n{linear_graph}\n")
        log(
            f"The gradient graph (the output's cotangent, then the activations {info.expected_inputs}):\n{info.graph}\n"
        )
        log(f"The main program:\n{main_program}\n")
        for name, value in zip(["y", "grads_x", "grads_w", "grads_b"], results):
            log(f"{name} =\n{value}")
    return results


if __name__ == "__main__":
    main()

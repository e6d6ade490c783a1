"""The function transforms users call, each built by composing the stages:
`grad`, `value_and_grad`, `vjp`, `jvp`, `linearize`, `vmap`, `jit`, `jacfwd`, `jacrev`, `hessian`,
and `xpr` to see the program any of them builds; `stop_gradient` marks a value as a constant of
differentiation. They nest: an inner transform's definition, evaluated on the outer
transform's tracers, inlines into the outer trace."""

from shax.transforms.autodiff import grad, jvp, linearize, value_and_grad, vjp
from shax.transforms.custom import custom_jvp, custom_vjp
from shax.transforms.grad_graph import GradGraphInfo, autodiff
from shax.transforms.jacobian import hessian, jacfwd, jacrev
from shax.transforms.jit import jit
from shax.transforms.stop_gradient import stop_gradient
from shax.transforms.subgraph import CallSiteInfo, call, call_with_info, subgraph
from shax.transforms.vmap import vmap
from shax.transforms.xpr import xpr

__all__ = [
    "GradGraphInfo",
    "autodiff",
    "CallSiteInfo",
    "call",
    "call_with_info",
    "subgraph",
    "grad",
    "jit",
    "jvp",
    "linearize",
    "value_and_grad",
    "vjp",
    "vmap",
    "xpr",
    "custom_jvp",
    "custom_vjp",
    "hessian",
    "jacfwd",
    "jacrev",
    "stop_gradient",
]

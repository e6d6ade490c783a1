"""What the cond rules (`shax.control.cond`) make of a cond's branches, built once per
tuple of branches and kept while the first branch lives (`shax.control.callees`' cache).

Every branch takes the cond's operands (after the index) and returns outputs of the same
types. Linearizing branch k gives a forward definition (outputs, then its activations
r_k) and a linear one (tangents, r_k) -> output tangents; the activations differ from
branch to branch, so the cond's forward branches all return the union of the slots:

    forward_k(x)        = (outputs_k(x), 0, …, 0, r_k(x), 0, …, 0)   (r_k in slot k)
    linear_k(dx, r_1…r_n) = linear part of branch k (dx, r_k)         (the others unread)

and the tangent is a cond of the linear branches on the same index.
"""

from __future__ import annotations

import itertools
from typing import Any

import attrs
import numpy as np

from shax.control.callees import build, derivative, rearranged, transposed, wrt
from shax.core.derived import derived
from shax.core.ir import Definition
from shax.passes import cleanup
from shax.tracing.evaluate import evaluate
from shax.tracing.tracer import Tracer


@attrs.frozen
class CondDerivative:
    """The branches' forward definitions (outputs, then every branch's activation slots)
    and linear ones (tangents of the float operands, then every slot)."""

    forward: tuple[Definition, ...]
    linear: tuple[Definition, ...]


def cond_derivative(branches: tuple[Definition, ...]) -> CondDerivative:
    return derived(branches[0], ("cond derivative", *map(id, branches)), lambda: _cond_derivative(branches))


def _cond_derivative(branches: tuple[Definition, ...]) -> CondDerivative:
    ds = [derivative(b) for b in branches]
    n = len(branches[0].outputs)
    slots = [list(d.primal.output_types()[n:]) for d in ds]
    starts = list(itertools.accumulate(map(len, slots), initial=0))
    all_slots = [t for s in slots for t in s]
    arg_types = branches[0].arg_types

    def forward(k: int) -> Definition:
        def run(args: list[Tracer]) -> list[Any]:
            outputs = evaluate(ds[k].primal, *args)
            zeros = [[np.zeros(t.shape, t.dtype.numpy) for t in s] for s in slots]
            zeros[k] = outputs[n:]
            return [*outputs[:n], *(z for s in zeros for z in s)]

        return build(f"{branches[k].name}_forward", arg_types, run)

    tangents = [arg_types[j] for j in wrt(branches[0])]

    def linear(k: int) -> Definition:
        positions = [*range(len(tangents)), *(len(tangents) + starts[k] + j for j in range(len(slots[k])))]
        return cleanup(rearranged(ds[k].linear, [*tangents, *all_slots], positions))

    count = range(len(branches))
    return CondDerivative(tuple(forward(k) for k in count), tuple(linear(k) for k in count))


def cond_transposed(branches: tuple[Definition, ...], linear: int) -> tuple[Definition, ...]:
    """Each linear branch's transpose: (output cotangents, fixed operands) -> cotangents
    of its first `linear` arguments."""
    return tuple(transposed(b, linear) for b in branches)

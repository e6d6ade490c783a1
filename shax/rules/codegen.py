"""What codegen rules are written with (`shax.codegen` compiles a Definition with them),
and their table.

A codegen rule turns one binding into the source of a Python expression that makes
the numpy calls the binding's eval rule makes through the numpy instance
(`typeclasses/numpy_instance.py`), so that compiled code computes what `shax.evaluate`
computes, bit for bit:

    rule(prim, site, operands) -> str          e.g. "np.sin(x3)", "x2 + x3"

An `Operand` is an operand's source (a name: `x3`, `c5`) and its type. The `Site`
holds the result's type and binds values once as globals (`site.constant`); a rule
also tells it what the result's memory is, which codegen needs to write results into
dead operands (`out=`) safely and to delete dead values:

- `site.fresh(contiguous)`: a new array, C-contiguous in evaluate and in compiled code
  alike if `contiguous` (a layout-sensitive consumer, like matmul's choice of BLAS
  routine or a sum's order, then sees the same layout in both);
- `site.view(x, contiguous, writable)`: a view of operand x's memory (reshape,
  transpose, slice; broadcast, which is read-only);
- neither: the result may share memory with any operand, and is never overwritten.

Elementwise primitives use `Elementwise`, whose results codegen may write into a dead
operand and whose broadcast operands codegen may leave to numpy to stretch. A primitive
without a rule of its own calls its numpy implementation (`numpy_call`).
"""

from __future__ import annotations

import enum
from collections.abc import Callable, Sequence
from typing import Any, Protocol

import attrs
import numpy as np

import typeclasses as tc
from shax.core.primitive import Primitive
from shax.core.types import DType, TensorType, f32
from shax.rules.table import RuleTable
from typeclasses import libm
from typeclasses.numpy_instance import numpy_instance


@attrs.frozen
class Operand:
    """An operand in generated code: `expr` is a name. `contiguous` says that, in evaluate
    and in compiled code alike, its strides other than 0 are in C order (it is C-contiguous,
    or a broadcast of such), so that numpy lays out what it computes from it C-contiguously;
    False: not known."""

    expr: str
    type: TensorType
    contiguous: bool = False

    def __str__(self) -> str:
        return self.expr

    @property
    def rank(self) -> int:
        return self.type.rank


class Memory(enum.Enum):
    FRESH = "fresh"  # a new array
    VIEW = "view"  # a view of one operand's memory
    SHARED = "shared"  # may share memory with any operand: never overwritten


@attrs.define
class Site:
    """Where a rule's expression goes: the result's type, what codegen offers the rule
    (a dead operand to overwrite; whether numpy stretches the result where it is used),
    and what codegen learns from it (the result's memory)."""

    result: TensorType
    var: int  # the binding's var: its constants are named c{var}, c{var}_1, ...
    constants: list[tuple[str, Any]] = attrs.field(factory=list)
    reusable: str | None = None  # a dead operand the result may be written into
    implicit: bool = False  # a broadcast whose every use stretches it (numpy broadcasting, or out=)
    allocate: bool = False  # numpy alone would not stretch the operands to the result's shape
    reused: bool = False
    memory: Memory = Memory.SHARED
    viewed: Operand | None = None
    contiguous: bool = False
    writable: bool = True

    def constant(self, value: Any) -> str:
        """The name of a global holding `value`, bound once when the function is compiled."""
        name = f"c{self.var}_{len(self.constants)}" if self.constants else f"c{self.var}"
        self.constants.append((name, value))
        return name

    def fresh(self, contiguous: bool) -> None:
        self.memory, self.contiguous = Memory.FRESH, contiguous

    def view(self, x: Operand, contiguous: bool = False, writable: bool = True) -> None:
        self.memory, self.viewed, self.contiguous, self.writable = Memory.VIEW, x, contiguous, writable

    def out(self) -> str:
        """`, out=x4` to write the result into the dead operand x4, `, out=np.empty(...)` to
        stretch the operands to the result's shape, else ''."""
        if self.reusable is not None:
            self.reused = True
            return f", out={self.reusable}"
        if self.allocate:
            return f", out=np.empty({shape_source(self.result.shape)}, {dtype_source(self.result.dtype)})"
        return ""


def shape_source(shape: Sequence[int]) -> str:
    """A tuple literal: `(2, 6)`, `(3,)`, `()`."""
    return f"({shape[0]},)" if len(shape) == 1 else f"({', '.join(map(str, shape))})"


def dtype_source(dtype: DType) -> str:
    """`np.float32`, `np.int32`, ..."""
    return f"np.{np.dtype(dtype.numpy).name}"


def reshaped(x: Operand, shape: Sequence[int]) -> str:
    """`x` reshaped as the numpy instance does (`np.reshape` keeps a numpy scalar a scalar)."""
    if x.rank == 0:
        return f"np.reshape({x}, {shape_source(shape)})"
    return f"{x}.reshape({shape_source(shape)})"


@attrs.frozen
class Elementwise:
    """The codegen rule of an elementwise primitive: `function` on the operands, which
    numpy broadcasts. `function` is the source of a numpy ufunc (`"np.sin"`), or of
    np.where (with `ufunc=False`), or a Python function (bound as a global, called on
    the operands; `ufunc=False` as it takes no `out=`).

    `operator` writes it as Python's operator (`x + y`, `-x`): the same ufunc on arrays,
    exact scalar arithmetic on numpy scalars (ten times cheaper). `float32_scalar` names
    the C function (`sinf`) that replaces the ufunc on a float32 number, as in the numpy
    instance (`typeclasses.libm`)."""

    function: str | Callable[..., Any]
    operator: str | None = None
    ufunc: bool = True
    float32_scalar: str | None = None

    def __attrs_post_init__(self) -> None:
        if self.float32_scalar is not None and self.float32_scalar not in C_FLOAT:
            c_function = libm.c_float_function(self.float32_scalar)
            if c_function is not None:
                C_FLOAT[self.float32_scalar] = NAMESPACE[self.float32_scalar] = c_function

    def __call__(self, prim: Primitive, site: Site, operands: Sequence[Operand]) -> str:
        # numpy lays a result out like its operands: C-contiguous if those of rank >= 2 are.
        contiguous, names = True, []
        for o in operands:
            contiguous = contiguous and (o.contiguous or len(o.type.shape) <= 1)
            names.append(o.expr)
        site.fresh(contiguous)
        if self.float32_scalar in C_FLOAT and not site.result.shape and site.result.dtype == f32:
            return f"np.float32({self.float32_scalar}(float({names[0]})))"
        out = site.out() if self.ufunc else ""
        if self.operator is not None and not out:
            return f"{self.operator}{names[0]}" if len(names) == 1 else f" {self.operator} ".join(names)
        function = self.function if isinstance(self.function, str) else site.constant(self.function)
        return f"{function}({', '.join(names)}{out})"


def pad_constant(x: Any, shape: tuple[int, ...], region: tuple[slice, ...], fill: np.ndarray) -> np.ndarray:
    """`np.pad` with a constant (`fill`, of x's dtype), as a copy into a filled array: the
    same values and layout (Fortran order for an F-contiguous x), a tenth of the overhead."""
    out = np.full(shape, fill, order="F" if x.flags.fnc else "C")
    out[region] = x
    return out


# C's float functions the numpy instance calls on float32 numbers, by name ("sinf"), where
# the C library has them: those the `Elementwise` rules name.
C_FLOAT: dict[str, Callable[[float], float]] = {}
# The globals every generated function sees, besides its constants.
NAMESPACE: dict[str, Any] = {"np": np, "ndarray": np.ndarray, "pad_constant": pad_constant}


class CodegenRule(Protocol):
    def __call__(self, prim: Any, site: Site, operands: Sequence[Operand], /) -> str: ...


def numpy_call(prim: Primitive, site: Site, operands: Sequence[Operand]) -> str:
    """The default rule of a primitive with a typeclass function: a call of the numpy
    instance's method for it (a global), on the operands and the static arguments, as
    evaluate makes it. Its result's memory is not known, so it is never overwritten."""
    function = type(prim).function
    assert function is not None, "derived only for primitives with a typeclass function"
    implementation = site.constant(getattr(numpy_instance, str(tc.method_of(function))))
    static = prim.static_args()
    arguments = [*map(str, operands), *([f"*{site.constant(static)}"] if static else [])]
    return f"{implementation}({', '.join(arguments)})"


codegen_rules: RuleTable[CodegenRule] = RuleTable(
    "codegen", lambda cls: numpy_call if cls.function is not None else None
)
codegen_rule = codegen_rules.register

"""Use-weighted coverage of real `jax.numpy` uses by `shax.numpy` (issue 31, item 2).

`benchmarks/jnp_usage.csv` lists every `jax.numpy` name used in the Python sources of 21
JAX-using repositories (their commits are in its header), with how often it is used (an
attribute read `jnp.sum`, `jnp.linalg.norm`, `jnp.float32`, or a name imported from
jax.numpy and read) and in how many files. A name is covered when `shax.numpy` has it and
it works on a tracer: a function is called in a few common forms on traced f32 arrays
(`shax.xpr`), and covered when one form traces (a constructor, `zeros((3, 3))`, inside the
traced function); a dtype, constant or class is covered when it exists. The figure is the
covered share of all uses. It measures and never asserts.

    python -m benchmarks.jnp_coverage [--missing 40]     # the figure, from the CSV
    python -m benchmarks.jnp_coverage count DIR...       # recount DIRs' .py files into the CSV
"""

from __future__ import annotations

import argparse
import ast
import csv
import sys
import warnings
from collections import Counter
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

import numpy as np

import shax
import shax.numpy as snp

CSV = Path(__file__).with_name("jnp_usage.csv")
SUBMODULES = {"linalg", "fft"}  # names read through them count as `linalg.norm`

# --- counting -------------------------------------------------------------------------


def uses_in(source: str) -> Counter[str]:
    """The jax.numpy names `source` uses, each with its number of uses."""
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError):
        return Counter()
    aliases: dict[str, str] = {}  # a local name -> the jax.numpy path it stands for ("" for the module)
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for a in node.names:
                if a.name == "jax.numpy" and a.asname:
                    aliases[a.asname] = ""
                elif a.name in ("jax", "jax.numpy") and not a.asname:
                    aliases["jax"] = "<jax>"
        elif isinstance(node, ast.ImportFrom) and node.module in ("jax", "jax.numpy", "jax.numpy.linalg"):
            for a in node.names:
                if node.module == "jax" and a.name == "numpy":
                    aliases[a.asname or "numpy"] = ""
                elif node.module == "jax.numpy":
                    aliases[a.asname or a.name] = a.name
                elif node.module == "jax.numpy.linalg":
                    aliases[a.asname or a.name] = f"linalg.{a.name}"
    counts: Counter[str] = Counter()
    if aliases:
        _count(tree, aliases, counts)
    return counts


def _count(tree: ast.AST, aliases: dict[str, str], counts: Counter[str]) -> None:
    stack: list[ast.AST] = [tree]
    while stack:
        node = stack.pop()
        path = _path(node)
        if path is not None and path[0] in aliases:
            name = _name(aliases[path[0]], path[1:])
            if name:
                counts[name] += 1
                continue  # the longest chain only: `jnp.linalg.norm` is not also `jnp.linalg`
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            continue
        stack.extend(ast.iter_child_nodes(node))


def _path(node: ast.AST) -> list[str] | None:
    """`a.b.c` as ["a", "b", "c"] (a Name read, or an attribute chain on one), else None."""
    parts: list[str] = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load):
        return [node.id, *reversed(parts)]
    return None


def _name(base: str, rest: list[str]) -> str | None:
    if base == "<jax>":  # `jax.numpy.sum`
        if not rest or rest[0] != "numpy":
            return None
        base, rest = "", rest[1:]
    parts = [*base.split("."), *rest] if base else rest
    if not parts:
        return None
    return ".".join(parts[:2]) if parts[0] in SUBMODULES and len(parts) > 1 else parts[0]


def count(dirs: Iterable[str], out: Path) -> None:
    uses: Counter[str] = Counter()
    files: Counter[str] = Counter()
    for d in dirs:
        for path in sorted(Path(d).rglob("*.py")):
            found = uses_in(path.read_text(errors="replace"))
            uses.update(found)
            files.update(found.keys())
    with out.open("w", newline="") as f:
        f.write(f"# jax.numpy uses in the .py files of: {' '.join(Path(d).name for d in dirs)}\n")
        writer = csv.writer(f)
        writer.writerow(["name", "uses", "files"])
        for name, n in sorted(uses.items(), key=lambda kv: (-kv[1], kv[0])):
            writer.writerow([name, n, files[name]])


def read_counts(path: Path = CSV) -> list[tuple[str, int, int]]:
    with path.open() as f:
        rows = csv.DictReader(line for line in f if not line.startswith("#"))
        return [(r["name"], int(r["uses"]), int(r["files"])) for r in rows]


# --- checking -------------------------------------------------------------------------

X = np.array([[4.0, 1.0, 0.5], [1.0, 3.0, 0.25], [0.5, 0.25, 2.0]], np.float32)  # symmetric positive definite
V = np.array([0.5, 1.5, 2.5], np.float32)


def _forms(fn: Any) -> list[Callable[[Any, Any], Any]]:
    """Common ways to call a jax.numpy function, given traced x (3×3) and v (3)."""
    return [
        lambda x, v: fn(x),
        lambda x, v: fn(v),
        lambda x, v: fn(x, x),
        lambda x, v: fn(v, v),
        lambda x, v: fn(x, v),
        lambda x, v: fn(x, 0),
        lambda x, v: fn(x, 1),
        lambda x, v: fn(x, axis=0),
        lambda x, v: fn([x, x]),
        lambda x, v: fn(x > 1, x, 0.0),
        lambda x, v: fn(v, v, v),
        lambda x, v: fn(x, (9,)),
        lambda x, v: fn(x, (3, 3)),
        lambda x, v: fn(x, 0, 1),
        lambda x, v: fn(x, np.float64),
        lambda x, v: fn(x > 1),
        lambda x, v: fn(x > 1, x < 2),
        lambda x, v: fn(x, np.array([[0, 1, 2]]), axis=0),
        lambda x, v: fn(x, [0, 1]),
        lambda x, v: fn("ij,jk->ik", x, x),
        lambda x, v: fn(x.dtype, snp.floating),
        lambda x, v: fn(x.dtype, x.dtype),
        lambda x, v: fn(np.int32),
        lambda x, v: x[fn(3)],
        lambda x, v: fn(v.astype(np.int32), length=3),
        lambda x, v: fn(v, size=3),
        lambda x, v: fn(lambda t: t * 2.0)(v),
        lambda x, v: x + fn(3),
        lambda x, v: x + fn((3, 3)),
        lambda x, v: x + fn((3, 3), 1.0),
        lambda x, v: fn((3,), (3, 3)),
    ]


def works(name: str) -> bool:
    """Whether shax.numpy has `name` and one common form of it traces on tracers."""
    try:
        value = _lookup(name)
    except (AttributeError, shax.ShaxError):
        return False
    if isinstance(value, type) and issubclass(value, np.generic) and not isabstract(value):
        return computes_in(value)  # a dtype name: covered if shax computes in it (not float16)
    if isinstance(value, type) or not callable(value):  # abstract dtypes, constants, classes
        return True
    for form in _forms(value):
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                shax.xpr(lambda x, v, form=form: _tensor(form(x, v), x), X, V)
        except Exception:  # noqa: BLE001 - any failure of a trial form: try the next
            continue
        return True
    return False


def isabstract(scalar_type: type) -> bool:
    """Whether a numpy scalar type is a kind (`floating`), not a dtype (`float32`)."""
    try:
        return np.dtype(scalar_type).type is not scalar_type
    except TypeError:
        return True


def computes_in(scalar_type: type) -> bool:
    try:
        shax.core.types.dtype_of_numpy(np.dtype(scalar_type))
    except shax.ShaxError:
        return False
    return True


def _tensor(out: Any, x: Any) -> Any:
    """A traced result to return: the first tensor of `out` (a tuple's, a pytree's), else x."""
    leaves = shax.tree_util.tree_leaves(out)
    return next((leaf for leaf in leaves if isinstance(leaf, shax.Tracer)), x)


def report(rows: list[tuple[str, int, int]], missing: int) -> None:
    total = sum(n for _, n, _ in rows)
    covered = {name for name, _, _ in rows if works(name)}
    got = sum(n for name, n, _ in rows if name in covered)
    print(f"{len(rows)} jax.numpy names, {total} uses; shax.numpy covers {len(covered)} names")
    print(f"use-weighted coverage: {100 * got / total:.1f}% ({got} of {total} uses)")
    absent = [(name, n, f) for name, n, f in rows if name not in covered]
    print(f"\nmost-used names not covered ({len(absent)} in all):")
    print(f"{'name':28} {'uses':>6} {'files':>6}  share  in shax.numpy")
    for name, n, f in absent[:missing]:
        present = "no"
        if _exists(name):
            present = "a dtype shax lacks" if isinstance(_lookup(name), type) else "yes, no form traced"
        print(f"{name:28} {n:6d} {f:6d} {100 * n / total:5.2f}%  {present}")


def _lookup(name: str) -> Any:
    value: Any = snp
    for part in name.split("."):
        value = getattr(value, part)
    return value


def _exists(name: str) -> bool:
    try:
        _lookup(name)
    except (AttributeError, shax.ShaxError):
        return False
    return True


def main(argv: list[str]) -> None:
    if argv[:1] == ["count"]:
        count(argv[1:], CSV)
        print(f"wrote {CSV}")
        return
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--missing", type=int, default=40, help="how many uncovered names to list")
    args = parser.parse_args(argv)
    report(read_counts(), args.missing)


if __name__ == "__main__":
    main(sys.argv[1:])

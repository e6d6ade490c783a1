"""The import layers of docs/architecture.md hold: a module imports, at run time (outside
`if TYPE_CHECKING:`, at module level and inside functions alike), only from its own layer
and the layers below it. So `Primitive` stays a leaf, rules know no tracer, and passes and
stages form no cycle. The table in the docs lists the layers of `LAYERS`, in order."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

# Bottom up; a module belongs to the first layer one of whose prefixes it starts with.
LAYERS: list[tuple[str, ...]] = [
    ("typeclasses",),
    ("shax.core",),
    ("shax.rules",),
    ("shax.primitives",),
    ("shax.tracing",),
    ("shax.passes",),
    ("shax.stages",),
    ("shax.codegen",),
    ("shax.control",),
    ("shax.transforms",),
    ("shax.export",),
    ("shax.tools", "shax.optimizers", "shax.numpy", "shax.nn", "shax.lax", "shax.random", "shax.testing",
     "shax.tree_util", "shax.tree", "shax"),
]  # fmt: skip


def layer(module: str) -> int:
    for k, prefixes in enumerate(LAYERS):
        if any(module == p or module.startswith(p + ".") for p in prefixes):
            return k
    raise AssertionError(f"{module} is in no layer")


def module_name(path: Path) -> str:
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _imported(node: ast.AST) -> list[str]:
    """The shax and typeclasses modules (or their names) an import statement brings in."""
    found: list[str] = []
    if isinstance(node, ast.Import):
        found += [a.name for a in node.names]
    elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
        found += [f"{node.module}.{a.name}" if node.module in ("shax", "typeclasses") else node.module
                  for a in node.names]  # fmt: skip
    return [m for m in found if m.split(".")[0] in ("shax", "typeclasses")]


def _type_checking(node: ast.AST) -> bool:
    return isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test)


def runtime_imports(path: Path) -> list[str]:
    """Modules imported at module level, outside `if TYPE_CHECKING:` blocks."""
    return [m for node in ast.parse(path.read_text()).body for m in _imported(node)]


def all_imports(path: Path) -> list[str]:
    """Modules imported anywhere (inside functions and methods too), outside the bodies
    of `if TYPE_CHECKING:` blocks: what the module may import when it runs."""
    found: list[str] = []
    todo: list[ast.AST] = [ast.parse(path.read_text())]
    while todo:
        node = todo.pop()
        found += _imported(node)
        if _type_checking(node):
            assert isinstance(node, ast.If)
            todo += node.orelse
        else:
            todo += ast.iter_child_nodes(node)
    return found


MODULES = sorted([*ROOT.glob("shax/**/*.py"), *ROOT.glob("typeclasses/*.py")])


@pytest.mark.parametrize("path", MODULES, ids=lambda p: module_name(p))
def test_a_module_imports_only_from_its_layer_and_below(path: Path) -> None:
    own = layer(module_name(path))
    above = [m for m in runtime_imports(path) if layer(m) > own]
    assert not above, f"{module_name(path)} (layer {own}) imports {above} from a later layer"


@pytest.mark.parametrize("path", MODULES, ids=lambda p: module_name(p))
def test_no_import_inside_a_function_points_up(path: Path) -> None:
    own = layer(module_name(path))
    above = sorted({m for m in all_imports(path) if layer(m) > own})
    assert not above, f"{module_name(path)} (layer {own}) imports {above} from a later layer, inside a function"


ARCHITECTURE = ROOT / "docs" / "architecture.md"


def documented_layers() -> list[tuple[str, list[str]]]:
    """The rows of the layer table in docs/architecture.md: each layer's name and the
    modules its second column names, as dotted names (a bare name is a module of the
    row's package, `shax/rules/`, or else of shax)."""
    text = ARCHITECTURE.read_text()
    table = text[text.index("| layer | modules |") :].split("\n\n")[0].splitlines()[2:]
    rows = []
    for line in table:
        name, modules = [cell.strip() for cell in line.strip("|").split("|")][:2]
        named = re.findall(r"`([^`]+)`", modules)
        package = named[0].strip("/").replace("/", ".") if named and named[0].endswith("/") else "shax"
        dotted = []
        for m in named:
            m = m.removesuffix("/__init__.py").removesuffix(".py").strip("/").replace("/", ".")
            dotted.append(m if m.split(".")[0] in ("shax", "typeclasses") else f"{package}.{m}")
        rows.append((name, dotted))
    return rows


def test_the_documented_layer_table_is_the_tested_one() -> None:
    rows = documented_layers()
    assert len(rows) == len(LAYERS), f"docs/architecture.md has {len(rows)} layers, LAYERS {len(LAYERS)}"
    for k, ((name, documented), prefixes) in enumerate(zip(rows, LAYERS)):
        misplaced = [m for m in documented if layer(m) != k]
        assert not misplaced, f"the docs' layer {name!r} names {misplaced}, which LAYERS puts in other layers"
        missing = [p for p in prefixes if p not in documented]
        assert not missing, f"the docs' layer {name!r} does not name {missing} (LAYERS' layer {k})"


def test_the_later_layers_register_what_the_earlier_ones_run(monkeypatch: pytest.MonkeyPatch) -> None:
    """The registrations docs/architecture.md lists, made by `import shax`: the tracer's
    numpy methods reach shax.numpy, `jit` the XLA backend, `record` the tracer."""
    import numpy as np

    import shax
    from shax.core.errors import ShaxError
    from shax.primitives import CheckpointName
    from shax.rules.evaluate import record
    from shax.tracing import numpy_dispatch
    from shax.transforms.jit import backends

    assert numpy_dispatch.shax_numpy() is shax.numpy
    assert set(backends) == {"xla"}
    named = shax.trace(lambda x: record(CheckpointName("h"), [x]), shax.TensorType(shax.f32, (2,)))
    assert [b.prim for b in named.bindings][-1] == CheckpointName("h")
    assert record(CheckpointName("h"), [np.ones(2, np.float32)]) is None  # nothing traced: the caller computes
    monkeypatch.setattr(numpy_dispatch, "_registered", [])
    with pytest.raises(ShaxError, match="shax.numpy is not imported"):
        numpy_dispatch.shax_numpy()

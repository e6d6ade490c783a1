"""The import layers of docs/architecture.md hold: a module imports, at run time (module
level, outside `if TYPE_CHECKING:`), only from its own layer and the layers below it.
So `Primitive` stays a leaf, rules know no tracer, and passes and stages form no cycle."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

# Bottom up; a module belongs to the first layer one of whose prefixes it starts with.
LAYERS: list[tuple[str, ...]] = [
    ("typeclasses",),
    ("shax.errors", "shax.types", "shax.primitive", "shax.ir", "shax.derived", "shax.printing", "shax.location",
     "shax.gcpause", "shax.pytree",
     "shax.pytree_keys", "shax.well_typed", "shax.typeclass_errors", "shax.array_subclasses", "shax.jax_arrays"),
    ("shax.rules",),
    ("shax.primitives", "shax.extend", "shax.checkpoint_policies"),
    ("shax.builder",),
    ("shax.tracer", "shax.array_methods", "shax.array_protocols", "shax.array_methods_reductions", "shax.indexing",
     "shax.at_updates",
     "shax.numpy_dispatch", "shax.checked_numpy", "shax.promotion",
     "shax.sharing", "shax.tracing", "shax.walker", "shax.evaluate", "shax.validation", "shax.rule_linearity",
     "shax.cost"),
    ("shax.passes",),
    ("shax.stages",),
    ("shax.codegen",),
    ("shax.control",),
    ("shax.transforms",),
    ("shax.export",),
    ("shax.explain", "shax.cli", "shax.optimizers", "shax.numpy", "shax.nn", "shax.stats", "shax.graphviz", "shax.plot",
     "shax.exercise", "shax.html_views", "shax.html_check", "shax.memory", "shax.tree_util", "shax.tree", "shax"),
]  # fmt: skip


def layer(module: str) -> int:
    for k, prefixes in enumerate(LAYERS):
        if any(module == p or module.startswith(p + ".") for p in prefixes):
            return k
    raise AssertionError(f"{module} is in no layer")


def module_name(path: Path) -> str:
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def runtime_imports(path: Path) -> list[str]:
    """Modules imported at module level, outside `if TYPE_CHECKING:` blocks."""
    found: list[str] = []
    for node in ast.parse(path.read_text()).body:
        if isinstance(node, ast.Import):
            found += [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found += [f"{node.module}.{a.name}" if node.module in ("shax", "typeclasses") else node.module
                      for a in node.names]  # fmt: skip
    return [m for m in found if m.split(".")[0] in ("shax", "typeclasses")]


MODULES = sorted([*ROOT.glob("shax/**/*.py"), *ROOT.glob("typeclasses/*.py")])


@pytest.mark.parametrize("path", MODULES, ids=lambda p: module_name(p))
def test_a_module_imports_only_from_its_layer_and_below(path: Path) -> None:
    own = layer(module_name(path))
    above = [m for m in runtime_imports(path) if layer(m) > own]
    assert not above, f"{module_name(path)} (layer {own}) imports {above} from a later layer"

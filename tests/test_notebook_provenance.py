"""Provenance in a notebook (issue 33): a binding traced from a cell names the cell
(`In[2]:3`), not the temporary file the kernel compiled it into, in the text and in the
page. Run through IPython's own shell and compiler, with cells named as ipykernel names
them (a file of its own under the temporary directory, which never exists), in a
subprocess so that the shell's hooks stay out of this one."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

CELLS = [
    "import shax, shax.numpy as jnp\nfrom shax import f32",
    "def f(x):\n    y = jnp.sin(x)\n    return jnp.sum(y * y)\n",
    "e = shax.explain(f, f32[3], provenance=True)",
]

SESSION = """
import json, os, re, sys, tempfile
from IPython.core.compilerop import CachingCompiler
from IPython.core.interactiveshell import InteractiveShell

class KernelCompiler(CachingCompiler):  # ipykernel's XCachingCompiler: a cell is a temporary file
    def get_code_name(self, raw_code, transformed_code, number):
        return os.path.join(tempfile.gettempdir(), f"ipykernel_{os.getpid()}", f"{abs(hash(raw_code))}.py")

shell = InteractiveShell.instance()
shell.compile = KernelCompiler()
for cell in json.loads(sys.argv[1]):
    result = shell.run_cell(cell, store_history=True)
    assert result.success, result.error_in_exec
e = shell.user_ns["e"]
strings = json.loads(re.search(r'class="shax-data">(.*?)</script>', e.to_html(), re.S).group(1))["s"]
print(json.dumps({"text": e.sections()["linearized"], "page": strings}))
"""


@pytest.mark.slow
def test_a_cells_bindings_name_the_cell_in_the_text_and_the_page() -> None:
    pytest.importorskip("IPython", reason="IPython runs the cells")
    run = subprocess.run(
        [sys.executable, "-c", SESSION, json.dumps(CELLS)],
        capture_output=True, text=True, cwd=ROOT, env={"PYTHONPATH": str(ROOT), "PATH": ""}, timeout=120,
    )  # fmt: skip
    assert run.returncode == 0, run.stderr
    shown = json.loads(run.stdout)
    assert "x1 :: f32[3] = sin x0            -- In[2]:2, traced" in shown["text"]
    assert "-- In[2]:2, linearize rule of sin" in shown["text"]
    assert "In[2]:3, traced" in shown["page"] and "In[2]:2, residual: saves x1 of f" in shown["page"]
    assert not any("ipykernel_" in s or ".py:" in s for s in [shown["text"], *shown["page"]])

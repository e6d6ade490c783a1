"""The `shax` command: print the stages of a function written in a Python file.

shax trace examples/medium.py:medium "f32[6]" "f32[2,2]"
shax types examples/medium.py:medium "f32[6]" "f32[2,2]"
"""

from __future__ import annotations

import argparse
import importlib.util
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from shax.errors import ShaxError, ShaxValueError
from shax.stages import infer_types
from shax.tracing import trace
from shax.types import TensorType


def load_function(spec: str) -> Callable[..., Any]:
    """`path/to/file.py:name` -> the function `name` defined in that file."""
    path, _, name = spec.rpartition(":")
    if not path or not name:
        raise ShaxValueError(f"expected FILE.py:FUNCTION, got {spec!r}")
    module_spec = importlib.util.spec_from_file_location(Path(path).stem, path)
    if module_spec is None or module_spec.loader is None or not Path(path).is_file():
        raise ShaxValueError(f"cannot load a Python file from {path!r}")
    module = importlib.util.module_from_spec(module_spec)
    module_spec.loader.exec_module(module)
    function = getattr(module, name, None)
    if not callable(function):
        raise ShaxValueError(f"{path} defines no function {name!r}")
    return function


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="shax", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    commands = parser.add_subparsers(dest="command", required=True)
    for command, summary in (
        ("trace", "print the untyped IR after tracing"),
        ("types", "print the IR after type inference"),
    ):
        sub = commands.add_parser(command, help=summary)
        sub.add_argument("function", help="FILE.py:FUNCTION")
        sub.add_argument("types", nargs="*", help='argument types, e.g. "f32[2, 6]"')
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    try:
        function = load_function(args.function)
        defn = trace(function, *(TensorType.parse(t) for t in args.types))
        print(defn if args.command == "trace" else infer_types(defn))
    except ShaxError as error:
        print(f"shax: {error}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())

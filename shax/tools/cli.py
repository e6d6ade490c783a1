"""The `shax` command: print the stages of a function written in a Python file.

shax trace examples/medium.py:medium "f32[6]" "f32[2,2]"
shax types examples/medium.py:medium "f32[6]" "f32[2,2]"
shax explain examples/medium.py:medium "f32[6]" "f32[2,2]" --cotangents "[[5, 9]]"
shax explain examples/medium.py:medium "f32[6]" "f32[2,2]" --stats --svg medium.svg
shax explain examples/medium.py:medium "f32[6]" "f32[2,2]" --exercise sin --html sin.html
shax demo       # the gradient-descent demo, then the medium pipeline (examples/)
shax demo --plot descent.png    # ... and a picture of the descent

An error, in the input or in the user's own function, is one line on stderr and exit
status 1; `--traceback` shows where it came from. An output file that cannot be written
(`--html`, `--dot`, `--svg`, `--plot`) is found before any work: one line and exit status 2,
as argparse reports a bad option.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import sys
import traceback
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from shax.core.errors import ShaxError, ShaxValueError, at
from shax.core.location import callers_hidden, show_location, user_frame_of
from shax.core.types import TensorType
from shax.stages import infer_types
from shax.tools.binding_values import summary as summarised
from shax.tools.explain import EVERY_HEADER, Explanation, explain
from shax.tools.graphviz import SVG_LIMIT, nodes_of, render_svg
from shax.tracing.trace import trace


def load_function(spec: str) -> Callable[..., Any]:
    """`path/to/file.py:name` -> the function `name` defined in that file."""
    path, _, name = spec.rpartition(":")
    if not path or not name:
        raise ShaxValueError(f"expected FILE.py:FUNCTION, got {spec!r}")
    module_spec = importlib.util.spec_from_file_location(Path(path).stem, path)
    if module_spec is None or module_spec.loader is None or not Path(path).is_file():
        raise ShaxValueError(f"cannot load a Python file from {path!r}")
    module = importlib.util.module_from_spec(module_spec)
    try:
        module_spec.loader.exec_module(module)
    except Exception as error:  # the user's file fails to import: report it as bad input
        raise ShaxValueError(f"cannot load {path}: {type(error).__name__}: {error}") from error
    function = getattr(module, name, None)
    if not callable(function):
        raise ShaxValueError(f"{path} defines no function {name!r}")
    return function


# The demos are the examples of a source checkout (the README installs one, editable).
EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
DEMOS = ("descent.py", "medium.py")


def run_demos(plot: str | None = None) -> None:
    """The demos, in order; with `plot`, the descent demo also draws its descent into that file."""
    for name in DEMOS:
        if not (EXAMPLES / name).is_file():
            raise ShaxValueError(f"shax demo runs the examples of a source checkout; {EXAMPLES / name} is missing")
    if plot is not None:
        import importlib.util as found

        if found.find_spec("matplotlib") is None:  # before the demo prints anything
            raise ShaxValueError("--plot needs matplotlib, the 'plot' extra: pip install 'shax[plot]'")
    for k, name in enumerate(DEMOS):
        if k:
            print()
        main = load_function(f"{EXAMPLES / name}:main")
        main(plot) if name == "descent.py" and plot is not None else main()


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="shax", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--traceback", action="store_true", help="on an error, show the Python traceback")
    commands = parser.add_subparsers(dest="command", required=True)
    for command, summary in (
        ("trace", "print the untyped IR after tracing"),
        ("types", "print the IR after type inference"),
    ):
        sub = commands.add_parser(command, help=summary)
        sub.add_argument("function", help="FILE.py:FUNCTION")
        sub.add_argument("types", nargs="*", help='argument types, e.g. "f32[2, 6]"')
    demo = commands.add_parser("demo", help="run the demos: gradient descent, then the medium pipeline")
    demo.add_argument("--plot", metavar="OUT", help="also draw the loss curve and the descent path into OUT (a PNG)")
    sub = commands.add_parser("explain", help="print every stage of reverse mode, with values, as the original")
    sub.add_argument("function", help="FILE.py:FUNCTION")
    sub.add_argument("types", nargs="*", help='argument types, e.g. "f32[2, 6]"')
    for option, what in (("inputs", "argument"), ("tangents", "argument"), ("cotangents", "output")):
        sub.add_argument(
            f"--{option}",
            type=_values,
            help=f'the {option} as JSON, one (nested) list per {what}, e.g. "[[1, 2], 3]" (default: random)',
        )
    sub.add_argument("--seed", type=int, default=0, help="seed of the random values (default: 0)")
    sub.add_argument(
        "--stages",
        type=lambda text: [k.strip() for k in text.split(",")],
        help=f"comma-separated sections to print (default: all): {','.join(EVERY_HEADER)}",
    )
    sub.add_argument(
        "--provenance", action="store_true", help="show beside each binding its line and the rule that emitted it"
    )
    sub.add_argument("--names", choices=["source"], help="source: print values under the names the function gave them")
    sub.add_argument("--diff", action="store_true", help="show each stage as a diff from the one before")
    sub.add_argument("--html", metavar="OUT", help="also write every stage as a self-contained HTML page to OUT")
    sub.add_argument("--stats", action="store_true", help="end with each stage's bindings, flops and bytes")
    sub.add_argument(
        "--yolo", action="store_true", help="also show the JVP and Unzipped stages (asking for either does too)"
    )
    sub.add_argument("--dot", metavar="OUT", help="also write reverse mode's programs as a Graphviz graph to OUT")
    sub.add_argument("--svg", metavar="OUT", help="also draw that graph into the SVG file OUT (runs Graphviz's dot)")
    sub.add_argument(
        "--exercise",
        metavar="RULE",
        help="with --html: leave the bindings RULE emitted blank in the page, for the learner to fill in "
        "(RULE: a primitive, e.g. sin, or one rule, e.g. 'transpose rule of mul'); prints no transcript",
    )
    return parser


def _progress() -> Callable[[str], None] | None:
    """On a terminal, a line on stderr naming the step explain is in (a large program takes
    seconds per stage); elsewhere (a pipe, a file, a test) nothing."""
    if not sys.stderr.isatty():
        return None
    return lambda step: print(f"\r\033[Kexplain: {step}...", end="", file=sys.stderr, flush=True)


def _values(text: str) -> list[Any]:
    try:
        values = json.loads(text)
    except json.JSONDecodeError as error:
        raise argparse.ArgumentTypeError(f"not JSON: {error}") from None
    if not isinstance(values, list):
        raise argparse.ArgumentTypeError("expected a JSON list with one value per argument (or output)")
    return values


OUTPUT_OPTIONS = ("html", "dot", "svg", "plot")
RANDOM_SHOWN = 64  # values up to which the random ones chosen are printed in full


def _show_random(shown: Explanation, given: dict[str, Any], seed: int) -> None:
    """On stderr (stdout is the transcript), the random values explain chose, as the JSON
    the option takes, so that a run can be repeated with them or with a change."""
    chosen = {"inputs": shown.inputs, "tangents": shown.tangents, "cotangents": shown.cotangents}
    for option, values in chosen.items():
        if given[option] is not None:
            continue
        size = sum(v.size for v in values)
        if size <= RANDOM_SHOWN:
            text = json.dumps([_shortest(v) for v in values])
        else:  # each array's shape and range, and how to draw them all again
            text = "; ".join(map(summarised, values)) + f" (not in full: --seed {seed} draws them again)"
        print(f"shax explain: random --{option} (--seed {seed}): {text}", file=sys.stderr, flush=True)


def _svg(dot: str) -> str:
    """The picture of `dot`, refused (before anything is written) when Graphviz would take minutes."""
    nodes = nodes_of(dot)
    if nodes > SVG_LIMIT:
        raise ShaxValueError(
            f"--svg: the picture has {nodes} bindings, and Graphviz's dot can take minutes to lay out more than "
            f"{SVG_LIMIT}; write --dot OUT instead and draw it yourself (dot -Tsvg), or explain a smaller function"
        )
    return render_svg(dot)


def _shortest(value: np.ndarray) -> Any:
    """`value` as nested lists, each float spelled in the fewest digits that read back as it."""
    if value.dtype.kind != "f":
        return value.tolist()
    return np.array([float(str(x)) for x in value.ravel()], dtype=object).reshape(value.shape).tolist()


def main(argv: Sequence[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    for option in OUTPUT_OPTIONS:
        path = getattr(args, option, None)
        problem = None if path is None else _unwritable(Path(path))
        if problem is not None:
            print(f"shax {args.command}: --{option} {path}: {problem}", file=sys.stderr)
            return 2
    try:
        with callers_hidden():  # what called main is not the input: an error about it names the command line
            _run(args)
    except BrokenPipeError:
        # The reader stopped (`shax demo | head`): leave quietly, as Unix tools do. Python
        # would report the pipe again when it flushes stdout at exit, so point it elsewhere.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 1
    except KeyboardInterrupt:
        return 130
    except Exception as error:  # bad input, or an error in the user's own function
        if args.traceback:
            traceback.print_exc()
        else:
            print(f"shax: {_message(error)}\n(run with --traceback to see more)", file=sys.stderr)
        return 1
    return 0


def _unwritable(path: Path) -> str | None:
    """Why a file cannot be written at `path`, if it cannot."""
    folder = path.parent
    if path.is_dir():
        return "is a directory"
    if not folder.is_dir():
        return f"the directory {folder} does not exist" if not folder.exists() else f"{folder} is not a directory"
    if not os.access(folder, os.W_OK) or (path.exists() and not os.access(path, os.W_OK)):
        return "cannot be written (permission denied)"
    return None


def _message(error: Exception) -> str:
    """A ShaxError names the user's line itself, or came from the command line (none of the
    user's lines ran); another error is the user's own, raised there."""
    if isinstance(error, ShaxError):
        return str(at(error, "the command line"))
    where = show_location(user_frame_of(error.__traceback__))
    return f"{type(error).__name__}: {error}" + (f" (at {where})" if where else "")


def _run(args: argparse.Namespace) -> None:
    if args.command == "demo":
        run_demos(args.plot)
        return
    try:
        function = load_function(args.function)
    except ShaxError as error:
        raise at(error, f"the command line's {args.function!r}") from error.__cause__
    types = []
    for text in args.types:
        try:
            types.append(TensorType.parse(text))
        except ShaxError as error:
            raise at(error, f"the command line's {text!r}") from None
    if args.command == "explain":
        if args.exercise is not None and not args.html:
            raise ShaxValueError("--exercise writes an exercise page: give --html OUT too")
        values = {"inputs": args.inputs, "tangents": args.tangents, "cotangents": args.cotangents}
        progress = _progress()
        shown = explain(
            function, *types, **values, seed=args.seed, provenance=args.provenance, names=args.names, diff=args.diff,
            progress=progress, stats=args.stats,
            stages="yolo" if args.yolo or {"jvp", "unzipped"} & set(args.stages or ()) else "default",
        )  # fmt: skip
        if progress is not None:
            print("\r\033[K", end="", file=sys.stderr, flush=True)  # the progress line, cleared
        svg = _svg(shown.to_dot()) if args.svg else None  # first: without Graphviz, write nothing
        _show_random(shown, values, args.seed)
        if args.exercise is not None:  # the transcript would show the answers
            task = shown.exercise(args.exercise)
            Path(args.html).write_text(task.to_html(), encoding="utf-8")
            print(f"shax explain: wrote the exercise ({task.num_blanks} blanks) to {args.html}", file=sys.stderr)
        else:
            print(shown.show(args.stages))
        if args.html and args.exercise is None:
            Path(args.html).write_text(shown.to_html(), encoding="utf-8")
        if args.dot:
            Path(args.dot).write_text(shown.to_dot(), encoding="utf-8")
        if args.svg and svg is not None:
            Path(args.svg).write_text(svg, encoding="utf-8")
        return
    defn = trace(function, *types)
    print(defn if args.command == "trace" else infer_types(defn))


if __name__ == "__main__":
    sys.exit(main())

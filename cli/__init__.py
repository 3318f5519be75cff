"""The `amber` command (`python -m amber`): `dump` a model's compile stages, `export` it as a
standalone NumPy module plus weights, look after the disk cache (`cache path|list|prune|
clear`), and turn a recorded run into an HTML compile `report`.

One module per command (`dump.py`, `export.py`, `cache.py`, `report.py`), each with `register(sub)` adding its
subparser and flags and `run(ns)` doing the work; `target.py` loads FILE.py:NAME and its inputs
for the commands that compile something. A flag for one command is added in that command's
module only.

Usage errors (bad FILE.py:NAME, missing file or name, bad --input) print one line on stderr and
exit with status 2; a CompileError prints its message and exits with status 1. Output piped into
a reader that stops early (`amber dump ... | head`) ends quietly.
"""
from __future__ import annotations

import os
import sys
from typing import Sequence

from ..frontend.errors import CompileError
from ..version import __version__
from . import cache, dump, export, report
from .errors import Parser, ToolError, UsageError
from .target import load_module, load_target, parse_inputs

COMMANDS = (dump, export, cache, report)

__all__ = ["main", "build_parser", "load_module", "load_target", "parse_inputs", "UsageError",
           "ToolError"]


def build_parser() -> Parser:
    """The argument parser of the `amber` command."""
    parser = Parser(prog="amber", description="amber: compile Python models to static NumPy "
                    "code.")
    parser.add_argument("--version", action="version", version=f"amber {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=Parser)
    for command in COMMANDS:
        command.register(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the `amber` command; returns the exit status."""
    parser = build_parser()
    ns = parser.parse_args(argv)
    if ns.command is None:
        parser.print_help(sys.stderr)
        return 2
    try:
        status = ns.handler(ns)
        sys.stdout.flush()  # NOTE: a closed pipe shows here, not at interpreter exit
        return status
    except BrokenPipeError:
        return _reader_went_away()
    except UsageError as exc:
        sys.stderr.write(f"amber: error: {exc}\n")
        return 2
    except CompileError as exc:
        sys.stderr.write(f"{exc}\n")
        return 1
    except ToolError as exc:
        sys.stderr.write(f"amber: error: {exc}\n")
        return 1


def _reader_went_away() -> int:
    """stdout's reader closed the pipe (`| head`): stop without a traceback. What is still
    buffered goes to /dev/null, so the interpreter's final flush cannot fail again (the recipe
    of Python's `signal` documentation)."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError, AttributeError):  # stdout is not a real file (tests)
        pass
    return 1

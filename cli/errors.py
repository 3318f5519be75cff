"""The two ways a command fails before or besides a CompileError, and the argument parser that
reports a usage mistake in one line."""
from __future__ import annotations

import argparse
import sys
from typing import NoReturn


class UsageError(Exception):
    """A mistake in the command line or in what it points at (exit status 2)."""


class ToolError(Exception):
    """Something the command needs is unavailable, e.g. Graphviz for SVG (exit status 1)."""


class Parser(argparse.ArgumentParser):
    """argparse, but a usage mistake is one line on stderr (no usage dump) and status 2."""

    def error(self, message: str) -> NoReturn:
        sys.stderr.write(f"amber: error: {message}\n")
        raise SystemExit(2)

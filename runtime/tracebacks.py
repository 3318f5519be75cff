"""What a user sees of an uncaught CompileError: their own frames, the message (file:line:col,
the line, a caret) and the hint, about ten lines, with amber's frames cut from the traceback and
no chained internal exception (JAX and TensorFlow filter their frames the same way).

The public entry points (`__call__` of jit and grad objects) catch a CompileError and raise
`user_facing(err)`. One frame of amber stays visible (the entry point's own `raise` line, which
names the switch); everything beneath it that is amber's is gone. An error about the arguments of
the call (`CompileError.at_call`) is moved to the user's line making the call.

`AMBER_TRACEBACK_FILTERING=off` (or `set_context(traceback_filtering=False)`) keeps the full
traceback and the chained causes, for debugging amber itself.
"""
from __future__ import annotations

import linecache
import os
import sys
import types
from typing import Any

from ..frontend.errors import CompileError
from ..graph.ir import is_library_file
from . import context as _ctx

ENV = "AMBER_TRACEBACK_FILTERING"
_OFF = ("0", "off", "false", "no")


def filtering() -> bool:
    """True unless turned off by `set_context(traceback_filtering=False)` or the environment."""
    setting = _ctx._context.traceback_filtering
    if setting is not None:
        return setting
    return os.environ.get(ENV, "on").strip().lower() not in _OFF


def user_facing(err: CompileError) -> CompileError:
    """`err` as the user should see it: moved to the user's call if it is about the call's
    arguments, and (when filtering) with only the user's frames in its traceback and no
    chained cause or context."""
    if err.at_call:
        site = _user_call_site(sys._getframe(1))
        if site is not None:
            err.move_to(*site)
    if not filtering():
        return err
    err.__cause__ = None
    err.__suppress_context__ = True
    return err.with_traceback(_user_frames(err.__traceback__))


def _user_frames(tb: types.TracebackType | None) -> types.TracebackType | None:
    """The traceback without the frames of amber's own files (the user's frames kept, in order)."""
    kept = []
    while tb is not None:
        if not is_library_file(tb.tb_frame.f_code.co_filename):
            kept.append(tb)
        tb = tb.tb_next
    out = None
    for entry in reversed(kept):
        out = types.TracebackType(out, entry.tb_frame, entry.tb_lasti, entry.tb_lineno)
    return out


def _user_call_site(frame: Any) -> tuple[str, int, int, str] | None:
    """(file, line, column, line text) of the innermost frame outside amber, from `frame` out."""
    while frame is not None and is_library_file(frame.f_code.co_filename):
        frame = frame.f_back
    if frame is None:
        return None
    code, line, col = frame.f_code, frame.f_lineno, 0
    positions = getattr(code, "co_positions", None)  # NOTE: Python 3.11+
    if positions is not None:
        found = list(positions())[frame.f_lasti // 2]
        if found[0] == line and found[2] is not None:
            col = found[2]
    file = code.co_filename
    return file, line, col, linecache.getline(file, line)

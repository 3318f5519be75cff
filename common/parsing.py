"""One lock for amber's own Python parsing (source -> `ast`/`gast` trees, and trees -> code).

CPython 3.11 keeps the depth counter of its AST conversion in state shared by every thread of the
interpreter: two threads converting trees at once can leave it out of step, and a later parse then
fails with "SystemError: AST constructor recursion depth mismatch". amber parses on the calling
thread (the frontend) and on the background thread that writes Numba kernels (runtime/tiers.py),
so both take this lock around their parsing, and Numba's own parsing takes it too
(`lock_numba_parsing`).
"""
from __future__ import annotations

import ast
import threading
import types
from typing import Any

PARSE_LOCK = threading.RLock()


def lock_numba_parsing() -> None:
    """Have Numba take PARSE_LOCK where it converts trees, on whichever thread compiles a
    kernel: array-expression lowering (whole-array arithmetic) parses a stub and compiles a
    tree, and with debug info (NUMBA_DEBUGINFO) lowering parses each function's source to find
    its first line. Unlocked, a kernel compile raced amber's parsing once in a 6,000-program
    search (the mismatch above; the loops then kept their NumPy code). Only the conversions
    hold the lock, not the whole Numba compile."""
    try:
        from numba.misc import firstlinefinder
        from numba.np.ufunc import array_exprs
    except ImportError:
        return
    for module in (firstlinefinder, array_exprs):
        if getattr(module, "amber_parse_lock", None) is not PARSE_LOCK and \
                getattr(module, "ast", None) is ast:
            module.ast = _LockedAst("ast")
            module.amber_parse_lock = PARSE_LOCK
    if getattr(array_exprs, "compile", compile) is compile:
        array_exprs.compile = _locked(compile)


def _locked(convert: Any) -> Any:
    def call(*args: Any, **kwargs: Any) -> Any:
        with PARSE_LOCK:
            return convert(*args, **kwargs)
    return call


class _LockedAst(types.ModuleType):
    """The `ast` module with `parse` under PARSE_LOCK."""
    parse = staticmethod(_locked(ast.parse))

    def __getattr__(self, name: str) -> Any:
        return getattr(ast, name)

"""Inlining a call to a Python helper: its body is compiled in a new frame into the current
block, so one model is one graph; where a problem inside an amber layer or the standard library
is reported."""
from __future__ import annotations

import inspect
import os
import sysconfig
import types
from typing import Any

from ..graph import Value
from . import aliases
from .context import Frame, call_identity
from .errors import CompileError, CompileTypeError, arity_message
from .generators import WHY
from .scope import bind_arguments
from .values import PyList

MAX_INLINE_DEPTH = 64
"""Calls nested deeper than this (without recursion) are rejected."""


def is_library(file: str) -> bool:
    """True for amber's own layers and ops (errors there are reported at the user's call)."""
    return os.path.abspath(file).startswith(LIBRARY_DIRS)


def is_standard_library(file: str) -> bool:
    """True for a module of Python's standard library (not a package installed beside it)."""
    path = os.path.abspath(file)
    return path.startswith(STDLIB_DIRS) and "site-packages" not in path.split(os.sep)


STDLIB_DIRS = tuple({os.path.abspath(sysconfig.get_paths()[k]) + os.sep
                     for k in ("stdlib", "platstdlib")})
LIBRARY_DIRS = tuple(os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
                                  d) + os.sep for d in ("nn", "ops"))


def inline(f: Frame, func: types.FunctionType, args: list[Any], kwargs: dict[str, Any],
           method: bool = False) -> Any:
    """Compile a call to a Python function into the current block; returns its result.
    `method`: `args[0]` is the object the function is bound to (self): the same method on
    another object (each sub-cell's `construct`) is a different call, never recursion."""
    compiler = f.compiler
    receiver = args[0] if method and args else None
    signature = _signature(args[1:] if method else args, kwargs)
    if compiler.is_active(func, receiver, signature):
        identity = call_identity(func, receiver)
        start = [entry for entry, _ in compiler.stack].index(identity)
        cycle = [name for _, name in compiler.stack[start:]] + [func.__qualname__]
        on = f" on the same {type(getattr(receiver, 'obj', receiver)).__name__} object" \
            if method else ""
        raise f.error(f"recursive call{on}: {' -> '.join(cycle)}",
                      "amber compiles a call by inlining it, so a function calling itself "
                      "with arguments known only at run time never finishes; rewrite the "
                      "recursion as a loop, or steer it by compile-time values")
    if inspect.isgeneratorfunction(func):
        raise f.error(f"cannot compile the generator {func.__qualname__} called here: it "
                      "would escape (stored, returned, passed on, or driven by next, send or "
                      "throw)", WHY)
    if len(compiler.stack) >= MAX_INLINE_DEPTH:
        raise f.error(f"calls are nested more than {MAX_INLINE_DEPTH} deep",
                      "flatten the chain of helper calls, or make a recursion end sooner")
    try:
        # NOTE: a functools.wraps wrapper is compiled itself, so its own signature binds
        bound = inspect.signature(func, follow_wrapped=False).bind(*args, **kwargs)
    except TypeError as exc:
        skip = 1 if method else 0
        raise f.error(arity_message(func.__qualname__, func, len(args) - skip + len(kwargs),
                                    str(exc), skip),
                      "pass the arguments its definition asks for",
                      kind=CompileTypeError) from None
    frame = compiler.push_frame(func, receiver, signature)
    for name, value in bind_arguments(frame, func, bound).items():
        frame.scope.bind(name, value)
    passed = aliases.enter(f, frame)
    saved_loc = f.builder.loc
    try:
        result = frame.run_function()
        aliases.leave(f, frame, passed)
        return result
    except CompileError as err:
        if is_library(frame.parsed.file) and not is_library(f.parsed.file):
            # NOTE: a problem inside an amber layer is reported where the user called it.
            raise f.error(f"in {func.__qualname__}: {err.message}", err.hint) from err
        if is_standard_library(frame.parsed.file) and not is_standard_library(f.parsed.file):
            raise f.error(f"cannot compile this call into Python's standard library "
                          f"({func.__module__}.{func.__qualname__}): {err.message}",
                          "call it outside the compiled function") from err
        raise
    finally:
        compiler.pop_frame()
        f.builder.loc = saved_loc


def _signature(args: list[Any], kwargs: dict[str, Any]) -> Any:
    """What compiling a call depends on: the types of run-time values, compile-time values
    themselves (by identity when unhashable), item by item in tuples, lists and dicts."""
    def part(v: Any) -> Any:
        if isinstance(v, Value):
            return ("value", v.type)
        if isinstance(v, tuple | list):
            return (type(v).__name__, *map(part, v))
        if isinstance(v, PyList):
            return ("pylist", *map(part, v.items))
        if isinstance(v, dict):
            return ("dict", *((k, part(x)) for k, x in v.items()))
        try:
            hash(v)
        except TypeError:
            return ("object", id(v))
        return (type(v), v) if not isinstance(v, float) else (float, repr(v))
    return part(list(args)), part(dict(sorted(kwargs.items())))

"""GRAPH_MODE's bare Cell call: `net(x)` from Python compiles `type(net).construct` on its call
(one `JitMethod` per class, as `@jit` on the class would make), while a Cell called from code
that is already running under such a call runs as it would there (compiled code inlines its
sub-cells; an eager run's nested calls stay eager)."""
from __future__ import annotations

import threading
import weakref
from typing import Any

from ..common.tensor import as_tensors
from ..frontend.errors import CompileError
from . import context as _ctx
from .jit import JitMethod
from .tracebacks import user_facing

_runners: weakref.WeakKeyDictionary[type, JitMethod] = weakref.WeakKeyDictionary()
_active = threading.local()


def _plain_call(cell: Any, *args: Any, **kwargs: Any) -> Any:
    """What `Cell.__call__` does under PYNATIVE_MODE."""
    cell.check_inputs(*args, **kwargs)
    return cell.construct(*args, **kwargs)


def call_compiled(cell: Any, args: tuple, kwargs: dict) -> Any:
    """Run `cell(*args, **kwargs)` compiled; a CompileError where it cannot compile (GRAPH_MODE
    never falls back to Python silently)."""
    if getattr(_active, "depth", 0) or not _ctx._context.jit_enabled:
        return _plain_call(cell, *args, **kwargs)
    cls = type(cell)
    runner = _runners.get(cls)
    if runner is None:
        runner = _runners.setdefault(cls, JitMethod(cls, _plain_call, False, None))
    _active.depth = 1
    try:
        return as_tensors(runner._run(cell, args, kwargs))
    except CompileError as err:
        raise user_facing(err)  # AMBER_TRACEBACK_FILTERING=off shows amber's frames too
    finally:
        _active.depth = 0


def graph_mode_runner(cls: type) -> JitMethod | None:
    """The compiled call GRAPH_MODE made for Cell class `cls` (None before its first call):
    its `code`, `stats` and `last` show what ran."""
    return _runners.get(cls)

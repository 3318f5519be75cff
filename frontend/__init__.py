"""Python source -> graph IR: `build_graph(target, args, kwargs)` compiles a cell's `construct`
(or a plain function) for one call into a verified `Graph`, plus the guards it relies on.

The builder is imported on first use: a process whose code all comes from the disk cache needs
only `CompileError` and the guards."""
from typing import Any

from .errors import CompileError, CompileTypeError, CompileValueError
from .guards import Guard, resolve_path

__all__ = ["BuildResult", "CompileError", "CompileTypeError", "CompileValueError", "Guard",
           "build_graph", "resolve_path"]


def __getattr__(name: str) -> Any:
    """`build_graph` and `BuildResult`, from the builder (imported now)."""
    if name in ("BuildResult", "build_graph"):
        from . import builder
        return getattr(builder, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")

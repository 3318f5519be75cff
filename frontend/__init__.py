"""Python source -> graph IR: `build_graph(target, args, kwargs)` compiles a cell's `construct`
(or a plain function) for one call into a verified `Graph`, plus the guards it relies on."""
from .builder import BuildResult, build_graph
from .errors import CompileError
from .guards import Guard, resolve_path

__all__ = ["BuildResult", "CompileError", "Guard", "build_graph", "resolve_path"]

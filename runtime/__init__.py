"""Running compiled code: `jit`, specialization and guards, the memory and disk caches, calling
generated modules and pointing their errors back at user lines, execution modes."""
from .context import (GRAPH_MODE, PYNATIVE_MODE, CompileOptions, Context, get_context,
                      reset_context, set_context, set_device)
from .diskcache import DiskCache
from .jit import JitFunction, JitMethod, jit
from .specializations import JitStats

__all__ = ["GRAPH_MODE", "PYNATIVE_MODE", "CompileOptions", "Context", "get_context",
           "reset_context", "set_context", "set_device", "DiskCache", "JitFunction", "JitMethod",
           "JitStats", "jit"]

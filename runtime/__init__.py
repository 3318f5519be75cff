"""Running compiled code: `jit`, specialization and guards, the memory and disk caches, calling
generated modules and pointing their errors back at user lines, execution modes."""
from . import context
from .context import (GRAPH_MODE, PYNATIVE_MODE, CompileOptions, Context, get_context,
                      reset_context, set_context, set_device)
from .diskcache import DiskCache
from .jit import JitFunction, JitMethod, jit
from .specializations import JitStats
from . import recorder as _recorder

if _report := context.report_directory():
    _recorder.start(_report)

__all__ = ["GRAPH_MODE", "PYNATIVE_MODE", "CompileOptions", "Context", "get_context",
           "reset_context", "set_context", "set_device", "DiskCache", "JitFunction", "JitMethod",
           "JitStats", "jit"]

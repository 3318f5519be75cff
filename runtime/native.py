"""The Numba backend at run time: whether Numba is there, which backend a compile uses, and
loading a generated module that defines Numba kernels, where a kernel Numba cannot compile
makes its loop NumPy again (one warning naming why) instead of failing the call.

Numba is imported only when a module that needs it is loaded; `auto` without Numba installed is
the NumPy backend, silently.
"""
from __future__ import annotations

import functools
import importlib.util
import os
import warnings
from types import TracebackType
from typing import Any, Callable

from ..common.parsing import lock_numba_parsing
from ..ops.background import NUMBA_IMPORT_LOCK
from .warn import warn_user

INSTALL_HINT = "pip install 'amber-jit[native]' (or pip install numba scipy)"


@functools.cache
def numba_installed() -> bool:
    """True if `import numba` would find it (without importing it)."""
    return importlib.util.find_spec("numba") is not None


def resolve_backend(backend: str) -> str:
    """The backend codegen writes for: auto without Numba is "numpy"; "numba" without Numba is
    an ImportError saying how to install it."""
    if backend == "numpy" or (backend == "auto" and not numba_installed()):
        return "numpy"
    if backend == "onnxruntime":
        if importlib.util.find_spec("onnxruntime") is None or \
                importlib.util.find_spec("onnx") is None:
            raise ImportError("amber: backend='onnxruntime' needs onnx and onnxruntime: "
                              "pip install 'amber-jit[onnx]' (or pip install onnx onnxruntime)")
        return backend
    if not numba_installed():
        raise ImportError(f"amber: backend='numba' needs Numba, which is not installed: "
                          f"{INSTALL_HINT}")
    return backend


class KernelFailure(Exception):
    """Numba could not compile the kernel of one loop region."""

    def __init__(self, kernel: Any, reason: str) -> None:
        super().__init__(reason)
        self.kernel, self.reason = kernel, reason


def import_numba() -> None:
    """Import Numba once, one thread at a time (`NUMBA_IMPORT_LOCK`, which the native parts'
    build takes too): a background compile (tiers.py) and a load on the caller's thread
    importing it together can each see the other's half-initialized modules."""
    with NUMBA_IMPORT_LOCK:
        import numba  # noqa: F401
        lock_numba_parsing()
        from numba.core.errors import NumbaPerformanceWarning
        # NOTE: a filter for the whole process, set once: `catch_warnings` around each load
        # is not thread-safe, and a kernel thread's exit could restore another thread's filters
        warnings.filterwarnings("ignore", category=NumbaPerformanceWarning)


def load_native(load: Callable[[], Any], code: Any, filename: str) -> Any:
    """Run `load()` (executing the module `code`, whose kernels Numba compiles as it loads);
    KernelFailure naming the kernel if Numba fails on one."""
    if not code.kernels:
        return load()
    import_numba()
    try:
        return load()
    except Exception as err:  # NOTE: Numba's errors have many classes (typing, lowering, LLVM)
        kernel = _failed_kernel(err.__traceback__, code, filename)
        if kernel is None:
            raise
        raise KernelFailure(kernel, _reason(err)) from err


def _failed_kernel(tb: TracebackType | None, code: Any, filename: str) -> Any:
    """The kernel whose decorator (compiling it) was running when the module failed."""
    line = None
    while tb is not None:
        if tb.tb_frame.f_code.co_filename == filename and tb.tb_frame.f_code.co_name == "<module>":
            line = tb.tb_lineno
        tb = tb.tb_next
    return next((k for k in code.kernels if line is not None and k.first_line <= line <= k.def_line),
                None)


def _reason(err: BaseException) -> str:
    text = str(err).strip().splitlines()
    first = next((t for t in text if t.strip()), type(err).__name__)
    return f"{type(err).__name__}: {first.strip()}"


def compile_with_fallback(generate: Callable[[frozenset[int]], Any],
                          load: Callable[[Any], Any], title: str) -> tuple[Any, Any]:
    """`(code, loaded)`: generate the module, load it; while Numba fails on a kernel, warn
    once naming the loop and why, and generate again with that loop in NumPy."""
    exclude: frozenset[int] = frozenset()
    while True:
        code = generate(exclude)
        try:
            return code, load(code)
        except KernelFailure as failure:
            kernel = failure.kernel
            where = f" at {os.path.basename(kernel.loc.file)}:{kernel.loc.line}" \
                if kernel.loc is not None else ""
            warn_user(f"amber: {title}: Numba could not compile the loop{where} "
                      f"({failure.reason}); that loop runs as NumPy code instead")
            exclude = exclude | {kernel.region}

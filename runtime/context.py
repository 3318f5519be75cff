"""Process-wide settings (`set_context`), the one place the runtime reads its environment
variables, and `CompileOptions`, the per-compile choices passed down explicitly."""
from __future__ import annotations

import os
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from ..communication.parallel import (ParallelMode, get_auto_parallel_context,  # noqa: F401
                                      reset_auto_parallel_context, set_auto_parallel_context)
from .cachedir import default_cache_dir
from .native import resolve_backend

GRAPH_MODE = 0
"""Compile every Cell called from Python on its call, as well as what `jit` wraps (MindSpore's
constant, and its value)."""
PYNATIVE_MODE = 1
"""The default, as in MindSpore 2.x: compile what `jit` wraps (and gradient functions); run any
other Cell call as plain Python, op by op."""
MODE_NAMES = {"graph": GRAPH_MODE, "pynative": PYNATIVE_MODE}
"""amber's older spellings of the modes, still accepted."""
DEVICE_TARGET = "CPU"
"""What amber runs on: NumPy on the host CPU."""
MINDSPORE_OPTIONS = frozenset({
    "device_id", "max_call_depth", "pynative_synchronize",
    "enable_graph_kernel", "graph_kernel_flags", "jit_syntax_level", "jit_config",
    "max_device_memory", "runtime_num_threads", "inter_op_parallel_num", "deterministic",
    "memory_optimize_level", "mempool_block_size", "variable_memory_max_size",
    "enable_reduce_precision", "enable_compile_cache", "compile_cache_path", "print_file_path",
    "env_config_path", "reserve_class_name_in_scope", "check_bprop", "grad_for_scalar",
    "enable_dump", "save_dump_path", "op_timeout", "precompile_only", "ascend_config",
    "gpu_config", "aoe_tune_mode", "aoe_config", "disable_format_transform",
})
"""`set_context` options MindSpore scripts pass that change nothing in amber (device placement,
graph dumps, memory pools, kernel tuning): accepted and ignored. `amber dump` shows graphs."""


BACKENDS = ("auto", "numpy", "numba", "onnxruntime")


@dataclass(frozen=True, slots=True)
class CompileOptions:
    """What changes the compiled code: the optimization level and the backend; `verify` checks
    the IR after each pass (slower, same output).

    `backend`: "numpy" writes every loop in NumPy; "numba" compiles every loop region a Numba
    kernel can compute (see codegen/native), an error if Numba is not installed; "auto" (the
    default) compiles those the cost rule favours (small arrays, many iterations) when Numba is
    installed, and is "numpy" otherwise; "onnxruntime" runs the whole graph as an ONNX model in
    an onnxruntime session (inference only: gradients and training are refused).

    `num_threads`: how many threads a convolution's kernel may split its blocks over (see
    docs/performance.md, Threads); 1 runs them on the caller. Default: `default_threads()`.

    `native`: whether a convolution's parts may run as native code (ops/conv_native.py: the
    same numbers, without the interpreter lock); None: where the backend may use Numba ("auto"
    with Numba installed, "numba"). A jit compile settles it before the NumPy tier of "auto"
    is compiled (`native_parts`)."""
    opt_level: int = 2
    verify: bool = False
    backend: str = "auto"
    num_threads: int = field(default_factory=lambda: default_threads())
    native: bool | None = None

    def __post_init__(self) -> None:
        if self.opt_level not in (0, 1, 2):
            raise ValueError(f"opt_level must be 0, 1 or 2, not {self.opt_level!r}")
        if self.backend not in BACKENDS:
            raise ValueError(f"backend must be one of {', '.join(map(repr, BACKENDS))}, "
                             f"not {self.backend!r}")
        if type(self.num_threads) is not int or self.num_threads < 1:
            raise ValueError(f"num_threads must be an int >= 1, not {self.num_threads!r}")

    @property
    def codegen_backend(self) -> str:
        """The backend codegen writes for: "numpy" for auto without Numba installed; forcing
        "numba" without it raises ImportError."""
        return resolve_backend(self.backend)

    @property
    def native_parts(self) -> bool:
        """`native`, or where it is None whether the backend may use Numba."""
        if self.native is not None:
            return self.native
        return self.codegen_backend in ("auto", "numba")

    def cache_token(self) -> str:
        """The part of the cache key that depends on the options (verify changes nothing)."""
        backend = self.codegen_backend
        return f"O{self.opt_level}" + ("" if backend == "numpy" else f"-{backend}") + \
            ("" if self.num_threads == 1 else f"-t{self.num_threads}") + \
            ("-native" if self.native_parts else "")


@dataclass(frozen=True, slots=True)
class Context:
    """The settings `set_context` changes: execution mode, compile options and the disk cache.

    `cache_dir=None` means `$AMBER_CACHE_DIR`, else the platform's user cache directory
    (`~/.cache/amber` on Linux; see runtime/cachedir.py); `disk_cache=None` means on unless
    `AMBER_CACHE=0`. The backend starts as `$AMBER_BACKEND` (default "auto").

    `save_graphs=True` writes the stages of every compile (source, IR before and after each
    pass, code) as numbered files into a new directory `<save_graphs_path>/<title>_<n>/`, as
    MindSpore's option of that name does (`amber dump --out-dir` writes the same files)."""
    mode: int = PYNATIVE_MODE
    options: CompileOptions = field(default_factory=lambda: CompileOptions(
        backend=default_backend()))
    cache_dir: str | None = None
    disk_cache: bool | None = None
    save_graphs: bool = False
    save_graphs_path: str = "."
    traceback_filtering: bool | None = None
    """None: on unless `AMBER_TRACEBACK_FILTERING=off` (see `runtime/tracebacks.py`)."""
    retain_memory: int = 64 << 20
    """Bytes of freed memory the process keeps for the next call instead of giving them back
    to the OS (glibc's M_TOP_PAD, set when compiled code is loaded; see runtime/heap.py): a
    call then reuses pages instead of faulting them in again. 0 leaves glibc's default."""
    jit_enabled: bool = field(default_factory=lambda: os.environ.get("MS_JIT", "").strip() != "0")
    """False runs everything as plain Python, in either mode (jit targets, GRAPH_MODE Cell
    calls; gradient functions through the reference interpreter): the eager oracle. Starts on
    unless `MS_JIT=0`, MindSpore's switch of the same meaning."""

    @property
    def opt_level(self) -> int:
        """The optimization level compiles use (0, 1 or 2)."""
        return self.options.opt_level

    def resolved_cache_dir(self) -> Path:
        """The disk cache directory these settings select."""
        if self.cache_dir is not None:
            return Path(self.cache_dir)
        return default_cache_dir()

    def disk_cache_enabled(self) -> bool:
        """True unless turned off by `set_context(disk_cache=False)` or `AMBER_CACHE=0`."""
        if self.disk_cache is not None:
            return self.disk_cache
        return os.environ.get("AMBER_CACHE", "1").strip().lower() not in ("0", "false", "off", "no")


def default_backend() -> str:
    """`$AMBER_BACKEND` ("auto", "numpy" or "numba"), else "auto"."""
    backend = os.environ.get("AMBER_BACKEND", "").strip().lower() or "auto"
    if backend not in BACKENDS:
        raise ValueError(f"AMBER_BACKEND must be one of {', '.join(BACKENDS)}, not {backend!r}")
    return backend


def default_threads() -> int:
    """`$OMP_NUM_THREADS`, else `$NUMBA_NUM_THREADS` (a positive int; OpenMP's "4,2" counts
    as 4), else the cores this process may run on."""
    for name in ("OMP_NUM_THREADS", "NUMBA_NUM_THREADS"):
        text = os.environ.get(name, "").split(",")[0].strip()
        if text.isdigit() and int(text) >= 1:
            return int(text)
    if hasattr(os, "sched_getaffinity"):
        return max(1, len(os.sched_getaffinity(0)))
    return max(1, os.cpu_count() or 1)


def report_directory() -> str:
    """`$AMBER_REPORT`: record the run for `amber report` into this directory ("" : do not)."""
    return os.environ.get("AMBER_REPORT", "").strip()


_context = Context()


def get_context(attr_key: str | None = None) -> Any:
    """The current settings (an immutable snapshot); MindSpore's `get_context("mode")` form
    returns one of them ("mode", "device_target", "opt_level", ...)."""
    if attr_key is None:
        return _context
    if attr_key == "device_target":
        return DEVICE_TARGET
    if attr_key == "verify":
        return _context.options.verify
    if attr_key in ("mode", "jit_enabled", "opt_level", "cache_dir", "disk_cache", "save_graphs",
                    "save_graphs_path", "traceback_filtering", "retain_memory"):
        return getattr(_context, attr_key)
    if attr_key in MINDSPORE_OPTIONS:
        return None
    raise ValueError(f"get_context: unknown setting {attr_key!r}")


def check_device(device_target: str, where: str = "set_context") -> str:
    """`device_target` if amber runs there ("CPU", any case), else a ValueError saying what
    amber runs on."""
    if not isinstance(device_target, str) or device_target.upper() != DEVICE_TARGET:
        raise ValueError(f"{where}: device_target={device_target!r} is not available: amber runs "
                         f"models as NumPy code on the CPU; use device_target=\"CPU\"")
    return DEVICE_TARGET


def _canonical_mode(mode: Any) -> int:
    if isinstance(mode, str) and mode.lower() in MODE_NAMES:
        return MODE_NAMES[mode.lower()]
    if mode in (GRAPH_MODE, PYNATIVE_MODE) and not isinstance(mode, bool):
        return int(mode)
    raise ValueError(f"set_context: mode must be GRAPH_MODE (0) or PYNATIVE_MODE (1), not "
                     f"{mode!r}")


def set_context(*, mode: int | str | None = None, opt_level: int | None = None,
                verify: bool | None = None, cache_dir: str | os.PathLike | None = None,
                disk_cache: bool | None = None, save_graphs: bool | None = None,
                save_graphs_path: str | os.PathLike | None = None,
                traceback_filtering: bool | None = None, device_target: str | None = None,
                backend: str | None = None, jit_enabled: bool | None = None,
                num_threads: int | None = None, retain_memory: int | None = None,
                **mindspore_options: Any) -> Context:
    """Change the process-wide settings; arguments left as None keep their value.

    `mode=PYNATIVE_MODE` (1, the default, as in MindSpore 2.x) compiles what `jit` wraps and
    gradient functions and runs other Cell calls as plain Python; `mode=GRAPH_MODE` (0) also
    compiles every Cell called from Python on its call, a CompileError where it cannot
    ("graph"/"pynative" are accepted too). `jit_enabled=False` runs everything as plain Python
    (the eager oracle; MindSpore's `MS_JIT=0`). `backend` is "auto", "numpy" or
    "numba" (see `CompileOptions`); `num_threads` how many threads convolutions may use
    (default from `$OMP_NUM_THREADS`, `$NUMBA_NUM_THREADS` or the cores; see
    `CompileOptions`). `retain_memory`: bytes of freed memory kept for the next call (default
    64 MiB; 0: glibc's default; see `Context`). `save_graphs=True` writes
    each compile's stages under `save_graphs_path` (default the current directory; see
    `Context`). `traceback_filtering=False` shows amber's own frames in the traceback of an
    uncaught CompileError (as `AMBER_TRACEBACK_FILTERING=off` does). `device_target` must be
    "CPU"; the other MindSpore options in `MINDSPORE_OPTIONS` are accepted and change nothing.
    Returns the new settings."""
    global _context
    unknown = sorted(set(mindspore_options) - MINDSPORE_OPTIONS)
    if unknown:
        raise TypeError(f"set_context: unknown setting(s) {', '.join(unknown)}")
    if device_target is not None:
        check_device(device_target)
    if mode is not None:
        mode = _canonical_mode(mode)
    options = _context.options
    if opt_level is not None or verify is not None or backend is not None or \
            num_threads is not None:
        options = CompileOptions(options.opt_level if opt_level is None else opt_level,
                                 options.verify if verify is None else bool(verify),
                                 options.backend if backend is None else backend,
                                 options.num_threads if num_threads is None else num_threads)
        if backend is not None:
            options.codegen_backend  # NOTE: forcing numba without Numba fails here, not later
    changes: dict = {"options": options}
    if mode is not None:
        changes["mode"] = mode
    if cache_dir is not None:
        changes["cache_dir"] = os.fspath(cache_dir)
    if disk_cache is not None:
        changes["disk_cache"] = bool(disk_cache)
    if save_graphs is not None:
        changes["save_graphs"] = bool(save_graphs)
    if save_graphs_path is not None:
        changes["save_graphs_path"] = os.fspath(save_graphs_path)
    if traceback_filtering is not None:
        changes["traceback_filtering"] = bool(traceback_filtering)
    if jit_enabled is not None:
        changes["jit_enabled"] = bool(jit_enabled)
    if retain_memory is not None:
        if type(retain_memory) is not int or not 0 <= retain_memory < 1 << 31:
            raise ValueError(f"retain_memory must be an int of bytes in [0, 2**31), not "
                             f"{retain_memory!r}")
        changes["retain_memory"] = retain_memory
        from .heap import retain
        retain(retain_memory)
    _context = replace(_context, **changes)
    _route_cell_calls(_context)
    return _context


def set_device(device_target: str, device_id: int | None = None) -> None:
    """MindSpore 2.x's `set_device("CPU")`: accepted for the CPU (amber's only target)."""
    check_device(device_target, "set_device")


def reset_context() -> Context:
    """Back to the defaults (PYNATIVE_MODE, -O2, cache location from the environment)."""
    global _context
    _context = Context()
    _route_cell_calls(_context)
    return _context


def _route_cell_calls(context: Context) -> None:
    """Under GRAPH_MODE a bare Cell call compiles: `Cell.__call__` (in nn/, below the runtime)
    hands it to `cellcall.call_compiled`; under PYNATIVE_MODE it runs `construct` itself."""
    from ..nn.cell import Cell
    from .cellcall import call_compiled
    Cell.graph_mode_call = call_compiled if context.mode == GRAPH_MODE else None

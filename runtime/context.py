"""Process-wide settings (`set_context`), the one place the runtime reads its environment
variables, and `CompileOptions`, the per-compile choices passed down explicitly."""
from __future__ import annotations

import os
from dataclasses import dataclass, field, replace
from pathlib import Path

from .native import resolve_backend

GRAPH_MODE = "graph"
PYNATIVE_MODE = "pynative"
MODES = (GRAPH_MODE, PYNATIVE_MODE)


BACKENDS = ("auto", "numpy", "numba")


@dataclass(frozen=True, slots=True)
class CompileOptions:
    """What changes the compiled code: the optimization level and the backend; `verify` checks
    the IR after each pass (slower, same output).

    `backend`: "numpy" writes every loop in NumPy; "numba" compiles every loop region a Numba
    kernel can compute (see codegen/native), an error if Numba is not installed; "auto" (the
    default) compiles those the cost rule favours (small arrays, many iterations) when Numba is
    installed, and is "numpy" otherwise."""
    opt_level: int = 2
    verify: bool = False
    backend: str = "auto"

    def __post_init__(self) -> None:
        if self.opt_level not in (0, 1, 2):
            raise ValueError(f"opt_level must be 0, 1 or 2, not {self.opt_level!r}")
        if self.backend not in BACKENDS:
            raise ValueError(f"backend must be one of {', '.join(map(repr, BACKENDS))}, "
                             f"not {self.backend!r}")

    @property
    def codegen_backend(self) -> str:
        """The backend codegen writes for: "numpy" for auto without Numba installed; forcing
        "numba" without it raises ImportError."""
        return resolve_backend(self.backend)

    def cache_token(self) -> str:
        """The part of the cache key that depends on the options (verify changes nothing)."""
        backend = self.codegen_backend
        return f"O{self.opt_level}" + ("" if backend == "numpy" else f"-{backend}")


@dataclass(frozen=True, slots=True)
class Context:
    """The settings `set_context` changes: execution mode, compile options and the disk cache.

    `cache_dir=None` means `$AMBER_CACHE_DIR`, else `$XDG_CACHE_HOME/amber`, else
    `~/.cache/amber`; `disk_cache=None` means on unless `AMBER_CACHE=0`. The backend starts
    as `$AMBER_BACKEND` (default "auto")."""
    mode: str = GRAPH_MODE
    options: CompileOptions = field(default_factory=lambda: CompileOptions(
        backend=default_backend()))
    cache_dir: str | None = None
    disk_cache: bool | None = None

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


def default_cache_dir() -> Path:
    """`$AMBER_CACHE_DIR`, or `amber` under the user cache directory (XDG_CACHE_HOME aware)."""
    explicit = os.environ.get("AMBER_CACHE_DIR")
    if explicit:
        return Path(explicit).expanduser()
    xdg = os.environ.get("XDG_CACHE_HOME")
    base = Path(xdg).expanduser() if xdg else Path.home() / ".cache"
    return base / "amber"


_context = Context()


def get_context() -> Context:
    """The current settings (an immutable snapshot)."""
    return _context


def set_context(*, mode: str | None = None, opt_level: int | None = None,
                verify: bool | None = None, cache_dir: str | os.PathLike | None = None,
                disk_cache: bool | None = None, backend: str | None = None) -> Context:
    """Change the process-wide settings; arguments left as None keep their value.

    `mode="graph"` (default) runs `jit` functions compiled, `mode="pynative"` runs them as plain
    Python. `backend` is "auto", "numpy" or "numba" (see `CompileOptions`). Returns the new
    settings."""
    global _context
    if mode is not None and mode not in MODES:
        raise ValueError(f"set_context: mode must be one of {', '.join(MODES)}, not {mode!r}")
    options = _context.options
    if opt_level is not None or verify is not None or backend is not None:
        options = CompileOptions(options.opt_level if opt_level is None else opt_level,
                                 options.verify if verify is None else bool(verify),
                                 options.backend if backend is None else backend)
        if backend is not None:
            options.codegen_backend  # NOTE: forcing numba without Numba fails here, not later
    changes: dict = {"options": options}
    if mode is not None:
        changes["mode"] = mode
    if cache_dir is not None:
        changes["cache_dir"] = os.fspath(cache_dir)
    if disk_cache is not None:
        changes["disk_cache"] = bool(disk_cache)
    _context = replace(_context, **changes)
    return _context


def reset_context() -> Context:
    """Back to the defaults (graph mode, -O2, cache location from the environment)."""
    global _context
    _context = Context()
    return _context

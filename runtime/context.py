"""Process-wide settings (`set_context`), the one place the runtime reads its environment
variables, and `CompileOptions`, the per-compile choices passed down explicitly."""
from __future__ import annotations

import os
from dataclasses import dataclass, replace
from pathlib import Path

GRAPH_MODE = "graph"
PYNATIVE_MODE = "pynative"
MODES = (GRAPH_MODE, PYNATIVE_MODE)


@dataclass(frozen=True, slots=True)
class CompileOptions:
    """What changes the compiled code: the optimization level; `verify` checks the IR after
    each pass (slower, same output)."""
    opt_level: int = 2
    verify: bool = False

    def __post_init__(self) -> None:
        if self.opt_level not in (0, 1, 2):
            raise ValueError(f"opt_level must be 0, 1 or 2, not {self.opt_level!r}")

    def cache_token(self) -> str:
        """The part of the cache key that depends on the options (verify changes nothing)."""
        return f"O{self.opt_level}"


@dataclass(frozen=True, slots=True)
class Context:
    """The settings `set_context` changes: execution mode, compile options and the disk cache.

    `cache_dir=None` means `$AMBER_CACHE_DIR`, else `$XDG_CACHE_HOME/amber`, else
    `~/.cache/amber`; `disk_cache=None` means on unless `AMBER_CACHE=0`.

    `save_graphs=True` writes the stages of every compile (source, IR before and after each
    pass, code) as numbered files into a new directory `<save_graphs_path>/<title>_<n>/`, as
    MindSpore's option of that name does (`amber dump --out-dir` writes the same files)."""
    mode: str = GRAPH_MODE
    options: CompileOptions = CompileOptions()
    cache_dir: str | None = None
    disk_cache: bool | None = None
    save_graphs: bool = False
    save_graphs_path: str = "."

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
                disk_cache: bool | None = None, save_graphs: bool | None = None,
                save_graphs_path: str | os.PathLike | None = None) -> Context:
    """Change the process-wide settings; arguments left as None keep their value.

    `mode="graph"` (default) runs `jit` functions compiled, `mode="pynative"` runs them as plain
    Python. `save_graphs=True` writes each compile's stages under `save_graphs_path` (default
    the current directory; see `Context`). Returns the new settings."""
    global _context
    if mode is not None and mode not in MODES:
        raise ValueError(f"set_context: mode must be one of {', '.join(MODES)}, not {mode!r}")
    options = _context.options
    if opt_level is not None or verify is not None:
        options = CompileOptions(options.opt_level if opt_level is None else opt_level,
                                 options.verify if verify is None else bool(verify))
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
    _context = replace(_context, **changes)
    return _context


def reset_context() -> Context:
    """Back to the defaults (graph mode, -O2, cache location from the environment)."""
    global _context
    _context = Context()
    return _context

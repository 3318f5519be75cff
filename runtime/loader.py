"""Turns generated source text into a callable: compiles it under a stable filename and registers
the text with `linecache` (as torch.fx's `_EvalCacheLoader` does) so tracebacks and pdb show the
generated lines."""
from __future__ import annotations

import hashlib
import linecache
import os
import re
import sys
import types
from typing import Any, Callable, Mapping

from .context import get_context
from .heap import retain

_UNSAFE = re.compile(r"[^A-Za-z0-9_.]+")


class SourceLoader:
    """A PEP 302 loader whose only job is `get_source`, for modules that exist only in memory."""

    def __init__(self, source: str) -> None:
        self.source = source

    def get_source(self, name: str) -> str:
        return self.source


def source_hash(source: str) -> str:
    """The SHA-256 hex digest of `source` (UTF-8): names fake files and checks disk entries."""
    return hashlib.sha256(source.encode("utf-8")).hexdigest()


def fake_filename(title: str, source: str) -> str:
    """`<amber:Net.construct:abcd1234>`: stable for the same title and source text."""
    return f"<amber:{_UNSAFE.sub('_', title) or 'fn'}:{source_hash(source)[:8]}>"


def register_source(filename: str, source: str) -> None:
    """Make `linecache` (hence tracebacks, pdb, `inspect`) serve `source` for `filename`."""
    # NOTE: mtime None marks an entry checkcache() must never drop (there is no file to stat).
    linecache.cache[filename] = (len(source), None, source.splitlines(keepends=True), filename)


def load_function(source: str, function_name: str, filename: str,
                  externals: Mapping[str, Any] | None = None) -> Callable[..., Any]:
    """Execute the module `source` under `filename` (a fake `<amber:...>` name, or the real
    path of a disk cache entry) and return its `function_name`. The text is registered with
    linecache either way, so tracebacks show exactly what ran even if the file changes.

    `externals` (codegen's `GeneratedCode.externals`: user exception classes the text can only
    define stand-ins for) replace those stand-ins before anything is called."""
    register_source(filename, source)
    retain(get_context().retain_memory)  # NOTE: before compiled code runs (no-op once set)
    native = NATIVE_IMPORT in source
    code = compile(_without_file_cache(source) if native and not os.path.isfile(filename)
                   else source, filename, "exec")
    namespace: dict[str, Any] = {
        "__name__": f"amber_generated.{_UNSAFE.sub('_', function_name)}",
        "__file__": filename,
        "__loader__": SourceLoader(source),
        "__builtins__": __builtins__,
    }
    if native:
        namespace = _importable(source, namespace)
    exec(code, namespace)  # noqa: S102 (our own generated code)
    namespace.update(externals or {})
    fn = namespace.get(function_name)
    assert callable(fn), f"generated module {filename} defines no function {function_name!r}"
    return fn


NATIVE_IMPORT = "\nimport numba\n"
"""How a generated module that defines Numba kernels starts using Numba."""


def _importable(source: str, namespace: dict[str, Any]) -> dict[str, Any]:
    """The namespace of a module registered in `sys.modules` under a name derived from its
    text: Numba finds a cached kernel's module by name (`<dynamic>` cannot be cached)."""
    name = f"amber_generated_{source_hash(source)[:16]}"
    module = sys.modules.get(name)
    if module is None:
        module = types.ModuleType(name)
        sys.modules[name] = module
    module.__dict__.update({**namespace, "__name__": name})
    return module.__dict__


def _without_file_cache(source: str) -> str:
    """The module with its Numba decorators' `cache=True` turned off: Numba caches next to a
    module's file, and a module loaded from memory has none. A text edit of the decorators
    codegen writes (a long one wraps onto a second line), not a parse: this runs on the kernel
    thread too (see common/parsing.py). Lines, tracebacks and the line map still match."""
    return _NJIT_CACHE.sub(r"\1cache=False", source)


_NJIT_CACHE = re.compile(r"(@numba\.njit\([^@]*?)cache=True")
"""A Numba decorator up to its `cache=True` (every one codegen writes has it)."""

"""Loading an artifact's generated code as a ready-to-call entry (with its Numba kernels, at once
or in the background), and the disk-cache helpers the jit objects share (moved out of
specializations.py unchanged)."""
from __future__ import annotations

import contextlib
import inspect
from typing import Any, Callable

from .compiled import CompiledFunction
from .diskcache import DiskCache
from .loader import fake_filename, load_function
from .native import compile_with_fallback, load_native
from .pipeline import Artifact
from .tiers import NativeTiers, kernels_chosen, native_generator


def _eager_marker(*args: Any) -> Any:
    raise AssertionError("the eager-fallback marker entry is never called")



Store = Callable[[CompiledFunction, Artifact], "str | None"]
"""Writes an entry to the disk cache before it is loaded (so Numba caches its kernels beside
it); returns the module's path, or None."""


def entry_from_artifact(artifact: Artifact, title: str, nargs: int, store: Store | None = None,
                        native: Callable[[str], Any] | None = None,
                        tiers: tuple[NativeTiers, Store | None] | None = None
                        ) -> CompiledFunction:
    """Load the artifact's generated code and wrap it as a ready-to-call entry; `store` (the
    disk cache) gets it first, and `native(path)` (the disk cache's) is the context its Numba
    kernels are compiled and cached in. A Numba kernel that fails to compile has its loop
    generated as NumPy code instead (`native.compile_with_fallback`, one warning). With `tiers`
    (the jit's background compiles, and the store of the NumPy tier) the artifact's code is
    NumPy; when `auto` compiles loops of it, that code is loaded at once (and stored as the
    NumPy tier) and the code with kernels is written, compiled and promoted in the
    background."""
    params = artifact.param_paths
    sig = tuple((tuple(v.type.shape), v.type.dtype) if hasattr(v.type, "shape") else (None, None)
                for v in artifact.graph.inputs[:len(params)])

    def load(code: Any, store: Store | None = store) -> CompiledFunction:
        externals = dict(getattr(code, "externals", {}))
        entry = CompiledFunction(
            fn=_eager_marker, source=code.source, filename=fake_filename(title, code.source),
            function_name=code.function_name, line_map=dict(code.line_map), param_paths=params,
            param_sig=sig, input_paths=artifact.input_paths, guards=tuple(artifact.guards),
            graph=artifact.graph, ir=artifact.ir, origin="compiled",
            seconds=sum(artifact.seconds.values()), externals=externals, trace=artifact.trace)
        path = store(entry, artifact) if store is not None else None
        entry.cache_path = path
        if path is not None and code.kernels:  # NOTE: Numba caches kernels beside their file
            entry.filename = path
        kept = native(path) if native is not None and path is not None and code.kernels \
            else contextlib.nullcontext()
        with kept:
            entry.fn = load_native(lambda: load_function(code.source, code.function_name,
                                                         entry.filename, externals),
                                   code, entry.filename)
        return entry

    with_kernels = None if tiers is None else native_generator(artifact)
    if with_kernels is not None:  # NOTE: the artifact's code is NumPy; the kernels come later
        background, numpy_store = tiers
        entry = load(artifact.code, numpy_store)
        entry.prepare(nargs)

        def make_native() -> CompiledFunction | None:
            if kernels_chosen(artifact):
                return compile_with_fallback(with_kernels, load, title)[1]
            if store is not None:  # NOTE: no loop goes native: the NumPy code is this
                store(entry, artifact)  # backend's code too, for a warm process to find
            return None
        background.start(entry, make_native, title)
        return entry
    code, entry = compile_with_fallback(artifact.regenerate, load, title)
    artifact.code = code
    entry.prepare(nargs)
    return entry


def _has_entries(disk: DiskCache, first: str) -> bool:
    """Whether the disk cache holds any entry under the key `first` (without reading one)."""
    try:
        return any((disk.root / first).glob("*.json"))
    except OSError:
        return False


def _source_file(func: Any) -> str:
    code = getattr(inspect.unwrap(getattr(func, "__func__", func)), "__code__", None)
    return "" if code is None else code.co_filename

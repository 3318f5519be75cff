"""Splitting a kernel's blocks over threads (`set_context(num_threads=...)`): a small pool of
worker threads per generated module, each running BLAS on itself alone, so that the NumPy
copies around the GEMMs (which release the interpreter lock) and the GEMMs run side by side.
Codegen copies these helpers into generated modules by source (stdlib imports stay inside them).
"""
from __future__ import annotations

from typing import Any, Callable

import numpy as np


def blas_thread_setter() -> Any:
    """OpenBLAS's per-thread thread count (`openblas_set_num_threads_local`, OpenBLAS 0.3.27
    on, as NumPy 2's wheels bundle) in the library NumPy loaded, or None where there is none
    (NumPy 1's OpenBLAS, MKL, Accelerate): then kernels run their blocks on the caller alone,
    because workers would share BLAS's own threads and wait on each other's GEMMs."""
    state = blas_thread_setter.__dict__
    if "setter" not in state:
        import ctypes
        import glob
        import os
        here = os.path.dirname(np.__file__)
        state["setter"] = None
        for path in (glob.glob(os.path.join(here, "..", "numpy.libs", "*openblas*")) +
                     glob.glob(os.path.join(here, ".dylibs", "*openblas*"))):
            try:
                state["setter"] = ctypes.CDLL(path).openblas_set_num_threads_local
                break
            except (OSError, AttributeError):
                continue
    return state["setter"]


def one_blas_thread() -> None:
    """A worker's start: its GEMMs run on the worker itself, not on BLAS's threads."""
    setter = blas_thread_setter()
    if setter is not None:
        setter(1)


def worker_pool(threads: int) -> Any:
    """This module's pool of `threads` workers, made on first use (and again after a fork,
    whose child has none of the parent's threads)."""
    import os
    state = worker_pool.__dict__
    key = (os.getpid(), threads)
    if state.get("key") != key:
        from concurrent.futures import ThreadPoolExecutor
        if state.get("pid") == key[0]:
            state["pool"].shutdown(wait=False)
        state["pool"] = ThreadPoolExecutor(threads, "amber-kernel", initializer=one_blas_thread)
        state["key"], state["pid"] = key, key[0]
    return state["pool"]


def thread_ranges(count: int, threads: int, work: float, align: int = 1) -> list[tuple[int, int]]:
    """`range(count)` cut into contiguous (start, stop) parts, bounds at multiples of `align`:
    one part per thread, but no more parts than `work` (multiply-adds of the whole range) pays
    for at about 2**21 a part (~50 us; handing a part to a worker costs ~20 us), and one part
    when BLAS cannot run on a worker alone (`blas_thread_setter`)."""
    units = -(-count // align)
    parts = max(1, min(threads, units, int(work) >> 21))
    if parts > 1 and blas_thread_setter() is None:
        parts = 1
    bounds = [min(count, units * k // parts * align) for k in range(parts + 1)]
    return [(a, b) for a, b in zip(bounds, bounds[1:]) if a < b]


def run_parts(task: Callable[[int, int], Any], parts: list[tuple[int, int]],
              threads: int) -> list[Any]:
    """`[task(start, stop) for start, stop in parts]`; two or more parts run on the worker
    threads while the caller waits (results in the parts' order)."""
    if len(parts) < 2:
        return [task(start, stop) for start, stop in parts]
    pool = worker_pool(threads)
    futures = [pool.submit(task, start, stop) for start, stop in parts]
    return [f.result() for f in futures]

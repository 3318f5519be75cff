"""Splitting a kernel's blocks over threads (`set_context(num_threads=...)`): the caller and a
pool of worker threads each take a part, with BLAS at one thread meanwhile, so that the NumPy
copies around the GEMMs (which release the interpreter lock) and the GEMMs run side by side
instead of one BLAS call at a time on BLAS's own threads. Codegen copies these helpers into
generated modules by source; their stdlib imports stay inside them.
"""
from __future__ import annotations

from typing import Any, Callable

import numpy as np


def kernel_threads() -> Any:
    """The process's one shared state of kernel threads: a module in `sys.modules`, so that
    every generated module (a dumped one too) shares one pool and one count of the regions
    running with BLAS held at one thread. Made again in a forked child, which has none of its
    parent's threads and may have inherited a held lock."""
    import os
    import sys
    shared = sys.modules.get("_amber_kernel_threads")
    if shared is None or shared.pid != os.getpid():
        import threading
        import types
        fresh = types.ModuleType("_amber_kernel_threads")
        fresh.pid, fresh.lock, fresh.pool, fresh.workers = os.getpid(), threading.Lock(), None, 0
        fresh.regions, fresh.saved, fresh.blas = 0, 1, blas_controls()
        fresh.local = threading.local()  # NOTE: `.fine`: this thread's kernels cut finer
        if shared is None:
            shared = sys.modules.setdefault("_amber_kernel_threads", fresh)
        else:
            shared = sys.modules["_amber_kernel_threads"] = fresh
    return shared


def blas_controls() -> Any:
    """(get, set) of the thread count of the OpenBLAS NumPy loaded (NumPy 2's scipy-openblas,
    NumPy 1's openblas64_), or None (MKL, Accelerate, not found): then kernels keep one part,
    because workers would wait on each other's GEMMs for BLAS's own threads. OpenBLAS's count
    is process-wide (its "local" setter too, in the pthreads builds NumPy ships)."""
    import ctypes
    for lib in openblas_libraries():
        for prefix, suffix in (("scipy_openblas", "64_"), ("openblas", "64_"), ("openblas", "")):
            try:
                get = getattr(lib, f"{prefix}_get_num_threads{suffix}")
                set_count = getattr(lib, f"{prefix}_set_num_threads{suffix}")
            except AttributeError:
                continue
            try:  # NOTE: the getter asks the OS for the cores each time (~4 us); the count
                count = ctypes.c_int.in_dll(lib, "blas_cpu_number")  # it returns is this
                if count.value == get():
                    return lambda: count.value, set_count
            except ValueError:
                pass
            return get, set_count
    return None


def openblas_libraries() -> list[Any]:
    """The OpenBLAS libraries NumPy's wheel ships (`numpy.libs/` on Linux and Windows,
    `.dylibs/` on macOS), loaded with ctypes: the one NumPy itself calls."""
    import ctypes
    import glob
    import os
    here, found = os.path.dirname(np.__file__), []
    for path in (glob.glob(os.path.join(here, "..", "numpy.libs", "*openblas*")) +
                 glob.glob(os.path.join(here, ".dylibs", "*openblas*"))):
        try:
            found.append(ctypes.CDLL(path))
        except OSError:
            continue
    return found


def hold_blas(shared: Any, change: int) -> None:
    """Enter (`change` 1) or leave (-1) a region where BLAS runs at one thread: the first to
    enter saves BLAS's count and sets 1, the last to leave puts the count back."""
    if shared.blas is None:
        return
    get, set_count = shared.blas
    with shared.lock:
        shared.regions += change
        if change > 0 and shared.regions == 1:
            shared.saved = get()
            if shared.saved != 1:
                set_count(1)
        elif change < 0 and shared.regions == 0 and shared.saved != 1:
            set_count(shared.saved)


def worker_pool(shared: Any, workers: int) -> Any:
    """The shared pool, grown to at least `workers` threads."""
    with shared.lock:
        if shared.workers < workers:
            from concurrent.futures import ThreadPoolExecutor
            if shared.pool is not None:
                shared.pool.shutdown(wait=False)
            shared.pool = ThreadPoolExecutor(workers, "amber-kernel")
            shared.workers = workers
        return shared.pool


def thread_ranges(count: int, threads: int, work: float, align: int = 1) -> list[tuple[int, int]]:
    """`range(count)` cut into contiguous (start, stop) parts, bounds at multiples of `align`:
    one part per thread, but no more parts than `work` (multiply-adds of the whole range) pays
    for at 2**22 a part, and one part where amber cannot hold BLAS at one thread
    (`blas_controls`). Measured (real-time priority, ResNet-like 3x3 layers at 2 threads;
    docs/performance-history.md): 4.7M multiply-adds ran 0.70-1.13x one thread's speed split in two,
    9.4M 0.93-1.36x, 18.9M 0.92-1.54x, 37.7M 1.28-1.68x, 75.5M 1.42-1.79x. Where the calling
    thread has set `kernel_threads().local.fine` (a gradient pair's longer gradient,
    ops/conv_pairs.py), up to 4 parts a thread instead, for `run_parts`' threads to share."""
    if threads == 1:  # NOTE: the common case, kept cheap: calls at batch 1 take ~0.1 ms
        return [(0, count)] if count > 0 else []
    units = -(-count // align)
    parts = max(1, min(threads, units, int(work) >> 22))
    if parts > 1:
        shared = kernel_threads()
        if shared.blas is None:
            parts = 1
        elif getattr(getattr(shared, "local", None), "fine", False):
            parts = min(4 * threads, units, int(work) >> 22)
    bounds = part_bounds(count, parts, align)
    return [(a, b) for a, b in zip(bounds, bounds[1:]) if a < b]


def part_bounds(count: int, parts: int, align: int) -> list[int]:
    """The bounds of `range(count)` cut into `parts` near-even ranges at multiples of
    `align` (`thread_ranges`' parts for the pool, `team_bounds`' for Numba's team)."""
    units = -(-count // align)
    return [min(count, units * k // parts * align) for k in range(parts + 1)]


def even_step(count: int, step: int) -> int:
    """Images a block: at most `step`, chosen so that `thread_ranges`, cutting at block bounds,
    parts `count` images into two halves within about 3% of equal. It does not read the
    thread count, so one thread runs the same blocks (the same GEMMs, the same bits). At 32
    images, blocks of 9 split 18 + 14 and of 7 split 14 + 18 (the longer part 1.125x half:
    the stem's forward, the stride-2 layers); 8 and 5 split 16 + 16 and 15 + 17. The largest
    size down to half of `step` that does is taken, else the most even."""
    if count <= step:  # NOTE: one block: nothing to even (and no split)
        return step
    best, longest, fair = step, count, -(-count // 2) + count // 32
    for size in range(step, max(1, (step + 1) // 2, step - 15) - 1, -1):
        cut = -(-count // size) // 2 * size
        if max(cut, count - cut) <= fair:
            return size
        if max(cut, count - cut) < longest:
            best, longest = size, max(cut, count - cut)
    return best


def splits(work: int, threads: int, native: bool = False) -> bool:
    """Whether `thread_ranges` (a `native` kernel's `team_bounds`) may cut a kernel of `work`
    multiply-adds into more than one part at `threads` (the rule
    `graph/passes/place_threads.py` reads at compile time, so a kernel that would not split is
    spelled as one thread's). Tests keep them in step."""
    return threads > 1 and int(work) >> (20 if native else 22) >= 2


def team_bounds(parts: Any, ranges: list[tuple[int, int]], count: int, threads: int,
                work: float, align: int = 1, shared: int = 0) -> Any:
    """Where the pool keeps one part (`ranges`, from `thread_ranges`) but `work` pays for two
    at 2**20 multiply-adds a part: the int64 bounds of `range(count)`'s parts, cut at
    multiples of `align` as `thread_ranges` cuts, for a native part's split over Numba's
    OpenMP team (`parts.team` threads, ops/conv_native.py); else None. The team takes a part
    in about 4 us where a pool worker's wake-up took 29-50 (docs/performance.md#threads), so
    the ResNet's 2.4M-multiply-add convolutions at batch 1 split. Not where the `shared` bytes
    every part reads from the caller's cache (the weight matrix) exceed 1/32 of `work`: the
    64-channel layer's 147 KB took the gain (`benchmarks/two_threads.py --team`); not inside a
    gradient pair, whose other gradient has the second core."""
    team = min(threads, getattr(parts, "team", 0))
    if team < 2 or len(ranges) != 1 or work < 32 * shared or \
            getattr(kernel_threads().local, "fine", False):
        return None
    cut = min(team, -(-count // align), int(work) >> 20)
    if cut < 2:
        return None
    return np.array(part_bounds(count, cut, align), np.int64)


def run_team(fn: Callable[..., Any], *args: Any) -> Any:
    """`fn(*args)` with BLAS held at one thread: a native part's split over Numba's team
    (its parts call BLAS side by side, as `run_parts`' do), or a `one_blas_thread` function."""
    shared = kernel_threads()
    hold_blas(shared, 1)
    try:
        return fn(*args)
    finally:
        hold_blas(shared, -1)


def band_rows(rows: int, row_bytes: int, work: float) -> int:
    """Output rows a band of one image, by shape alone (so one thread's bands are two
    threads'): 128 KiB of window rows, at most half the rows where `work` pays for a team
    split (`team_bounds`), evened for two parts (`even_step`)."""
    band = max(1, (1 << 17) // row_bytes)
    if int(work) >> 20 >= 2:
        band = min(band, -(-rows // 2))
    return even_step(rows, band)


def run_parts(task: Callable[[int, int], Any], parts: list[tuple[int, int]],
              threads: int) -> list[Any]:
    """`[task(start, stop) for start, stop in parts]` (results in the parts' order). With
    `threads` > 1, BLAS runs at one thread meanwhile, and the caller and up to `threads` - 1
    pool workers take the parts in order, each the next one not taken, until none is left.
    A worker still busy elsewhere when the caller has taken the last part is not waited for
    (its task is cancelled before it starts: it would find nothing left)."""
    if threads == 1 or not parts:
        return [task(start, stop) for start, stop in parts]
    shared = kernel_threads()
    hold_blas(shared, 1)
    try:
        if len(parts) == 1:
            return [task(*parts[0])]
        found = [None] * len(parts)
        order = iter(range(len(parts)))  # NOTE: a range iterator's next is atomic: each part
        # goes to one thread

        def take() -> None:
            for k in order:
                found[k] = task(*parts[k])
        pool = worker_pool(shared, threads - 1)
        helpers = [pool.submit(take) for _ in range(min(threads, len(parts)) - 1)]
        try:
            take()
        finally:
            for helper in helpers:
                if not helper.cancel():
                    helper.exception()  # NOTE: waits; the caller's error, if any, wins
        for helper in helpers:
            if not helper.cancelled():
                helper.result()
        return found
    finally:
        hold_blas(shared, -1)


def one_blas_thread(fn: Callable[..., Any]) -> Callable[..., Any]:
    """`fn` with BLAS held at one thread for the whole call: codegen decorates a function
    whose kernels split work over threads with it. Between two threaded kernels, a GEMM on
    BLAS's own threads (a stem convolution, a dense layer) would leave OpenBLAS's worker
    spinning for its timeout (~0.1 s here), taking the core amber's pool worker needs: a
    threaded convolution after one ran at 12 ms instead of 7."""
    def call(*args):
        return run_team(fn, *args)
    call.__name__, call.__qualname__, call.__wrapped__ = fn.__name__, fn.__qualname__, fn
    return call


HELPERS = (openblas_libraries, blas_controls, kernel_threads, hold_blas, worker_pool,
           thread_ranges, part_bounds, run_parts, even_step, team_bounds, run_team, band_rows)
"""The helpers a kernel that calls `run_parts`, `thread_ranges` and `even_step` lists in its
OpDef."""

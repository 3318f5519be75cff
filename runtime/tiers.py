"""Tiered native compilation. Under `backend="auto"`, a specialization whose loops become Numba
kernels first runs as NumPy code (the same graph, every loop written in NumPy) while a background
thread compiles the kernels, or loads them from Numba's cache beside the disk entry; when they
are ready the entry switches to them (`CompiledFunction.promote`), so the next call runs native.
Numba is imported by that thread, never by a call that only runs NumPy code.

`backend="numba"` compiles the kernels before the first call, as it always did. Under tiering
the first call pays for the NumPy code only: the module with kernels is written by the
background thread too. The NumPy tier is kept in the disk cache under the NumPy backend's key,
so a warm process starts on it too.

The compiles wait in one queue per process, served by one daemon worker thread
(`CompileQueue`), so at most one runs at a time: Numba compiles under one global lock, and a
compile-first (`backend="numba"`) compile in a caller's thread, which holds `FOREGROUND` meanwhile,
waits for the one in progress only; the worker starts no other until it is done. A queued
compile whose entry is gone (its jit object dropped it) or already switched, or whose jit
object cleared its cache, is dropped unstarted; a process exits without waiting for the queue.
"""
from __future__ import annotations

import atexit
import collections
import contextlib
import functools
import os
import threading
import time
import weakref
from typing import Any, Callable, Iterator

from ..common.parsing import PARSE_LOCK
from ..ops.background import yielding_often
from . import log
from .compiled import CompiledFunction
from .native import numba_installed
from .warn import warn_user


def tiered(backend: str) -> bool:
    """Whether code compiled for `backend` (the option, before resolving) starts on NumPy."""
    return backend == "auto" and numba_installed()


class ForegroundGate:
    """Counts the compile-first compiles running in callers' threads; the background worker
    starts no compile while any does (so such a compile waits on Numba's compiler lock for at
    most the background compile already in progress, not for the queue)."""

    def __init__(self) -> None:
        self._cond = threading.Condition()
        self._active = 0

    @contextlib.contextmanager
    def held(self) -> Iterator[None]:
        """Around one compile in the caller's thread."""
        with self._cond:
            self._active += 1
        try:
            yield
        finally:
            with self._cond:
                self._active = max(0, self._active - 1)  # NOTE: 0 already in a forked child
                self._cond.notify_all()

    @property
    def active(self) -> int:
        return self._active

    def wait_clear(self) -> None:
        """Block while a compile-first compile runs."""
        with self._cond:
            self._cond.wait_for(lambda: not self._active)

    def reset_after_fork(self) -> None:
        self._cond, self._active = threading.Condition(), 0


FOREGROUND = ForegroundGate()


class _Job:
    """One background compile: make `make_native()` and promote the entry to it."""

    def __init__(self, entry: CompiledFunction, make_native: Callable[[], CompiledFunction | None],
                 title: str) -> None:
        self.entry = weakref.ref(entry)  # NOTE: a queued job must not keep a dropped entry alive
        self.make_native: Callable[[], CompiledFunction | None] | None = make_native
        self.title = title
        self.cancelled = False
        self.finished = threading.Event()

    def wanted(self) -> CompiledFunction | None:
        """The entry to promote, or None when the result is no longer wanted."""
        entry = self.entry()
        if self.cancelled or entry is None or entry.replaced is not None:
            return None
        return entry

    def finish(self) -> None:
        self.make_native = None  # NOTE: frees the artifact (graph, code) the closure holds
        self.finished.set()


class CompileQueue:
    """The background compiles of a process, run one at a time, in order, by a daemon worker
    thread started on demand (it ends when the queue is empty). `listener(event, title)`, a
    test hook, hears "start", "done" and "dropped"."""

    def __init__(self, gate: ForegroundGate = FOREGROUND) -> None:
        self.gate = gate
        self.listener: Callable[[str, str], None] | None = None
        self._cond = threading.Condition()
        self._jobs: collections.deque[_Job] = collections.deque()
        self._running: _Job | None = None
        self._worker: threading.Thread | None = None
        self._closed = False

    def submit(self, jobs: list[_Job]) -> None:
        """Queue `jobs` behind the others (dropping queued jobs that are no longer wanted)."""
        dropped = []
        with self._cond:
            if self._closed:
                dropped = jobs
            else:
                dropped = [job for job in self._jobs if job.wanted() is None]
                if dropped:
                    self._jobs = collections.deque(j for j in self._jobs if j not in dropped)
                self._jobs.extend(jobs)
                if self._worker is None and self._jobs:
                    self._worker = threading.Thread(target=self._work, name="amber-native:",
                                                    daemon=True)
                    self._worker.start()
        self._drop(dropped)

    def prioritize(self, jobs: list[_Job]) -> None:
        """Move those of `jobs` still queued to the front (someone waits for them)."""
        with self._cond:
            ahead = [job for job in self._jobs if job in jobs]
            for job in ahead:
                self._jobs.remove(job)
            self._jobs.extendleft(reversed(ahead))

    def discard(self, jobs: list[_Job]) -> None:
        """Drop those of `jobs` still queued."""
        with self._cond:
            gone = [job for job in self._jobs if job in jobs]
            for job in gone:
                self._jobs.remove(job)
        self._drop(gone)

    def close(self) -> None:
        """Drop the queue and accept no more (at exit: the process does not wait for it; the
        compile in progress is stopped by the interpreter's exit, and every disk-cache file,
        amber's and Numba's, is written to a temporary name and renamed whole)."""
        with self._cond:
            self._closed = True
            dropped, self._jobs = list(self._jobs), collections.deque()
        self._drop(dropped)

    def wait_idle(self, timeout: float | None = None) -> bool:
        """Block until nothing is queued or running (at most `timeout` seconds)."""
        with self._cond:
            return self._cond.wait_for(lambda: not self._jobs and self._running is None,
                                       timeout)

    @property
    def running(self) -> str | None:
        """The title of the compile in progress."""
        job = self._running
        return None if job is None else job.title

    @property
    def queued(self) -> list[str]:
        """The titles of the compiles waiting, next first."""
        with self._cond:
            return [job.title for job in self._jobs]

    def reset_after_fork(self) -> None:
        """In a forked child: the parent's worker is not there, and its compiles are not
        repeated (the child keeps the NumPy code; see docs/performance.md)."""
        jobs = list(self._jobs) + ([self._running] if self._running is not None else [])
        self._cond, self._jobs = threading.Condition(), collections.deque()
        self._running = self._worker = None
        for job in jobs:
            job.finish()

    def _drop(self, jobs: list[_Job]) -> None:
        for job in jobs:
            log.debug("amber: %s: background compile dropped (no longer wanted)", job.title)
            job.finish()
            self._tell("dropped", job.title)

    def _tell(self, event: str, title: str) -> None:
        listener = self.listener
        if listener is not None:
            try:
                listener(event, title)
            except Exception as err:  # NOTE: a hook must not stop the worker
                log.debug("amber: the compile queue's listener failed: %r", err)

    def _work(self) -> None:
        try:
            while self._run_next():
                pass
        finally:  # NOTE: also when something escaped, so that the next submit starts a worker
            with self._cond:
                if self._worker is threading.current_thread():
                    self._worker = None
                self._cond.notify_all()

    def _run_next(self) -> bool:
        """Run (or drop) the next job; False when the queue is empty."""
        self.gate.wait_clear()  # NOTE: a compile-first compile goes before the next one
        with self._cond:
            if not self._jobs:
                self._worker = None  # NOTE: in this lock, so a submit from now on starts one
                return False
            job = self._jobs.popleft()
            entry, make_native = job.wanted(), job.make_native
            if entry is not None and make_native is not None:
                self._running = job
        if entry is None or make_native is None:
            self._drop([job])
            return True
        threading.current_thread().name = f"amber-native:{job.title}"
        try:
            self._tell("start", job.title)
            with yielding_often():  # NOTE: calls running meanwhile get the lock back sooner
                _promote_when_ready(entry, make_native, job.title, job.wanted)
        finally:
            del entry, make_native
            with self._cond:
                self._running = None
                self._cond.notify_all()
            job.finish()
            self._tell("done", job.title)
        return True


QUEUE = CompileQueue()
atexit.register(QUEUE.close)
if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=lambda: (FOREGROUND.reset_after_fork(),
                                                QUEUE.reset_after_fork()))


def wait_all(timeout: float | None = None) -> bool:
    """Block until every queued background compile of the process has finished (at most
    `timeout` seconds); True if none is queued or running. Held compiles
    (`NativeTiers.release`) are not started by this."""
    return QUEUE.wait_idle(timeout)


class NativeTiers:
    """The background compiles one jit object started, so they can be waited for."""

    def __init__(self, queue: CompileQueue | None = None) -> None:
        self._queue = QUEUE if queue is None else queue
        self._jobs: list[_Job] = []
        self._held: list[_Job] = []
        self._lock = threading.Lock()

    def start(self, entry: CompiledFunction, make_native: Callable[[], CompiledFunction | None],
              title: str) -> None:
        """Queue `make_native()`, from `release()` on, to promote `entry` to what it returns
        (None: keep the NumPy tier). A failure is one warning; the NumPy code keeps running."""
        job = _Job(entry, make_native, title)
        with self._lock:
            self._jobs = [j for j in self._jobs if not j.finished.is_set()] + [job]
            self._held.append(job)

    @property
    def holding(self) -> bool:
        """Whether compiles wait for `release()`."""
        return bool(self._held)

    def release(self) -> None:
        """Queue the held compiles. The jit call that made an entry releases them once it
        returns, so that call does not share the interpreter with Numba's import and compile
        (which hold the GIL most of the time)."""
        with self._lock:
            held, self._held = self._held, []
        if held:
            self._queue.submit(held)

    def wait(self, timeout: float | None = None) -> bool:
        """Block until every background compile started so far has finished (at most `timeout`
        seconds in all; they go to the front of the queue); True if none is still running."""
        self.release()
        deadline = None if timeout is None else time.monotonic() + timeout
        with self._lock:
            jobs = [j for j in self._jobs if not j.finished.is_set()]
        self._queue.prioritize(jobs)
        for job in jobs:
            job.finished.wait(None if deadline is None else max(0.0, deadline - time.monotonic()))
        return all(job.finished.is_set() for job in jobs)

    def cancel(self) -> None:
        """Drop the compiles not started yet (their results are no longer wanted)."""
        with self._lock:
            jobs, held, self._held = self._jobs, self._held, []
        for job in jobs:
            job.cancelled = True
        for job in held:
            job.finish()
        self._queue.discard(jobs)

    @property
    def pending(self) -> int:
        """How many background compiles are queued, held or running."""
        with self._lock:
            return sum(not job.finished.is_set() for job in self._jobs)


def _promote_when_ready(entry: CompiledFunction,
                        make_native: Callable[[], CompiledFunction | None], title: str,
                        wanted: Callable[[], Any] = lambda: True) -> None:
    start = time.perf_counter()
    try:
        native = make_native()
    except Exception as err:  # NOTE: a background failure must not kill the NumPy tier
        reason = str(err).strip().splitlines()[0] if str(err).strip() else ""
        warn_user(f"amber: {title}: its loops keep running as NumPy code: the Numba kernels "
                  f"could not be made ({type(err).__name__}: {reason})")
        return
    if native is None:
        log.debug("amber: %s keeps its NumPy tier (no native entry)", title)
        return
    if not wanted():
        log.debug("amber: %s: kernels ready but no longer wanted", title)
        return
    entry.promote(native)
    log.info("amber: %s switched to its Numba kernels after %.1f ms in the background", title,
             (time.perf_counter() - start) * 1e3)


def native_generator(artifact: Any) -> Callable[[frozenset[int]], Any] | None:
    """How to write the artifact's code (generated for the NumPy backend) with the loops
    `auto` compiles as kernels, the regions in its argument left NumPy; None when the graph
    has no loop (the NumPy code is then the code). Whether `auto` takes any of its loops is
    decided by the background compile (`kernels_chosen`): choosing builds each candidate
    kernel's source, which made the first call 8-20% slower than the NumPy backend's."""
    from ..graph import FOR, WHILE
    if artifact.generate_as is None or not any(node.op in (WHILE, FOR)
                                               for node in artifact.graph.walk()):
        return None
    return functools.partial(artifact.generate_as, "auto")


def kernels_chosen(artifact: Any) -> bool:
    """Whether `auto` compiles any loop of the artifact's graph as a Numba kernel."""
    from ..codegen.native import select_regions
    with PARSE_LOCK:  # NOTE: building a kernel parses templates (common/parsing.py)
        return bool(select_regions(artifact.graph, "auto"))

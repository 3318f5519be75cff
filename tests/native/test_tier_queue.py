"""The background compile queue (runtime/tiers.py): one compile at a time; a compile-first
compile waits for the one in progress only; stale compiles are dropped unstarted; a failure
warns and the queue goes on; exit does not wait. Fake compiles (no Numba) on private queues,
except the last test, which runs real ones."""
from __future__ import annotations

import gc
import threading
import warnings

import numpy as np

import amber
from amber.runtime import entries
from amber.runtime.compiled import CompiledFunction
from amber.runtime.tiers import FOREGROUND, QUEUE, CompileQueue, ForegroundGate, NativeTiers


def _entry(label: str) -> CompiledFunction:
    return CompiledFunction(fn=lambda: label, source="", filename="<t>", function_name="f",
                            line_map={})


class Heard:
    """A queue's listener: the events in the order they happened."""

    def __init__(self, queue: CompileQueue) -> None:
        self.events: list[tuple[str, str]] = []
        queue.listener = lambda event, title: self.events.append((event, title))

    def of(self, event: str) -> list[str]:
        return [title for e, title in self.events if e == event]


def _native(label: str, gate: threading.Event | None = None):
    def make() -> CompiledFunction:
        if gate is not None:
            assert gate.wait(30)
        return _entry(label)
    return make


def _started(heard: Heard, title: str) -> None:
    for _ in range(3000):
        if title in heard.of("start"):
            return
        threading.Event().wait(0.01)
    raise AssertionError(f"{title} never started")


def test_a_compile_first_compile_waits_for_the_compile_in_progress_not_the_queue() -> None:
    queue = CompileQueue(ForegroundGate())
    heard, tiers, go = Heard(queue), NativeTiers(queue), threading.Event()
    entries = [_entry("numpy") for _ in range(4)]
    tiers.start(entries[0], _native("a", go), "a")
    for entry, title in zip(entries[1:], "bcd"):
        tiers.start(entry, _native(title), title)
    tiers.release()
    _started(heard, "a")
    assert queue.running == "a" and queue.queued == ["b", "c", "d"]  # NOTE: one at a time
    with queue.gate.held():  # a backend="numba" compile in the caller's thread
        go.set()
        assert tiers._jobs[0].finished.wait(30)
        assert queue.queued == ["b", "c", "d"] and queue.running is None
        heard.events.append(("foreground", "done"))
    assert tiers.wait(30) and tiers.pending == 0
    assert heard.events == [("start", "a"), ("done", "a"), ("foreground", "done"),
                            ("start", "b"), ("done", "b"), ("start", "c"), ("done", "c"),
                            ("start", "d"), ("done", "d")]
    assert [e.fn() for e in entries] == ["a", "b", "c", "d"]


def test_stale_compiles_are_dropped_unstarted_and_waiting_puts_ones_own_first() -> None:
    queue = CompileQueue(ForegroundGate())
    heard, go = Heard(queue), threading.Event()
    first, mine, theirs, other = (NativeTiers(queue) for _ in range(4))
    kept = [_entry("numpy") for _ in range(5)]
    first.start(kept[0], _native("running", go), "running")
    first.release()
    _started(heard, "running")
    theirs.start(_entry("numpy"), _native("dropped entry"), "dropped entry")  # NOTE: the only ref
    theirs.start(kept[1], _native("cleared"), "cleared")
    theirs.start(kept[2], _native("theirs"), "theirs")
    theirs.release()
    gc.collect()
    theirs.cancel()  # what jit's cache_clear does
    kept[3].promote(_entry("already native"))
    other.start(kept[3], _native("switched"), "switched")
    other.start(kept[4], _native("other"), "other")
    other.release()
    mine_entry = _entry("numpy")
    mine.start(mine_entry, _native("mine"), "mine")
    assert not mine.wait(0)  # NOTE: queues it ahead of "other"; the worker is still busy
    go.set()
    assert mine.wait(30) and queue.wait_idle(30)
    assert heard.of("start") == ["running", "mine", "other"]
    assert sorted(heard.of("dropped")) == ["cleared", "dropped entry", "switched", "theirs"]
    assert [e.fn() for e in kept] == ["running", "numpy", "numpy", "already native", "other"]
    assert mine_entry.fn() == "mine" and theirs.pending == 0 and mine.pending == 0

def test_a_failed_compile_warns_keeps_numpy_and_the_queue_goes_on() -> None:
    queue = CompileQueue(ForegroundGate())
    tiers, broken, fine = NativeTiers(queue), _entry("numpy"), _entry("numpy")

    def fails() -> CompiledFunction:
        raise RuntimeError("LLVM said no")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        tiers.start(broken, fails, "broken")
        tiers.start(fine, _native("native"), "fine")
        assert tiers.wait(30)
    assert broken.fn() == "numpy" and fine.fn() == "native"
    assert [str(w.message) for w in caught if "LLVM said no" in str(w.message)] == [
        "amber: broken: its loops keep running as NumPy code: the Numba kernels could not be "
        "made (RuntimeError: LLVM said no)"]


def test_at_exit_the_queue_is_dropped_and_the_worker_does_not_hold_the_process() -> None:
    queue = CompileQueue(ForegroundGate())
    heard, tiers, go = Heard(queue), NativeTiers(queue), threading.Event()
    entries = [_entry("numpy") for _ in range(3)]
    for entry, title in zip(entries, "abc"):
        tiers.start(entry, _native(title, go if title == "a" else None), title)
    tiers.release()
    _started(heard, "a")
    assert queue._worker is not None and queue._worker.daemon  # NOTE: exit does not join it
    queue.close()  # what atexit does with the process's queue
    assert heard.of("dropped") == ["b", "c"] and queue.queued == []
    tiers.start(_entry("numpy"), _native("late"), "late")
    tiers.release()
    assert heard.of("dropped") == ["b", "c", "late"]
    go.set()
    assert queue.wait_idle(30) and heard.of("start") == ["a"] and entries[0].fn() == "a"


def count_to(x):
    while np.sum(np.abs(x)) > 1e-3:
        x = np.tanh(x * 0.5)
    return x


def scale_often(x):
    for _ in range(100):
        x = x * 0.5 + 1.0
    return x


def test_auto_functions_then_a_numba_compile_waits_for_one_background_compile(
        numba, monkeypatch) -> None:
    x = np.linspace(-1.0, 1.0, 16, dtype=np.float32)
    heard, go, running = Heard(QUEUE), threading.Event(), NativeTiers()
    compile_with_fallback = entries.compile_with_fallback

    queued: list = []

    def compile_first(*args):  # NOTE: the numba compile lets the one in progress end first
        assert FOREGROUND.active and QUEUE.running == "in progress"
        go.set()
        assert running.wait(60)
        made = compile_with_fallback(*args)
        heard.events.append(("numba", "done"))
        for fn in queued:  # NOTE: while the gate is held: the worker has started none of them
            fn.cache_clear()
        return made
    monkeypatch.setattr(entries, "compile_with_fallback", compile_first)
    try:
        stand_in = _entry("numpy")  # NOTE: for a background compile in progress
        running.start(stand_in, _native("in progress", go), "in progress")
        running.release()
        _started(heard, "in progress")
        queued += [amber.jit(count_to, backend="auto") for _ in range(3)]
        for fn in queued:
            fn(x)  # NOTE: a new jit object each: a new specialization, its own compile queued
        assert QUEUE.queued == ["count_to"] * 3
        compiled_first = amber.jit(scale_often, backend="numba")
        np.testing.assert_allclose(compiled_first(x), scale_often(x), rtol=1e-6)
        assert "@numba.njit(" in compiled_first.code
        assert QUEUE.wait_idle(120)
        assert stand_in.fn() == "in progress"
        assert heard.events == [("start", "in progress"), ("done", "in progress"),
                                ("numba", "done")] + [("dropped", "count_to")] * 3
    finally:
        go.set()
        QUEUE.listener = None

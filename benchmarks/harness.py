"""What every benchmark suite shares: a `Workload` (one computation in several versions on the
same inputs), the agreement check, interleaved CPU timing, peak memory, and the table.

Versions are named: "eager" (the original Python, the reference every other version is checked
against), "amber" (compiled), "numpy" (careful hand-written NumPy) and peers ("jax", "torch",
"mindspore", ...) where installed. The table shows each version's median CPU microseconds per
call and amber's time as a ratio of every other version's (below 1.00x: amber is faster).
"""
from __future__ import annotations

import gc
import os
import statistics
import time
import tracemalloc
from dataclasses import dataclass, field
from typing import Any, Callable

# NOTE: one BLAS thread unless the caller chose otherwise: on a busy machine, thread wake-ups
# make small GEMMs swing by 10x between runs. Set before NumPy is imported.
for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import numpy as np  # noqa: E402

CLOCK = time.process_time
"""The benchmark clock: this process's CPU time, so time other processes take from it on a
shared machine does not count (the work is single-threaded: one BLAS thread)."""


@dataclass
class Workload:
    """One benchmark: `versions` (label -> callable, "eager" first) computing the same thing on
    `inputs`, each timed over `calls` calls per round. `compare` maps a version's result to the
    arrays checked against eager's (default: the first array of a tuple, or the result)."""
    name: str
    versions: dict[str, Callable[..., Any]]
    inputs: tuple
    calls: int
    compare: Callable[[Any], list[np.ndarray]] | None = None
    rtol: float = 1e-4
    atol: float = 1e-5
    notes: list[str] = field(default_factory=list)


def _first(out: Any) -> list[np.ndarray]:
    return [np.asarray(out[0] if isinstance(out, tuple) else out)]


def check(w: Workload) -> str | None:
    """Why the versions disagree with eager (float32 tolerance), or None when they agree."""
    compare = w.compare or _first
    ref = compare(w.versions["eager"](*w.inputs))
    for label, fn in w.versions.items():
        if label == "eager":
            continue
        try:
            got = compare(fn(*w.inputs))
        except Exception as exc:  # report the workload as failed, keep benchmarking the rest
            return f"{label} raised {type(exc).__name__}: {str(exc).splitlines()[0]}"
        if len(got) != len(ref) or not all(
                np.allclose(g, r, rtol=w.rtol, atol=w.atol) for g, r in zip(got, ref)):
            return f"{label} disagrees with eager"
    return None


def time_interleaved(w: Workload, rounds: int) -> dict[str, float]:
    """Median CPU seconds per call of each version, sampled round-robin (so machine noise hits
    every version alike). Each round starts one version later, and each version's calls start
    from a fresh collection: no version always follows the same one into cold caches or pays
    for the garbage (and collections) another left (eager makes the most)."""
    samples: dict[str, list[float]] = {label: [] for label in w.versions}
    order = list(w.versions.items())
    for r in range(rounds):
        for label, fn in order[r % len(order):] + order[:r % len(order)]:
            gc.collect()
            start = CLOCK()
            for _ in range(w.calls):
                fn(*w.inputs)
            samples[label].append((CLOCK() - start) / w.calls)
    return {label: statistics.median(s) for label, s in samples.items()}


def peak_memory(fn: Callable[..., Any], inputs: tuple) -> int:
    """Peak bytes traced during one call (after a warm-up call)."""
    fn(*inputs)
    tracemalloc.start()
    tracemalloc.reset_peak()
    base = tracemalloc.get_traced_memory()[0]
    fn(*inputs)
    peak = tracemalloc.get_traced_memory()[1] - base
    tracemalloc.stop()
    return peak


def run_workloads(title: str, workloads: list[Workload], rounds: int) -> None:
    """Check, time and measure each workload, then print one table for the suite."""
    print(f"\n## {title}")
    for w in workloads:
        problem = check(w)
        if problem is not None:
            print(f"{w.name}: not timed, {problem}")
            continue
        times = time_interleaved(w, rounds)
        memory = {label: peak_memory(fn, w.inputs) for label, fn in w.versions.items()}
        print(_row(w, times, memory))
        for note in w.notes:
            print(f"    {note}")


def _row(w: Workload, times: dict[str, float], memory: dict[str, int]) -> str:
    cells = "  ".join(f"{label} {times[label] * 1e6:,.1f}" for label in w.versions)
    ratios = "  ".join(f"amber/{label} {times['amber'] / times[label]:.2f}x"
                       for label in w.versions if label != "amber" and "amber" in times)
    peaks = " / ".join(f"{memory[label] / 1024:,.1f}" for label in w.versions)
    return (f"{w.name}\n    us per call: {cells}\n    {ratios}\n"
            f"    peak KiB ({' / '.join(w.versions)}): {peaks}")

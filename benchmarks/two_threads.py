"""What two Python threads gain on this machine, by the length of the NumPy calls they make:
the same calls one thread makes one after the other, then split over two threads (each its own
arrays, BLAS at one thread), wall time. A call releases the interpreter lock while it runs and
takes it back after; when both threads do so every few microseconds, each hand-over of the lock
between the cores costs more than the call, so short calls gain nothing from a second thread.
amber's convolution kernels split their blocks over threads this way (ops/parallel.py).

    python benchmarks/two_threads.py
"""
from __future__ import annotations

import os
import threading
import time

for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import numpy as np  # noqa: E402


def speedup(call, work: list, reps: int) -> tuple[float, float]:
    """(wall us a call on one thread, two threads' speed-up) for `call(item)` on the two items
    of `work`, `reps` times each."""
    def run(item) -> None:
        for _ in range(reps):
            call(item)
    start = time.perf_counter()
    for item in work:
        run(item)
    one = time.perf_counter() - start
    threads = [threading.Thread(target=run, args=(item,)) for item in work]
    start = time.perf_counter()
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return one / (2 * reps) * 1e6, one / (time.perf_counter() - start)


def main(rounds: int = 3) -> None:
    rng = np.random.default_rng(0)
    cases = []
    for kib in (128, 1024, 4096):
        arrays = [np.ones(kib * 256, np.float32) for _ in range(2)]
        cases.append((f"multiply in place, {kib} KiB", lambda a: np.multiply(a, 1.0001, out=a),
                      arrays, max(20, 400_000 // kib)))
    for rows in (256, 1024, 4096):
        pairs = [(rng.standard_normal((rows, 144), dtype=np.float32),
                  rng.standard_normal((144, 16), dtype=np.float32),
                  np.empty((rows, 16), np.float32)) for _ in range(2)]
        cases.append((f"GEMM [{rows}, 144] @ [144, 16]", lambda p: np.matmul(p[0], p[1], out=p[2]),
                      pairs, max(20, 2_000_000 // rows)))
    print(f"## Two threads against one, wall time, {rounds} rounds (load "
          f"{os.getloadavg()[0]:.1f})")
    for name, call, work, reps in cases:
        found = [speedup(call, work, reps) for _ in range(rounds)]
        gains = sorted(gain for _, gain in found)
        print(f"  {name:<30} {min(us for us, _ in found):7.1f} us a call; two threads "
              f"{gains[0]:.2f}-{gains[-1]:.2f}x one")


if __name__ == "__main__":
    main()

"""What two Python threads gain on this machine, by the length of the NumPy calls they make:
the same calls one thread makes one after the other, then split over two threads (each its own
arrays, BLAS at one thread), wall time. A call releases the interpreter lock while it runs and
takes it back after; when both threads do so every few microseconds, each hand-over of the lock
between the cores costs more than the call, so short calls gain nothing from a second thread.
amber's convolution kernels split their blocks over threads this way (ops/parallel.py).

`--kernels` runs amber's one-thread forward convolution of each ResNet stage (16 images) alone,
then two at once: as two threads of one process and as two processes. Two processes take about
the time of one alone; two threads each take longer, the cost of sharing one interpreter (its
lock, and the interpreter's state moving between the cores at each hand-over).

`--team` times the batch-1 ResNet's window-rows convolutions (forward and weight gradient) at
one thread and at two, where Numba's OpenMP team takes the native parts' two ranges
(ops/parallel.team_bounds): the kernel as a generated module calls it, BLAS at one thread.

    python benchmarks/two_threads.py [--kernels | --team]
"""
from __future__ import annotations

import argparse
import multiprocessing
import os
import statistics
import threading
import time
from typing import Any

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


STAGES = ((32, 16), (16, 32), (8, 64))
"""The ResNet's stride-1 3x3 convolutions: image size, channels in and out."""


def convolve(size: int, channels: int, calls: int, seed: int,
             start: Any = None) -> float:
    """Median wall seconds of amber's one-thread NHWC convolution of 16 images (after
    `start.wait()`, a barrier the two runs at once share)."""
    from amber.ops.conv_nhwc import conv2d_nhwc_kernel
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((16, size, size, channels), dtype=np.float32)
    weight = rng.standard_normal((channels, channels, 3, 3), dtype=np.float32)
    bias = rng.standard_normal(channels, dtype=np.float32)
    conv2d_nhwc_kernel(x, weight, bias, pad_mode="same")
    if start is not None:
        start.wait()
    times = []
    for _ in range(calls):
        begin = time.perf_counter()
        conv2d_nhwc_kernel(x, weight, bias, pad_mode="same")
        times.append(time.perf_counter() - begin)
    return statistics.median(times)


def _in_process(found: Any, *args: Any) -> None:
    found.put(convolve(*args))


def kernels(rounds: int = 5, calls: int = 200) -> None:
    """Each stage's convolution alone, as two threads at once and as two processes at once."""
    fork = multiprocessing.get_context("fork")
    print(f"## amber's one-thread convolutions, two at once: time a call against one alone "
          f"(median of {calls} calls; median and range of {rounds} rounds; load "
          f"{os.getloadavg()[0]:.1f})")
    for size, channels in STAGES:
        ratios: dict[str, list[float]] = {"threads": [], "processes": []}
        for _ in range(rounds):
            before = convolve(size, channels, calls, 0)
            found: list[float] = []
            barrier = threading.Barrier(2)
            pair = [threading.Thread(target=lambda k=k: found.append(
                convolve(size, channels, calls, k, barrier))) for k in range(2)]
            for thread in pair:
                thread.start()
            for thread in pair:
                thread.join()
            alone = min(before, convolve(size, channels, calls, 0))  # NOTE: either side of
            # the pair: the machine's speed drifts
            ratios["threads"].append(max(found) / alone)
            queue, barrier = fork.Queue(), fork.Barrier(2)
            both = [fork.Process(target=_in_process,
                                 args=(queue, size, channels, calls, k, barrier)) for k in range(2)]
            for process in both:
                process.start()
            times = [queue.get() for _ in both]
            for process in both:
                process.join()
            ratios["processes"].append(max(times) / alone)
        print(f"  {size}x{size}, {channels} channels: " + ", ".join(
            f"two {way} {statistics.median(r):.2f}x ({min(r):.2f}-{max(r):.2f})"
            for way, r in ratios.items()))


TEAM_LAYERS = ((32, 16, 16, 1), (32, 16, 32, 2), (16, 32, 32, 1), (16, 32, 64, 2),
               (8, 64, 64, 1))
"""The batch-1 ResNet's 3x3 window-rows convolutions: input size, in and out channels, stride."""


def team(rounds: int = 7, calls: int = 200) -> None:
    """Each `TEAM_LAYERS` forward and weight gradient at one thread and at two (Numba's team):
    medians of `rounds` rounds of `calls` calls, interleaved; the same bits checked first."""
    import numba

    from amber.ops.conv_native import build_now
    from amber.ops.conv_nhwc import conv2d_nhwc_grad_weight_kernel, conv2d_nhwc_kernel
    from amber.ops.parallel import one_blas_thread
    parts = build_now()
    if parts is None or parts.team < 2:
        raise SystemExit("no team here: Numba, OpenBLAS and an OpenMP or TBB layer are needed")
    print(f"## batch-1 convolutions, one thread against Numba's team of {parts.team} "
          f"({numba.threading_layer()}): us a call, medians of {rounds} rounds of {calls} "
          f"calls (load {os.getloadavg()[0]:.1f})")
    rng = np.random.default_rng(0)
    for size, c, o, stride in TEAM_LAYERS:
        x = rng.standard_normal((1, size, size, c), dtype=np.float32)
        w = rng.standard_normal((o, c, 3, 3), dtype=np.float32)
        b = rng.standard_normal(o, dtype=np.float32)
        g = rng.standard_normal((1, size // stride, size // stride, o), dtype=np.float32)
        attrs = {"stride": (stride, stride), "pad_mode": "same", "native": True}
        cells = []
        for kind, kernel in (
                ("forward", lambda k: conv2d_nhwc_kernel(x, w, b, threads=k, **attrs)),
                ("weight gradient", lambda k: conv2d_nhwc_grad_weight_kernel(
                    x, g, w_shape=w.shape, threads=k, **attrs))):
            calls_of = {k: one_blas_thread(lambda k=k: [kernel(k) for _ in range(calls)])
                        for k in (1, 2)}
            assert np.array_equal(one_blas_thread(kernel)(1), kernel(2)), kind
            times: dict[int, list[float]] = {1: [], 2: []}
            for _ in range(rounds):
                for k, run in calls_of.items():
                    start = time.perf_counter()
                    run()
                    times[k].append((time.perf_counter() - start) / calls * 1e6)
            one, two = (statistics.median(times[k]) for k in (1, 2))
            cells.append(f"{kind} {one:.1f} -> {two:.1f} ({two / one:.2f}x)")
        print(f"  {size}x{size}, {c} -> {o}, stride {stride}: " + "; ".join(cells))


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description="What a second thread gains on this machine.")
    mode = parser.add_mutually_exclusive_group()
    mode.add_argument("--kernels", action="store_true",
                      help="amber's convolutions two at once: threads against processes")
    mode.add_argument("--team", action="store_true",
                      help="batch-1 convolutions at one thread against Numba's team")
    chosen = parser.parse_args()
    if chosen.kernels:
        kernels()
    elif chosen.team:
        team()
    else:
        main()

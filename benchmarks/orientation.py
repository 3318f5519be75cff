"""Which way round BLAS computes a product faster: `a @ W.T` (a dense layer's result [M, N],
C-ordered) against `W @ a.T` (the same multiply-adds writing its transpose [N, M]; amber's
`matmul(turned=True)`, graph/passes/orient_products.py), for `a` C-ordered (the caller's
input) and Fortran-ordered (a turned layer's output). CPU time per GEMM at one BLAS thread, the
best of 5 rounds, results checked equal (to float precision) first.

    python benchmarks/orientation.py
"""
from __future__ import annotations

import os
import time

for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import numpy as np  # noqa: E402

SHAPES = [(64, 784, 256), (64, 256, 128), (64, 128, 10), (64, 10, 128), (32, 784, 256),
          (256, 784, 256), (128, 512, 512), (16, 1024, 1024), (64, 1024, 1024),
          (256, 1024, 1024), (512, 256, 256), (64, 64, 64), (8, 784, 256), (1000, 784, 256)]
"""(M, K, N): batch, input features, output features."""


def cpu_us(call) -> float:
    """Best of 5 rounds of CPU time per call, in microseconds (rounds of ~20 ms)."""
    call()
    start = time.thread_time()
    call()
    once = max(time.thread_time() - start, 1e-7)
    count = max(3, int(0.02 / once))
    best = float("inf")
    for _ in range(5):
        start = time.thread_time()
        for _ in range(count):
            call()
        best = min(best, (time.thread_time() - start) / count)
    return best * 1e6


def main() -> None:
    rng = np.random.default_rng(0)
    print(f"NumPy {np.__version__}; us per GEMM, one BLAS thread; turned = W @ a.T into [N, M]")
    print(f"{'M':>5} {'K':>5} {'N':>5}   {'a C: a @ W.T':>13} {'turned':>8} {'ratio':>6}"
          f"   {'a F: a @ W.T':>13} {'turned':>8} {'ratio':>6}")
    for m, k, n in SHAPES:
        w = rng.standard_normal((n, k), dtype=np.float32)
        a_c = rng.standard_normal((m, k), dtype=np.float32)
        a_f = np.asfortranarray(a_c)
        y, y_t = np.empty((m, n), np.float32), np.empty((n, m), np.float32)
        cells = []
        for a in (a_c, a_f):
            np.testing.assert_allclose(np.matmul(w, a.T, out=y_t).T, a @ w.T, rtol=1e-4,
                                       atol=1e-3)
            plain = cpu_us(lambda: np.matmul(a, w.T, out=y))
            turned = cpu_us(lambda: np.matmul(w, a.T, out=y_t))
            cells.append(f"{plain:13.1f} {turned:8.1f} {turned / plain:5.2f}x")
        print(f"{m:5d} {k:5d} {n:5d}   " + "   ".join(cells), flush=True)


if __name__ == "__main__":
    main()

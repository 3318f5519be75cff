"""What a try statement costs when nothing raises: loop programs with a try/except around the
loop ("amber") against the same program without it ("no-try"), both
compiled, on the same inputs. The generated `try:` is Python's own, so the ratio should be 1.00x
within noise.

    python benchmarks/run.py --only exceptions [--quick]
"""
from __future__ import annotations

import numpy as np

import amber
from amber import nn
from harness import Workload

TITLE = "try/except around a loop: compiled with it (amber) vs compiled without it (no-try)"

ITERATIONS, SIZE = 200, 16


class BranchLoop(nn.Cell):
    """The native suite's control loop: an if/else on a tensor condition, 200 times."""

    def construct(self, x):
        for _ in range(ITERATIONS):
            if x.sum() > 0:
                x = x * 0.5 - 1.0
            else:
                x = x * 0.5 + 1.0
        return x


class BranchLoopInTry(nn.Cell):
    def construct(self, x):
        try:
            for _ in range(ITERATIONS):
                if x.sum() > 0:
                    x = x * 0.5 - 1.0
                else:
                    x = x * 0.5 + 1.0
        except FloatingPointError:
            x = np.zeros(SIZE, np.float32)
        return x


class Newton(nn.Cell):
    """A data-dependent while loop: Newton's square root until it converges."""

    def construct(self, a):
        x = a * 0.5 + 1.0
        n = 0
        while np.abs(x * x - a).max() > 1e-6 and n < 100:
            x = 0.5 * (x + a / x)
            n += 1
        return x


class NewtonInTry(nn.Cell):
    def construct(self, a):
        try:
            x = a * 0.5 + 1.0
            n = 0
            while np.abs(x * x - a).max() > 1e-6 and n < 100:
                x = 0.5 * (x + a / x)
                n += 1
        except FloatingPointError:
            x = a * 0.0
        return x


class IndexedSum(nn.Cell):
    """A Python-level loop over items, each read by index (an op that may raise)."""

    def construct(self, x):
        s = x[0] * 0.0
        for i in range(x.shape[0]):
            s = s + x[i] * x[i]
        return s


class IndexedSumInTry(nn.Cell):
    def construct(self, x):
        s = x[0] * 0.0
        try:
            for i in range(x.shape[0]):
                s = s + x[i] * x[i]
        except IndexError:
            s = x[0] * 0.0 - 1.0
        return s


def _pair(name: str, plain: type, guarded: type, inputs: tuple, calls: int) -> Workload:
    with_try, without = guarded(), plain()
    return Workload(name, {"eager": with_try.construct, "amber": amber.jit(with_try),
                           "no-try": amber.jit(without)}, inputs, calls)


def workloads(quick: bool) -> list[Workload]:
    """Each loop program with and without a try statement around its loop."""
    scale = 1 if quick else 3
    rng = np.random.default_rng(0)
    x = rng.standard_normal(SIZE).astype(np.float32)
    a = rng.uniform(1.0, 100.0, 256).astype(np.float64)
    rows = rng.standard_normal((64, 8)).astype(np.float32)
    return [
        _pair(f"if/else loop x{ITERATIONS}, try/except", BranchLoop, BranchLoopInTry, (x,),
              20 * scale),
        _pair("Newton while loop, try/except", Newton, NewtonInTry, (a,), 50 * scale),
        _pair("indexed sum over 64 rows, try/except", IndexedSum, IndexedSumInTry, (rows,),
              50 * scale),
    ]

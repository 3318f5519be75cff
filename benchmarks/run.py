"""Side-by-side timings: eager Python vs amber-compiled vs careful hand-written NumPy, for LeNet-5
(batch 1 and 64), the early-stopping RNN sample and a control-flow micro loop; plus cold compile
time and a warm disk-cache start, each in a fresh process.

Run `python benchmarks/run.py [--quick]`. The three versions are interleaved round by round (so
machine noise hits them alike) and checked against each other before timing; the table shows
median CPU microseconds per call, ratios, and peak memory per call (tracemalloc).
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
import tracemalloc
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

# NOTE: one BLAS thread unless the caller chose otherwise: on a busy machine, thread wake-ups
# make small GEMMs swing by 10x between runs. Set before NumPy is imported.
for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import numpy as np  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "samples"))

import amber  # noqa: E402
from amber import nn  # noqa: E402

from lenet import LeNet5  # noqa: E402
from rnn import EarlyStopRNN, example_inputs as rnn_inputs  # noqa: E402

LOOP_ITERATIONS = 200


class ControlLoop(nn.Cell):
    """200 iterations of an if/else on `x.sum()`: Python-level control flow dominates."""

    def construct(self, x: np.ndarray) -> np.ndarray:
        for _ in range(LOOP_ITERATIONS):
            if x.sum() > 0:
                x = x * 0.5 - 1.0
            else:
                x = x * 0.5 + 1.0
        return x


# -- hand-written NumPy references -----------------------------------------------------------

def _im2col(x: np.ndarray, k: int, out: np.ndarray) -> np.ndarray:
    """Channel-major [C, H, W] planes of a batch (x is [C, N, H, W]) -> columns [C*k*k, N*OH*OW]
    written into `out`, copied out of a strided view of the windows (`as_strided`: a fraction
    of `sliding_window_view`'s per-call checks)."""
    c, n, h, w = x.shape
    sc, sn, sh, sw = x.strides
    windows = np.lib.stride_tricks.as_strided(x, (c, k, k, n, h - k + 1, w - k + 1),
                                              (sc, sh, sw, sn, sh, sw))
    np.copyto(out.reshape(windows.shape), windows)
    return out


def _pool2(x: np.ndarray, out: np.ndarray) -> np.ndarray:
    """2x2 max pooling with stride 2 over the last two axes of contiguous `x`: the maximum of
    each pair of whole rows first, then of each pair of columns."""
    w = x.shape[-1]
    rows = x.reshape(*x.shape[:-2], x.shape[-2] // 2, 2 * w)
    tall = np.maximum(rows[..., :w], rows[..., w:])
    return np.maximum(tall[..., 0::2], tall[..., 1::2], out=out)


class HandLeNet:
    """LeNet-5 by hand: activations kept channel-major ([C, N, H, W]) so each conv is im2col +
    one GEMM with the weight on the left and no transposes in between; weights reshaped and
    transposed once; buffers preallocated per batch size; ReLU and bias applied in place."""

    def __init__(self, net: LeNet5) -> None:
        plain = {name: np.array(p) for name, p in net.parameters_and_names()}
        self.w1 = plain["conv1.weight"].reshape(6, 25)                  # [O, C*kh*kw]
        self.w2 = plain["conv2.weight"].reshape(16, 150)
        self.f1, self.b1 = plain["fc1.weight"].T.copy(), plain["fc1.bias"]
        self.f2, self.b2 = plain["fc2.weight"].T.copy(), plain["fc2.bias"]
        self.f3, self.b3 = plain["fc3.weight"].T.copy(), plain["fc3.bias"]
        self._buffers: dict[int, dict[str, np.ndarray]] = {}

    def _for_batch(self, n: int) -> dict[str, np.ndarray]:
        if n not in self._buffers:
            shapes = {"cols1": (25, n * 784), "y1": (6, n * 784), "p1": (6, n, 14, 14),
                      "cols2": (150, n * 100), "y2": (16, n * 100), "p2": (16, n, 5, 5),
                      "flat": (n, 400), "h1": (n, 120), "h2": (n, 84)}
            self._buffers[n] = {k: np.empty(v, np.float32) for k, v in shapes.items()}
        return self._buffers[n]

    def __call__(self, x: np.ndarray) -> np.ndarray:
        n = x.shape[0]
        b = self._for_batch(n)
        cols1 = _im2col(x.transpose(1, 0, 2, 3), 5, b["cols1"])
        y1 = np.matmul(self.w1, cols1, out=b["y1"])
        p1 = _pool2(y1.reshape(6, n, 28, 28), b["p1"])
        np.maximum(p1, 0, out=p1)  # NOTE: ReLU after pooling (they commute): 4x less work
        y2 = np.matmul(self.w2, _im2col(p1, 5, b["cols2"]), out=b["y2"])
        p2 = _pool2(y2.reshape(16, n, 10, 10), b["p2"])
        np.maximum(p2, 0, out=p2)
        flat = b["flat"]
        np.copyto(flat.reshape(n, 16, 5, 5), p2.transpose(1, 0, 2, 3))
        h1 = np.matmul(flat, self.f1, out=b["h1"])
        h1 += self.b1
        np.maximum(h1, 0, out=h1)
        h2 = np.matmul(h1, self.f2, out=b["h2"])
        h2 += self.b2
        np.maximum(h2, 0, out=h2)
        out = h2 @ self.f3
        out += self.b3
        return out


class HandRNN:
    """The early-stopping RNN with the input projection of every step done as one GEMM."""

    def __init__(self, net: EarlyStopRNN) -> None:
        self.wih = np.array(net.input_to_hidden.weight).T.copy()
        self.bih = np.array(net.input_to_hidden.bias)
        self.whh = np.array(net.hidden_to_hidden.weight).T.copy()
        self.threshold = net.threshold
        self.hidden = net.hidden_size

    def __call__(self, x: np.ndarray) -> tuple[np.ndarray, int]:
        xw = x @ self.wih
        xw += self.bih
        h = np.zeros((x.shape[1], self.hidden), x.dtype)
        tmp = np.empty_like(h)
        t = 0
        while t < x.shape[0]:
            np.matmul(h, self.whh, out=tmp)
            tmp += xw[t]
            h = np.tanh(tmp)
            t += 1
            if np.sqrt((h * h).sum()) > self.threshold:
                break
        return h, t


def hand_loop(x: np.ndarray) -> np.ndarray:
    """The micro loop with one buffer updated in place."""
    y = x.copy()
    for _ in range(LOOP_ITERATIONS):
        y *= 0.5
        y += -1.0 if y.sum() > 0 else 1.0  # NOTE: sum of 0.5*y has the sign of y.sum()
    return y


# -- measuring -------------------------------------------------------------------------------

@dataclass
class Workload:
    """One benchmark: three callables computing the same thing on the same inputs."""
    name: str
    eager: Callable[..., Any]
    compiled: Callable[..., Any]
    hand: Callable[..., Any]
    inputs: tuple
    calls: int


def _first(out: Any) -> np.ndarray:
    return np.asarray(out[0] if isinstance(out, tuple) else out)


def check(w: Workload) -> str | None:
    """Why the three versions disagree (float32 tolerance), or None when they agree."""
    ref = w.eager(*w.inputs)
    for label, fn in (("compiled", w.compiled), ("hand", w.hand)):
        try:
            got = fn(*w.inputs)
        except Exception as exc:  # report the workload as failed, keep benchmarking the rest
            return f"{label} raised {type(exc).__name__}: {str(exc).splitlines()[0]}"
        if not np.allclose(_first(got), _first(ref), rtol=1e-4, atol=1e-5):
            return f"{label} disagrees with eager"
        if isinstance(ref, tuple) and got[1:] != ref[1:]:
            return f"{label} returns {got[1:]}, eager {ref[1:]}"
    return None


CLOCK = time.process_time
"""The benchmark clock: this process's CPU time, so time other processes take from it on a
shared machine does not count (the work is single-threaded: one BLAS thread)."""


def time_interleaved(w: Workload, rounds: int) -> dict[str, float]:
    """Median CPU seconds per call of each version, sampled round-robin."""
    samples: dict[str, list[float]] = {"eager": [], "compiled": [], "hand": []}
    for _ in range(rounds):
        for label in samples:
            fn = getattr(w, label)
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


def workloads(quick: bool) -> list[Workload]:
    """The benchmark set, built with seed 0."""
    amber.set_seed(0)
    lenet = LeNet5()
    compiled_lenet, hand_lenet = amber.jit(lenet), HandLeNet(lenet)
    rng = np.random.default_rng(0)
    x1 = rng.standard_normal((1, 1, 32, 32), dtype=np.float32)
    x64 = rng.standard_normal((64, 1, 32, 32), dtype=np.float32)
    rnn = EarlyStopRNN()
    loop = ControlLoop()
    scale = 1 if quick else 4
    return [
        Workload("LeNet-5 batch 1", lenet.construct, compiled_lenet, hand_lenet, (x1,), 20 * scale),
        Workload("LeNet-5 batch 64", lenet.construct, compiled_lenet, hand_lenet, (x64,),
                 2 * scale),
        Workload("RNN (early stop)", rnn.construct, amber.jit(rnn), HandRNN(rnn), rnn_inputs(),
                 10 * scale),
        Workload(f"if/else loop x{LOOP_ITERATIONS}", loop.construct, amber.jit(loop), hand_loop,
                 (rng.standard_normal(16).astype(np.float32),), 2 * scale),
    ]


# -- fresh-process start-up ------------------------------------------------------------------

_PROBE = """
import json, sys, time
clock = time.process_time
t0 = clock()
import numpy as np
sys.path.insert(0, {samples!r})
import amber
from lenet import LeNet5
t_import = clock() - t0
amber.set_seed(0)
net = amber.jit(LeNet5())
x = np.random.default_rng(0).standard_normal((1, 1, 32, 32), dtype=np.float32)
t = clock()
if {stages}:  # the compiler's own modules, which the first compile would import
    import importlib, pkgutil
    for package in ("amber.frontend", "amber.graph.passes", "amber.codegen"):
        for module in pkgutil.iter_modules(importlib.import_module(package).__path__):
            importlib.import_module(f"{{package}}.{{module.name}}")
stages = clock() - t
t = clock(); net(x); first = clock() - t
times = []
for _ in range(20):
    t = clock(); net(x); times.append(clock() - t)
print(json.dumps({{"import": t_import, "stages": stages, "first": first, "steady": min(times),
                   "compiles": net.stats.compiles, "disk_hits": net.stats.disk_hits}}))
"""


def fresh_process(cache_dir: str, stages: bool, pycache: str | None = None) -> dict[str, float]:
    """First-call CPU time of LeNet-5 in a new interpreter using `cache_dir` as the disk cache;
    with `stages`, the compiler's modules are imported (and timed) before that call; with
    `pycache`, Python keeps its bytecode there (as an installed package has it) instead of
    following PYTHONDONTWRITEBYTECODE."""
    env = {**os.environ, "AMBER_CACHE_DIR": cache_dir, "AMBER_CACHE": "1"}
    if pycache is not None:
        env.pop("PYTHONDONTWRITEBYTECODE", None)
        env["PYTHONPYCACHEPREFIX"] = pycache
    code = _PROBE.format(samples=str(ROOT / "samples"), stages=stages)
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True,
                         check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


# -- report ----------------------------------------------------------------------------------

def _us(seconds: float) -> str:
    return f"{seconds * 1e6:,.1f}"


def _kb(size: int) -> str:
    return f"{size / 1024:,.1f}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="fewer rounds (a smoke run)")
    quick = parser.parse_args().quick
    scratch = tempfile.TemporaryDirectory()  # NOTE: leave the user's disk cache alone
    amber.set_context(cache_dir=scratch.name)
    rounds = 5 if quick else 15
    rows, failures = [], []
    for w in workloads(quick):
        problem = check(w)
        if problem is not None:
            failures.append(f"{w.name}: not timed, {problem}")
            continue
        times = time_interleaved(w, rounds)
        mem = {label: peak_memory(getattr(w, label), w.inputs)
               for label in ("eager", "compiled", "hand")}
        rows.append((w.name, times, mem))
    print(f"BLAS threads: {os.environ['OPENBLAS_NUM_THREADS']} (OPENBLAS_NUM_THREADS); "
          f"{rounds} interleaved rounds; medians of CPU time per call")
    head = (f"{'workload':<22} {'eager us':>11} {'amber us':>11} {'numpy us':>11} "
            f"{'eager/amber':>12} {'amber/numpy':>12}   peak KiB eager/amber/numpy")
    print(head)
    print("-" * len(head))
    for name, t, m in rows:
        print(f"{name:<22} {_us(t['eager']):>11} {_us(t['compiled']):>11} {_us(t['hand']):>11} "
              f"{t['eager'] / t['compiled']:>11.2f}x {t['compiled'] / t['hand']:>11.2f}x   "
              f"{_kb(m['eager'])} / {_kb(m['compiled'])} / {_kb(m['hand'])}")
    for failure in failures:
        print(failure)
    with tempfile.TemporaryDirectory() as cache, tempfile.TemporaryDirectory() as cold, \
            tempfile.TemporaryDirectory() as pycache:
        fresh_process(cold, stages=False, pycache=pycache)  # NOTE: writes the bytecode
        runs = [("cold, compiler imported first", fresh_process(cache, stages=True)),
                ("cold, compiler imported on use", fresh_process(cold + "/2", stages=False)),
                ("  the same, bytecode cached", fresh_process(cold + "/3", False, pycache)),
                ("warm, disk cache hit", fresh_process(cache, stages=False))]
    print()
    print("LeNet-5 batch 1 in a fresh process, CPU ms (first call = making the specialization: "
          "frontend + passes + codegen + loading the module, or a disk cache lookup; then one "
          "run)")
    for label, r in runs:
        stages = f"importing the compiler {r['stages'] * 1e3:5.1f}, " if "first" in label else ""
        print(f"  {label:<31}: {stages}first call {r['first'] * 1e3:6.1f}, steady call "
              f"{r['steady'] * 1e3:.3f}, import amber {r['import'] * 1e3:.0f} "
              f"(compiles={r['compiles']}, disk hits={r['disk_hits']})")
    print(f"  (PYTHONDONTWRITEBYTECODE={os.environ.get('PYTHONDONTWRITEBYTECODE', '')!r}: while "
          "it is set, every import compiles its module from source)")

if __name__ == "__main__":
    main()

"""Start-up: the first call of LeNet-5 in a fresh process, cold (compiling) and warm (served by
the disk cache)."""
from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


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
            try:
                importlib.import_module(f"{{package}}.{{module.name}}")
            except ImportError:  # NOTE: a backend of an extra that is not installed (onnx)
                pass
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



def report() -> None:
    """Print the fresh-process timings."""
    with tempfile.TemporaryDirectory() as cache, tempfile.TemporaryDirectory() as cold, \
            tempfile.TemporaryDirectory() as pycache:
        fresh_process(cold, stages=False, pycache=pycache)  # NOTE: writes the bytecode
        runs = [("cold, compiler imported first", fresh_process(cache, stages=True)),
                ("cold, compiler imported on use", fresh_process(cold + "/2", stages=False)),
                ("  the same, bytecode cached", fresh_process(cold + "/3", False, pycache)),
                ("warm, disk cache hit", fresh_process(cache, stages=False))]
    print("\n## Start-up: LeNet-5 batch 1 in a fresh process, CPU ms (first call = making the "
          "specialization: frontend + passes + codegen + loading the module, or a disk cache "
          "lookup; then one run)")
    for label, r in runs:
        stages = f"importing the compiler {r['stages'] * 1e3:5.1f}, " if "first" in label else ""
        print(f"  {label:<31}: {stages}first call {r['first'] * 1e3:6.1f}, steady call "
              f"{r['steady'] * 1e3:.3f}, import amber {r['import'] * 1e3:.0f} "
              f"(compiles={r['compiles']}, disk hits={r['disk_hits']})")
    print(f"  (PYTHONDONTWRITEBYTECODE={os.environ.get('PYTHONDONTWRITEBYTECODE', '')!r}: while "
          "it is set, every import compiles its module from source)")
    if importlib.util.find_spec("numba") is not None:
        report_rnn()
        report_queue()


_RNN_PROBE = """
import json, sys, threading, time
sys.path.insert(0, {samples!r})
import numpy as np
import amber
from rnn import EarlyStopRNN, example_inputs
amber.set_seed(0)
net = amber.jit(EarlyStopRNN(), backend={backend!r})
x, = example_inputs()
wall, cpu = time.perf_counter(), time.thread_time()
h, _ = net(x)
first_wall, first_cpu = time.perf_counter() - wall, time.thread_time() - cpu
calls = 1
while {backend!r} == "auto" and "@numba.njit" not in net.code \\
        and time.perf_counter() - wall < 120:
    net(x)  # NOTE: keep calling until the kernels take over (auto), as a program would
    calls += 1
    time.sleep(0.001)
native_after = time.perf_counter() - wall
steady = []
for _ in range(200):
    t = time.thread_time(); net(x); steady.append(time.thread_time() - t)
later, _ = net(x)
print(json.dumps({{"first_wall": first_wall, "first_cpu": first_cpu, "native_after": native_after,
                   "calls_before_native": calls, "steady": sorted(steady)[100],
                   "kernels": "@numba.njit" in net.code,
                   "diff": float(np.max(np.abs(later - h)))}}))
"""


def rnn_first_call(backend: str, cache_dir: str) -> dict[str, float]:
    """The RNN sample's first call in a fresh process with `backend` and `cache_dir`; wall and
    main-thread CPU time of that call, when the kernels took over (auto: the calls made until
    then ran NumPy code), and the steady call after."""
    env = {**os.environ, "AMBER_CACHE_DIR": cache_dir, "AMBER_CACHE": "1"}
    code = _RNN_PROBE.format(samples=str(ROOT / "samples"), backend=backend)
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True,
                         check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def report_rnn(rounds: int = 3) -> None:
    """Print the RNN sample's first call per backend, cold and warm, medians of interleaved
    rounds (each round a fresh cache directory per backend)."""
    results: dict[tuple[str, str], list[dict[str, float]]] = {}
    for _ in range(rounds):
        for backend in ("numpy", "auto", "numba"):
            with tempfile.TemporaryDirectory() as cache:
                for state in ("cold", "warm"):
                    results.setdefault((backend, state), []).append(rnn_first_call(backend, cache))
    print(f"\n## Start-up: the RNN sample (samples/rnn.py) in a fresh process, medians of {rounds} "
          "interleaved rounds; first call = wall ms and main-thread CPU ms (auto compiles its "
          "kernels in a background thread: its CPU is not the caller's); kernels from = wall ms "
          "from the first call until the kernels run")
    for (backend, state), runs in results.items():
        med = {k: sorted(r[k] for r in runs)[len(runs) // 2] for k in runs[0]}
        kernels = (f", kernels from {med['native_after'] * 1e3:7.1f} ms "
                   f"({med['calls_before_native']:.0f} calls ran NumPy first)"
                   if backend != "numpy" else "")
        print(f"  {backend:<5} {state}: first call {med['first_wall'] * 1e3:7.1f} wall, "
              f"{med['first_cpu'] * 1e3:6.1f} CPU{kernels}; steady call "
              f"{med['steady'] * 1e6:6.1f} us; result after vs first: "
              f"{max(r['diff'] for r in runs):.1e}")


_QUEUE_PROBE = """
import json, sys, time
sys.path.insert(0, {folder!r})
import numpy as np
import amber
from amber.runtime.tiers import wait_all
import looped
x = np.linspace(-1.0, 1.0, 16, dtype=np.float32)
kept = [amber.jit(getattr(looped, f"f{{i}}"), backend="auto") for i in range({count})]
for fn in kept:
    fn(x)  # NOTE: NumPy code at once; each queues a background compile of its kernels
time.sleep(0.2)
wall = time.perf_counter()
amber.jit(looped.last, backend="numba")(x)
numba_wall = time.perf_counter() - wall
wait_all()
print(json.dumps({{"numba_wall": numba_wall, "all_wall": time.perf_counter() - wall}}))
"""


def queued_then_numba(count: int, folder: str) -> dict[str, float]:
    """In a fresh process without a disk cache: `count` auto functions each make their first
    call (their kernels compile in the background), then one backend="numba" function makes
    its first call (compile-first); wall seconds of that call and until everything compiled."""
    loops = "".join(f"def {name}(x):\n    while np.sum(np.abs(x)) > 1e-3:\n"
                    f"        x = np.tanh(x * {0.5 + 0.01 * i})\n    return x\n\n\n"
                    for i, name in enumerate([f"f{i}" for i in range(count)] + ["last"]))
    Path(folder, "looped.py").write_text("import numpy as np\n\n\n" + loops)
    env = {**os.environ, "AMBER_CACHE": "0"}
    code = _QUEUE_PROBE.format(folder=folder, count=count)
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True,
                         check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def report_queue(count: int = 8, rounds: int = 3) -> None:
    """Print how long a backend="numba" first call waits when `count` background compiles
    were queued before it, against none; medians of interleaved rounds (min-max)."""
    results: dict[int, list[dict[str, float]]] = {}
    for _ in range(rounds):
        for n in (0, count):
            with tempfile.TemporaryDirectory() as folder:
                results.setdefault(n, []).append(queued_then_numba(n, folder))
    print(f"\n## Start-up: a backend=\"numba\" first call after N auto functions' first calls "
          f"(their kernels compiling in the background), fresh process, no disk cache; wall s, "
          f"medians of {rounds} interleaved rounds (min-max)")
    for n, runs in results.items():
        spans = {}
        for key in ("numba_wall", "all_wall"):
            values = sorted(r[key] for r in runs)
            spans[key] = f"{values[len(values) // 2]:6.2f} ({values[0]:.2f}-{values[-1]:.2f})"
        print(f"  N={n:<2}: numba first call {spans['numba_wall']}; until every kernel "
              f"compiled {spans['all_wall']}")

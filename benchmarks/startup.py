"""Start-up: the first call of LeNet-5 in a fresh process, cold (compiling) and warm (served by
the disk cache)."""
from __future__ import annotations

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

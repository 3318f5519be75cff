"""The disk cache across processes: cold processes racing on one key all succeed, only one of
them compiles (the others wait on its lock and read its entry) and one valid entry is left; a
later process is served from disk without running the compiler."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np

SAMPLES = Path(__file__).resolve().parents[2] / "samples"

SCRIPT = f"""
import json, sys, time
import numpy as np
sys.path.insert(0, {str(SAMPLES)!r})
import amber
from amber.runtime import pipeline
from lenet import LeNet5, example_inputs

ran = []
original = pipeline.build
pipeline.build = lambda *a, **k: ran.append(1) or original(*a, **k)
amber.set_seed(0)
net = amber.jit(LeNet5())
(x,) = example_inputs()
start = time.perf_counter()
out = net(x)
first_call = time.perf_counter() - start
print(json.dumps({{"out": out.tolist(), "compiles": net.stats.compiles,
                   "disk_hits": net.stats.disk_hits, "frontend_ran": bool(ran),
                   "origin": net.last.origin, "first_call": first_call}}))
"""


def _spawn(cache_dir: Path) -> subprocess.Popen:
    env = {**os.environ, "AMBER_CACHE_DIR": str(cache_dir)}
    env.pop("AMBER_CACHE", None)
    return subprocess.Popen([sys.executable, "-c", SCRIPT], env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)


def _result(proc: subprocess.Popen) -> dict:
    out, err = proc.communicate(timeout=120)
    assert proc.returncode == 0, err
    return json.loads(out.strip().splitlines()[-1])


def test_racing_cold_processes_then_a_warm_one(cache_dir: Path) -> None:
    racers = [_spawn(cache_dir) for _ in range(3)]
    cold = [_result(p) for p in racers]
    for r in cold:
        assert r["compiles"] + r["disk_hits"] == 1
    assert sum(r["compiles"] for r in cold) == 1, cold  # NOTE: compiled once, not three times
    for r in cold[1:]:
        np.testing.assert_array_equal(cold[0]["out"], r["out"])
    assert len(list(cache_dir.glob("*/*.json"))) == 1  # same key: one entry, whole files
    assert not list(cache_dir.glob("*/*.tmp"))
    warm = _result(_spawn(cache_dir))
    assert warm["disk_hits"] == 1 and warm["compiles"] == 0 and not warm["frontend_ran"]
    assert warm["origin"] == "disk"
    np.testing.assert_array_equal(warm["out"], cold[0]["out"])

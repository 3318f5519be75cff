"""amber's own zoo-style model files (tests/models/amber_zoo: the API surface and patterns of
MindSpore's model zoo) compiled against eager, in eval and train mode, and reused from the disk
cache by a fresh process.

Train mode runs Dropout and batch statistics: both sides start from the same parameters and the
same random streams, and must end with the same outputs and the same updated parameters (the
moving statistics BatchNorm writes)."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import amber
from amber.runtime.jit import plain_function
from amber_zoo import SPECS, build

RTOL = ATOL = 1e-6


def eager_call(net, inputs):
    """The model's own Python, eagerly (a `@jit` construct unwrapped)."""
    return plain_function(type(net).construct)(net, *[np.copy(x) for x in inputs])


def reseed(net) -> None:
    """Every random stream back to the same state: the global ones and each cell's own."""
    amber.set_seed(0)
    np.random.seed(0)
    for k, (_, cell) in enumerate(net.cells_and_names()):
        for j, gen in enumerate(g for g in vars(cell).values()
                                if isinstance(g, np.random.Generator)):
            gen.bit_generator.state = np.random.default_rng([k, j]).bit_generator.state


def snapshot(net) -> dict[str, np.ndarray]:
    return {name: np.array(p) for name, p in net.parameters_and_names()}


def restore(net, state) -> None:
    for name, p in net.parameters_and_names():
        p[...] = state[name]


def assert_same(got, want, where="output"):
    if isinstance(want, tuple | list):
        assert isinstance(got, tuple | list) and len(got) == len(want), where
        for i, (g, w) in enumerate(zip(got, want)):
            assert_same(g, w, f"{where}[{i}]")
        return
    got, want = np.asarray(got), np.asarray(want)
    assert got.shape == want.shape and got.dtype == want.dtype, (where, got.shape, want.shape)
    if want.dtype.kind in "iub":
        np.testing.assert_array_equal(got, want, err_msg=where)
    else:
        np.testing.assert_allclose(got, want, rtol=RTOL, atol=ATOL, err_msg=where)


@pytest.mark.parametrize("train", [False, True], ids=["eval", "train"])
@pytest.mark.parametrize("name", list(SPECS))
def test_compiled_equals_eager(name, train):
    net, inputs = build(name)
    net.set_train(train)
    start = snapshot(net)
    reseed(net)
    want = eager_call(net, inputs)
    want_state = snapshot(net)
    restore(net, start)
    reseed(net)
    got = amber.jit(net)(*[np.copy(x) for x in inputs])
    assert_same(got, want)
    got_state = snapshot(net)
    for key, value in want_state.items():
        assert_same(got_state[key], value, f"parameter {key}")
    if train and any("moving_mean" in key for key in start):
        assert any(not np.array_equal(start[k], want_state[k]) for k in start), \
            "train mode updated no moving statistics"


SCRIPT = """
import json, sys
sys.path.insert(0, {here!r})
import numpy as np
import amber
from amber.runtime import pipeline
from amber_zoo import SPECS, build

ran = []
original = pipeline.build
pipeline.build = lambda *a, **k: ran.append(1) or original(*a, **k)
report = {{}}
for name in SPECS:
    net, inputs = build(name)
    fast = amber.jit(net)
    out = fast(*inputs)
    flat = out if isinstance(out, tuple) else (out,)
    report[name] = {{"compiles": fast.stats.compiles, "disk_hits": fast.stats.disk_hits,
                     "out": [np.asarray(o).tolist() for o in flat]}}
report["frontend_runs"] = len(ran)
print(json.dumps(report))
"""


def run_all(cache: Path) -> dict:
    env = {**os.environ, "AMBER_CACHE_DIR": str(cache)}
    env.pop("AMBER_CACHE", None)
    script = SCRIPT.format(here=str(Path(__file__).parent))
    proc = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True,
                          text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return json.loads(proc.stdout.strip().splitlines()[-1])


def test_every_model_is_served_from_the_disk_cache_in_a_new_process(tmp_path):
    cold = run_all(tmp_path / "cache")
    warm = run_all(tmp_path / "cache")
    assert warm.pop("frontend_runs") == 0, "a warm process ran the compiler"
    cold.pop("frontend_runs")
    for name in SPECS:
        assert cold[name]["compiles"] == 1 and cold[name]["disk_hits"] == 0, (name, cold[name])
        assert warm[name]["compiles"] == 0 and warm[name]["disk_hits"] == 1, (name, warm[name])
        assert warm[name]["out"] == cold[name]["out"], name

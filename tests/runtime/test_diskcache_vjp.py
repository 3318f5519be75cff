"""`ops.vjp` and `ops.linearize` at the top level are kept in the disk cache, both halves: a new
process runs the forward and `vjp_fn`/`jvp_fn` without compiling, an edited helper is a miss
for both halves (a rebound function is too: its own source is in the first key, as for every
transform), a backward evicted since is recompiled, and a choice of weights stays in memory
(later steps in fresh subprocesses)."""
from __future__ import annotations

import shutil
import sys
import warnings
from pathlib import Path
from types import ModuleType

import numpy as np
from fresh_process import imported, run_fresh

from amber import nn, ops
from amber.runtime import vjp as vjp_module
from amber.runtime.diskcache import DiskCache

USER = '''
from amber import ops


def scale(x):
    return x * 2.0


def f(x, y):
    s = x
    for _ in range(3):
        s = ops.sin(s) * y
    if s.sum() > 0:
        s = s + scale(y)
    return s
'''

SCRIPT = """
import json, sys, warnings
warnings.simplefilter("error")  # NOTE: a "cannot be kept in the disk cache" warning fails
sys.path[:0] = [{folder!r}, {tests!r}]
import {module} as user
from test_diskcache_vjp import run_both
print(json.dumps(run_both(user)))
"""


def _forget() -> None:
    """As a new process: no forward program nor backward half in memory."""
    vjp_module._programs.clear()
    vjp_module._BACKWARDS.clear()


def _programs(fn: object) -> list:
    return [vjp_module._program(fn, vjp_module.TransformRequest(kind), None, False)
            for kind in (vjp_module.VJP, vjp_module.LINEARIZE)]


def run_both(user: ModuleType) -> dict:
    """ops.vjp and ops.linearize of the user's f, made afresh: compiles, disk hits, results."""
    _forget()
    x = np.linspace(-1.0, 1.0, 4).astype(np.float32)
    y = np.linspace(0.5, 1.5, 4).astype(np.float32)
    out, vjp_fn = ops.vjp(user.f, x, y)
    grads = vjp_fn(np.ones(4, np.float32))
    _, jvp_fn = ops.linearize(user.f, (x, y))
    tangent = jvp_fn(np.ones(4, np.float32), np.zeros(4, np.float32))
    made = _programs(user.f)
    return {"compiles": [p.stats.compiles for p in made],
            "hits": [p.stats.disk_hits for p in made],
            "out": [np.asarray(a).tolist() for a in (out, *grads, tangent)]}


def _run_fresh(folder: Path, module: str) -> dict:
    script = SCRIPT.format(folder=str(folder), tests=str(Path(__file__).parent), module=module)
    return run_fresh(script)


def _by_differences(fn, x: np.ndarray, y: np.ndarray) -> list:
    """fn's output, its gradients against ones and its tangent along (ones, 0), in float64 by
    central differences."""
    x, y, eps = x.astype(np.float64), y.astype(np.float64), 1e-6

    def partial(i: int, which: int) -> np.ndarray:
        step = np.zeros_like(x)
        step[i] = eps
        a, b = ((x + step, y), (x - step, y)) if which == 0 else ((x, y + step), (x, y - step))
        return (fn(*a) - fn(*b)) / (2 * eps)
    columns = [[partial(i, which) for i in range(4)] for which in (0, 1)]
    grads = [np.array([c.sum() for c in cols]) for cols in columns]
    return [fn(x, y), *grads, sum(columns[0])]


def test_a_new_process_reuses_both_halves_and_misses_after_an_edit(tmp_path: Path) -> None:
    module = "amber_test_vjp_user"
    path = tmp_path / f"{module}.py"
    path.write_text(USER)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        try:
            user = imported(tmp_path, module)
            first = run_both(user)  # NOTE: this process writes them
            eager = _by_differences(user.f, np.linspace(-1.0, 1.0, 4),
                                    np.linspace(0.5, 1.5, 4))
        finally:
            sys.modules.pop(module, None)
    assert first["compiles"] == [1, 1]
    for got, want in zip(first["out"], eager):
        np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-5)
    second = _run_fresh(tmp_path, module)
    assert (second["compiles"], second["hits"]) == ([0, 0], [1, 1])
    assert second["out"] == first["out"]

    path.write_text(USER.replace("x * 2.0", "x * 3.0"))  # a helper f calls, edited
    edited = _run_fresh(tmp_path, module)
    assert (edited["compiles"], edited["hits"]) == ([1, 1], [0, 0])
    np.testing.assert_allclose(edited["out"][0], np.asarray(first["out"][0]) + 0.5 *
                               np.linspace(0.5, 1.5, 4) * 2, rtol=1e-5)
    np.testing.assert_allclose(edited["out"][2], np.asarray(first["out"][2]) + 1.0, rtol=1e-5)


def _square_sum(x: np.ndarray) -> np.ndarray:
    return (ops.tanh(x) ** 2).sum()


def test_a_forward_whose_backward_was_evicted_compiles_both_again(cache_dir: Path) -> None:
    x = np.linspace(-1.0, 1.0, 5).astype(np.float32)
    want = 2 * np.tanh(x) * (1 - np.tanh(x) ** 2)
    _forget()
    _, vjp_fn = ops.vjp(_square_sum, x)
    np.testing.assert_allclose(vjp_fn(np.float32(1.0)), want, rtol=1e-5)
    (key,) = vjp_module._BACKWARDS
    disk = DiskCache(cache_dir)
    shutil.rmtree(cache_dir / vjp_module._half_first_key(disk, key))
    _forget()
    _, vjp_fn = ops.vjp(_square_sum, x)
    program = _programs(_square_sum)[0]
    assert (program.stats.disk_hits, program.stats.compiles) == (1, 1)
    np.testing.assert_allclose(vjp_fn(np.float32(1.0)), want, rtol=1e-5)


class Scaled(nn.Cell):
    def __init__(self, k: float) -> None:
        super().__init__()
        self.w = nn.Parameter(np.full(3, k, np.float32))

    def construct(self, x: np.ndarray) -> np.ndarray:
        return (ops.sin(x) * self.w).sum()


def test_weights_stay_in_memory_and_each_cell_gets_its_own_gradients() -> None:
    x = np.linspace(-1.0, 1.0, 3).astype(np.float32)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for k in (2.0, 3.0):
            _forget()
            net = Scaled(k)
            _, vjp_fn = ops.vjp(net, x, weights=net.w)
            dx, dw = vjp_fn(np.float32(1.0))
            np.testing.assert_allclose(dx, np.cos(x) * k, rtol=1e-5)
            np.testing.assert_allclose(dw, np.sin(x), rtol=1e-5)
            (program,) = [p for _, _, p in vjp_module._programs.values()]
            assert program.stats.disk_hits == 0


"""Function transforms (vmap, nested jacfwd/jacrev, vmap of grad) are kept in the disk cache
like plain functions: a new process reuses their code without compiling or warning, and an
edited or rebound wrapped function is a miss, never stale code (each later step in a fresh
subprocess)."""
from __future__ import annotations

import sys
import warnings
from pathlib import Path
from types import ModuleType

import numpy as np
from fresh_process import imported, run_fresh

import amber
from amber import ops
from amber.runtime import transforms

USER = '''
import numpy as np
import amber
from amber import ops


def scale(x):
    return x * 2.0


def f(x):
    return ops.sin(x) * scale(x)


def loss(w, x):
    return (ops.tanh(x @ w) ** 2).sum()
'''

REBOUND = '''

def f(x):  # NOTE: rebinds f: the transforms now wrap this one
    return ops.cos(x) + scale(x)
'''

SCRIPT = """
import json, sys, warnings
warnings.simplefilter("error")  # NOTE: a "cannot be kept in the disk cache" warning fails
sys.path[:0] = [{folder!r}, {tests!r}]
import {module} as user
from test_diskcache_transforms import run_all
print(json.dumps(run_all(user)))
"""


def run_all(user: ModuleType) -> dict:
    """vmap, a nested Jacobian and vmap of grad of the user module's functions, made afresh:
    how many compiled, how many came from disk, and their results."""
    transforms._made_functions.clear()  # NOTE: else ops.vmap(fn) is an object made earlier
    x = np.linspace(-1.0, 1.0, 4).astype(np.float32)
    w = np.linspace(0.5, -0.5, 8).astype(np.float32).reshape(4, 2)
    made = [ops.vmap(user.f), ops.jacfwd(ops.jacrev(user.f)),
            ops.vmap(amber.grad(user.loss), in_axes=(None, 0))]
    args = [(x.reshape(2, 2),), (x,), (w, x.reshape(1, 4).repeat(3, 0))]
    out = [fn(*a) for fn, a in zip(made, args)]
    return {"compiles": [fn.stats.compiles for fn in made],
            "hits": [fn.stats.disk_hits for fn in made],
            "out": [np.asarray(o).tolist() for o in out]}


def _run_fresh(folder: Path, module: str, cache_dir: Path) -> dict:
    script = SCRIPT.format(folder=str(folder), tests=str(Path(__file__).parent), module=module)
    return run_fresh(script, AMBER_CACHE_DIR=str(cache_dir))


def _expected(folder: Path, module: str, second_derivative) -> list:
    """The three results worked out by hand: eager `f` per row, the Hessian of an elementwise
    function (its second derivative on the diagonal) and the loss's gradient in closed form."""
    user = imported(folder, module)
    sys.modules.pop(module)
    x = np.linspace(-1.0, 1.0, 4)
    w = np.linspace(0.5, -0.5, 8).reshape(4, 2)
    rows = x.astype(np.float32).reshape(2, 2)
    hessian = np.zeros((4, 4, 4))
    hessian[np.arange(4), np.arange(4), np.arange(4)] = second_derivative(x)
    t = np.tanh(x @ w)
    grad = np.outer(x, 2 * t * (1 - t * t))
    return [np.stack([user.f(r) for r in rows]), hessian, np.stack([grad] * 3)]


def test_a_new_process_reuses_transforms_and_misses_after_an_edit(tmp_path: Path,
                                                                  cache_dir: Path) -> None:
    module = "amber_test_transform_user"
    path = tmp_path / f"{module}.py"
    path.write_text(USER)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        try:
            first = run_all(imported(tmp_path, module))  # NOTE: this process writes them
        finally:
            sys.modules.pop(module, None)
    assert first["compiles"] == [1, 1, 1]
    assert len(list(cache_dir.glob("*/*.json"))) == 3
    second = _run_fresh(tmp_path, module, cache_dir)
    assert (second["compiles"], second["hits"]) == ([0, 0, 0], [1, 1, 1])
    assert second["out"] == first["out"]
    by_hand = _expected(tmp_path, module, lambda x: 4 * np.cos(x) - 2 * x * np.sin(x))
    for got, want in zip(second["out"], by_hand):
        np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-5)

    path.write_text(USER.replace("x * 2.0", "x * 3.0"))  # a helper f calls, edited
    edited = _run_fresh(tmp_path, module, cache_dir)
    assert edited["compiles"] == [1, 1, 0]  # NOTE: loss does not call scale
    np.testing.assert_allclose(edited["out"][0], np.asarray(first["out"][0]) * 1.5, rtol=1e-5)

    path.write_text(USER + REBOUND)  # f itself rebound to another def
    rebound = _run_fresh(tmp_path, module, cache_dir)
    assert rebound["compiles"] == [1, 1, 0]
    for got, want in zip(rebound["out"], _expected(tmp_path, module, lambda x: -np.cos(x))):
        np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-5)


def _fresh_vmap(fn: object) -> transforms.TransformFunction:
    transforms._made_functions.clear()  # NOTE: else ops.vmap(fn) is the same object again
    return ops.vmap(fn)  # type: ignore[return-value]


def test_a_fresh_transform_object_is_served_from_disk_without_warning(cache_dir: Path) -> None:
    x = np.linspace(-1.0, 1.0, 6).astype(np.float32).reshape(3, 2)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        first = _fresh_vmap(_tanh_sum)
        np.testing.assert_allclose(first(x), [_tanh_sum(r) for r in x], rtol=1e-6)
        second = _fresh_vmap(_tanh_sum)
        assert second is not first
        np.testing.assert_allclose(second(x), [_tanh_sum(r) for r in x], rtol=1e-6)
    assert (first.stats.compiles, second.stats.compiles, second.stats.disk_hits) == (1, 0, 1)
    other = _fresh_vmap(_tanh_sum)
    other(x.T.copy())  # another signature: its own entry
    assert other.stats.compiles == 1


def _tanh_sum(x: np.ndarray) -> np.ndarray:
    return ops.tanh(x).sum()


class Scaler:
    """A plain object whose bound method is transformed: its state is in no disk key."""

    def __init__(self, k: float) -> None:
        self.k = k

    def apply(self, x: np.ndarray) -> np.ndarray:
        return ops.sin(x) * self.k


def test_a_bound_method_of_a_plain_object_is_never_served_another_objects_code(
        cache_dir: Path) -> None:
    x = np.ones((2, 3), np.float32)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # NOTE: "cannot be kept in the disk cache", rightly
        for k in (2.0, 3.0):
            fn = _fresh_vmap(Scaler(k).apply)
            np.testing.assert_allclose(fn(x), np.sin(x) * k, rtol=1e-6)
            assert fn.stats.disk_hits == 0

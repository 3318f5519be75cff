"""Default argument values are baked into compiled code, so they are part of what the disk
cache checks: one `def` run twice with other defaults (a factory's `def f(x, k=k)`) is two
functions of one name and source, and must never share an entry."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import amber
from amber import ops
from amber.runtime import transforms

X = np.linspace(-1.0, 1.0, 6).astype(np.float32).reshape(2, 3)


def scaled_by(k: float):
    def scaled(x, k=k):
        return ops.sin(x) * k
    return scaled


HELPER = scaled_by(2.0)


def calls_helper(x):
    return HELPER(x) + 1.0


@pytest.mark.parametrize("make", ["jit", "vmap"])
def test_a_function_made_twice_with_other_defaults_is_a_miss(cache_dir: Path, make: str) -> None:
    for k in (2.0, 3.0, 2.0):
        transforms._made_functions.clear()
        fn = scaled_by(k)
        fast = amber.jit(fn) if make == "jit" else ops.vmap(fn)
        np.testing.assert_allclose(fast(X), np.sin(X) * k, rtol=1e-6)
    assert fast.stats.disk_hits == 1  # NOTE: the third is the first's entry


def test_an_inlined_helper_with_other_defaults_is_a_miss(cache_dir: Path,
                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    first = amber.jit(calls_helper)
    np.testing.assert_allclose(first(X), np.sin(X) * 2.0 + 1.0, rtol=1e-6)
    monkeypatch.setitem(globals(), "HELPER", scaled_by(3.0))
    second = amber.jit(calls_helper)  # NOTE: a new jit object: its code comes from disk or not
    np.testing.assert_allclose(second(X), np.sin(X) * 3.0 + 1.0, rtol=1e-6)
    assert second.stats.disk_hits == 0

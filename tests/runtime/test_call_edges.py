"""Calls at the edges of what compiled code can take: a wrong number of arguments reports the
arity error alone (issue 29, item 6), and run-time Python ints beyond int64 behave as eager
with every backend (item 4)."""
from __future__ import annotations

import warnings

import numpy as np
import pytest

import amber
from amber import nn
from amber.frontend.errors import CompileError


@amber.jit
class Double(nn.Cell):
    def construct(self, x: np.ndarray) -> np.ndarray:
        return x * 2


def test_wrong_arity_after_symbolic_sizes_reports_the_arity_alone() -> None:
    net = Double()
    net(np.ones(3, np.float32))
    with pytest.warns(RuntimeWarning, match="symbolic"):
        net(np.ones(4, np.float32))  # NOTE: axis 0 becomes symbolic
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # NOTE: no warning about symbolic sizes first
        with pytest.raises(CompileError, match=r"takes 1 argument \(x.*\) but 2 were given"):
            net(np.ones(3, np.float32), np.ones(3, np.float32))
    np.testing.assert_array_equal(net(np.ones(5, np.float32)), np.full(5, 2, np.float32))


def _count_until_large(x: np.ndarray, n: int) -> np.ndarray:
    for i in range(n):
        x = x + 1
        if x.sum() > 100:
            break
    return x


def _index_and_divide(x: np.ndarray, n: int) -> tuple[np.ndarray, np.ndarray]:
    out = x * 0
    for i in range(3):
        out[i] = x[(n + i) % 4] + n // 2**66
    return out, x[n % 4]


BACKENDS = ["numpy", "auto", pytest.param("numba", marks=pytest.mark.skipif(
    not amber.runtime.native.numba_installed(), reason="the numba backend needs Numba"))]


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("n", [2**70, -2**64 - 3, 2**63])
def test_python_ints_beyond_int64_run_as_eager(backend: str, n: int) -> None:
    x = np.arange(4, dtype=np.float32)
    for function in (_count_until_large, _index_and_divide):
        compiled = amber.jit(function, backend=backend)
        got, want = compiled(x.copy(), n), function(x.copy(), n)
        for g, w in zip(*(v if isinstance(v, tuple) else (v,) for v in (got, want))):
            np.testing.assert_array_equal(g, w)

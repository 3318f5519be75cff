"""Float64 central finite differences, the oracle of every gradient test."""
from __future__ import annotations

import copy
from typing import Any, Callable

import numpy as np

EPS = 1e-6


def _scalar(value: Any, sens: Any) -> float:
    """`value` reduced to one number: summed against `sens` (itself when None)."""
    if isinstance(value, tuple | list):
        return sum(_scalar(v, None if sens is None else s) for v, s in zip(value, sens))
    value = np.asarray(value, np.float64)
    return float(value.sum() if sens is None else (value * sens).sum())


def gradient(fn: Callable[..., Any], args: tuple, position: int, sens: Any = None,
             eps: float = EPS) -> np.ndarray:
    """d/d args[position] of sum(fn(*args) * sens) (fn's output itself when sens is None)."""
    x = np.asarray(args[position], np.float64)
    out = np.zeros_like(x)
    for idx in np.ndindex(x.shape):
        values = []
        for step in (eps, -eps):
            trial = list(copy.deepcopy(args))
            moved = np.array(x, copy=True)
            moved[idx] += step
            trial[position] = moved
            values.append(_scalar(fn(*trial), sens))
        out[idx] = (values[0] - values[1]) / (2 * eps)
    return out


def parameter_gradient(fn: Callable[..., Any], args: tuple, weight: np.ndarray,
                       sens: Any = None, eps: float = EPS) -> np.ndarray:
    """d/d weight of sum(fn(*args) * sens), moving the Parameter `weight` in place."""
    out = np.zeros(weight.shape, np.float64)
    for idx in np.ndindex(weight.shape):
        old = weight[idx]
        values = []
        for step in (eps, -eps):
            weight[idx] = old + step
            values.append(_scalar(fn(*copy.deepcopy(args)), sens))
        weight[idx] = old
        out[idx] = (values[0] - values[1]) / (2 * eps)
    return out


def close(got: Any, want: Any, rtol: float = 1e-5, atol: float = 1e-6) -> None:
    """Assert equal structures of arrays (tuples item by item)."""
    if isinstance(want, tuple | list):
        assert isinstance(got, tuple | list) and len(got) == len(want), (got, want)
        for g, w in zip(got, want):
            close(g, w, rtol, atol)
        return
    assert not isinstance(got, tuple | list), f"expected one array, got a {type(got).__name__}"
    np.testing.assert_allclose(np.asarray(got, np.float64), np.asarray(want, np.float64),
                               rtol=rtol, atol=atol)

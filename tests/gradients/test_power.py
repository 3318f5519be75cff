"""The gradient of a power, of 0-d and array bases, float32 and float64, with a Python-number
exponent and a run-time one: first and second derivatives against the formula, and the dtype eager
NumPy gives (under NumPy 1, a 0-d float32 raised to a run-time power may widen by value, so the
rule must keep a Python-number exponent a Python number)."""
from __future__ import annotations

import numpy as np
import pytest

import amber


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("shape", [(), (3,)])
def test_cube_first_and_second_derivative(dtype, shape):
    t = np.full(shape, 2.0, dtype)
    first = amber.grad(lambda s: (s ** 3).sum())(t)
    second = amber.grad(lambda s: amber.grad(lambda u: (u ** 3).sum())(s).sum())(t)
    np.testing.assert_allclose(first, 3 * t ** 2, rtol=1e-6)
    np.testing.assert_allclose(second, 6 * t, rtol=1e-6)
    assert np.asarray(first).dtype == dtype and np.asarray(second).dtype == dtype


def test_float_exponent_and_zero_d_base():
    t = np.array(1.5, np.float32)
    got = amber.grad(lambda s: s ** 2.5)(t)
    np.testing.assert_allclose(got, 2.5 * 1.5 ** 1.5, rtol=1e-6)
    assert np.asarray(got).dtype == np.float32


def test_run_time_exponent():
    x = np.array([1.5, 2.0], np.float64)
    y = np.array([2.0, 3.0], np.float64)
    dx, dy = amber.grad(lambda a, b: (a ** b).sum(), grad_position=(0, 1))(x, y)
    np.testing.assert_allclose(dx, y * x ** (y - 1), rtol=1e-12)
    np.testing.assert_allclose(dy, x ** y * np.log(x), rtol=1e-12)

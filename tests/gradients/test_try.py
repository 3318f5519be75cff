"""Gradients through try statements: equal to float64 finite differences when nothing was
caught; a run-time refusal naming the try line when an except block ran."""
from __future__ import annotations

import inspect

import numpy as np
import pytest

import amber

from .numeric import gradient

X = np.array([0.5, -1.0, 2.0])


def try_except(x, n):
    y = x * 2.0
    try:
        y = np.sin(y) * x
        if n > 5:
            raise ValueError("big")
    except ValueError:  # try_except's handler
        y = x + 1.0
    return (y * y).sum()


def try_else_finally(x):
    s = x * 0.5
    try:
        z = np.exp(s)
    except ZeroDivisionError:
        z = s
    else:
        z = z * x
    finally:
        w = np.cos(x)
    return (z * w).sum()


def early_return(x, n):
    try:
        if n > 0:
            return (np.tanh(x) * x).sum()
        y = x * 3.0
    except KeyError:
        y = x
    return (y * x).sum()


def try_in_loop(x, n):
    acc = x
    for i in range(n):
        try:
            acc = np.sin(acc) * x + i
        except ValueError:
            acc = x
    return acc.sum()


def loop_in_try(x, n):
    acc = x
    try:
        k = 0
        while k < n:
            acc = acc * np.cos(x)
            k += 1
    except ValueError:
        acc = x
    finally:
        t = x * x
    return (acc + t).sum()


def caught_in_loop(x, n):
    acc = x
    for i in range(3):
        try:
            if i == n:
                raise ValueError("skip")
            acc = acc * x
        except ValueError:
            pass
    return acc.sum()


CASES = [
    (try_except, (X, 2)), (try_else_finally, (X,)), (early_return, (X, 1)),
    (early_return, (X, 0)), (try_in_loop, (X, 3)), (try_in_loop, (X, 0)),
    (loop_in_try, (X, 4)), (caught_in_loop, (X, 7)),
]


@pytest.mark.parametrize("fn, args", CASES, ids=[f"{f.__name__}-{a[1:]}" for f, a in CASES])
def test_gradient_where_nothing_raised_matches_finite_differences(fn, args):
    got = amber.grad(fn)(*args)
    want = gradient(fn, args, 0)
    np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-7)


@pytest.mark.parametrize("fn, args", [(try_except, (X, 9)), (caught_in_loop, (X, 1))],
                         ids=["try_except", "caught_in_loop"])
def test_gradient_where_an_except_block_ran_is_refused_naming_the_try(fn, args):
    fn(*args)  # the forward is fine eagerly
    with pytest.raises(NotImplementedError, match="gradient of an except path") as info:
        amber.grad(fn)(*args)
    lines, first = inspect.getsourcelines(fn)
    try_line = first + next(k for k, text in enumerate(lines) if text.strip() == "try:")
    assert f"test_try.py:{try_line}:" in str(info.value)


def test_value_and_forward_unchanged_by_the_flag():
    value, grad = amber.value_and_grad(try_except)(X, 2)
    np.testing.assert_allclose(value, try_except(X, 2), rtol=1e-12)
    np.testing.assert_allclose(grad, gradient(try_except, (X, 2), 0), rtol=1e-6, atol=1e-7)


def three_trips(x):
    return try_in_loop(x, 3)


@pytest.mark.parametrize("fn", [try_else_finally, three_trips], ids=lambda f: f.__name__)
def test_forward_mode_and_jacobians_through_a_try(fn):
    """jvp and jacrev differentiate the backward (its If on whether a handler ran) again."""
    v = np.array([0.3, -0.2, 0.7])
    _, tangent = amber.ops.jvp(fn, (X,), (v,))
    want = (fn(X + 1e-6 * v) - fn(X - 1e-6 * v)) / 2e-6
    np.testing.assert_allclose(tangent, want, rtol=1e-6, atol=1e-7)
    np.testing.assert_allclose(amber.ops.jacrev(fn)(X), gradient(fn, (X,), 0), rtol=1e-6,
                               atol=1e-7)

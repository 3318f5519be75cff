"""`vjp_fn(v)` inside compiled code differentiates the forward `ops.vjp` built (its loop tapes and
branch flags), instead of inlining the forward again, when it is called in the same block with
no effect in between; otherwise (a second call, another block) it runs the forward again as
before, refused where an array was written in place since. Differential (compiled == eager) and
against float64 finite differences."""
from __future__ import annotations

import numpy as np
import pytest

import amber
from amber import ops


def forward(a: np.ndarray, y: np.ndarray) -> np.ndarray:
    s = a
    for _ in range(3):
        s = ops.sin(s) * y
    if s.sum() > 0:
        s = s * 2.0
    else:
        s = s - 1.0
    k = 0
    while s.sum() < 3.0 and k < 10:
        s = s * 1.3 + 0.5
        k += 1
    return s


def value_and_gradients(x: np.ndarray, y: np.ndarray) -> tuple:
    out, vjp_fn = ops.vjp(forward, x, y)
    return out, vjp_fn(ops.ones_like(out) * 0.5)


def _differences(x: np.ndarray, y: np.ndarray) -> list[np.ndarray]:
    """d sum(0.5 * forward) / d x and / d y in float64 by central differences."""
    eps, found = 1e-6, []
    for which in range(2):
        grad = np.zeros(4)
        for i in range(4):
            step = np.zeros(4)
            step[i] = eps
            up = [x + step, y] if which == 0 else [x, y + step]
            down = [x - step, y] if which == 0 else [x, y - step]
            grad[i] = 0.5 * (forward(*up).sum() - forward(*down).sum()) / (2 * eps)
        found.append(grad)
    return found


def test_vjp_fn_reads_the_forwards_values_and_the_code_has_the_forward_once() -> None:
    compiled = amber.jit(value_and_gradients)
    for x in (np.linspace(-1.0, 1.0, 4), np.linspace(-2.0, -0.5, 4)):  # NOTE: both branches
        y = np.linspace(0.5, 1.5, 4)
        out, grads = compiled(x, y)
        want_out, want_grads = value_and_gradients(x, y)
        np.testing.assert_allclose(out, want_out, rtol=1e-12)
        for got, eager, by_differences in zip(grads, want_grads, _differences(x, y)):
            np.testing.assert_allclose(got, eager, rtol=1e-12)
            np.testing.assert_allclose(got, by_differences, rtol=1e-5, atol=1e-7)
    assert compiled.code.count("np.sin(") == 1  # NOTE: the re-run inlined a second loop


def _in_a_loop(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    total = ops.zeros_like(x)
    i = 0
    while i < 3:
        out, vjp_fn = ops.vjp(forward, x * (i + 1.0), y)
        gx, _ = vjp_fn(out)
        total = total + gx
        i += 1
    return total


def test_vjp_and_its_call_in_a_loop_body() -> None:
    x, y = np.linspace(-1.0, 1.0, 4), np.linspace(0.5, 1.5, 4)
    compiled = amber.jit(_in_a_loop)
    np.testing.assert_allclose(compiled(x, y), _in_a_loop(x, y), rtol=1e-12)
    assert compiled.code.count("np.sin(") == 1


def _scaled_sine(a: np.ndarray, y: np.ndarray) -> np.ndarray:
    return ops.sin(a) * y


def _written_between(x: np.ndarray, y: np.ndarray) -> tuple:
    out, vjp_fn = ops.vjp(_scaled_sine, x, y)
    y[0] = 5.0  # NOTE: eager's residuals hold y before the write (sin(x) * y) and after
    return out, vjp_fn(ops.ones_like(out))


def _written_in_the_loop_around_the_call(x: np.ndarray, y: np.ndarray) -> list:
    out, vjp_fn = ops.vjp(forward, x, y)
    found = []
    for i in range(3):
        found.append(vjp_fn(out)[0])
        y[i] = 0.0  # NOTE: the next trip's call would see it
    return found


def _called_twice(x: np.ndarray, y: np.ndarray) -> tuple:
    out, vjp_fn = ops.vjp(forward, x, y)
    return vjp_fn(ops.ones_like(out)), vjp_fn(out)  # NOTE: the second runs the forward again


def test_a_second_call_runs_the_forward_again() -> None:
    x, y = np.linspace(-1.0, 1.0, 4), np.linspace(0.5, 1.5, 4)
    twice = amber.jit(_called_twice)
    for pair_got, pair_want in zip(twice(x, y), _called_twice(x, y)):
        for got, want in zip(pair_got, pair_want):
            np.testing.assert_allclose(got, want, rtol=1e-12)


def test_an_array_written_between_vjp_and_a_forward_run_again_is_refused() -> None:
    """Running the forward again after an in-place write would differentiate another forward
    than the one ops.vjp ran (eager's residuals mix values from before and after it)."""
    x, y = np.linspace(-1.0, 1.0, 4), np.linspace(0.5, 1.5, 4)
    for program, line in ((_written_between, "return out, vjp_fn(ops.ones_like(out))"),
                          (_written_in_the_loop_around_the_call,
                           "found.append(vjp_fn(out)[0])")):
        with pytest.raises(amber.CompileError, match="written in place between ops.vjp") as err:
            amber.jit(program)(x.copy(), y.copy())
        assert line in str(err.value)

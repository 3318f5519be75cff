"""`vjp_fn(v)` inside compiled code differentiates the forward `ops.vjp` built (its loop tapes and
branch flags), instead of inlining the forward again, when it is called in the same block with
no effect in between; otherwise (an in-place write since, a second call) it runs the forward
again as before. Differential (compiled == eager) and against float64 finite differences."""
from __future__ import annotations

import numpy as np

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
    y[0] = 5.0  # NOTE: the eager vjp_fn reads y itself, written: the forward runs again
    return out, vjp_fn(ops.ones_like(out))


def _called_twice(x: np.ndarray, y: np.ndarray) -> tuple:
    out, vjp_fn = ops.vjp(forward, x, y)
    return vjp_fn(ops.ones_like(out)), vjp_fn(out)  # NOTE: the second runs the forward again


def test_after_an_in_place_write_and_on_a_second_call_the_forward_runs_again() -> None:
    x, y = np.linspace(-1.0, 1.0, 4), np.linspace(0.5, 1.5, 4)
    compiled = amber.jit(_written_between)
    out, grads = compiled(x.copy(), y.copy())
    want_out, want_grads = _written_between(x.copy(), y.copy())
    np.testing.assert_allclose(out, want_out, rtol=1e-12)
    np.testing.assert_allclose(grads[0], np.cos(x) * [5.0, *y[1:]], rtol=1e-12)
    for got, want in zip(grads, want_grads):
        np.testing.assert_allclose(got, want, rtol=1e-12)
    twice = amber.jit(_called_twice)
    for pair_got, pair_want in zip(twice(x, y), _called_twice(x, y)):
        for got, want in zip(pair_got, pair_want):
            np.testing.assert_allclose(got, want, rtol=1e-12)

"""Bad input to a gradient gets a clear error naming the user's line, never a silent zero:
an integer input, a non-scalar output without sens, a position out of range, a weight that is
not a Parameter, an op the gradient cannot go through, a program the tape cannot record, an
in-place write through an alias."""
from __future__ import annotations

import numpy as np
import pytest

import amber
from amber import nn, ops

X = np.array([0.5, -1.0, 2.0])


def integer_input(x, n):
    return (x * n).sum()  # integer_input's line


def vector_output(x):
    return x * 2.0  # vector_output's line


def scalar(x, y):
    return (x * y).sum()  # scalar's line


def reflect_pad(x):
    return np.pad(x, 1, mode="reflect").sum()  # reflect_pad's line


def growing(x, n):
    y = x
    for _ in range(n):
        y = np.concatenate([y, y[: int(n)]])
    return (y * y).sum()


def list_items_in_a_loop(x, n):
    lst = [x, x * 2]
    for i in range(n):
        lst[i % 2] = lst[i % 2] * x  # list_items_in_a_loop's line
    return lst[0].sum()


def alias_write(x):
    y = x * 1.0
    v = y[0:2]
    v *= 3.0  # alias_write's line
    return (y * y).sum()


@pytest.mark.parametrize("call, message, line", [
    (lambda: amber.grad(integer_input, 1)(X, np.array([1, 2, 3])), "only floating-point",
     "integer_input's line"),
    (lambda: amber.grad(integer_input, 1)(X, 3), "not an array", "integer_input's line"),
    (lambda: amber.grad(vector_output)(X), "needs a sensitivity", "vector_output's line"),
    (lambda: amber.grad(scalar, 2)(X, X), "out of range", "scalar's line"),
    (lambda: amber.grad(scalar, (0, 3))(X, X), "out of range", "scalar's line"),
    (lambda: amber.grad(reflect_pad)(X), "reflect", "reflect_pad's line"),
    (lambda: amber.grad(alias_write)(X), "changed in place", "alias_write's line"),
])
def test_refused_with_the_users_line(call, message, line):
    with pytest.raises(amber.CompileError, match=message) as info:
        call()
    assert line in str(info.value)


def test_a_loop_the_tape_cannot_record_is_refused_at_its_line():
    with pytest.raises(amber.CompileError) as info:
        amber.grad(list_items_in_a_loop)(X, np.int64(2))
    assert "list_items_in_a_loop's line" in str(info.value)


def test_a_loop_growing_by_run_time_sizes_is_differentiated():
    """Concatenation at run-time offsets (once refused): equal to finite differences."""
    for n in (0, 1, 2, 3):
        got = amber.grad(growing)(X, np.int64(n))
        want = [(growing(X + d, n) - growing(X - d, n)) / 2e-6 for d in np.eye(3) * 1e-6]
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)


def test_refusals_inside_compiled_code_name_the_users_line():
    def outer(x):
        return amber.grad(vector_output)(x).sum()

    with pytest.raises(amber.CompileError, match="needs a sensitivity") as info:
        amber.jit(outer)(X)
    assert "vector_output's line" in str(info.value)


def test_a_weight_that_is_not_a_parameter_is_a_type_error():
    net = nn.Dense(3, 2)
    with pytest.raises(TypeError, match="not a Parameter"):
        amber.grad(net, None, [net.weight, np.ones(3)])


def test_stop_gradient_is_a_zero_by_request_not_a_refusal():
    def f(x):
        return (ops.stop_gradient(x * x) * x).sum()
    np.testing.assert_allclose(amber.grad(f)(X), X * X)

"""Messages for common mistakes: a wrong argument count points at the call and gives the
counts; a missing op or function is named as the user spells it (no module repr, no absolute
path) with a hint; a list where an array is needed suggests np.array."""
from __future__ import annotations

import inspect
import math

import numpy as np
import pytest

import amber
from amber import ops


@pytest.fixture(autouse=True)
def memory_only(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AMBER_CACHE", "0")


def compile_error(fn, *args) -> amber.CompileError:
    with pytest.raises(amber.CompileError) as info:
        amber.jit(fn)(*args)
    return info.value


def _line(fn, text: str) -> int:
    lines, first = inspect.getsourcelines(fn)
    return first + next(i for i, line in enumerate(lines) if text in line)


def helper(a, b, scale=1.0):
    return (a + b) * scale


def calls_helper_short(x):
    return helper(x)


def calls_helper_long(x):
    return helper(x, x, 2.0, 3.0)


def test_wrong_count_in_a_call_points_at_the_call_with_counts() -> None:
    err = compile_error(calls_helper_short, np.ones(2))
    assert isinstance(err, TypeError)
    assert err.line == _line(calls_helper_short, "return helper(x)") and err.col == 11
    assert err.message == ("helper() takes 2 to 3 arguments (a, b, scale=1.0) but 1 was given: "
                           "missing a required argument: 'b'")
    err = compile_error(calls_helper_long, np.ones(2))
    assert "takes 2 to 3 arguments" in err.message and "but 4 were given" in err.message


def two(x, y):
    return x + y


def test_wrong_count_of_the_compiled_call_points_at_that_call() -> None:
    with pytest.raises(TypeError) as info:
        amber.jit(two)(np.ones(2))  # NOTE: the line the error must name
    err = info.value
    assert isinstance(err, amber.CompileError) and err.file == __file__
    assert err.line == _line(test_wrong_count_of_the_compiled_call_points_at_that_call,
                             "amber.jit(two)(np.ones(2))")
    assert err.message.startswith("two() takes 2 arguments (x, y) but 1 was given")
    assert "amber.jit(two)(np.ones(2))" in str(err)


def missing_op(x):
    return ops.rellu(x)


def missing_np(x):
    return np.nonexistent_function(x)


def unsupported_np(x):
    return np.linalg.svd(x)


def runtime_math(x):
    return math.sqrt(x)


def call_module(x):
    return np.linalg(x)


@pytest.mark.parametrize("fn, message, hint", [
    (missing_op, "module amber.ops has no attribute 'rellu'", "did you mean 'relu'"),
    (missing_np, "module np has no attribute 'nonexistent_function'", "dir(np)"),
    (unsupported_np, "np.linalg.svd is not supported on run-time values", "amber.ops.NUMPY"),
    (runtime_math, "calling math.sqrt needs compile-time arguments, got run-time values",
     "compile-time values"),
    (call_module, "cannot compile a call to module np.linalg", "amber ops"),
])
def test_missing_functions_are_named_as_written(fn, message: str, hint: str) -> None:
    err = compile_error(fn, np.ones((2, 2)))
    assert err.message == message and hint in err.hint
    assert "<module" not in str(err) and "site-packages" not in str(err)
    assert "/" not in err.message


def list_operand(x):
    return x + [1.0, 2.0]


def tuple_operand(x):
    return x * (1.0, 2.0)


def list_argument(x):
    return np.concatenate([x, [1.0, 2.0]])


@pytest.mark.parametrize("fn", [list_operand, tuple_operand, list_argument])
def test_list_operands_are_converted_as_numpy_does(fn) -> None:
    want = fn(np.ones(2, np.float32))  # NOTE: eager NumPy converts the list itself
    got = amber.jit(fn)(np.ones(2, np.float32))
    assert got.dtype == want.dtype and np.array_equal(got, want)

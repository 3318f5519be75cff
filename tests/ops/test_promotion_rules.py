"""The dtype rules agree with the NumPy amber runs with (NumPy 1's value-based casting for
Python scalars and 0-d arrays, NumPy 2's NEP 50): checked against NumPy itself for every pair
of dtypes and ranks, and for constants whose value matters under NumPy 1."""
from __future__ import annotations

import itertools

import numpy as np
import pytest

import amber
from amber.graph import Builder, Graph, InsertPoint
from amber.ops.types import VALUE_BASED_CASTING, Scalar, Tensor, result_dtype

DTYPES = [np.dtype(d) for d in ("bool", "int8", "uint8", "int32", "int64", "float16",
                                "float32", "float64")]
OPERANDS = [Tensor((2,), d) for d in DTYPES] + [Tensor((), d) for d in DTYPES] + [
    Scalar(bool), Scalar(int), Scalar(float)]


def _sample(t):
    return t.kind(1) if isinstance(t, Scalar) else np.ones(t.shape, t.dtype)


PAIRS = [(a, b) for a, b in itertools.product(OPERANDS, OPERANDS)
         if not (isinstance(a, Scalar) and isinstance(b, Scalar))]  # NOTE: that is Python's


@pytest.mark.parametrize("a, b", PAIRS, ids=str)
def test_result_dtype_is_numpys(a, b) -> None:
    expected = np.add(_sample(a), _sample(b))
    assert result_dtype(a, b) == np.result_type(expected)


def _built_type(op: str, array: np.ndarray, constant: object):
    graph = Graph("g")
    x = graph.body.add_param(Tensor(array.shape, array.dtype), "x")
    b = Builder(InsertPoint.at_end(graph.body))
    return b.op(op, x, b.constant(constant)).type


@pytest.mark.parametrize("array, constant", [
    (np.ones(3, np.int8), 300), (np.ones(3, np.uint8), -1), (np.ones(3, np.uint8), 7),
    (np.ones(3, np.float16), 1e5), (np.ones(3, np.float32), np.float64(2.0)),
    (np.ones(3, np.int32), np.int64(5)), (np.ones(3, np.float32), np.float64(1e300)),
])
def test_constant_operands_promote_as_numpy_does(array, constant) -> None:
    try:
        with np.errstate(all="ignore"):
            expected = (array + constant).dtype
    except OverflowError:  # NumPy 2: a Python int out of the array's range
        assert not VALUE_BASED_CASTING
        return
    assert _built_type("add", array, constant).dtype == expected


def _runtime_sum(x, y):
    return x + y.sum()


def test_a_run_time_value_that_decides_the_dtype_is_refused(monkeypatch) -> None:
    monkeypatch.setenv("AMBER_CACHE", "0")
    x, y = np.ones(3, np.int8), np.ones(2, np.int64)
    if VALUE_BASED_CASTING:  # NumPy 1: int8 + int64 0-d is int8 or wider, by value
        with pytest.raises(amber.CompileTypeError, match="value-based casting"):
            amber.jit(_runtime_sum)(x, y)
    else:
        got = amber.jit(_runtime_sum)(x, y)
        want = _runtime_sum(x, y)
        assert got.dtype == want.dtype and np.array_equal(got, want)

"""Numba kernels compute what NumPy computes: bit for bit where the order of operations is
NumPy's (arithmetic, comparisons, sqrt, pairwise sums, reductions), within float tolerance for
the C library's transcendental functions and for matrix products; a kernel Numba cannot
compile falls back to NumPy for that loop with one warning."""
from __future__ import annotations

import sys
import warnings
from pathlib import Path

import numpy as np
import pytest

import amber
from amber import nn, ops
from amber.ops import elementwise

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "samples"))
from rnn import EarlyStopRNN, example_inputs  # noqa: E402

SPECIAL = np.array([0.0, -0.0, 1.0, -1.0, 0.5, -2.5, 3.0, 1e-30, -1e30, np.inf, -np.inf,
                    np.nan, 7.25, -7.25, 2.0, 1e-3], np.float32)


def both(fn, *args):
    """(NumPy backend result, Numba backend result), checking the Numba code has a kernel."""
    plain, fast = amber.jit(fn, backend="numpy"), amber.jit(fn, backend="numba")
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # NOTE: a fallback warning would hide a kernel bug
        got = fast(*args)
    assert "@numba.njit(" in fast.code, fast.code
    return plain(*args), got


def same_bits(a, b) -> None:
    """Equal values, dtypes and signs of zero; NaN equal to NaN."""
    for x, y in zip(a if isinstance(a, tuple) else (a,), b if isinstance(b, tuple) else (b,)):
        x, y = np.asarray(x), np.asarray(y)
        assert x.dtype == y.dtype and x.shape == y.shape, (x.dtype, y.dtype, x.shape, y.shape)
        assert np.array_equal(x, y, equal_nan=True), (x, y)
        if x.dtype.kind == "f":
            assert np.array_equal(np.signbit(x), np.signbit(y)), (x, y)


def float_ops(x, y):
    return (x + y, x - y, x * y, x / y, -x, abs(x), x * x, np.sqrt(np.abs(x)),
            np.maximum(x, y), np.minimum(x, y), ops.relu(x), np.clip(x, -1.0, 2.0),
            x > y, x == y, x <= 0.5, np.where(x > y, x, y), np.floor(x), np.ceil(x),
            np.sign(x), np.round(x), x * 0.5 - 1.0, 2.0 * x + y * 3, x ** 2, np.isnan(x),
            np.square(y), np.logical_not(x > 0), x.sum(), x.max(), x.min(), x.mean())


def float_rows(xs, ys):
    """`float_ops` on each row in turn, in a loop (the last row's results come out)."""
    out = float_ops(xs[0], ys[0])
    for k in range(xs.shape[0]):
        out = float_ops(xs[k], ys[k])
    return out


def test_elementwise_and_reductions_are_bit_identical(numba) -> None:
    y = np.roll(SPECIAL, 3) * np.float32(1.5)
    with np.errstate(all="ignore"):
        same_bits(*both(float_rows, np.stack([y, SPECIAL]), np.stack([SPECIAL, y])))


def integer_ops(a, b):
    return (a + b, a - b, a * b, a // b, a % b, -a, a & b, a | b, a ^ b, ~a, a > b,
            np.maximum(a, b), a.sum(), a.max(), a.argmax(), a.argmin(), (a > 0).all(),
            (a > 0).any(), a * 3 + 1, a.astype(np.float32) / 2)


def integer_rows(xs, ys):
    out = integer_ops(xs[0], ys[0])
    for k in range(xs.shape[0]):
        out = integer_ops(xs[k], ys[k])
    return out


@pytest.mark.parametrize("dtype", [np.int64, np.int32, np.int8, np.uint8])
def test_integer_ops_wrap_and_divide_as_numpy(numba, dtype) -> None:
    rng = np.random.default_rng(1)
    info = np.iinfo(dtype)
    a = rng.integers(info.min, info.max, (2, 24), endpoint=True).astype(dtype)
    b = rng.integers(-3 if info.min < 0 else 0, 4, (2, 24)).astype(dtype)  # zeros included
    with np.errstate(all="ignore"):
        same_bits(*both(integer_rows, a, b))


def sums(x):
    total = x.sum() * 0
    for k in range(3):
        total = total + (x * (k + 1)).sum() + x.mean()
    return total


@pytest.mark.parametrize("n", [1, 7, 8, 9, 100, 128, 129, 1000, 4097])
def test_sums_are_numpys_pairwise_sums(numba, n) -> None:
    x = np.random.default_rng(n).standard_normal(n) * 1e3
    same_bits(*both(sums, x))
    same_bits(*both(sums, x.astype(np.float32)))


def python_numbers(n):
    total, k, ratio = 0, 1, 0.0
    while k < n:
        total = total + k * 3 - (k // 2) + k % 5
        ratio = ratio + k / 7 - min(k, 4) + max(k, 9) * 0.5
        k = k + 1
    return total, ratio, k


def test_python_numbers_keep_python_semantics(numba) -> None:
    plain, got = both(python_numbers, 40)
    assert plain == got and [type(v) for v in got] == [int, float, int]


def divide_python_ints(n, d):
    k = 0
    while k < n:
        k = k + 10 // d
    return k


def test_python_division_by_zero_raises_in_a_kernel(numba) -> None:
    fast = amber.jit(divide_python_ints, backend="numba")
    assert fast(5, 3) == divide_python_ints(5, 3)
    with pytest.raises(ZeroDivisionError):
        fast(5, 0)


def count_up(x):
    total = 0
    for _ in range(100000):
        total = total * 3 + 1
    return x, total


def test_python_int_overflow_is_an_error_not_a_wrong_number(numba) -> None:
    fast = amber.jit(count_up, backend="numba")
    with pytest.raises(OverflowError, match="backend='numpy'"):
        fast(np.ones(2))


def walk(x, i):
    total = x[0] * 0
    for k in range(4):
        total = total + x[i + k]
    return total


def test_index_out_of_range_raises_index_error(numba) -> None:
    fast = amber.jit(walk, backend="numba")
    x = np.arange(6, dtype=np.float32)
    same_bits(fast(x, 1), walk(x, 1))
    with pytest.raises(IndexError):
        fast(x, 4)


def bubble_sort(x):
    a = x * 1.0
    n = a.shape[0]
    for i in range(n):
        for j in range(n - 1 - i):
            if a[j] > a[j + 1]:
                t = a[j]
                a[j] = a[j + 1]
                a[j + 1] = t
    return a


def test_item_assignment_in_place(numba) -> None:
    x = np.random.default_rng(3).standard_normal(9).astype(np.float32)
    same_bits(*both(bubble_sort, x))


def product_ops(a, b, v):
    return a @ b, a @ v, v @ b, v @ v, ops.dense(a, b.T), np.dot(a, b)


def products(a, b, v):
    out = product_ops(a, b, v)
    for k in range(2):
        out = product_ops(a * (k + 1), b, v)
    return out


@pytest.mark.parametrize("n", [4, 96])
def test_matrix_products_match_within_rounding(numba, n) -> None:
    rng = np.random.default_rng(n)
    a, b = (rng.standard_normal((n, n)).astype(np.float32) for _ in range(2))
    v = rng.standard_normal(n).astype(np.float32)
    plain, got = both(products, a, b, v)
    for p, g in zip(plain, got):
        np.testing.assert_allclose(g, p, rtol=1e-5, atol=1e-5)


def test_rnn_sample_agrees_with_eager(numba) -> None:
    for hidden in (16, 64):
        amber.set_seed(0)
        net = EarlyStopRNN(hidden_size=hidden)
        fast = amber.jit(net, backend="numba")
        h, steps = fast(*example_inputs())
        eager_h, eager_steps = net.construct(*example_inputs())
        assert "@numba.njit(" in fast.code and steps == eager_steps
        np.testing.assert_allclose(h, eager_h, rtol=1e-5, atol=1e-6)


class Loop(nn.Cell):
    def construct(self, x):
        for _ in range(200):
            if x.sum() > 0:
                x = x * 0.5 - 1.0
            else:
                x = x * 0.5 + 1.0
        return x


def test_control_loop_is_bit_identical_and_returns_a_new_array(numba) -> None:
    x = np.random.default_rng(0).standard_normal(16).astype(np.float32)
    kept = x.copy()
    plain, got = both(amber.jit(Loop()).__wrapped__.construct, x)
    same_bits(plain, got)
    np.testing.assert_array_equal(x, kept)


def tanh_loop(x):
    for _ in range(3):
        x = np.tanh(x) + 0.5
    return x


def test_a_kernel_numba_cannot_compile_falls_back_with_one_warning(numba, monkeypatch) -> None:
    broken = lambda types, attrs: amber.ops.Spelling("x.no_such_attribute", attrs)  # noqa: E731
    spelling = elementwise.tanh.numba
    object.__setattr__(elementwise.tanh, "numba", broken)
    try:
        fast = amber.jit(tanh_loop, backend="numba")
        x = np.linspace(-1, 1, 8)
        with pytest.warns(RuntimeWarning) as record:
            got = fast(x)
        messages = [str(w.message) for w in record if "Numba" in str(w.message)]
        assert len(messages) == 1 and "test_kernels.py" in messages[0], messages
        assert "numba" not in fast.code
        np.testing.assert_array_equal(got, tanh_loop(x))
    finally:
        object.__setattr__(elementwise.tanh, "numba", spelling)


def feedback(b, k):
    while k < 3:
        k = k + 1
        b = b + b.sum() * 0.1  # the second sum reads the result of the first, updated in place
        b = b + b.sum() * 0.1
    return b, k


def test_a_sum_read_by_an_elementwise_op_is_computed_once_before_its_loop(numba) -> None:
    """Found by the random programs: the sum was written inside the element loop of an add
    overwriting its operand in place, so later elements saw a different sum."""
    b = np.array([2.0, -3.0, 0.25], np.float32)
    fast = amber.jit(feedback, backend="numba")
    got, want = fast(b, 0), feedback(b, 0)
    assert "@numba.njit(" in fast.code
    same_bits(got[0], want[0])
    assert got[1] == want[1]

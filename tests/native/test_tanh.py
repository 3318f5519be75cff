"""float32 tanh in a Numba kernel (`ops.native_kernels.tanh_f32`, a rational function) against
NumPy's over the whole float32 range, and kernels reading their array parameters through
contiguous copies (`codegen/native/kernel.py`) compute what the NumPy backend computes,
whatever the layout of the arrays passed in."""
from __future__ import annotations

import sys
import warnings
from pathlib import Path

import numpy as np

import amber
from amber.ops import native_kernels

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "samples"))
from rnn import EarlyStopRNN  # noqa: E402

EXTREMES = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, -np.nan, 1e-45, -1e-45, 1.1754942e-38,
                     -1.1754942e-38, 3.4028235e38, -3.4028235e38, 9.1, -9.1, 9.0999, 9.1001,
                     8.0, 20.0, -20.0, 0.55, 1e-4, -1e-4, 0.5, 1.0, -1.0], np.float32)


def _ulps(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Distance in units in the last place between float32 arrays (no NaN)."""
    def ordered(x: np.ndarray) -> np.ndarray:
        bits = x.view(np.int32).astype(np.int64)
        return np.where(bits < 0, -(bits & 0x7FFFFFFF), bits)
    return np.abs(ordered(a) - ordered(b))


def _sweep() -> np.ndarray:
    """About 4 million float32 values spread over every exponent and both signs (every 1021st
    bit pattern), and the extremes."""
    bits = np.arange(0, 1 << 32, 1021, dtype=np.uint64).astype(np.uint32)
    return np.concatenate([bits.view(np.float32), EXTREMES])


def test_tanh_f32_is_within_one_ulp_of_the_correctly_rounded_tanh(numba) -> None:
    tanh = numba.njit(error_model="numpy")(native_kernels.tanh_f32)
    apply = numba.njit(error_model="numpy")(_apply)
    x = _sweep()
    got = apply(tanh, x, np.empty_like(x))
    nan = np.isnan(x)
    assert np.array_equal(np.isnan(got), nan)
    with np.errstate(invalid="ignore"):
        exact = np.tanh(x.astype(np.float64)).astype(np.float32)
    numpy_own = np.tanh(x)
    ok = ~nan
    assert _ulps(got[ok], exact[ok]).max() <= 1
    assert _ulps(got[ok], numpy_own[ok]).max() <= 2  # NOTE: NumPy's is also within 1 of exact
    assert np.array_equal(np.signbit(got[ok]), np.signbit(x[ok]))  # odd: -0.0 stays -0.0
    assert np.array_equal(got[np.isinf(x)], np.sign(x[np.isinf(x)]))
    assert (np.abs(got[ok]) <= 1).all()


def _apply(tanh, x, out):
    for i in range(x.shape[0]):
        out[i] = tanh(x[i])
    return out


def test_tanh_f32_runs_as_plain_python_too() -> None:
    x = np.float32(0.75)
    assert _ulps(np.array([native_kernels.tanh_f32(x)]), np.array([np.tanh(x)])).max() <= 1


def squash_all(x):
    for _ in range(3):
        x = np.tanh(x * 2.0)
    return x


def test_tanh_in_a_kernel_matches_numpy_on_extremes(numba) -> None:
    plain, fast = amber.jit(squash_all, backend="numpy"), amber.jit(squash_all, backend="numba")
    x = np.concatenate([EXTREMES, np.linspace(-12, 12, 999, dtype=np.float32)])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        got = fast(x)
    assert "tanh_f32(" in fast.code
    with np.errstate(over="ignore"):
        want = plain(x)
    assert got.dtype == want.dtype == np.float32
    np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-7)
    assert np.array_equal(np.isnan(got), np.isnan(want))


def shift_rows(x, w, b):
    out = x[0] @ w
    for t in range(x.shape[0]):
        out = np.tanh(x[t] @ w + b + out)
    return out


def test_parameters_of_any_layout_are_read_through_contiguous_copies(numba) -> None:
    rng = np.random.default_rng(0)
    x = rng.standard_normal((6, 4, 8), dtype=np.float32)
    w = rng.standard_normal((5, 8), dtype=np.float32)
    b = rng.standard_normal(10, dtype=np.float32)
    plain, fast = amber.jit(shift_rows, backend="numpy"), amber.jit(shift_rows, backend="numba")
    for args in [(x, w.T.copy(), b[:5].copy()),  # C-contiguous: no copy made
                 (x[:, ::-1], w.T, b[::2]),  # reversed, Fortran-order and strided views
                 (np.asfortranarray(x), w.T, b[1::2])]:
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            got = fast(*args)
        np.testing.assert_allclose(got, plain(*args), rtol=1e-5, atol=1e-6)
    assert "np.ascontiguousarray(" in fast.code


def write_and_read(x, b):
    for i in range(4):
        b[i] = i * 1.5
        x = x + b
    return x


def test_an_array_written_in_the_loop_is_not_read_through_a_copy(numba) -> None:
    base = np.arange(16, dtype=np.float32)
    x = np.ones(8, np.float32)
    plain_b, fast_b = base.copy()[::2], base.copy()[::2]
    plain = amber.jit(write_and_read, backend="numpy")(x, plain_b)
    fast_fn = amber.jit(write_and_read, backend="numba")
    got = fast_fn(x, fast_b)
    assert "@numba.njit(" in fast_fn.code
    np.testing.assert_array_equal(got, plain)
    np.testing.assert_array_equal(fast_b, plain_b)


def test_rnn_kernel_reads_contiguous_weights(numba) -> None:
    net = EarlyStopRNN(4, 8, threshold=1e30)
    x = np.random.default_rng(1).standard_normal((5, 3, 4), dtype=np.float32)
    fast = amber.jit(net, backend="numba")
    h, t = fast(x)
    eager_h, eager_t = net.construct(x)
    assert t == eager_t
    np.testing.assert_allclose(h, eager_h, rtol=1e-5, atol=1e-6)
    assert "np.ascontiguousarray(" in fast.code and "tanh_f32(" in fast.code

"""`param -= a @ b` as one BLAS call (ops/blas.py): NumPy's two steps bit for bit, whatever
the operands' order in memory, and NumPy's own steps where BLAS cannot take them."""
from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from amber.ops import blas
from amber.ops.blas import subtract_product_kernel


def numpy_steps(param: np.ndarray, a: np.ndarray, b: np.ndarray, ta: bool, tb: bool) -> Any:
    return np.subtract(param, np.matmul(a.T if ta else a, b.T if tb else b), out=param)


def operands(rng: np.random.Generator, dtype: Any, m: int, n: int, k: int, ta: bool, tb: bool,
             order: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    a = rng.standard_normal((k, m) if ta else (m, k)).astype(dtype)
    b = rng.standard_normal((n, k) if tb else (k, n)).astype(dtype)
    if order & 1:
        a = np.asfortranarray(a)
    if order & 2:
        b = np.asfortranarray(b)
    if order & 4:  # NOTE: strided views BLAS cannot take: NumPy's steps
        a = np.repeat(a, 2, axis=1)[:, ::2]
    return rng.standard_normal((m, n)).astype(dtype), a, b


@pytest.mark.parametrize("seed", range(4))
def test_numpy_s_numbers(seed: int) -> None:
    """Bit for bit up to an inner dimension of 128 (OpenBLAS's block in NumPy 1.26; NumPy 2's
    is larger); beyond it BLAS subtracts each block's partial sums in turn: float precision."""
    rng = np.random.default_rng(seed)
    for case in range(60):
        dtype = (np.float32, np.float64)[case % 2]
        m, n = (int(v) for v in rng.integers(1, 160, 2))
        k = int(rng.integers(1, 129) if case % 3 else rng.integers(129, 700))
        ta, tb = (bool(v) for v in rng.integers(0, 2, 2))
        param, a, b = operands(rng, dtype, m, n, k, ta, tb, int(rng.integers(0, 8)))
        want = numpy_steps(param.copy(), a, b, ta, tb)
        got = subtract_product_kernel(param, a, b, transpose_a=ta, transpose_b=tb)
        assert got is param
        message = f"{dtype.__name__} {m, n, k} {ta, tb}"
        if k <= 128:
            np.testing.assert_array_equal(got, want, err_msg=message)
        else:
            tolerance = 8 * np.finfo(dtype).eps * np.sqrt(k)
            np.testing.assert_allclose(got, want, rtol=tolerance, atol=tolerance, err_msg=message)


def test_the_blas_call_is_taken_where_it_fits(monkeypatch: pytest.MonkeyPatch) -> None:
    gemms = blas.blas_gemms()
    if gemms.get("f") is None:
        pytest.skip("NumPy's BLAS is not an OpenBLAS exposing cblas_sgemm")
    calls = []

    def counted(*args: Any) -> None:
        calls.append(args[:6])
        gemms["f"](*args)
    monkeypatch.setattr(blas, "blas_gemms", lambda: {"f": counted})
    rng = np.random.default_rng(0)
    param, a, b = operands(rng, np.float32, 40, 30, 20, True, False, 0)
    want = numpy_steps(param.copy(), a, b, True, False)
    np.testing.assert_array_equal(subtract_product_kernel(param, a, b, transpose_a=True), want)
    assert calls == [(101, 112, 111, 40, 30, 20)]


@pytest.mark.parametrize("why", ["aliased", "half", "vector", "read-only", "no blas"])
def test_numpy_s_steps_where_blas_cannot_take_the_arrays(why: str,
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(blas, "blas_gemms", lambda: {"f": pytest.fail, "d": pytest.fail,
                                                     "e": pytest.fail})
    rng = np.random.default_rng(1)
    dtype = np.float16 if why == "half" else np.float32
    param, a, b = operands(rng, dtype, 1 if why == "vector" else 30, 20, 10, False, False, 0)
    if why == "aliased":
        a = param[:, :10]
    if why == "no blas":
        monkeypatch.setattr(blas, "blas_gemms", lambda: {})
    want = numpy_steps(param.copy(), a.copy(), b, False, False)
    if why == "read-only":
        param.flags.writeable = False
        with pytest.raises(ValueError, match="read-only"):
            subtract_product_kernel(param, a, b)
        return
    np.testing.assert_array_equal(subtract_product_kernel(param, a, b), want)

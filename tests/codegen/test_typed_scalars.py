"""In a loop body, a Python number meeting a float array in `+ - * /` is read from a module-level
0-d array of the array's dtype (`x *= F32_0_5`): NumPy casts the number to that dtype anyway,
and takes a 0-d array about twice as fast. Where the cast could change a value (an int it
cannot hold exactly, a float it overflows), for other operators, other dtypes and outside
loops, the number stays as written. Results match eager bit for bit under either NumPy."""
from __future__ import annotations

import numpy as np
import pytest

import amber


def scaled(x):
    for _ in range(3):
        x = (x * 0.1 + 3) / 7 - 2.5
        x = 1.5 - x
    return x


@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.float64])
def test_numbers_take_the_arrays_dtype(dtype) -> None:
    jitted = amber.jit(scaled, backend="numpy")
    x = np.linspace(-1, 1, 6).astype(dtype)
    got, want = jitted(x.copy()), scaled(x.copy())
    assert got.dtype == want.dtype and got.tobytes() == want.tobytes()
    bits = np.dtype(dtype).itemsize * 8
    for name in (f"F{bits}_0_1", f"F{bits}_3", f"F{bits}_7", f"F{bits}_2_5", f"F{bits}_1_5"):
        assert f"{name} = np.array(" in jitted.code, name


def kept(x, n):
    y = x * 0.5  # outside the loop: as written
    for _ in range(3):
        n = n * 3 + 1  # an int array
        y = y ** 2.0  # NOTE: `**` has NumPy fast paths for numbers only
        y = y + 70000.0  # overflows float16: stays a number
        y = y - 4097  # no float16 holds 4097 exactly
    return y, n


@pytest.mark.parametrize("dtype", [np.float16, np.float32])
def test_numbers_that_could_change_stay_as_written(dtype) -> None:
    jitted = amber.jit(kept, backend="numpy")
    x = np.linspace(-1, 1, 6).astype(dtype)
    n = np.arange(4, dtype=np.int32)
    got, want = jitted(x, n), kept(x, n)
    for g, w in zip(got, want):
        assert g.dtype == w.dtype and np.array_equal(g, w, equal_nan=True)
    code = jitted.code
    assert "y = x * 0.5" in code and "n * 3 + 1" in code and "** 2.0" in code
    if dtype == np.float16:
        assert "70000.0" in code and "4097" in code
    else:
        assert "F32_70000_0" in code and "F32_MINUS_4097" not in code and "F32_4097" in code

"""Dtypes and odd shapes through control flow: uint8 / int8 wrap-around, float16 and float64,
bool arrays, mixed-dtype loop-carried values, empty arrays, 0-d arrays, a dtype check steering
a branch."""
import numpy as np

from amber import ops
from harness import f32, i32, randn, runs

U8 = np.array([0, 5, 250], np.uint8)
I8 = np.array([-128, 0, 127], np.int8)
F16 = np.array([0.5, -1.25, 3.0], np.float16)
F64 = np.array([0.1, -2.0, 1e-9], np.float64)
B = np.array([True, False, True])


@runs(U8, np.array([255, 1], np.uint8))
def uint8_wraps(x):
    return x + 10, x - 1, x * 2, x // 3


@runs(I8, np.array([1, -1], np.int8))
def int8_wraps_and_negates(x):
    return -x, x + 1, abs(x), x.astype(np.int32) * 2


@runs(F16, np.array([600.0], np.float16))
def float16_stays_float16(x):
    y = x * 2.0
    if y.max() > 10:
        y = y / 4.0
    return y, y.sum(), y.astype(np.float32)


@runs(F64, randn(2, 2, dtype=np.float64))
def float64_stays_float64(x):
    acc = np.zeros_like(x)
    for i in range(3):
        acc = acc + x * 0.1
    return acc, acc.dtype == np.float64


@runs(B, np.array([False, False]))
def bool_arrays(x):
    return ~x, x & ~x, x | True, x.sum(), x.any(), np.logical_not(x).astype(np.int8)


@runs((B, np.array([1.0, 2.0, 3.0], np.float32)), (np.array([False]), f32([5.0])))
def bool_mask_arithmetic(m, x):
    return x * m, np.where(m, x, -x), m + m


@runs(i32([1, 2, 3]), i32([0]))
def int_accumulator_meets_float(x):
    acc = x
    for i in range(2):
        acc = acc * 0.5
    return acc


@runs(np.zeros((0, 3), np.float32), randn(2, 3))
def empty_array_reductions(x):
    return x.sum(axis=0), x.shape[0], (x * 2.0).reshape(-1), x.sum()


@runs(np.zeros((0,), np.float32), f32([1.0]))
def max_of_empty_raises(x):
    return x.max()


@runs(f32(2.5), np.array(-1.0, np.float64), np.array(3, np.int32))
def zero_d_through_branches(x):
    if x > 0:
        y = x * 2
    else:
        y = -x
    return y, y.shape, y + 1


@runs(f32([1.0, 2.0]), np.array([1, 2], np.int64), F64)
def dtype_steers_branch(x):
    if x.dtype == np.float32:
        return x * 0.5
    elif x.dtype.kind == "i":
        return x // 2
    return x


@runs((f32([1.0, 2.0]), np.array([3, 4], np.int32)), (F64[:2], np.array([1, 1], np.uint8)))
def cast_to_other_dtype(x, y):
    return y.astype(x.dtype) + x, ops.cast(x, y.dtype)


@runs(np.arange(6, dtype=np.int64).reshape(2, 3), np.arange(4, dtype=np.int32).reshape(4, 1))
def integer_matmul_and_mean(x):
    return x @ x.T, x.mean(axis=0), x.sum(dtype=np.int32) if x.dtype == np.int64 else x.sum()


@runs(np.array([1.0, np.nan, np.inf], np.float32), f32([0.0, -0.0]))
def nan_and_inf_handling(x):
    bad = np.isnan(x) | ~np.isfinite(x)
    clean = np.where(bad, 0.0, x)
    return bad, clean, np.isnan(x).any()


@runs(np.array([[1, 2], [3, 4]], np.uint8), np.array([[200]], np.uint8))
def uint8_image_normalize(x):
    y = x.astype(np.float32) / 255.0
    if y.max() > 0.5:
        y = y - 0.5
    return y


def test_program(program, check_program):
    """Compiled and eager agree on every input."""
    check_program(program)

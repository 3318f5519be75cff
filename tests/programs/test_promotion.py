"""Dtype promotion follows the NumPy amber runs with: NumPy 2's NEP 50 (Python scalars are
weak, 0-d arrays are arrays) or NumPy 1's value-based casting (a Python scalar or 0-d constant
promotes by its value). Every program runs under both in CI; compiled must match eager, dtypes
included. Loops whose variables widen in their first iteration are peeled."""
import numpy as np

from harness import f32, runs

I8 = np.array([-100, 0, 100], np.int8)
U8 = np.array([0, 5, 250], np.uint8)
F16 = np.array([0.5, -1.25, 3.0], np.float16)


@runs(I8)
def int8_plus_large_constant(x):
    return x + 300  # NumPy 1: int16; NumPy 2: OverflowError, eagerly and compiled


@runs(U8)
def uint8_minus_negative_constant(x):
    return x + (-1)  # NumPy 1: int16; NumPy 2: OverflowError


@runs(U8, np.array([255], np.uint8))
def uint8_small_constants_stay(x):
    return x + 1, x * 3, x // 2


@runs(f32([1.0, 2.0]))
def float32_times_float64_constant(x):
    return x * np.float64(2.5)  # NumPy 1: float32; NumPy 2: float64


@runs(F16)
def float16_plus_large_float(x):
    return x + 1e5  # NumPy 1: float32; NumPy 2: float16 (inf)


@runs(f32([1.0, 2.0]), f32([3.5]))
def float32_times_float64_zero_d(x):
    s = np.float64(0.5) + 0.0
    return x * s, (x * s).dtype == np.float64


@runs(f32([0.5, 3.0, 9.0]))
def zero_d_float32_halved_in_a_loop(x):
    v = x[1]
    while v > 1.0:
        v = v / 2  # NumPy 1: float64 after the first iteration (the loop is peeled)
    return v


@runs(f32(5.0), f32(0.5))
def widens_in_the_first_iteration_everywhere(x):
    v = np.float32(1.0) * x
    while v > 1.0:
        v = v * np.float64(0.5)  # float32 * float64 scalar is float64 with either NumPy
    return v, v.dtype == np.float64


def checked(v):
    print("test", v)
    return v


@runs(f32(3.0), f32(0.5))
def peeled_condition_runs_as_often(x):
    v = np.float32(1.0) * x
    steps = 0
    while checked(v) > 1.0:
        v = v * np.float64(0.75)
        steps += 1
    return v, steps


@runs(f32([4.0, 0.5, 9.0]))
def loop_target_is_not_carried(x):
    total = np.float64(0.0)
    for v in x:  # NOTE: `v` changes dtype in the body, but each iteration binds it afresh
        while v > 1.0:
            v = np.sqrt(v) * np.float64(0.9)
        total = total + v
    return total


MASK = np.array([True, False, True])


@runs((MASK, np.array([1, 1])), (MASK, np.array([1, 2])), refused_on_numpy1=(
    "NumPy 1 computes `mask ** 2` as np.square (int8 for a bool mask) and `mask ** 3` by "
    "power (int64): the dtype depends on the run-time exponent's value"))
def bool_mask_raised_to_a_run_time_count(mask, x):
    return mask ** x.sum(), mask ** float(x[1])  # NumPy 2: int64 and float64, by type alone


@runs((MASK, np.array([1, 1])), (MASK, np.array([1, 2])))
def bool_mask_plus_a_run_time_number(mask, x):
    n = int(x.sum())
    return mask + n, mask * x.sum(), mask - n, mask / n, mask ** 2, mask ** 3


def test_program(program, check_program):
    """Compiled and eager agree on every input, dtypes included."""
    check_program(program)

"""Python scalars: int / float / bool arithmetic from shapes and from tensors, scalar arguments as
compile-time constants (int vs float vs bool of equal value), NumPy scalars and 0-d arrays,
builtins on scalars, and a Python int whose type depends on the branch taken."""
import math

import numpy as np

from harness import f32, i32, i64, randn, runs

POS = f32([1.0, 2.0, 3.0])
NEG = f32([-1.0, -2.0, 0.5])


@runs(randn(3, 4), randn(7, 2, seed=1))
def int_arithmetic_from_shape(x):
    n = x.shape[0]
    m = n * 2 + 1
    return m, m // 3, m % 4, -m, n ** 2, m / 2, m // -2


@runs(POS, NEG)
def float_from_tensor(x):
    f = float(x.sum())
    return f * 2, f / 3, f ** 2, -f, f - 1


@runs(i32([3, 4]), i32([-7, 2]))
def int_from_tensor(x):
    k = int(x[0])
    return k * 10 + 1, k // 2, k % 3, abs(k), k


@runs(POS, NEG)
def bool_from_tensor(x):
    b = bool(x[0] > 0)
    c = not b
    return b, c, b and x.shape[0] > 2, b or c, int(b) + 1


@runs((POS, 2), (POS, 2.0), (POS, True), (NEG, 2), (POS, 0))
def equal_scalars_of_different_types(x, k):
    return x * k, k, k / 2, k * 3


@runs((POS, 0.5), (POS, 0.25), (NEG, 0.5), (POS, -1.5))
def float_scalar_argument(x, alpha):
    if alpha > 0:
        return x * alpha, alpha + 1
    return x - alpha, alpha * 2


@runs((POS, True), (POS, False), (NEG, True))
def bool_flag_argument(x, training):
    if training:
        x = x * 0.5
    return x, not training


@runs((POS, None), (POS, NEG), (NEG, None))
def none_or_array_argument(x, mask):
    if mask is not None:
        x = x * (mask > 0)
    return x


@runs((POS, np.float32(2.0)), (NEG, np.float32(-1.0)), (POS, np.float64(0.5)))
def numpy_scalar_arguments(x, s):
    return x * s, s + 1


@runs((POS, f32(2.0)), (NEG, f32(-0.5)), (POS, i64(3)))
def zero_d_array_arguments(x, s):
    if s > 0:
        return x * s
    return x - s


@runs(i32([1, 2, 3]), i32([100, 200]))
def int32_sum_widens(x):
    s = x.sum()
    return s, s + 1, x.max() + 1, x[0] + np.int32(1)


@runs(POS, NEG, f32([0.0]))
def builtins_on_scalars(x):
    f = float(x[0])
    q, r = divmod(7, 3)
    return abs(f), pow(2, 5), max(f, 0.0), min(f, 0.0), q, r, abs(int(x[1]))


@runs(f32([1.26, 2.0]), f32([-2.5, 0.5]), f32([0.5, 1.5]))
def round_runtime_floats(x):
    f = float(x[0])
    return round(f * 10.0), round(f, 1), round(f)


@runs(POS, NEG)
def math_module_constants(x):
    return x * math.pi, math.sqrt(16.0), math.floor(2.7), math.inf > float(x[0])


@runs(i64([10 ** 8]), i64([3]), i64([-4]))
def python_int_beyond_int64(x):
    k = int(x[0])
    big = k * 10 ** 12
    return big, big // 7, big % 1000003


@runs(POS, NEG)
def branch_dependent_python_type(x):
    if x.sum() > 0:
        k = 1
    else:
        k = 2.5
    return k, k * 2


@runs(POS, NEG)
def bool_arithmetic(x):
    a = x[0] > 0
    t = True + True
    return t, a + 1, a * 3.0, a & (x[1] > 0)


@runs((3,), (0,), (-2,))
def only_scalar_arguments(n):
    total = 0
    for i in range(abs(n)):
        total += i * n
    return total, n * 1.5


@runs(randn(2, 3), randn(4, 5, seed=1))
def chained_scalar_comparisons(x):
    n, m = x.shape
    return 1 < n <= 3, n < m < 10, n == 2 != m, n != m


@runs(POS, NEG, f32([0.0, 0.0, 0.0]))
def scalar_ternaries(x):
    s = float(x.sum())
    sign = 1 if s > 0 else (-1 if s < 0 else 0)
    return sign, sign * x


@runs(POS, NEG)
def item_to_python_float(x):
    s = x.sum().item()
    return s, s * 2


@runs(f32([1e-8, 1.0]), f32([1e30, 1e-30]))
def python_float_keeps_double_precision(x):
    a = float(x[0])
    b = a + 1.0
    return b - 1.0, a * 1e10


@runs(i32([7, 3]), i32([-8, 3]), i32([9, -4]))
def python_int_floor_semantics(x):
    a = int(x[0])
    b = int(x[1])
    return a // b, a % b, -a // b, x[0] // x[1], x[0] % x[1]


def test_program(program, check_program):
    """Compiled and eager agree on every input."""
    check_program(program)

"""One control-flow statement per program: if / elif / ternary, while, for over ranges, tensors and
tuples, with inputs taking every branch and loops running zero, one and many times."""
import numpy as np

from amber import ops
from harness import f32, i32, i64, randn, runs

POS = f32([1.0, 2.0, 3.0])
NEG = f32([-1.0, -2.0, 0.5])
ZERO = f32([0.0, 0.0, 0.0])


@runs(POS, NEG, ZERO)
def if_tensor_cond(x):
    if x.sum() > 0:
        x = x * 2.0
    return x


@runs(POS, NEG)
def if_else_new_name(x):
    if np.max(x) > 2.5:
        y = x - 1.0
    else:
        y = x + 1.0
    return y


@runs(f32([3.0]), f32([1.5]), f32([0.5]), f32([-2.0]))
def if_elif_chain(x):
    s = x.sum()
    if s > 2:
        r = x * 3.0
    elif s > 1:
        r = x * 2.0
    elif s > 0:
        r = x
    else:
        r = -x
    return r


@runs((POS, 0), (POS, 1), (NEG, 2))
def if_on_scalar_arg(x, mode):
    if mode == 0:
        y = x
    elif mode == 1:
        y = x * x
    else:
        y = np.tanh(x)
    return y


@runs(f32([1.0, 1.0, -1.0]), f32([-1.0, 1.0, 1.0]), f32([-1.0, -1.0, -1.0]))
def if_and_or(x):
    if x[0] > 0 and x[1] > 0 or x[2] > 0:
        x = x + 10.0
    return x


@runs(POS, NEG)
def if_not_cond(x):
    if not x.min() > 0:
        x = np.abs(x)
    return x


@runs(POS, NEG)
def ternary_tensor(x):
    y = x * 2.0 if x.mean() > 0 else x / 2.0
    return y


@runs(f32([1.0, 1.0]), f32([3.0, 4.0]), f32([-1.0, 0.0]))
def chained_compare(x):
    if 0 < x.sum() < 5:
        return x + 1.0
    return x - 1.0


@runs(i32([2, 4, 6]), i32([1, 2, 3]), i64([7]))
def if_all_even(x):
    if (x % 2 == 0).all():
        x = x // 2
    else:
        x = x * 3 + 1
    return x


@runs(POS, NEG)
def if_any_elementwise(x):
    if np.any(x > 2.5):
        return np.where(x > 2.5, x, 0.0)
    return x


@runs(POS, NEG)
def if_sets_int_flag(x):
    flag = 0
    if x[0] > 0:
        flag = 1
    return x, flag


@runs(POS, NEG)
def if_updates_two_values(x):
    a = x
    b = x + 1.0
    if x.sum() < 0:
        a = b * 2.0
        b = a - x
    return a, b


@runs((POS, 0), (POS, 1), (POS, 5))
def while_scalar_counter(x, n):
    i = 0
    while i < n:
        x = x + 1.0
        i += 1
    return x, i


@runs(f32([20.0]), f32([6.0]), f32([0.5]), f32([-3.0, 1.0]))
def while_tensor_cond(x):
    while np.abs(x).sum() < 10:
        x = np.abs(x) * 2.0 + 1.0
    return x


@runs(f32([4.0, 9.0, 2.0]), f32([1.0]), f32([100.0, 0.25]))
def while_newton_sqrt(a):
    x = a
    while np.max(np.abs(x * x - a)) > 1e-3:
        x = 0.5 * (x + a / x)
    return x


@runs(f32([0.5]), f32([3.0, 7.0]), f32([1000.0]))
def while_true_break(x):
    steps = 0
    while True:
        x = x * 0.5
        steps += 1
        if x.max() < 1:
            break
    return x, steps


@runs(POS, NEG)
def for_range_const(x):
    for i in range(4):
        x = x + i
    return x


@runs((POS, 0), (POS, 1), (NEG, 7))
def for_range_scalar_arg(x, n):
    acc = ops.zeros_like(x)
    for i in range(n):
        acc = acc + x * i
    return acc


@runs(POS, ZERO)
def for_range_negative_step(x):
    for i in range(10, 0, -3):
        x = x * 0.5 + i
    return x


@runs(randn(0, 3), randn(1, 3), randn(5, 3, seed=1))
def for_rows_by_shape(x):
    acc = np.zeros(x.shape[1], np.float32)
    for i in range(x.shape[0]):
        acc = acc + x[i] * x[i]
    return acc


@runs(randn(1, 4), randn(3, 4, seed=2), randn(6, 4, seed=3))
def for_over_tensor_rows(x):
    s = np.zeros(4, np.float32)
    for row in x:
        s = s + np.maximum(row, 0.0)
    return s


@runs(POS, NEG)
def for_over_tuple_constants(x):
    for k in (1.0, -2.0, 0.5):
        x = x * k + 1.0
    return x


@runs(i64(0), i64(1), i64(6))
def for_range_from_tensor(n):
    total = np.zeros((), np.int64)
    for i in range(int(n)):
        total = total + i * i
    return total


@runs(POS, NEG)
def for_loop_var_after_loop(x):
    for i in range(3):
        x = x - i
    return x, i


@runs(i32([0, 3]), i32([2, 2]), i32([5, 1]))
def for_runtime_start_stop(bounds):
    out = np.float32(0.0)
    for i in range(int(bounds[0]), int(bounds[1])):
        out = out + np.float32(i)
    return out


def test_program(program, check_program):
    """Compiled and eager agree on every input."""
    check_program(program)

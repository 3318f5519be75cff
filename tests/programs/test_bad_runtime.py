"""Errors at run time (or found at compile time when the shapes already show them): compiled code
must raise eager's exception type with a note naming the user's line, or a CompileError at a
line eager passed through. Each program also has inputs on which it succeeds."""
import numpy as np

from amber import nn, ops
from harness import f32, i32, i64, randn, runs

POS = f32([1.0, 2.0, 3.0])


class BudgetExceeded(Exception):
    """A user-defined exception type raised from compiled code."""


def _checked_log(v):
    if v.min() <= 0:
        raise ValueError("log of a non-positive value")
    return np.log(v)


@runs(f32([2.0, 5.0, 7.0]), f32([1.0, 5.0, 7.0]), f32([-1.0, 0.0, 0.0]), f32([-4.0, 0.0, 0.0]))
def runtime_index_out_of_range(x):
    i = int(x[0])
    return x[i]


@runs(POS, f32([1.0, 2.0, 3.0, 4.0, 5.0, 6.0]))
def static_index_out_of_range(x):
    return x[5]


@runs(i64([2, 4]), i64([0, 4]))
def python_int_division_by_zero(x):
    k = int(x[0])
    return 10 // k, int(x[1]) % k


@runs(f32([2.0]), f32([0.0]))
def python_float_division_by_zero(x):
    f = float(x[0])
    return 1.0 / f


@runs(i32([1, 2]), i32([2 ** 20]))
def int32_plus_huge_python_int(x):
    if x[0] > 100:
        return x + 2 ** 40
    return x + 1


@runs(f32([1.0, 2.0, -1.0, 3.0, 4.0]), f32([1.0, -2.0, 3.0]))
def reshape_of_data_dependent_size(x):
    kept = x[x > 0]
    return kept.reshape(2, 2)


@runs((f32([1.0, -1.0, 2.0]), f32([3.0, 4.0])), (f32([1.0, 2.0, 2.0]), f32([3.0, 4.0])))
def matmul_of_data_dependent_size(x, y):
    kept = x[x > 0]
    return kept @ y


@runs((f32([1.0, 2.0]), i32([0])), (f32([1.0, 2.0]), i32([2])))
def list_index_from_data(x, i):
    items = [x, x * 2.0]
    return items[int(i[0])]


@runs(POS, f32([1.0, 2.0, 30.0]))
def raise_custom_exception(x):
    total = 0.0
    for v in x:
        total = total + float(v)
        if total > 10.0:
            raise BudgetExceeded("over budget")
    return total


@runs(POS, f32([1.0, 0.0]))
def raise_in_helper(x):
    return _checked_log(x) * 2.0


@runs(POS, f32([-1.0, 2.0]))
def print_then_raise(x):
    print("checking", x.shape[0])
    if x[0] < 0:
        print("about to fail")
        raise ValueError("negative head")
    print("fine")
    return x


@runs(f32([1.0]), f32([5.0]))
def raise_after_data_dependent_loop(x):
    n = 0
    while x[0] > 0:
        x = x - 1.0
        n += 1
        if n > 3:
            raise RuntimeError("too many steps")
    return n


@runs(randn(3, 2), randn(3, 3, seed=1))
def stack_rows_of_different_shapes(x):
    parts = []
    for i in range(x.shape[0]):
        parts.append(x[i, :i + 1] if x.shape[1] > 2 else x[i])
    return np.stack(parts)


@runs(f32([1.5, 2.0]), f32([np.nan, 1.0]))
def int_of_nan(x):
    return int(x[0])


@runs(f32(2.0), POS)
def float_of_non_scalar(x):
    return float(x) * 2.0


@runs(f32([1.0]), f32([-1.0]), POS)
def truth_value_of_array(x):
    if x > 0:
        return x
    return -x


@runs(POS, f32([[1.0, 2.0]]))
def len_of_zero_d(x):
    return len(x.sum(axis=0))


@runs(randn(2, 4), randn(2, 5, seed=1))
class WrongInputToLayer(nn.Cell):
    def __init__(self):
        super().__init__()
        self.fc = nn.Dense(4, 2)

    def construct(self, x):
        return self.fc(x)


@runs(i32([[1, 2]]), i32([[1, -1]]), i32([[0, 9]]))
class EmbeddingIdsOutOfRange(nn.Cell):
    def __init__(self):
        super().__init__()
        self.embed = nn.Embedding(5, 3)

    def construct(self, ids):
        return self.embed(ids)


@runs(POS, f32([1.0, 2.0]))
def ops_shape_error_at_run_time(x):
    y = x[x > 1.5]
    return ops.concat((y[None], x[None]), 0)


def test_program(program, check_program):
    """Compiled and eager agree on every input (results or errors)."""
    check_program(program)

"""Loop-carried values whose dtype NumPy promotion changes in the first iteration (an int32
accumulator that meets a float, int32 + int64), or whose kind or rank changes then (a vector
that becomes its sum, None that becomes an array, a dict that gains a key): the first iteration
is built before the loop,
under a run-time test that the loop runs, and the loop over the rest carries the promoted
dtype. When the loop may run zero times, the variable keeps its old dtype on that path, as in
Python, and what follows the loop is built on both paths."""
import numpy as np

from amber import nn
from harness import f32, i32, runs

# x[0] is the start value, x[1] the trip count (0 and negative: the loop never runs)
COUNTS = (i32([1, 2]), i32([-1, 0]), i32([3, 3]), i32([2, -2]))


@runs(*COUNTS)
def int32_accumulator_becomes_float64(x):
    acc = x[0]
    for i in range(x[1]):
        acc = acc * 0.5
    return acc, acc.dtype == np.float64


@runs(*COUNTS)
def int32_becomes_int64_then_float64(x):
    acc = x[0]
    i = 0
    while i < x[1]:
        if i == 0:
            acc = acc + np.int64(1)
        else:
            acc = acc / 2
        i += 1
    return acc


@runs(*COUNTS)
def promoted_value_used_after_a_while(x):
    acc = x[0]
    n = 0
    while n < x[1]:
        acc = acc + 0.25
        n += 1
    y = acc * 2
    return y, np.array(y).dtype == np.float64, n


@runs(*COUNTS)
def promoting_loop_inside_a_branch(x):
    acc = x[0]
    if x[0] > 0:
        for i in range(x[1]):
            acc = acc + np.float32(1.5)
    return acc


@runs(*COUNTS)
def promoting_loop_with_negative_step(x):
    acc = x[0]
    for i in range(x[1], 0, -1):
        acc = acc + i * 0.5
    return acc


@runs(f32([[1.0, 2.0], [3.0, 4.0]]), f32([[0.5, 0.5]]))
def int32_sum_of_float_rows(x):
    acc = np.int32(0)
    for row in x:
        acc = acc + row.sum()
    return acc


@runs(*COUNTS)
def two_variables_promoted(x):
    a = x[0]
    b = x[1]
    for i in range(x[1]):
        a = a * 1.5
        b = b + np.int64(2)
    return a, b


@runs(*COUNTS)
def int32_vector_divided_in_a_loop(x):
    v = x * 1
    for i in range(x[1]):
        v = v / 2
    return v


@runs((f32([1.0, 2.0]), 3), (f32([1.0, 2.0]), 0))
def int32_with_a_constant_trip_count(x, n):
    acc = np.int32(0)
    for i in range(n):
        acc = acc + x.sum()
    return acc


POS = f32([1.0, 2.0, 3.0])
NEG = f32([-1.0, -2.0, 0.5])


@runs(POS, NEG, f32([0.25, 0.25, 0.25]))
def vector_becomes_its_sum_in_a_loop(x):
    v = x
    for i in range(int(x[0] > 0) + 2):
        v = v.sum() * 0.1
    return v


@runs(POS, NEG, f32([0.25, 0.25, 0.25]))
def none_becomes_an_array_in_a_while(x):
    acc = None
    i = 0
    while i < 3 and x[i] > 0:
        acc = x[i] * 2 if acc is None else acc + x[i]
        i += 1
    if acc is None:
        return x
    return acc * x


@runs(POS, NEG)
def none_then_array_in_a_run_time_range(x):
    h = None
    for i in range(int(x.sum() > 0) * 2):
        h = x * i
    return h


@runs((POS, i32([3])), (POS, i32([0])), (NEG, i32([1])))
def dict_gains_a_key_in_a_run_time_loop(x, n):
    d = {}
    for i in range(int(n[0])):
        d["k"] = x * i
    return len(d), d.get("k", x)


class Halved(nn.Cell):
    def __init__(self, k):
        super().__init__()
        self.k = k

    def construct(self, x):
        return x * (self.k / 2)


class LayersPickedByAWhileCounter(nn.Cell):
    """A layer picked by a run-time counter (chosen at run time), and an int32 accumulator the
    first iteration makes float64: both at once."""
    def __init__(self):
        super().__init__()
        self.blocks = nn.CellList([Halved(1), Halved(2), Halved(3)])

    def construct(self, t, x):
        out = t
        while x < 3:
            out = out + self.blocks[x](t)
            x = x + 1
        return out


runs((i32([5]), i32(0)), (i32([5]), i32(2)), (i32([5]), i32(3)))(LayersPickedByAWhileCounter)


class LayersPickedByARunTimeRange(nn.Cell):
    def __init__(self):
        super().__init__()
        self.blocks = nn.CellList([Halved(1), Halved(2), Halved(3)])

    def construct(self, t, n):
        out = t
        for i in range(int(n)):
            out = out + self.blocks[i](t)
        return out


runs((i32([5]), i32(0)), (i32([5]), i32(2)), (i32([5]), i32(3)))(LayersPickedByARunTimeRange)


def test_program(program, check_program):
    """Compiled and eager agree on every input."""
    check_program(program)

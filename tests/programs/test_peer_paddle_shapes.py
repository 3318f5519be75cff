"""Paddle dy2static's shape programs with a run-time batch (issue 14; Paddle declares it with
`InputSpec(shape=[None, 5])`): the same programs called with several leading sizes, so from the
second call on they run with a symbolic batch; and the Python the issue names, each next to
control flow: np.asarray/np.array of run-time values, list literals as NumPy operands,
dict(foo=x), lists grown and popped in run-time loops, None next to arrays in conditions, an
accumulator widened by the first iteration."""
import numpy as np

from harness import f32, i32, i64, randn, runs

B5, B1, B3 = np.ones((5, 5), np.int32), np.ones((1, 5), np.int32), np.arange(15).reshape(3, 5)


@runs(B5, B1, B3.astype(np.int32))
def reshape_by_a_read_batch(x):
    a = np.reshape(x, x.shape)
    d = np.reshape(x, (-1, x.shape[0], len(x.shape) // 2))
    s = x.shape[0]
    e = np.reshape(x, (-1, s))
    return a, d, e


@runs(B5, B1, B3.astype(np.int32))
def batch_unpacked_then_swapped(x):
    a, b = x.shape
    return np.reshape(x, (b, a)), np.reshape(np.reshape(x, (-1, 1)), (b, a))


@runs(B5, np.ones((0, 5), np.int32), B3.astype(np.int32))
def batch_in_nested_branches(x):
    res = np.reshape(x, (-1, 1))
    if x.shape[0] < 1:
        if res.shape[0] > 1:
            res = np.full(x.shape, 2, np.int32)
        else:
            res = np.full(x.shape, 3, np.int32)
    return res


@runs(B5, B1, B3.astype(np.int32))
def batch_as_loop_bounds(x):
    res = np.full((1,), 0, np.int32)
    for i in range(x.shape[0]):
        res += 1
    i = 1
    while i < x.shape[0]:
        res += 1
        i = i + 2
    return res


@runs(B5, B1, B3.astype(np.int32))
def batch_read_before_a_rank_branch(x):
    batch_size = x.shape[0]
    if len(x.shape) < 1:
        res = x
    else:
        res = np.full((batch_size,), 8, np.int32)
    return res


@runs(np.zeros((4, 1), np.float32), np.zeros((2, 1), np.float32), np.zeros((7, 1), np.float32))
def zeros_of_a_reshaped_batch(x):
    x = np.reshape(x, (-1, x.shape[1]))
    return np.zeros((x.shape[0], 1), np.float32)


# -- the Python issue 14 names, next to control flow ---------------------------------------

POS = f32([1.0, 2.0, 3.0])
NEG = f32([-1.0, -2.0, 0.5])


@runs(POS, NEG)
def arrays_made_from_run_time_values(x):
    if x.sum() > 0:
        a = np.asarray([x.sum(), x.max()])
    else:
        a = np.array([x[0], x[1] * 2], dtype=x.dtype)
    return a, np.asarray(x) is x


@runs(POS, NEG)
def list_literals_as_operands_in_branches(x):
    if x[0] > 0:
        y = x + [1.0, 2.0, 3.0]
    else:
        y = np.maximum(x, [0.5, 0.0, 1.0])
    return y * np.array([2, 3, 4])


@runs(POS, NEG)
def dict_from_keywords_updated_in_a_branch(x):
    d = dict(foo=x, bar=x * 2)
    if x.sum() > 0:
        d["foo"] = d["foo"] + d["bar"]
    return d["foo"], len(d), sorted(d)


@runs((POS, i32([3])), (NEG, i32([0])), (POS, i32([1])))
def list_grown_and_popped_in_a_run_time_loop(x, n):
    out = [x]
    for i in range(int(n[0])):
        out.append(x * i)
        if i == 1:
            out.pop()
    return len(out), np.stack(out)


@runs((POS, None), (NEG, None), (NEG, POS))
def none_or_array_in_a_loop_condition(x, y=None):
    total = x * 0
    i = 0
    while (y is None or y.sum() > i) and i < 3:
        total = total + x
        i += 1
    return total, i


@runs((i64([1, 2]), i32([3])), (i64([4, 5]), i32([0])))
def accumulator_widened_by_the_first_iteration(x, n):
    acc = np.zeros(2, np.int32)
    for i in range(int(n[0])):
        acc = acc + x
    return acc


def test_program(program, check_program):
    """Compiled and eager agree on every input."""
    check_program(program)

"""Lists built at run time (appended to in a loop whose trip count only a call knows) and the
builtins users apply to them: `sum` (with and without a start, over zero, one and several
items, items broadcasting as `+` does), `max`/`min` of numbers, `len`, `reversed`, negative
indices, slices, `np.stack`/`np.concatenate` and `ops.stack`/`ops.concat`. Each agrees with
eager, raising where eager raises (an empty list's `max`, stacking nothing); what has no one
static type is refused in test_bad_semantics.py."""
import numpy as np

from amber import ops
from harness import f32, runs

X = f32([1.0, -2.0, 0.5])
TRIPS = (np.array(0), np.array(1), np.array(3))
"""Zero, one and several iterations, each a 0-d int array read at run time."""


def _scaled(x, n):
    outs = []
    for i in range(n):
        outs.append(x * i)
    return outs


@runs(*((X, n) for n in TRIPS))
def sum_of_a_run_time_list(x, n):
    outs = []
    for i in range(n):
        outs.append(x * (i + 1))
    return sum(outs)  # the int 0 when the loop never ran, as eagerly


@runs(*((X, n) for n in TRIPS))
def sum_of_a_run_time_list_with_an_array_start(x, n):
    outs = []
    for i in range(n):
        outs.append(np.tanh(x * i))
    return sum(outs, x)  # x itself when the loop never ran


@runs(*((X, n) for n in TRIPS))
def sum_of_a_run_time_list_written_in_place(x, n):
    start = x * 1.0
    outs = _scaled(x, n)
    total = sum(outs, start)  # start itself when empty: the write below shows through it
    total += 1.0
    total[0] = 7.0
    return total, start


@runs(*((X, n) for n in TRIPS))
def sum_of_a_run_time_list_then_more_math(x, n):
    total = sum(_scaled(x, n), np.zeros_like(x))
    return total * 2.0 + 1.0, len(_scaled(x, n))


@runs(*((X, n) for n in TRIPS))
def sum_of_a_run_time_list_of_numbers(x, n):
    vals = []
    for i in range(n):
        vals.append(float(x[i % 3]) * i)
    counts = []
    for i in range(n):
        counts.append(i * i)
    return sum(vals, 0.0), sum(counts), sum(counts, 10), sum(vals)  # the int 0 when empty


@runs(*((X, n) for n in TRIPS))
def sum_of_a_run_time_list_of_0d_arrays(x, n):
    vals = []
    for i in range(n):
        vals.append(x.sum() * i)
    return sum(vals), sum(vals, np.float64(0.5))


@runs(*((X, n) for n in TRIPS))
def sum_of_float32_items_with_a_float64_start(x, n):
    outs = _scaled(x, n)
    wide = sum(outs, np.ones(3))  # float64 + float32 items: float64, as start is
    return wide, sum(outs, 0.5)  # a Python float start keeps float32


@runs(*((X, n) for n in TRIPS))
def sum_of_int_items_with_a_float_start(x, n):
    outs = []
    for i in range(n):
        outs.append(np.arange(3) * i)
    return sum(outs, np.zeros(3)), sum(outs)


@runs(*((X, n) for n in TRIPS))
def sum_of_items_that_broadcast(x, n):
    m = np.stack([x, x * 2.0])
    outs = []
    for i in range(n):
        if i % 2 == 0:
            outs.append(m[:1] * i)  # (1, 3)
        else:
            outs.append(m * i)  # (2, 3): the sum broadcasts as + does
    return sum(outs, np.zeros((1, 3), np.float32))


@runs(*((X, n) for n in TRIPS))
def sum_of_a_run_time_list_grown_in_a_while(x, n):
    outs = []
    k = 0
    while k < n:
        outs.append(x ** 2 * k)
        k += 1
    return sum(outs, x * 0.0) / max(len(outs), 1)


@runs(*((X, n) for n in TRIPS))
def sum_of_a_run_time_list_inside_a_loop(x, n):
    acc = x
    for j in range(2):
        outs = _scaled(acc, n)
        acc = sum(outs, acc * 0.5)
    return acc


@runs(*((X, n) for n in TRIPS))
def max_and_min_of_a_run_time_list_of_numbers(x, n):
    vals = []
    for i in range(n):
        vals.append(x[i % 3] * (i - 1))
    return max(vals), min(vals)  # ValueError on an empty list, as eagerly


@runs(*((X, n) for n in TRIPS))
def max_of_a_run_time_list_of_python_floats(x, n):
    vals = []
    for i in range(n):
        vals.append(float(x.sum()) - i)
    return max(vals) if len(vals) > 0 else -1.0


@runs(*((X, n) for n in TRIPS))
def len_and_negative_indices_of_a_run_time_list(x, n):
    outs = _scaled(x, n)
    if len(outs) >= 2:
        return outs[-1] - outs[-2]
    return outs[-1]  # IndexError when empty, as eagerly


@runs(*((X, n) for n in TRIPS))
def run_time_negative_index(x, n):
    outs = _scaled(x + 1.0, n)
    return outs[-n]


@runs(*((X, n) for n in TRIPS))
def reversed_run_time_list(x, n):
    t = x
    for o in reversed(_scaled(x, n)):
        t = t * 0.5 + o
    return t


@runs(*((X, n) for n in TRIPS))
def slices_of_a_run_time_list(x, n):
    outs = _scaled(x, n)
    return sum(outs[::-1], x), len(outs[1:]), sum(outs[:-1], 0.0)


@runs(*((X, n) for n in TRIPS))
def numpy_stack_and_concatenate_of_a_run_time_list(x, n):
    outs = _scaled(x, n)
    return np.stack(outs), np.concatenate(outs)  # ValueError when empty, as eagerly


@runs(*((X, n) for n in TRIPS))
def ops_stack_and_concat_of_a_run_time_list(x, n):
    outs = _scaled(x, n)
    return ops.stack(outs), ops.concat(outs)


@runs(*((X, n) for n in TRIPS))
def stack_of_a_run_time_list_then_reduce(x, n):
    outs = _scaled(x, n)
    outs.append(x)
    return np.stack(outs, axis=1).sum(axis=1), np.concatenate(outs).max()


def test_program(program, check_program):
    """Compiled and eager agree on every input."""
    check_program(program)

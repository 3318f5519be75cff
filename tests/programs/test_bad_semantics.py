"""Python whose meaning compiled code cannot keep is refused at the line marked `# ERR` (see
`harness.check_rejected`), never compiled into a different result: writes into arrays the
caller owns (its lists and dicts are written through: test_caller_state.py), containers whose structure depends on a run-time trip count, an
in-place operator on a 0-d value that is an array on some paths only, a dict keyed by a
run-time value, `is` between a run-time number and a constant (CPython shares small ints, so
only the value can tell), a bool mask raised to a run-time Python int (its value decides the
dtype), a namedtuple that is a plain tuple on another path (then read), a namedtuple's
field assigned, `_make` and a namedtuple class with its own `__new__`, np.meshgrid with
copy=False (broadcast views), np.random draws with run-time arguments, a
nested function rebinding a variable (`nonlocal`) called in a loop, or while another reads it,
objects of plain classes made inside that would leave compiled code (returned, printed, kept in
a run-time list) or whose identity or attributes depend on the path, a class with operators."""
import collections

import numpy as np
import pytest

from amber import nn
from harness import check_rejected, f32, i32, runs

POS = f32([1.0, 2.0, 3.0])
TABLE = np.array([1.0, 2.0, 3.0])


@runs(np.array([2]))
def bool_mask_raised_to_a_run_time_python_int(x):
    mask = x > 0
    n = int(x[0])
    return mask ** n  # ERR (NumPy squares for 2: int8, and calls power for 3: int64)


@runs(POS)
def write_into_a_global_array(x):
    TABLE[0] = x.sum()  # ERR
    return TABLE


@runs(POS)
def view_of_a_global_array_written(x):
    v = TABLE[1:]
    v += x[:2]  # ERR
    return TABLE


def _accumulate(x, acc=[]):
    acc.append(x)  # ERR
    return len(acc)


@runs(POS)
def append_to_a_default_list(x):
    return _accumulate(x)


@runs((POS, i32([3])))
def tuple_grows_in_a_run_time_loop(x, n):
    res = ()
    for i in range(int(n[0])):  # ERR
        res = res + (x * i,)
    return res


@runs(i32([3, 1]))
def augmented_zero_d_array_or_scalar(x):
    t = np.array(x[0])
    for i in range(int(x[1]) + 1):
        t += 1  # ERR
        t = t * np.int32(2)  # NOTE: a NumPy scalar: int32 under NumPy 1 and 2 alike
    return t


@runs((POS, i32([3])))
def dict_keyed_by_a_run_time_index(x, n):
    d = {}
    for i in range(int(n[0])):
        d[i] = x * i  # ERR
    return len(d)


@runs(POS)
def vector_or_its_sum_carried_by_a_loop(x):
    v = x
    for i in range(int(x[0]) + 2):
        if v.sum() > 1:  # ERR
            v = v.sum() * 0.1
        else:
            return v  # v stays a vector on this path, the loop carries it
    return v


@runs(i32([1, 0]))
def identity_of_a_run_time_number(x):
    one = 1
    n = int(x.sum())
    return n is one  # ERR


@runs((POS, np.array(2)))
def sum_of_a_run_time_list_with_a_start_of_another_rank(x, n):
    outs = []
    for i in range(n):
        outs.append(x * i)
    return sum(outs, np.float32(0))  # ERR  (0-d when empty, 1-d otherwise)


@runs((POS, np.array(2)))
def class_of_a_sum_of_floats_from_the_int_zero(x, n):
    vals = []
    for i in range(n):
        vals.append(float(x[i]))
    return isinstance(sum(vals), float)  # ERR  (the int 0 when empty, a float otherwise)


@runs((POS, np.array(2)))
def int_or_float_accumulator_added_to_an_int_array(x, n):
    s = 0
    for i in range(n):
        s += 0.5
    return np.arange(3) + s  # ERR  (int64 when the loop never ran, float64 otherwise)


@runs((POS, np.array(2)))
def int_or_float_from_a_branch_asked_its_class(x, n):
    s = 0
    if n > 1:
        s = 0.5
    return isinstance(s, float)  # ERR


@runs((POS, np.array(2)))
def number_or_array_accumulator_added_to_a_0d_array(x, n):
    s = 0
    for i in range(n):
        s = s + x
    return x.sum() + s * 2, np.arange(3) + s  # ERR  (int64 where s is still 0)


@runs((POS, np.array(2)))
def run_time_list_of_mixed_dtypes(x, n):
    outs = []
    for i in range(n):  # ERR
        outs.append(x * i)
        outs.append(x.astype(np.float64) * i)
    return sum(outs)


@runs((POS, np.array(1)))
def max_of_a_run_time_list_of_arrays(x, n):
    outs = []
    for i in range(n):
        outs.append(x * i)
    return max(outs)  # ERR  (compares whole arrays)


# -- namedtuples: the class is part of the value ---------------------------------------------

Pair = collections.namedtuple("Pair", ("a", "b"))


class Clamped(Pair):
    """A namedtuple whose constructor does more than store its fields."""

    def __new__(cls, a, b):
        return super().__new__(cls, min(a, b), b)


@runs((POS, i32([2])))
def namedtuple_becomes_a_plain_tuple_in_a_run_time_loop(x, n):
    p = Pair(x, 0)
    for i in range(int(n[0])):  # ERR
        p = (p.a * 2, i) if i > 0 else tuple(p)
    return p


@runs(POS)
def namedtuple_on_one_path_plain_tuple_on_the_other_then_read(x):
    if x.sum() > 0:
        p = Pair(x, 1)
    else:
        p = (x, 1)
    return p.b  # ERR


@runs(POS)
def namedtuple_field_assigned(x):
    p = Pair(x, 1)
    p.a = x * 2  # ERR
    return p


@runs(POS)
def namedtuple_made_by_its_class_method(x):
    return Pair._make((x, 1))  # ERR


@runs(POS)
def namedtuple_with_its_own_constructor(x):
    return Clamped(1, 2), x  # ERR


@runs(POS)
def meshgrid_without_copies(x):
    gx, gy = np.meshgrid(x, x, copy=False)  # ERR
    return gx + gy


@runs(POS)
def random_draw_around_a_run_time_mean(x):
    np.random.seed(0)
    return np.random.normal(x, 1.0)  # ERR


@runs((POS, i32([3])))
def nonlocal_rebound_by_calls_in_a_loop(x, n):
    i = 0

    def inc():
        nonlocal i
        i += 1

    for k in range(int(n[0])):
        inc()  # ERR
    return i


@runs(POS)
def nonlocal_read_by_another_closure_meanwhile(x):
    i = 0

    def get():
        return i

    def inc():
        nonlocal i
        i += 1
        return get()  # ERR

    return inc()


class Record:
    """A plain class: its objects may be made in compiled code, but not leave it."""

    def __init__(self, value):
        self.value = value


class Scaled:
    """A class with an operator: its objects are more than records."""

    def __init__(self, value):
        self.value = value

    def __mul__(self, k):
        return Scaled(self.value * k)


@runs(POS)
def object_made_inside_returned(x):
    return Record(x)  # ERR


@runs(POS)
def object_made_inside_printed(x):
    r = Record(x)
    print(r)  # ERR
    return x


@runs(POS)
def one_object_or_another_picked_at_run_time(x):
    a, b = Record(x), Record(x * 2)
    r = a if x.sum() > 0 else b  # ERR
    r.value = 0
    return a.value, b.value


@runs(POS)
def attribute_set_on_one_path_only(x):
    r = Record(x)
    if x.sum() > 0:
        r.extra = 1
    return r.extra  # ERR


@runs(POS)
def object_of_a_class_with_operators(x):
    return (Scaled(x) * 2).value  # ERR


@runs((POS, i32([2])))
def objects_kept_in_a_list_grown_at_run_time(x, n):
    items = []
    for i in range(int(n[0])):  # ERR
        items.append(Record(x * i))
    return len(items)


def test_rejected(program, capsys):
    """A CompileError at the marked line, or eager's exception with a note there."""
    check_rejected(program, capsys)

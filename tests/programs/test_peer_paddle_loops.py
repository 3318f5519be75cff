"""Paddle dy2static's loop programs (issue 14), rewritten for NumPy: while loops on 1-element
arrays, `and`/`or`/`not` in loop conditions, names first bound in a loop body (zero-trip loops
included), break and continue in for and while, for over lists, tuples, arrays, enumerate and
zip, trip counts read from array elements and shapes."""
import numpy as np

from amber import nn
from harness import f32, i32, i64, randn, runs

ZERO = np.zeros(1, np.int32)


@runs(ZERO, i32([7]), i32([12]))
def while_on_a_one_element_array(x):
    i = x
    while x < 10:
        i = i + x
        x = x + 1
    return i


@runs(ZERO, 2.5)
def while_on_python_ints_only(x):
    a = 1
    while not a > 4 and a > 0:
        x = x + 1
        a = a + 1
    return x


@runs(ZERO, i32([9]))
def lambda_and_def_inside_a_while(x):
    i = x

    def relu(y):
        return np.maximum(y, 0)

    while x < 10:
        add = lambda a, b: a + b  # noqa: E731
        i = add(i, x)
        x = x + 1
    return relu(i)


@runs(ZERO, i32([5]))
def none_tests_in_loop_expressions(x):
    i = x if x is not None else x + 1
    flag = 1
    while x < 10:
        i = i + x if flag is not None else x + i
        x = x + 1
    return i


@runs(100, 1)
def array_created_in_each_iteration(max_len):
    for i in range(max_len):
        ret = np.zeros((1,), np.float32)
        ret += 2.0
    return ret


@runs(0)
def array_created_in_a_loop_that_never_runs(max_len):
    for i in range(max_len):
        ret = np.zeros((1,), np.float32)
    return ret


@runs(5, 3)
def name_used_before_bound_in_a_loop(max_len):
    x = np.full((1, 2), 1, np.int32)
    for i in range(max_len):
        if i > 1:
            s = a  # noqa: F821
        a = 1
        q, _ = x.shape
    return np.full((1,), s + q, np.int32)


@runs(0)
def constant_odd_range(max_len):
    ret = np.zeros((1,), np.float32)
    for i in range(1, 10, 2):
        ret += 2.0
    return ret + max_len


@runs(0)
def descending_ranges(max_len):
    ret = np.zeros((1,), np.float32)
    for i in range(10, 1, -2):
        ret += 2.0
    step = -2
    for i in range(10, 1, step):
        ret += i
    return ret


@runs(0)
def break_before_the_last_python_iteration(max_len):
    x = 0
    for i in range(3):
        if i == 2:
            break
        x += 1
    return x + max_len


@runs(i32([-10]), i32([-4]), i32([-1]))
def while_condition_with_or_groups(x):
    i = x
    while x <= -1 or x < -3 or (x < -7 or x < -5) or (x >= 0 and x < 10):
        i = i + x
        x = x + 1
    return i


@runs(ZERO, i32([20]), i32([-3]))
def while_condition_mixing_arrays_and_ints(x):
    i = x
    a = 1
    while x < 10 and (a < 4 or a > 0) or a < -1 or not x > -1:
        i = i + x
        x = x + 1
        a = a + 1
    return i, a


@runs(ZERO, i32([3]))
def shape_read_in_a_while_condition(x):
    a = np.zeros((1,), np.float32)
    i = np.copy(x)
    s = i.shape
    while i < 10 and s[0] >= 1:
        a += i.shape[0]
        i += 1
    return a


@runs(3, 0)
def trip_count_from_a_full_array(max_len):
    n = np.full((1,), max_len, np.int32)
    c = 5
    for i in range(int(n[0])):
        b = np.zeros((1,), np.float32)
        c = b + 3
    return c


@runs(3, 1)
def float64_array_bound_in_a_loop(max_len):
    for i in range(max_len):
        ret = np.zeros((3, 4, 5), np.float64)
    return ret


@runs(2)
def nested_loops_with_array_trip_counts(k):
    two = np.full((1,), k, np.int32)
    three = np.full((1,), 3, np.int32)
    for j in range(two[0]):
        for i in range(10):
            a = 2 + j
    for i in range(three[0]):
        b = np.zeros((1,), np.float32)
    return b, a


@runs(i32([1, 2, 3]))
def comprehensions_over_an_array_inside_a_loop(array):
    a = 1
    for j in range(len(array)):
        res = [v + a for v in array]
        res = [i for i in array]
        x = 1
    b = [i for i in array]
    print(x)
    return res, b


class DictOfDense(nn.Cell):
    def __init__(self):
        super().__init__()
        self.layers = {"d1": nn.Dense(3, 3, weight_init="ones"),
                       "d2": nn.Dense(3, 3, weight_init="ones"),
                       "d3": nn.Dense(3, 3, weight_init="ones")}

    def construct(self, x):
        out = 0
        for name in self.layers:
            out += self.layers[name](x)
        return out


runs(randn(2, 3))(DictOfDense)


# -- break and continue --------------------------------------------------------------------

@runs(i64([0]), i64([3]))
def continue_skips_the_tail(x):
    for i in range(10):
        x += 1
        if i > 5:
            continue
            x += 10086
        x += i
    return x


@runs(i64([0]))
def continue_at_the_end_of_the_body(x):
    for i in range(10):
        x += 1
        if i > 5:
            continue
    return x


@runs(i64([0]), i64([2]))
def continue_in_a_while_on_an_array_counter(x):
    i = np.full((1,), 0, np.int32)
    while i < 10:
        i += 1
        if i > 5:
            continue
            x += 10086
        x += i
    return x


@runs(i64([0]))
def break_skips_the_tail(x):
    for i in range(10):
        x += 1
        if i > 5:
            break
            x += 10086
        x += i
    return x


@runs(i64([0]))
def break_at_the_end_of_the_body(x):
    for i in range(10):
        x += 1
        if i > 5:
            break
    return x


@runs(i64([0]), i64([7]))
def break_in_a_while_on_an_array_counter(x):
    i = np.full((1,), 0, np.int32)
    while i < 10:
        i += 1
        if i > 5:
            break
            x += 10086
        x += i
    return x


@runs(i64([0]))
def break_and_continue_on_array_conditions(x):
    for i in range(1, 10, 1):
        if i <= 4:
            x += 1
            continue
        else:
            x += 10010
            break
        x += 10086
    a = np.full((1,), 0, np.int32)
    b = np.full((1,), 3, np.int32)
    for i in range(b[0]):
        if a <= 4:
            x += 1
            a += 1
            continue
        else:
            x += 10010
            break
        x += 10086
    return x


@runs(i64([0]))
def loops_with_break_in_an_else_branch(x):
    if False:
        pass
    else:
        for i in range(0, 10):
            if i > 5:
                x += 1
                break
            x += i
    if False:
        pass
    else:
        for i in range(0, 10):
            x += 1
            break
            x += i
    return x


@runs(randn(4, 5, seed=1) * 0.01, randn(4, 5, seed=2) + 1)
def break_on_a_sum(x):
    x = np.copy(x)
    for i in range(10):
        if x.sum() > 5:
            break
            x += 10086
        x += i
        if i < 3:
            x = x * 2
    return x


@runs(i64([0]), i64([-50]))
def break_on_an_array_counter_before_use(x):
    i = np.full((1,), 0, np.int32)
    while i < 10:
        if i > 5:
            break
            x += 10086
        x += i
        i += 1
    return x


# -- for over containers -------------------------------------------------------------------

@runs(np.array([5]), np.array([0]))
def range_of_an_item(x):
    z = np.full((1,), 0, np.int32)
    for i in range(x.item()):
        z = z + i
    return z


@runs(([1, 2, 3],), ([],))
def for_over_a_list_argument(xs):
    z = np.full((1,), 0, np.int32)
    for x in xs:
        z = z + x
    return z


@runs(([1, 2, 3],))
def enumerate_a_list_argument(xs):
    z = np.full((1,), 0, np.int32)
    for i, x in enumerate(xs):
        z = z + x + i
    return z


@runs(np.array([1, 2, 3, 4, 5]), np.array([], np.int64))
def for_over_an_array(xs):
    z = np.full((1,), 0, np.int32)
    for x in xs:
        z = z + x
    return z


@runs(np.array([1, 2, 3, 4, 5]), np.array([], np.int64))
def enumerate_an_array(xs):
    y = np.full((1,), 0, np.int32)
    z = np.full((1,), 0, np.int32)
    for i, x in enumerate(xs):
        y = y + i
        z = z + x
    return y, z


@runs(np.array([1, 2, 3, 4, 5]))
def enumerate_an_array_from_one(xs):
    y = np.full((1,), 0, np.int32)
    z = np.full((1,), 0, np.int32)
    for i, x in enumerate(xs, 1):
        y = y + i
        z = z + x
    return y, z


@runs(np.array([5]), np.array([2]))
def range_of_an_element_with_break(x):
    z = np.full((1,), 0, np.int32)
    for i in range(x[0]):
        z = z + i
        if i > 2:
            break
    return z


@runs(np.array([1, 2, 3, 4, 5]), np.array([1, 2]))
def enumerate_with_break(xs):
    y = np.full((1,), 0, np.int32)
    z = np.full((1,), 0, np.int32)
    for i, x in enumerate(xs):
        y = y + i
        z = z + x
        if i > 2:
            break
    return y, z


@runs(np.array([1, 2, 3, 4, 5]), np.array([1, 2]))
def enumerate_with_continue(xs):
    y = np.full((1,), 0, np.int32)
    z = np.full((1,), 0, np.int32)
    for i, x in enumerate(xs):
        y = y + i
        if i > 2:
            continue
        z = z + x
    return y, z


@runs(np.array([1, 2, 3, 4, 5]))
def enumerate_from_one_with_break_and_continue(xs):
    y = np.full((1,), 0, np.int32)
    z = np.full((1,), 0, np.int32)
    for i, x in enumerate(xs, 1):
        y = y + i
        z = z + x
        if i > 2:
            break
    for i, x in enumerate(xs, 1):
        y = y + i
        if i > 2:
            continue
        z = z + x
    return y, z


@runs(np.array([5]), np.array([0]))
def list_appended_then_iterated(x):
    n = np.full((1,), 5, np.int32)
    a = []
    for i in range(n[0]):
        a.append(x + i)
    y = np.full((1,), 0, np.int32)
    for v in a:
        y = y + v
    z = np.full((1,), 0, np.int32)
    for i, v in enumerate(a):
        y = y + i
        z = z + v
    return y, z


@runs(np.array([1, 2, 3]), np.array([0, 4]))
def nested_range_of_each_element(xs):
    x = np.full((1,), 0, np.int64)  # int32 would turn int64 on some paths only: refused
    for i, num in enumerate(xs):
        for idx in range(num):
            x = x + num
    return x


@runs(np.array([1, 2, 3, 4, 5]))
def for_over_a_slice(xs):
    z = np.full((1,), 0, np.int32)
    for x in xs[0:]:
        z = z + x
    for x in xs[::-2]:
        z = z * 2 + x
    return z


@runs(f32([1.0, 2.0, 3.0]))
def rows_unpacked_into_three_names(x):
    z = np.array([[1, 2, 3], [1, 2, 3], [1, 2, 3]])
    a_result = np.zeros(3)
    b_result = np.zeros(3)
    c_result = np.zeros(3)
    for a, b, c in z:
        a_result += a
        b_result += b
        c_result += c
    return a_result + x, b_result, c_result


@runs(f32([1.0, 2.0, 3.0, 4.0, 5.0]))
def enumerate_pairs_kept_whole(x):
    xs = [x, x, x]
    acc = np.zeros(5, np.float32)
    for t in enumerate(xs):
        acc += t[1] * t[0]
    return acc


@runs(f32([1.0, 2.0, 3.0, 4.0, 5.0]))
def enumerate_with_an_unpacked_array(x):
    xs = [x, x * 2, x * 3]
    a_r = np.zeros(1, np.float32)
    e_r = np.zeros(1, np.float32)
    for i, (a, b, c, d, e) in enumerate(xs):
        a_r += a
        e_r += e * i
    return a_r, e_r


class CopiesRows(nn.Cell):
    def __init__(self):
        super().__init__()
        self.high = 5
        self.low = 3

    def construct(self, x):
        y = np.zeros((10, 2, 3)) + x
        z = []
        for i in range(self.high - self.low):
            z.append(y[i].copy())
        return z


runs(f32([1.0, 2.0, 3.0]))(CopiesRows)


@runs(0)
def for_over_literal_list_and_tuple(k):
    z = np.full((1,), 0, np.int32)
    for x in [1, 2, 3]:
        z = z + x
    for x in (1, 2, 3):
        z = z * x + k
    return z


@runs((randn(2, 10), randn(2, 10, seed=5)))
def zip_of_two_arrays(x, y):
    total = np.zeros(10, np.float32)
    for i, j in zip(x, y):
        a = i + j
        total = total + a
    return x + y, total


@runs(0)
def list_in_a_dict_read_back_while_enumerating(k):
    feats = {}
    feats["key"] = []
    idx_all = np.arange(0, 10)
    for i, idx in enumerate(idx_all):
        if i > 1:
            feat = feats["key"][-2]
        feats["key"].append(idx + k)
    return feat


# -- shapes as trip counts -----------------------------------------------------------------

@runs(np.ones(5, np.int32), np.ones(0, np.int32))
def trip_counts_from_shape_and_rank(x):
    res = np.full((1,), 0, np.int32)
    for i in range(x.shape[0]):
        res += 1
    n = x.shape[0]
    for i in range(n):
        res += 1
    for i in range(len(x.shape)):
        res += 1
    return res


@runs(np.ones(5, np.int32), np.ones(1, np.int32))
def while_bounds_from_shape_and_rank(x):
    res = np.full((1,), 0, np.int32)
    i = 1
    while i < x.shape[0]:
        res += 1
        i = i + 2
    shape = x.shape
    i = 1
    while len(shape) > i:
        res += 1
        i += 1
    y = np.ones((1, 5))
    rows = y.shape[0]
    i = 1
    while rows > i:
        x += 1
        i += 1
    return res, x


@runs((i64([1, 2, 3]), 3), (i64([4, 5]), 0), (i64([7]), 1))
def int32_total_skipped_by_continue_in_a_while(xs, n):
    total = np.full((1,), 0, np.int32)
    i = 0
    while i < n:
        i += 1
        if i > 2:
            continue  # from the third iteration on: the first one promotes total to int64
        total = total + xs[i % len(xs)]
    return total


def test_program(program, check_program):
    """Compiled and eager agree on every input."""
    check_program(program)

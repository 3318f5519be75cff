"""Returns from inside branches and (nested) loops, and the shapes a result can take: arrays,
0-d values, Python scalars, None, nested tuples and lists."""
import numpy as np

from harness import f32, i32, randn, runs

POS = f32([1.0, 2.0, 3.0])
NEG = f32([-1.0, -2.0, 0.5])
MIX = f32([2.0, -3.0, 0.25])


@runs(POS, NEG)
def early_return_guard(x):
    if x.sum() < 0:
        return x * 0.0
    y = x * 2.0
    return y + 1.0


@runs(POS, NEG)
def return_in_both_branches(x):
    if x[0] > 0:
        return np.sqrt(x * x)
    else:
        return -x


@runs(f32([5.0]), f32([1.5]), f32([0.5]), f32([-1.0]))
def return_in_elif_chain(x):
    v = x[0]
    if v > 3:
        return 3
    elif v > 1:
        return 2
    elif v > 0:
        return 1
    return 0


@runs(f32([1.0, 3.0, -2.0, 4.0]), f32([1.0, 1.0]), f32([-5.0]))
def return_index_from_while(x):
    i = 0
    while i < x.shape[0]:
        if x[i] < 0:
            return i
        i += 1
    return -1


@runs(randn(6), randn(6, seed=4) + 3.0, f32([9.0, -9.0]))
def return_value_from_for(x):
    for v in x:
        if v < 0:
            return v
    return np.float32(0.0)


@runs(randn(4, 5), randn(3, 3, seed=2) + 3.0, randn(2, 2, seed=3) - 3.0)
def return_from_nested_loops(x):
    for i in range(x.shape[0]):
        for j in range(x.shape[1]):
            if x[i, j] < -1.0:
                return i, j
    return -1, -1


@runs((POS, 3), (NEG, 3), (MIX, 0))
def return_three_deep(x, n):
    for i in range(n):
        k = 0
        while k < 3:
            if x[k] * i > 2.0:
                return x * i, k
            k += 1
    return x, -1


@runs(POS, NEG)
def return_nested_tuple(x):
    a = x.sum()
    if a > 0:
        return (x, a), x.shape[0]
    return (-x, -a), 0


@runs(POS, NEG)
def return_list(x):
    if x.min() > 0:
        return [x, x * 2.0]
    return [x * 3.0, x]


@runs(POS, MIX, f32([60.0, 0.0, 0.0]))
def no_return_statement(x):
    y = x * 2.0
    if y.sum() > 100.0:
        y = y / 2.0


@runs(POS, NEG)
def return_none_or_array(x):
    if x.sum() < 0:
        return None
    return x + 1.0


@runs(POS, NEG)
def bare_return_in_branch(x):
    if x[0] < 0:
        return
    return x


@runs(POS, NEG)
def return_python_float(x):
    s = float(x.sum())
    if s > 0:
        return s * 0.5
    return -1.5


@runs(POS, NEG)
def return_comparison_results(x):
    return x.sum() > 0, bool(x[0] > 0), x > 0, 3 > 2


@runs(POS, NEG, MIX)
def return_from_unrolled_tuple_loop(x):
    for k in (2, 1, 0):
        if x[k] < 0:
            return k, x[k]
    return -1, x[0]


@runs(POS, NEG, MIX)
def return_after_search_flag(x):
    found = False
    for i in range(x.shape[0]):
        if x[i] > 1.5:
            found = True
            break
    if not found:
        return None, -1
    return x[i], i


@runs(f32([3.0]), f32([0.1]), f32([1000.0]))
def return_inside_while_true(x):
    n = 0
    while True:
        if x[0] < 1.0:
            return x, n
        x = x / 3.0
        n += 1


@runs(randn(5), randn(8, seed=1), f32([0.0]))
def return_with_continue(x):
    seen = 0
    for v in x:
        if v < 0:
            continue
        seen += 1
        if seen == 3:
            return v, seen
    return np.float32(-1.0), seen


@runs(i32([4, 5, 6]), i32([0, 9]))
def return_zero_d_values(x):
    if x[0] > 0:
        return x[0], x.sum()
    return x[-1], x.max()


@runs(POS, NEG)
def return_input_unchanged(x):
    if x.sum() > 0:
        return x
    return x * 1.0


@runs(POS, NEG, MIX, f32([1.0, -1.0, -1.0]))
def return_in_else_only(x):
    r = x * 0.0
    if x[1] > 0:
        r = x * 5.0
    else:
        if x[2] > 0:
            return x
        r = r - 1.0
    return r


@runs((POS, 4), (NEG, 4), (POS, 0))
def return_loop_counter(x, n):
    i = 0
    for i in range(n):
        x = x * 2.0
        if x.max() > 10.0:
            return i
    return i + 100


def test_program(program, check_program):
    """Compiled and eager agree on every input."""
    check_program(program)

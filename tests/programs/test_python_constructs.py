"""Python constructs other dynamic-to-static compilers' tests exercise: lambdas and nested
functions (closures read the enclosing variables when called; `nonlocal` rebinds them, called
outside branches and loops of the function defining them), `del`, loops with `else`,
generator expressions and dict comprehensions, `and`/`or` tests mixing arrays and None, a test
that would be ambiguous in a branch that never runs, while loops decided at compile time, and
functions passed in as arguments."""
import numpy as np

from harness import f32, i32, runs

POS = f32([1.0, 2.0, 3.0])
NEG = f32([-1.0, -2.0, 0.5])


def _apply(fn, v):
    return fn(v) + 1.0


@runs(POS, NEG)
def lambdas(x):
    double = lambda v: v * 2.0  # noqa: E731
    scale = 3.0
    scaled = lambda v, s=scale: v * s  # noqa: E731
    scale = 5.0  # the default was taken at definition: 3.0
    late = lambda v: v * scale  # noqa: E731  (reads scale when called: 5.0)
    return double(x), scaled(x), late(x), _apply(lambda v: v - 1.0, x)


@runs((POS, 3), (NEG, 0))
def lambdas_made_in_a_loop(x, n):
    fns = []
    for i in range(3):
        fns.append(lambda v, i=i: v * i)
    total = x * 0
    for fn in fns:
        total = total + fn(x)
    return total


@runs((POS, 2), (NEG, 5))
def nested_def_closure(x, n):
    offset = x.sum()

    def shift(v, times=1):
        out = v
        for _ in range(times):
            if out.sum() > offset:
                out = out - 1.0
            else:
                out = out + offset
        return out

    first = shift(x)
    offset = offset * 2  # a closure reads the variable when it is called
    return first, shift(x, n)


@runs(POS, NEG)
def nested_defs_call_each_other(x):
    def square(v):
        return v * v

    def norm(v):
        return np.sqrt(square(v).sum())

    if norm(x) > 2:
        return x / norm(x)
    return x


@runs(POS, NEG)
def deletions(x):
    y = x * 2.0
    d = {"a": x, "b": y, "c": 1}
    del d["c"]
    items = [x, y, x + y]
    del items[0]
    if x.sum() > 0:
        del y
        y = x
    del d["a"], items[-1]
    return y, d, items


@runs((POS, 1), (NEG, 7), (POS, 3))
def loop_else_blocks(x, target):
    found = -1
    for i in range(5):
        if i == target:
            found = i
            break
    else:
        found = 100
    count = 0
    while count < 3:
        count += 1
        if x[0] > 5:
            break
    else:
        count = -count
    return found, count


def _search(values, goal):
    for v in values:
        if v > goal:
            return v
    else:
        return -1.0


@runs(POS, NEG)
def loop_else_with_return(x):
    return _search(x, 1.5), _search(x, 10.0)


@runs(POS, NEG)
def generator_expressions_and_dict_comprehensions(x):
    total = sum(x[i] * i for i in range(3))
    positive = any(v > 0 for v in x)
    every = all(v > -5 for v in x)
    biggest = max(x[i] + i for i in range(3))
    parts = tuple(x * k for k in (1, 2))
    table = {k: x * k for k in range(3) if k != 1}
    return total, positive, every, biggest, parts, table


@runs((POS, None), (POS, f32([1, 1, 1])), (POS, f32([-4, -4, -4])), (NEG, f32([1, 2, 3])))
def conditions_mixing_arrays_and_none(x, y):
    if y is not None and y.sum() > 0:
        x = x + y
    if x.sum() > 0 and y:
        x = x * 2.0
    if not (x.max() > 10 or y is None):
        x = x - 1.0
    z = 1.0 if y is not None and x[0] > 0 else -1.0
    return x, z


@runs(POS, NEG)
def mixed_truth_values_in_a_test(x):
    flag = x.sum() > 0
    count = 0
    if flag and x[0] or count:
        count = 1
    while count < 4 and (x[count % 3] > 0 or not flag):
        count += 1
    return count


@runs((POS, 0), (NEG, 1))
def ambiguous_test_in_a_branch_that_never_runs(x, n):
    k = int(x.sum() > 100)
    if k + n > 5:
        if x > 0:  # ambiguous, but this line never runs
            return x
    return x * 2.0


@runs(POS, NEG)
def ambiguous_test_raises_where_it_runs(x):
    if x.sum() > 0:
        if x > 0:  # ValueError when this runs, as eagerly
            return x
    return x * 2.0


@runs(5, 10, 11)
def while_decided_while_compiling(b):
    y = {"b": b}
    while y["b"] <= 10:
        y["a"] = y["b"] + 1
        y["b"] *= 2
    return y


def _cube(v):
    return v * v * v


@runs((POS, np.tanh), (NEG, _cube), (POS, abs))
def function_arguments(x, fn):
    return fn(x)


@runs((3, range), (2, np.arange))
def range_function_argument(n, fn):
    s = 0
    for i in fn(n):
        s = s * 10 + i
    return s


@runs(i32([3, 1]), i32([0, 2]))
def dtype_of_int_arrays_through_conditions(x):
    n = x[0]
    while n > 0 and not n == x[1]:
        n -= 1
    return n


@runs(POS, NEG)
def nonlocal_counters_and_accumulators(x):
    total = x * 0
    count = 0

    def add(v):
        nonlocal total, count
        if v.sum() > 0:
            total = total + v
        count += 1
        return count

    first = add(x)
    second = add(-x)
    for i in range(3):  # the loop only reads what the calls rebound
        x = x + count
    return total, count, first, second, x


@runs(POS)
def nonlocal_list_rebound_and_appended(x):
    items = [x]

    def grow():
        nonlocal items
        items.append(x * 2)
        items = items + [x * 3]
        return len(items)

    n = grow()
    return items, n


def test_program(program, check_program):
    """Compiled and eager agree on every input."""
    check_program(program)

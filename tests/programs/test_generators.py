"""Generators in compiled code: a generator function consumed where it is called (a for loop,
list/sum/max of it, enumerate/zip with it first), `yield from`, `return` in the generator, a
consumer's break running the generator's finally block at the break, generator expressions over
run-time trip counts, and `with` over `contextlib.contextmanager` helpers (exceptions of the
block thrown in). Trip counts come from arrays (`int(k[0])`), so they are run-time values; each
program runs on several inputs and is compared with eager, printed output and errors included."""
import contextlib

import numpy as np

import harness
from harness import f32, i32, runs

X = f32([1.0, -2.0, 3.0, 4.0, -5.0, 6.0])
Y = f32([0.5, 0.25, -1.0, 2.0, 1.0, -3.0])
N0, N2, N4, N6 = i32([0]), i32([2]), i32([4]), i32([6])


def scaled_items(x, n, k):
    for i in range(n):
        yield x[i] * k


def first_negative_stops(x, n):
    i = 0
    while True:
        if i >= n:
            return
        if x[i] < 0:
            return
        yield x[i]
        i = i + 1


def logged(x, n):
    try:
        for i in range(n):
            yield x[i]
    finally:
        print("generator closed")


def chained(x, n):
    yield from scaled_items(x, n, 2.0)
    yield x.sum()
    yield from (1.0, -1.0)


def pairs(x, n):
    for i in range(n):
        for j in range(i):
            if (i + j) % 2:
                continue
            yield x[i] * x[j]


@runs((X, N4), (X, N0), (Y, N6))
def for_over_generator(x, k):
    s = x[0] * 0.0
    for v in scaled_items(x, int(k[0]), 3.0):
        s = s + v * v
    return s


@runs((X, N6), (Y, N6), (X, N2))
def return_inside_generator(x, k):
    out = []
    for v in first_negative_stops(x, int(k[0])):
        out.append(v)
    return len(out), sum(out)


@runs((X, N6), (Y, N6), (X, N0))
def break_runs_finally_at_the_break(x, k):
    s = x[0] * 0.0
    for v in logged(x, int(k[0])):
        print("item")
        if v < 0:
            break
        s = s + v
    print("after the loop")
    return s


@runs((X, N4), (Y, N6), (X, N6))
def continue_break_and_else(x, k):
    s = x[0] * 0.0
    for v in scaled_items(x, int(k[0]), 1.0):
        if v < 0:
            continue
        if v > 5:
            break
        s = s + v
    else:
        s = s * 10.0
    return s


@runs((X, N4), (Y, N2), (X, N0))
def yield_from_and_enumerate(x, k):
    s = x[0] * 0.0
    for i, v in enumerate(chained(x, int(k[0])), 1):
        s = s + v * i
    return s


@runs((X, Y, N6), (Y, X, N2))
def zip_generator_with_array(x, y, k):
    s = x[0] * 0.0
    for v, w in zip(scaled_items(x, 6, 1.0), y[:int(k[0])]):
        s = s + v * w
    else:
        s = s + 1.0
    return s


@runs((X, N4), (X, N0), (Y, N6))
def list_and_sum_of_generator(x, k):
    n = int(k[0])
    items = list(scaled_items(x, n, 0.5))
    return items, sum(scaled_items(x, n, 2.0)) + len(items), sum(pairs(x, n)), max(pairs(x, 4))


@runs((X, N4), (Y, N6))
def generator_inside_generator_loop(x, k):
    s = x[0] * 0.0
    for v in logged(x, int(k[0])):
        for w in logged(x, 2):
            s = s + v * w
            if w < 0:
                break
        if v > 3:
            return s
    return -s


@runs((X, N4), (Y, N6), (X, N0))
def generator_expressions_over_runtime_counts(x, k):
    n = int(k[0])
    total = sum(x[i] * i for i in range(n))
    odd = list(x[i] for i in range(n) if i % 2)
    s = x[0] * 0.0
    for v in (x[i] * 2.0 for i in range(n)):
        s = s + v
        if s > 5:
            break
    return total, odd, s


def error_inside_generator_at_its_line(x, k):
    s = x[0] * 0.0
    for v in scaled_items(x, int(k[0]), 1.0):
        s = s + v
    return s


@contextlib.contextmanager
def announced(name, x):
    print("enter", name)
    try:
        yield x * 2.0
    finally:
        print("exit", name)


@contextlib.contextmanager
def swallowing(kind):
    try:
        yield
    except IndexError:
        print("caught", kind)
    print("resumed", kind)


@contextlib.contextmanager
def quiet_division():
    with np.errstate(divide="ignore", invalid="ignore"):
        yield


@runs((X, N2), (X, i32([8])))
def with_contextmanager_exception_thrown_in(x, k):
    with swallowing("index"):
        print(x[int(k[0])] * 3.0)
    return x * 2.0


@runs((X, N2), (Y, N6))
def with_contextmanager_early_return(x, k):
    with announced("b", x) as y:
        if y.sum() > 0:
            return y
        print("not returned")
    return -x


@runs(X, f32([0.0, 1.0, -1.0]))
def with_two_contextmanagers_and_errstate(x):
    with announced("outer", x) as a, announced("inner", a) as b:
        c = a + b
    with quiet_division():
        d = 1.0 / x
    return c, d


def test_program(program, check_program):
    check_program(program)


def test_error_inside_generator_is_raised_at_its_line(capsys):
    """An index past the end inside the generator: eager's IndexError, with a note at the
    generator's line. (Not a corpus program: the Numba backend notes the kernel's loop line.)"""
    harness.check(harness.Program(error_inside_generator_at_its_line,
                                  ((X, N6), (X, i32([9])))), capsys)

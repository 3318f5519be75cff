"""Effects and errors in user code: print in branches, loops and helpers (output compared
exactly, in order), assert and raise that pass or fire (same exception type, with a note naming
the user's line)."""
import numpy as np

from harness import f32, i32, randn, runs

POS = f32([1.0, 2.0, 3.0])
NEG = f32([-1.0, -2.0, 0.5])


def _log_and_scale(v, k):
    if k > 1:
        print("scaling by", k)
    return v * k


@runs(POS, NEG)
def print_straight_line(x):
    print("start")
    y = x * 2.0
    print("sum is", y.sum())
    return y


@runs(POS, NEG)
def print_in_branches(x):
    if x[0] > 0:
        print("positive head", x[0])
    else:
        print("non-positive head")
    print("done")
    return x


@runs((POS, 0), (POS, 3), (NEG, 2))
def print_in_loop(x, n):
    for i in range(n):
        x = x + 1.0
        print(i, x.max())
    return x


@runs(POS, NEG)
def print_sep_end(x):
    print("a", "b", x.shape[0], sep="-", end="|\n")
    print(x.shape, x.dtype)
    print()
    return x


@runs(POS, i32([4, 5]))
def print_arrays_and_tuples(x):
    print(x)
    print((1, 2.5, "s"), [x.shape[0]])
    print(x * 2)
    return x


@runs(POS, NEG)
def print_in_helper(x):
    a = _log_and_scale(x, 1)
    b = _log_and_scale(x, 3)
    return a + b


@runs(f32([8.0]), f32([0.5]), f32([100.0]))
def print_in_while_with_break(x):
    n = 0
    while True:
        print("step", n, x)
        if x.max() < 2:
            print("break at", n)
            break
        x = x / 2.0
        n += 1
    print("after loop")
    return n


@runs(POS, NEG)
def print_fstring_of_runtime_value(x):
    s = float(x.sum())
    print(f"total={s:.3f} n={x.shape[0]}")
    return s


@runs(POS, randn(5, seed=2))
def print_percent_format_of_static_value(x):
    print("%d items" % x.shape[0])
    return x


@runs(POS, NEG)
def print_str_format_of_runtime_value(x):
    print("head: {}".format(int(x[0] > 0)))
    return x


@runs(POS, randn(3, seed=3))
def assert_that_holds(x):
    assert x.shape[0] == 3, "needs three values"
    assert np.isfinite(x).all()
    return x * 2.0


@runs(POS, NEG)
def assert_that_may_fire(x):
    assert x.min() > 0, "inputs must be positive"
    return np.log(x)


@runs(randn(2, 3), randn(3, 3, seed=1))
def static_shape_assert(x):
    assert x.shape[0] == 2, "batch of two"
    return x.sum(axis=0)


@runs(POS, NEG, f32([1.0, 0.0, 2.0]))
def raise_in_branch(x):
    if (x == 0).any():
        raise ValueError("zeros are not allowed")
    return 1.0 / x


@runs((POS, 2), (NEG, 5), (POS, 0))
def raise_after_iterations(x, n):
    for i in range(n):
        x = x - 1.5
        if x.min() < -3:
            raise RuntimeError("went too low")
    return x


@runs(POS, NEG)
def print_order_across_helpers_and_loops(x):
    for k in (1, 2):
        print("outer", k)
        x = _log_and_scale(x, k)
    if x.sum() > 0:
        print("end positive")
    return x


@runs(i32([3, 0, 2]), i32([1, 1]))
def print_counts_in_nested_loops(x):
    for i in range(x.shape[0]):
        for j in range(int(x[i])):
            print(i, j)
    return x.sum()


def test_program(program, check_program):
    """Compiled and eager agree on every input."""
    check_program(program)

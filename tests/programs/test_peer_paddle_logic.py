"""Paddle dy2static's logical-operator and lambda programs (issue 14), rewritten for NumPy:
`not`, `and`, `or` over 1-element arrays, Python ints and None (short-circuiting before a
comparison with None), shape equality choosing the return, lambdas bound to names, called
directly and inside conditional expressions on the truth of a mean."""
import numpy as np

from harness import f32, i32, runs

ROW = f32([1.0, 3.0])


# -- logical operators ---------------------------------------------------------------------

@runs(i32([3]), i32([0]), i32([11]))
def logical_not_on_arrays_and_ints(x):
    if not x:
        x = x - 1
    else:
        x = x + 1
    if x != 10:
        x = x - 1
    else:
        x = x + 1
    y = 0
    if not y:
        x = x + 4
    if y != 3:
        x = x + 2
    return x


@runs(i32([3]))
def not_of_none_short_circuits(x):
    y = None
    if y is not None and not y:
        x = x + 4
    if y != 3:
        x = x + 2
    return x


@runs(i32([3]), i32([0]), i32([12]))
def logical_and_of_comparisons(x):
    if x < 10 and x > 1:
        x = x - 1
    else:
        x = x + 1
    y = 3
    if y < 10 and y > 1:
        x = x - 2
    else:
        x = x + 2
    return x


@runs(i32([3]), i32([0]))
def and_skips_a_comparison_with_none(x):
    a = None
    if a is not None and a > 1:
        x = x - 1
    else:
        x = x + 1
    b = 3
    if b is not None and b > 1:
        x = x - 1
    else:
        x = x + 1
    return x


@runs(i32([3]), i32([20]))
def logical_or_of_comparisons(x):
    if x < 10 or x > 1:
        x = x - 1
    else:
        x = x + 1
    a = 10
    if a > 3 or a < 1:
        x = x - 1
    else:
        x = x + 1
    return x


@runs(i32([3]), i32([0]))
def or_stops_before_comparing_none(x):
    a = None
    if x > 1 or a is None or a > 1:
        x = x - 1
    else:
        x = x + 1
    return x


@runs(i32([3]), i32([-5]), i32([30]))
def not_and_or_mixed(x):
    a = 1
    if x < 10 and (a < 4 or a > 0) or a < -1 or not x > -1:
        x = x - 1
    else:
        x = x + 1
    return x


@runs(np.ones((1, 2, 3), np.float32), np.ones((2, 3), np.float32))
def shape_equality_picks_the_return(x):
    y = np.zeros((1, 2, 3))
    if x.shape == y.shape:
        return y
    else:
        return np.ones((1, 2, 3))


@runs(np.ones((1, 2, 3), np.float32), np.ones((2, 3), np.float32))
def shape_inequality_picks_the_return(x):
    y = np.zeros((1, 2, 3))
    if x.shape != y.shape:
        return y
    else:
        return np.ones((1, 2, 3))


# -- lambdas -------------------------------------------------------------------------------

@runs(ROW, f32([-1.0, 0.5]))
def lambdas_bound_to_names(x):
    add = lambda a, b: a + b  # noqa: E731
    mean = lambda a: np.mean(a)  # noqa: E731
    y = add(x, 1)
    y = add(y, add(y, -1))
    return mean(y)


@runs(ROW)
def lambdas_called_directly(x):
    y = (lambda a, b: a + b)(x, x)
    return (lambda a: np.mean(a))(y)


@runs(ROW, f32([1.2, 1.6]), f32([-1.0, 0.5]))
def lambdas_in_a_conditional_expression(x):
    inc = lambda a: a + 1  # noqa: E731
    y = np.mean((lambda a: np.maximum(a, 0))(x))
    return inc(y) if y > 1 and y < 2 else (lambda a: a ** 2)(y)


@runs(ROW, f32([0.0, 0.0]), f32([-1.0, -2.0]))
def truth_of_a_mean_in_a_conditional_expression(x):
    inc = lambda a: a + 1  # noqa: E731
    y = np.mean(x)
    z = 0
    first = inc(y) if y or y < 2 else (lambda a: a ** 2)(y)
    second = inc(y) if y or z < 2 else (lambda a: a ** 2)(y)
    return first, second


def test_program(program, check_program):
    """Compiled and eager agree on every input."""
    check_program(program)

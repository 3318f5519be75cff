"""`with` in compiled code: a user class's context manager (its `__enter__` value bound by `as`,
`__exit__` run on every exit: normally, on an exception, on an early return or break), nested
and multi-item `with`, and `np.errstate` around a division; compared with eager, printed output
and errors included."""
import numpy as np

from harness import f32, runs

X = f32([1.0, 2.0, 4.0])
ZERO = f32([0.0, 1.0, -1.0])


class Scope:
    def __init__(self, name, scale=1.0):
        self.name = name
        self.scale = scale

    def __enter__(self):
        print("enter", self.name)
        return self.scale

    def __exit__(self, *exc):
        print("exit", self.name)


@runs(X, ZERO)
def user_context_manager(x):
    with Scope("outer", 2.0) as k:
        y = x * k
    return y


@runs(X, ZERO)
def exit_runs_on_error(x):
    with Scope("checked"):
        if x.min() <= 0:
            raise ValueError("not positive")
        y = np.log(x)
    return y


@runs(X, ZERO)
def exit_runs_on_early_return(x):
    with Scope("early"):
        if x.sum() > 5:
            return x * 0.0
        y = x + 1.0
    return y


@runs((X, 3), (ZERO, 1))
def exit_runs_on_break(x, n):
    s = 0.0
    for i in range(n):
        with Scope("step"):
            if x[i] < 0.5:
                break
            s = s + x[i]
    return s


@runs(X, ZERO)
def nested_and_multi_item(x):
    with Scope("a", 2.0) as a, Scope("b", 3.0) as b:
        with Scope("c"):
            y = x * a + b
    return y


@runs(X, ZERO)
def errstate_around_division(x):
    with np.errstate(divide="ignore", invalid="ignore"):
        y = 1.0 / x
        z = np.log(x)
    return y, z


@runs(X, ZERO)
def with_inside_try(x):
    try:
        with Scope("inner"):
            y = np.sqrt(x)
            if x.min() < 0:
                raise ArithmeticError("negative")
    except ArithmeticError:
        y = x * 0.0
    return y


def test_program(program, check_program):
    """Compiled and eager agree on every input."""
    check_program(program)

"""Programs from TensorFlow AutoGraph's reference tests (issue 14) with try/except/finally and
`with` (early_return, nested_control_flow), refused until issue 32: each compiles and agrees
with eager."""
import numpy as np

from harness import runs


def T(n):
    return np.array(n, np.int32)


@runs(T(1))
def return_in_try_with_finally(x):
    try:
        if x > 0:
            return 1
        else:
            return 0
    finally:
        x = x + 1


@runs(1)
def return_with_default_in_try_with_finally(x):
    try:
        if x > 0:
            return 1
        return 0
    finally:
        x = x + 1


def _raising_helper():
    raise ValueError()


@runs(())
def raise_during_return_caught():
    try:
        return _raising_helper()
    except ValueError:
        pass
    return 1


@runs(T(2))
def if_with_local_modification_masked_by_exception(x):
    y = 0
    if x > 0:
        try:
            if x > 1:
                _raising_helper()
            y = 1
        except ValueError:
            pass
        if y == 0:
            y = 2
    return y


@runs(T(3))
def nested_ifs_in_a_context_manager(x):
    with np.errstate(all="ignore"):
        if x > 0:
            if x < 5:
                return x
            else:
                return x * x
        else:
            return x * x * x


@runs(T(10))
def while_continue_in_a_context_manager(x):
    z = 0
    while x > 0:
        with np.errstate(divide="ignore"):
            x = x - 1
            if x < 5:
                continue
            z = z + 1
    return z


def test_program(program, check_program):
    """Compiled and eager agree on every input."""
    check_program(program)

"""Programs from TensorFlow AutoGraph's reference tests (issue 14) that amber refuses, each with a
CompileError at the line marked `# ERR` saying why (see `harness.check_rejected`): a `return`
in a finally block or a finally block reading what the try block changed, classes defined inside
compiled code (a `global` updated in a branch and writes into the caller's list inside a run-time
loop compile now: tests/programs/test_caller_state.py, test_peer_autograph_loops.py; a generator
summed: test_peer_autograph_loops.py),
and an array made of a run-time list whose dtype or rank depends on it being empty. Each runs
eagerly; none may compile into something
else."""
import numpy as np

from harness import check_rejected, i32, runs


def T(n):
    return np.array(n, np.int32)


# -- try (early_return, nested_control_flow) ---------------------------------------------------
# `return` in a finally block is refused (it would discard the exception), and so is a finally
# block reading a variable the try block changed (its value is unknown after an exception).

@runs(T(0))
def return_in_finally(x):
    try:
        return 2
    finally:
        if x > 0:
            return 1  # noqa: B012  # ERR
        else:
            return 0  # noqa: B012


@runs(T(1))
def return_in_finally_default_in_try(x):
    try:
        if x > 0:
            return 0
    finally:
        return 1  # noqa: B012  # ERR


@runs(T(10))
def while_break_in_try(x):
    z = 0
    while x > 0:
        x = x - 1
        try:
            if x < 5:
                break
            z = z + 1
        finally:
            z = z + 10  # ERR
    return z


# -- classes inside compiled code ---------------------------------------------------------


@runs(T(2))
def while_with_method_closure_call(n):
    i = 0

    class Callable:  # ERR
        def __call__(self):
            return i

    i_via_closure = Callable()
    s = 0
    while i < n:
        s = s * 10 + i_via_closure()
        i += 1
    return s


# -- an array whose dtype or rank depends on a run-time list being empty ----

@runs(T(3))
def array_of_a_run_time_list_without_dtype(n):
    l = []
    for i in range(n):
        l.append(i)
    return np.array(l)  # ERR


@runs(T(3))
def array_of_a_run_time_list_of_vectors(n):
    rows = []
    for i in range(n):
        rows.append(i32([1, 2]) * i)
    return np.array(rows, dtype=np.int32)  # ERR


def test_rejected(program, capsys):
    """A CompileError at the marked line, or eager's exception with a note there."""
    check_rejected(program, capsys)

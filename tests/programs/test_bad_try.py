"""Try statements compiled code refuses (a CompileError at the line marked `# ERR`, see
`harness.check_rejected`): a value an exception may have caught half-way read where Python
would see whichever value it had then, a jump out of a finally block (a gradient through a try
compiles now: tests/gradients/test_try.py)."""
import numpy as np
from harness import check_rejected, f32, runs

POS = f32([1.0, 2.0, 3.0])


@runs((POS, 1))
def read_after_try_not_bound_by_handler(x, i):
    y = x
    try:
        y = x * 2.0
        z = x[i]
    except IndexError:
        z = x[0]
    return y + z  # ERR


@runs((POS, 1))
def else_reads_what_try_changed(x, i):
    try:
        m = x[i]
        n = m + 1.0
    except IndexError:
        print("short")
    else:
        print(m)  # ERR
    return x


@runs(POS)
def finally_reads_what_try_changed(x):
    try:
        y = x * 2.0
    finally:
        print(y)  # ERR
    return y


@runs(POS)
def return_in_finally(x):
    try:
        y = x * 2.0
    finally:
        return x  # ERR


def test_rejected(program, capsys):
    """A CompileError at the marked line (or eager's exception with a note there)."""
    check_rejected(program, capsys)


class _Suppressing:
    def __enter__(self):
        return 1.0

    def __exit__(self, exc_type, exc, tb):
        return exc_type is ValueError


class _Swallowing:
    def __enter__(self):
        return 1.0

    def __exit__(self, *exc):
        return True


@runs(POS)
def with_exit_reading_the_exception(x):
    with _Suppressing():  # ERR
        y = x * 2.0
    return y


@runs(POS)
def with_exit_suppressing(x):
    with _Swallowing():  # ERR
        y = x * 2.0
    return y


@runs(POS)
def errstate_raise(x):
    with np.errstate(divide="raise"):  # ERR
        y = 1.0 / x
    return y

"""Python forms refused at the line marked `# ERR` (see `harness.check_rejected`): the walrus
operator where the compiled form could not carry its binding (the condition of a while loop
with an else block, a comprehension), sorting a list of run-time items, np.where with one
argument (np.nonzero: how many indices depends on the data), and `** 2` of a 0-d bool array (NumPy's square: int8, where a
NumPy scalar's power is int64)."""
import numpy as np

from amber import nn
from harness import check_rejected, f32, runs

INPUT = (f32([0.5, -1.0, 2.0]), 2)


@runs(INPUT)
def walrus_in_the_condition_of_a_while_with_else_is_refused(x, n):
    i = 0
    while (i := i + 1) < n:  # ERR
        pass
    else:
        i = -i
    return i


@runs(INPUT)
def walrus_in_a_comprehension_is_refused(x, n):
    return [last := v * 2 for v in range(3)], last  # ERR


@runs(INPUT)
def list_sort_of_run_time_items_is_refused(x, n):
    items = [x[0], x[1]]
    items.sort()  # ERR
    return items


@runs(INPUT)
def square_of_a_0d_bool_array_is_refused(x, n):
    mask = np.array(x.sum() > 0)
    y = mask ** 2  # ERR (int8 by NumPy's square for a 0-d array, int64 for a NumPy scalar)
    return y, str(y.dtype)


@runs(INPUT)
def where_with_one_argument_is_refused(x, n):
    rows = np.where(x > 0)  # ERR
    return rows


def test_rejected(program, capsys):
    """A CompileError at the marked line."""
    check_rejected(program, capsys)

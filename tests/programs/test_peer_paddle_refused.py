"""Paddle dy2static programs a user can expect amber to refuse (issue 14), each at the line marked
`# ERR` with the reason: a class defined inside compiled code, list aliases that part ways in a
run-time loop, a call into the standard library (logging), an accumulator whose dtype depends on
which iterations ran. (Writing into a dict attribute of the Cell, `global`, appending to a global
list and popping from the caller's list compile now: tests/programs/test_caller_state.py.)"""
import logging

import numpy as np

from amber import nn
from harness import check_rejected, f32, i32, i64, randn, runs

ROW = f32([1.0, 2.0])
GLOBAL_LIST = []


@runs(ROW)
def class_defined_inside(x):
    class Foo:  # ERR
        a = 1

    return x + Foo.a


@runs(i64([0, 0, 3]))
def int32_accumulator_meets_int64_items_on_some_paths(xs):
    x = np.full((1,), 0, np.int32)
    for i in range(len(xs)):
        for idx in range(xs[i]):  # ERR
            x = x + xs[i:i + 1]  # an int64 array: int64 under NumPy 1 and 2 alike
    return x


@runs((f32([1.0, -2.0]), i32([3])))
def list_aliases_part_ways_in_a_run_time_loop(x, n):
    first = [x, x]
    both = [first, first]
    for i in range(int(n[0])):  # ERR
        if x[0] > 0:
            first = [x * i, x]
            both[1] = first
    return both[1][0], both[0][0]


@runs(randn(3, 4))
def logging_call_compiled_into_the_standard_library(x):
    logging.info("compiled code would have to trace the logging module")  # ERR
    return x * 2


def test_rejected(program, capsys):
    """A CompileError at the marked line, or eager's exception with a note there."""
    check_rejected(program, capsys)

"""Elementwise chains in loop bodies, which memory planning runs in place (`x *= 0.5;
x -= 1.0`), often over the carried value itself, starting from a copy of the caller's array
when the loop surely runs: the argument, a Parameter, a view, a value read after the write, one
kept by a list or returned beside the result, and a loop that never runs must all come out as
eager leaves them (the harness also overwrites the results and checks the arguments)."""
import numpy as np

from amber import Parameter, nn
from harness import f32, randn, runs

SMALL = randn(16, seed=3)
LARGE = randn(40, 40, seed=4)  # NOTE: over 1024 elements: in place outside loops too


@runs(SMALL, LARGE)
def if_else_chain_over_the_argument(x):
    for _ in range(20):
        if x.sum() > 0:
            x = x * 0.5 - 1.0
        else:
            x = x * 0.5 + 1.0
    return x


@runs(SMALL, LARGE)
def loop_that_never_runs_returns_the_argument(x):
    for _ in range(0):
        x = x * 0.5 - 1.0
    return x


@runs(SMALL, LARGE)
def negative_range_never_runs(x):
    for _ in range(3, 1):
        x = np.tanh(x * 2.0)
    return x


@runs(SMALL, LARGE)
def argument_returned_beside_the_result(x):
    y = x
    for _ in range(4):
        y = y * 2.0 - 1.0
    return x, y


@runs(SMALL, LARGE)
def argument_read_after_the_loop(x):
    y = x
    for _ in range(3):
        y = np.exp(y * 0.1)
    return y + x


@runs(SMALL, LARGE)
def previous_value_read_after_the_write(x):
    for _ in range(3):
        prev = x
        x = x * 0.5
        x = x + prev
    return x


@runs(SMALL, LARGE)
def previous_value_kept_in_a_list(x):
    seen = []
    for _ in range(3):
        seen.append(x)
        x = x * 0.5 - 1.0
    return x, seen


@runs(SMALL, LARGE)
def outer_value_read_in_every_iteration(x):
    t = x * 2.0
    acc = x * 0.0
    for _ in range(3):
        if acc.sum() >= 0:
            u = t * 0.5
            acc = acc + u
        else:
            acc = acc - t
    return acc


@runs(SMALL, LARGE)
def value_read_by_the_other_arm_and_after_the_if(x):
    for _ in range(3):
        y = x * 3.0
        if y.sum() > 0:
            z = y - 1.0
        else:
            z = y + 1.0
        x = np.tanh(z * y)  # NOTE: bounded, so float64 finite differences stay accurate
    return x


@runs(SMALL, LARGE)
def branch_result_written_in_place_after_the_if(x):
    for i in range(3):
        y = x * 2.0 if i % 2 == 0 else np.exp(x * 0.1)
        x = np.tanh(y + 1.0)
    return x


@runs(SMALL, LARGE)
def one_arm_passes_the_value_through(x):
    for i in range(4):
        if i == 2:
            x = x * 0.5 - 1.0
    return x


@runs(SMALL, LARGE)
def view_of_the_argument_carried(x):
    v = x.reshape(-1)[:8]
    for _ in range(3):
        v = v * 0.5 + 1.0
    return v, x


@runs(SMALL, LARGE)
def nested_loops_share_the_buffer(x):
    for _ in range(2):
        for _ in range(3):
            x = x * 0.5 + 1.0
        x = np.tanh(x)
    return x


@runs((SMALL, 0), (SMALL, 3), (LARGE, 2))
def trip_count_from_an_argument(x, n):
    for _ in range(n):
        x = x * 0.5 - 1.0
    return x


@runs(SMALL, LARGE, f32([9.0, 9.0, 0.0]))
def trip_count_from_the_data(x):
    for _ in range((x > 2.0).sum()):  # NOTE: zero trips for most inputs
        x = x * 0.5 - 1.0
    return x


@runs(SMALL, LARGE)
def while_loop_over_the_argument(x):
    i = 0
    while i < 3:
        x = x * 0.5 - 1.0
        i += 1
    return x


@runs(SMALL, LARGE)
def two_carried_values_swap(x):
    a = x * 1.0
    b = x * 2.0
    for _ in range(3):
        a, b = b, a * 0.5 + 1.0
    return a, b


@runs(f32([1.0, -2.0, 3.0]), f32([0.5, 0.5, 0.5]))
class ParameterStartsTheLoop(nn.Cell):
    def __init__(self):
        super().__init__()
        self.w = Parameter(np.array([1.0, 2.0, 3.0], np.float32), name="w")

    def construct(self, x):
        h = self.w
        for _ in range(3):
            h = h * 0.5 + x
        return h, self.w * 1.0


def test_program(program, check_program):
    """Compiled and eager agree on every input."""
    check_program(program)

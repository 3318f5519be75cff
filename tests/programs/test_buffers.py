"""Buffers, views and aliases, where optimizations (in-place `out=` chains, CSE, LICM, constant
folding, memory planning) can change results: values kept across loop iterations, fresh
allocations in loops, equal allocations that must stay distinct, writes through views of
inputs and locals, copies that must not alias, and writes only visible through another name."""
import numpy as np

from amber import Parameter, nn
from harness import f32, randn, runs

POS = f32([1.0, 2.0, 3.0])
NEG = f32([-1.0, -2.0, 0.5])


@runs(POS, NEG)
def appended_loop_values_stay_distinct(x):
    h = x
    outs = []
    for i in range(3):
        h = h * 0.5 + 1.0
        outs.append(h)
    return np.stack(outs)


@runs(f32([8.0, 2.0]), f32([0.5, 0.5]))
def previous_value_kept_across_while(x):
    deltas = []
    h = x
    while h.max() > 1.0:
        prev = h
        h = h * 0.5
        h = h - 0.1
        deltas.append(prev - h)
    return h, deltas


@runs(POS, NEG)
def fresh_allocation_each_iteration(x):
    outs = []
    for i in range(3):
        buf = np.zeros(3, np.float32)
        buf[i] = x[i]
        outs.append(buf)
    return outs


@runs(POS, NEG)
def equal_allocations_stay_distinct(x):
    a = np.zeros(3, np.float32)
    b = np.zeros(3, np.float32)
    a[0] = x[0]
    c = np.ones_like(x)
    d = np.ones_like(x)
    d *= 2.0
    return a, b, c, d


@runs(POS, NEG)
def constant_allocation_mutated_per_call(x):
    acc = np.zeros(3, np.float32)
    acc[0] += x[0]
    acc += x
    return acc


@runs(POS, NEG)
def write_visible_only_through_alias(x):
    a = np.zeros(3, np.float32)
    b = a
    a[1] = x[2]
    return b


@runs(randn(2, 3), randn(3, 2, seed=1))
def mutate_input_through_reshape_view(x):
    y = x.reshape(-1)
    y += 1.0
    return x.sum()


@runs(randn(2, 3), randn(3, 2, seed=1))
def mutate_input_through_transpose_and_slice(x):
    t = x.T
    t *= 2.0
    s = x[:, ::2]
    s[0] = -1.0
    return x


@runs(randn(2, 3), randn(3, 2, seed=1))
def copies_do_not_alias_input(x):
    f = x.flatten()
    f += 100.0
    c = x.astype(np.float32)
    c *= 0.0
    return x, f.sum(), c.sum()


@runs(randn(4), randn(6, seed=2))
def local_view_write_then_read(x):
    y = x * 1.0
    head = y[:2]
    head[:] = 0.0
    tail = y[2:]
    tail *= 3.0
    return y, head.sum()


@runs(POS, NEG)
def inplace_on_value_used_later(x):
    a = x * 2.0
    b = a + 1.0
    a += 10.0
    return a, b


@runs((POS, 3), (NEG, 0))
def inplace_in_loop_on_loop_carried(x, n):
    h = x * 1.0
    snapshot = h
    for i in range(n):
        h += 1.0
    return h, snapshot


@runs((POS, 3), (NEG, 1))
def rebind_in_loop_keeps_snapshot(x, n):
    h = x * 1.0
    snapshot = h
    for i in range(n):
        h = h + 1.0
    return h, snapshot


@runs(POS, NEG)
def same_array_returned_twice(x):
    y = x + 1.0
    return y, y, [y]


@runs(randn(3, 3), randn(3, 3, seed=4))
def matrix_rows_updated_from_each_other(x):
    m = x * 1.0
    for i in range(1, 3):
        m[i] = m[i] + m[i - 1]
    return m


@runs(POS, NEG)
def branch_mutates_shared_buffer(x):
    buf = np.zeros(3, np.float32)
    view = buf
    if x[0] > 0:
        buf[0] = 1.0
    else:
        view[2] = -1.0
    return buf, view


@runs(randn(2, 4), randn(3, 4, seed=5))
def temporaries_in_long_elementwise_chain(x):
    a = x * 2.0
    b = a + 1.0
    c = b * b
    d = c - a
    e = np.tanh(d) + b
    return e, a, c


@runs(POS, NEG)
def invariant_copy_mutated_in_loop(x):
    outs = []
    for i in range(3):
        y = x * 1.0
        y[i] = 0.0
        outs.append(y)
    return outs


@runs(POS, NEG)
def equal_expressions_mutated_apart(x):
    a = x + 1.0
    b = x + 1.0
    a[0] = 0.0
    return a, b


@runs(f32([4.0]), f32([0.5]))
def allocation_in_while_mutated(x):
    rows = []
    v = x
    while v.max() > 1.0:
        r = np.full((2,), 0.0, np.float32)
        r[0] = v[0]
        rows.append(r)
        v = v / 2.0
    return rows


@runs((POS, NEG), (NEG, NEG))
def write_through_alias_then_read_other_name(x, y):
    z = y * 1.0
    a = z
    a[1] = a[1] + 1.0
    a[0] = z[1] + 0.0
    return a, z


@runs(POS, NEG)
def write_through_view_between_equal_reads(x):
    z = x * 1.0
    before = z[1]
    v = z[1:]
    v[0] = 5.0
    after = z[1]
    return before, after, z


def _bump(v):
    v += 1.0


@runs(POS, NEG)
def helper_mutates_its_argument(x):
    y = x * 2.0
    _bump(y)
    _bump(y[1:])
    return y


@runs(POS, NEG)
def mutate_array_held_in_list_and_tuple(x):
    z = x * 1.0
    items = [z]
    items[0][0] = 9.0
    p, q = z, z
    p += 1.0
    return z, q, items[0]


@runs(randn(2, 3), randn(1, 3, seed=6))
class ParameterItemAssignedInPlace(nn.Cell):
    def __init__(self):
        super().__init__()
        self.w = Parameter(np.ones(3, np.float32), name="w")

    def construct(self, x):
        y = x * self.w
        self.w[0] = self.w[0] + 1.0
        return y, x * self.w


def test_program(program, check_program):
    """Compiled and eager agree on every input."""
    check_program(program)

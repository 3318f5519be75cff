"""Control flow compiled by the frontend agrees with eager Python: if/while/for on run-time and
compile-time values, break/continue/return anywhere, nesting, loop variables after loops."""
import numpy as np
import pytest

from amber import ops
from amber.frontend.reference import agree

X = np.array([3.0, -1.0, 4.0, 1.0, -5.0, 9.0])
M = np.arange(12, dtype=np.float32).reshape(4, 3) - 5


def if_elif_else(x):
    s = x.sum()
    if s > 10:
        y = x * 2
    elif s > 0:
        y = x + 1
    else:
        y = -x
    return y


def if_compile_time(x, flag):
    if flag:
        x = x + 1
    if x.shape[0] > 100:
        x = x.reshape(-1, 2, 3)  # never built: it would not fit
    return x


def if_no_else(x):
    y = x
    if x[0] > 0:
        y = y * 10
    return y


def if_one_branch_binds(x):
    if x.sum() > 0:
        z = x * 3
    return z  # UnboundLocalError at run time when the branch is not taken


def if_raises(x):
    if x.min() < -100:
        raise ValueError("too small")
    return x + 1


def while_runtime(x):
    n = 0
    while x.sum() < 1000:
        x = x * 2 + 1
        n += 1
    return x, n


def while_counter(x, n):
    i = 0
    acc = x * 0
    while i < n:
        acc = acc + x * i
        i += 1
    return acc


def while_break(x):
    i = 0
    total = 0.0
    while True:
        total = total + x[i]
        if total > 5:
            break
        i = i + 1
    return total, i


def while_continue(x):
    i = 0
    s = 0.0
    while i < x.shape[0]:
        i += 1
        if x[i - 1] < 0:
            continue
        s = s + x[i - 1]
    return s


def for_range_variants(x, n):
    a = 0.0
    for i in range(n):
        a = a + x[i]
    for i in range(1, n):
        a = a * 0.5 + x[i]
    for i in range(n - 1, -1, -1):
        a = a - x[i] * i
    for i in range(0, n, 2):
        a = a + i
    return a, i


def for_runtime_bounds(x):
    n = int(x[1] + 5)
    s = 0
    for i in range(n):
        s = s + i
    return s


def for_break_return(x):
    for i in range(x.shape[0]):
        if x[i] > 3:
            return x[i] * 100
        if x[i] < -3:
            break
    return x.sum()


def for_continue(x):
    s = 0.0
    for i in range(6):
        if x[i] < 0:
            continue
        s = s + x[i]
    return s


def for_tensor_rows(m):
    s = m[0] * 0
    for row in m:
        s = s + row
    return s


def for_enumerate_zip_tensor(m, x):
    s = 0.0
    for i, row in enumerate(m):
        s = s + row.sum() * i
    for a, b in zip(m, m * 2):
        s = s + (a * b).sum()
    for r in reversed(x):
        s = s * 0.5 + r
    return s


def for_tuple_unrolled(x):
    for scale in (1, 2, 3):
        x = x * scale
    for k, v in [("a", 1), ("b", 2)]:
        x = x + v
    return x


def loop_var_after(x, n):
    i = -1
    for i in range(n):
        pass
    for j in range(x.shape[0]):
        last = x[j]
    return i, j, last


def zero_trip(x):
    i = 7
    for i in range(0):
        x = x + 1
    return x, i


def nested_three_deep(m):
    total = 0.0
    for i in range(m.shape[0]):
        j = 0
        while j < m.shape[1]:
            if m[i, j] > 0:
                if m[i, j] > 3:
                    total = total + m[i, j] * 2
                else:
                    total = total + m[i, j]
            else:
                for k in range(2):
                    total = total - k
            j += 1
    return total


def nested_break_return(m):
    count = 0
    for i in range(m.shape[0]):
        for j in range(m.shape[1]):
            if m[i, j] == 4:
                return count * 1000
            if m[i, j] > 2:
                break
            count += 1
    return count


def growing_shape(x):
    h = x
    while h.shape[0] < 16 and h.sum() < 1e6:
        h = ops.concat((h, h), 0)
    return h


def list_in_loop(m):
    outs = []
    for i in range(m.shape[0]):
        outs.append(m[i] * i)
    return ops.stack(outs, 0)


def list_unrolled(m):
    outs = []
    for k in (1, 2):
        outs.append(m * k)
    return np.stack(outs), len(outs)


def list_in_branch(x):
    outs = [x]
    if x.sum() > 0:
        outs.append(x * 2)
    return ops.concat(outs, 0)


def flag_changes_in_loop(x):
    first = True
    s = x * 0
    for i in range(3):
        if first:
            s = s + x
            first = False
        else:
            s = s * 2
    return s


def dtype_changes_in_short_loop(x):
    acc = x.astype(np.int32)
    h = None
    for i in range(2):
        acc = acc * 0.5  # int32 -> float64: the constant range is unrolled
        h = acc if h is None else h + acc
    return acc, h


def different_kinds_per_branch(x):
    y = None
    if x.sum() > 0:
        y = x[0]  # a 0-d tensor on this path, None on the other
    if y is None:
        return x.reshape(2, 3).sum(axis=1), y
    z = y * 2.0
    return z, y


def different_ranks_per_branch(m):
    if m.sum() > 0:
        y = m[0]
    else:
        y = m.reshape(2, 6)
    return y * 2.0, y.shape


def run_time_list_iteration(x, n):
    outs = []
    i = 0
    while i < n:
        outs.append(x * i)
        i += 1
    total = x * 0
    for o in outs:
        total = total + o
    return total, len(outs)


def dict_state_in_loop(m):
    stats = {"sum": np.zeros(m.shape[1], np.float32), "count": 0}
    for row in m:
        stats["sum"] = stats["sum"] + row
        stats["count"] = stats["count"] + 1
    if stats["sum"].sum() > 0:
        stats["max"] = stats["sum"].max()
    else:
        stats["max"] = stats["sum"].min()
    return stats["sum"] / stats["count"], stats["count"], stats["max"]


def tuple_state_in_while(x):
    state = (x, 0, 0.0)
    while state[0].sum() < 50:
        v, n, total = state
        state = (v * 2, n + 1, total + v.sum())
    return state


def while_all_paths(x):
    y = x
    while y.sum() > 1:
        if y.max() > 4:
            y = y / 2
        elif y.min() < -4:
            y = y + 1
        else:
            y = y - 0.5
    return y


PROGRAMS = [
    (if_elif_else, (X,)), (if_elif_else, (X - 1,)), (if_elif_else, (X - 10,)),
    (if_compile_time, (X, True)), (if_compile_time, (X, False)), (if_no_else, (X,)),
    (if_no_else, (-X,)), (if_one_branch_binds, (X,)), (if_one_branch_binds, (-X - 20,)),
    (if_raises, (X,)), (if_raises, (X * 100,)), (while_runtime, (X,)),
    (while_counter, (X, 4)), (while_break, (X,)), (while_continue, (X,)),
    (for_range_variants, (X, 5)), (for_runtime_bounds, (X,)), (for_break_return, (X,)),
    (for_break_return, (X - 10,)), (for_break_return, (X / 10,)), (for_continue, (X,)),
    (for_tensor_rows, (M,)), (for_enumerate_zip_tensor, (M.astype(np.float64), X)),
    (for_tuple_unrolled, (X,)),
    (loop_var_after, (X, 3)), (loop_var_after, (X, 0)), (zero_trip, (X,)),
    (nested_three_deep, (M,)), (nested_break_return, (M,)), (nested_break_return, (M * 10,)),
    (growing_shape, (M[:1],)), (list_in_loop, (M,)), (list_unrolled, (M,)),
    (list_in_branch, (X,)), (list_in_branch, (-X,)), (flag_changes_in_loop, (X,)),
    (while_all_paths, (X,)), (dtype_changes_in_short_loop, (X,)),
    (different_kinds_per_branch, (X,)), (different_kinds_per_branch, (-X,)),
    (different_ranks_per_branch, (M,)), (different_ranks_per_branch, (-M - 10,)),
    (run_time_list_iteration, (X, 3)), (run_time_list_iteration, (X, 0)),
    (dict_state_in_loop, (M,)), (tuple_state_in_while, (np.abs(X) + 1,)),
]


@pytest.mark.parametrize("fn,args", PROGRAMS, ids=[p[0].__name__ for p in PROGRAMS])
def test_control_flow_agrees_with_eager(fn, args):
    agree(fn, *args)


def regions(result, kind):
    return [n for n in result.graph.walk() if n.name == kind]


def test_range_over_constant_stays_one_for_region():
    result = agree(for_range_variants, X, 5)
    assert len(regions(result, "for")) == 4
    assert len(regions(result, "getitem")) == 3  # one per loop body, never unrolled


def test_compile_time_branch_builds_only_the_taken_side():
    result = agree(if_compile_time, X, True)
    assert not regions(result, "if") and not regions(result, "reshape")


def test_unbound_path_yields_undefined():
    result = agree(if_one_branch_binds, X)
    (node,) = regions(result, "if")
    assert [n.name for n in node.else_.nodes] == ["undefined"]


def test_growing_loop_variable_gets_symbolic_dim():
    result = agree(growing_shape, M[:1])
    (loop,) = regions(result, "while")
    assert loop.outputs[0].type.shape == ("?", 3)


def test_run_time_list_is_carried_through_the_loop():
    result = agree(list_in_loop, M)
    (loop,) = regions(result, "for")
    assert str(loop.outputs[0].type).startswith("list[")
    assert [n.name for n in loop.body.nodes][-1] == "list_append"


def test_loop_that_changes_dtype_is_unrolled():
    result = agree(dtype_changes_in_short_loop, X)
    assert not regions(result, "for") and len(regions(result, "cast")) == 1


def test_statements_after_a_kind_changing_if_are_built_per_side():
    result = agree(different_ranks_per_branch, M)
    (node,) = regions(result, "if")
    assert all(any(n.name == "mul" for n in block.nodes) for block in node.blocks)


def test_tuples_are_carried_item_by_item():
    result = agree(tuple_state_in_while, np.abs(X) + 1)
    (loop,) = regions(result, "while")
    assert len(loop.outputs) == 3 and not regions(result, "make_tuple")[:-1]


def test_unrolled_list_stays_compile_time():
    result = agree(list_unrolled, M)
    assert not regions(result, "list_new")

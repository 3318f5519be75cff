"""Python forms compiled since the peer suites: the walrus operator (in statements, branches,
short-circuit operands, call arguments, while conditions), `map` / `filter` (over compile-time
sequences, and `map` lazily over run-time data), `list.sort(key=, reverse=)` of compile-time lists, `str()` /
`repr()` of run-time values, `x.tolist()`, assert messages computed at run time (only on
failure), and list comprehensions over run-time ranges, lists, or rows kept by run-time `if`s
(the loop they stand for, building a run-time list). What
stays refused is in test_bad_python_forms.py."""
import numpy as np

from harness import f32, runs

INPUTS = ((f32([0.5, -1.0, 2.0]), 0), (f32([-0.5, -1.0, -2.0]), 2), (f32([1.0, 1.0, 1.0]), 3))


@runs(*INPUTS)
def walrus_in_an_if_test(x, n):
    if (total := x.sum()) > 0:
        return total * 2
    return total


@runs(*INPUTS)
def walrus_in_a_short_circuit_operand_may_leave_the_name_unbound(x, n):
    if n > 1 and (top := x.max()) > 0:
        return top
    if n > 2:
        return top * 2.0  # `top` is bound here: n > 2 passed through `n > 1 and ...`
    return x.min()


@runs(*INPUTS)
def walrus_read_after_it_did_not_run(x, n):
    if n > 1 and (top := x.max()) > -5:
        pass
    return top  # UnboundLocalError when n <= 1, as in Python


@runs(*INPUTS)
def walrus_in_both_arms_of_a_conditional_expression(x, n):
    r = (t := x * 2) if n > 0 else (t := x * 3)
    return r, t


@runs(*INPUTS)
def walrus_in_a_loop_body_and_a_call(x, n):
    total = 0.0
    for i in range(n):
        if (s := x[i % 3] * i) > 0:
            total = total + s
    return total, np.maximum(k := n + 1, 2), k


@runs(*INPUTS)
def walrus_in_while_conditions(x, n):
    i = 0
    while (i := i + 1) < n:
        pass
    y, steps = x.copy(), 0
    while (s := np.abs(y).sum()) > 0.5 and steps < 20:
        y = y * 0.5
        steps += 1
        if steps == n:
            continue
    k = 0
    while (k := k + 2) < 20:
        if k == n * 2:
            break
    return i, s, steps, y, k


@runs(*INPUTS)
def map_and_filter_over_known_sequences(x, n):
    doubled = list(map(lambda v: v * 2, [1, 2, 3]))
    sums = tuple(map(lambda a, b: a + b, [x, x * 2], [1.0, 2.0]))
    return (doubled, sums, sum(map(abs, [-1, 2, -3])), list(filter(lambda v: v > 1, [1, 2, 3])),
            list(filter(None, [0, 1, 2])), [k * 2 for k in map(int, [1.5, 2.5])])


@runs(*INPUTS)
def map_over_run_time_data_calls_in_the_loop(x, n):
    total = 0.0
    for v in map(lambda e: e * 2.0 + n, x):
        total = total + v
    return total


@runs(*INPUTS)
def list_sort_with_key_and_reverse(x, n):
    pairs = [(2, x), (1, x * 2), (3, x * 3)]
    pairs.sort(key=lambda p: p[0], reverse=True)
    names = ["bb", "a", "ccc", "dd"]
    names.sort(key=len)  # stable: "bb" before "dd"
    numbers = [3, 1, 2]
    alias = numbers
    numbers.sort()
    return pairs[0][1], names, alias


@runs(*INPUTS)
def list_sorted_in_a_run_time_branch(x, n):
    order = [3, 1, 2]
    if x.sum() > 0:
        order.sort()
    return order


@runs(*INPUTS)
def str_and_repr_of_run_time_values(x, n):
    s = x.sum()
    return str(x), repr(s), str(x[0]), repr(x), str(n) + "!", str(s > 0)


@runs(*INPUTS)
def assert_message_computed_only_when_it_fails(x, n):
    assert n < 3, f"n is {n}, the last item {x[n % 3]:.2f}"
    assert x.sum() > -3.0, "sum " + str(x.sum())
    return x * 2


@runs(*INPUTS)
def arrays_to_lists(x, n):
    m = np.stack([x, x * 2])
    return x.tolist(), m.tolist(), (x > 0).tolist(), x.astype(np.int32).tolist(), np.asarray(
        x[0]).tolist()


@runs(*INPUTS)
def comprehension_over_a_run_time_range(x, n):
    k = int(np.abs(x).sum()) % 4
    states = [np.tanh(x * i) for i in range(k)]
    pairs = [i * j for i in range(k) for j in range(2) if (i + j) % 2 == 0]
    i = 100  # the comprehensions' own `i` did not leak
    return len(states), np.stack(states).sum(axis=0) if states else x, pairs, i


@runs(*INPUTS)
def comprehension_keeping_rows_by_a_run_time_test(x, n):
    kept = [v * 2.0 for v in x if v > 0]
    return len(kept), sum(kept, 0.0)


@runs(*INPUTS)
def comprehension_over_a_run_time_list_in_order(x, n):
    items = []
    for i in range(int(np.abs(x).sum()) % 3 + n):
        items.append(x * i)
    said = [print("item", k) or it.sum() for k, it in enumerate(items)]
    return said, len(said)


@runs(*INPUTS)
def powers_of_0d_numpy_scalars(x, n):
    s = x.sum()
    flag = s > 0
    return s ** 2, flag ** 2, x[0] ** 0.5 if x[0] > 0 else s, str((flag ** 2).dtype)


def test_program(program, check_program):
    """Compiled and eager agree on every input (or compiling refuses at the marked line)."""
    check_program(program)

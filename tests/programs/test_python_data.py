"""Python data in compiled code: tuples, lists appended in loops then stacked, dicts of constants,
len / range / zip / enumerate / reversed / sum / min / max, comprehensions, `in`, `is None`."""
import numpy as np

from amber import ops
from harness import f32, i32, randn, runs

POS = f32([1.0, 2.0, 3.0])
NEG = f32([-1.0, -2.0, 0.5])
CONFIG = {"scale": 2.0, "shift": 1, "layers": (4, 8)}
WEIGHTS = (0.5, -1.0, 2.0)


@runs((POS, NEG), (NEG, NEG))
def tuple_swap_and_unpack(x, y):
    x, y = y, x
    t = (x, y * 2.0)
    u, v = t
    return v, u, t


@runs(POS, NEG)
def tuple_index_slice_concat(x):
    t = (x, x + 1.0, x + 2.0)
    head = t[:1]
    both = head + (t[-1],)
    return both, len(both), t[1]


@runs(POS, NEG)
def starred_unpacking(x):
    first, *rest = (x, x * 2.0, x * 3.0)
    *init, last = (1, 2, 3)
    return first, rest, init, last


@runs(POS, NEG)
def list_append_static_loop_then_stack(x):
    rows = []
    for i in range(4):
        rows.append(x * i)
    return np.stack(rows), len(rows)


@runs(randn(3, 2), randn(5, 2, seed=1))
def list_append_over_rows_then_stack(x):
    outs = []
    for row in x:
        outs.append(np.tanh(row))
    return np.stack(outs, axis=0)


@runs(randn(4, 3), randn(6, 3, seed=2), -np.abs(randn(2, 3, seed=3)))
def list_append_in_branch_then_stack(x):
    kept = []
    for row in x:
        if row.sum() > 0:
            kept.append(row)
    return np.stack(kept), len(kept)


@runs(randn(5), randn(8, seed=4))
def list_of_python_ints(x):
    signs = []
    for v in x:
        if v > 0:
            signs.append(1)
        else:
            signs.append(-1)
    return signs


@runs(POS, NEG)
def list_index_set_and_len(x):
    items = [x, x * 2.0, x * 3.0]
    items[1] = items[0] - items[2]
    return items[-1], items[1], len(items)


@runs(POS, NEG)
def list_concat_and_extend(x):
    a = [x]
    b = [x + 1.0, x + 2.0]
    c = a + b
    c.extend([x * 0.0])
    return ops.stack(c, 0)


@runs(POS, NEG)
def dict_of_constants_global(x):
    y = x * CONFIG["scale"] + CONFIG["shift"]
    return y, CONFIG["layers"][1] * 2


@runs((POS, NEG), (NEG, POS))
def dict_literal_local(x, y):
    d = {"a": x, "b": y, "n": 3}
    return d["a"] * d["n"] + d["b"]


@runs(POS, NEG)
def dict_items_loop(x):
    table = {"relu": 1.0, "neg": -1.0, "half": 0.5}
    out = []
    for name, k in table.items():
        out.append(x * k)
    return out, list(table.keys())


@runs(POS, NEG)
def len_and_range_over_tuple(x):
    acc = x * 0.0
    for i in range(len(WEIGHTS)):
        acc = acc + x * WEIGHTS[i]
    return acc


@runs((POS, NEG), (NEG, POS))
def zip_two_lists(x, y):
    out = []
    for a, b in zip([x, y], [y, x * 2.0]):
        out.append(a * b)
    return out


@runs(randn(3, 2), randn(2, 2, seed=6))
def zip_rows_with_range(x):
    total = np.zeros(2, np.float32)
    for row, k in zip(x, range(10)):
        total = total + row * k
    return total


@runs(POS, NEG)
def enumerate_constants(x):
    acc = x
    for i, w in enumerate(WEIGHTS):
        acc = acc + w * i
    return acc


@runs(randn(4, 3), randn(1, 3, seed=7))
def enumerate_rows(x):
    best = -1
    for i, row in enumerate(x):
        if row.max() > 1.0:
            best = i
    return best


@runs(POS, NEG)
def reversed_tuple_and_range(x):
    parts = []
    for w in reversed(WEIGHTS):
        parts.append(x * w)
    idx = []
    for i in reversed(range(3)):
        idx.append(i)
    return parts[0], idx


@runs(POS, NEG)
def comprehension_over_range(x):
    powers = [x ** k for k in range(3)]
    return powers, sum(powers)


@runs(POS, NEG)
def comprehension_with_condition(x):
    picked = [x * w for w in WEIGHTS if w > 0]
    squares = [i * i for i in range(6) if i % 2 == 1]
    return picked, squares


@runs(POS, NEG)
def nested_comprehension(x):
    grid = [[x[i] * x[j] for j in range(3)] for i in range(2)]
    return grid


@runs(randn(3, 4), randn(2, 4, seed=1))
def comprehension_over_rows(x):
    return np.stack([row * 2.0 for row in x])


@runs(POS, NEG)
def builtin_min_max_sum(x):
    sizes = (3, 7, 5)
    return max(sizes), min(sizes), sum(sizes), max(x[0], x[1]), min(2, x.shape[0])


@runs((POS, "relu"), (NEG, "tanh"), (NEG, "none"))
def string_argument_dispatch(x, mode):
    if mode in ("relu", "gelu"):
        return ops.relu(x)
    elif mode == "tanh":
        return np.tanh(x)
    return x


@runs((POS,), (POS, NEG))
def none_default_argument(x, y=None):
    if y is None:
        y = x
    return x + y


@runs(randn(2, 3), randn(4, 3, seed=3))
def shape_tuple_arithmetic(x):
    new_shape = x.shape + (1,)
    y = x.reshape(new_shape)
    return y, (1,) * 2 + x.shape[1:]


@runs(POS, i32([1, 2]))
def tuple_of_mixed_values(x):
    meta = (x.shape[0], "tag", 2.5, True, None)
    return meta, meta[0] * 2


@runs(f32([4.0, 1.0]), f32([0.1, 0.2]), f32([100.0]))
def list_grows_in_data_dependent_while(x):
    items = []
    v = x
    while v.max() > 0.5 and len(items) < 6:
        v = v * 0.5
        items.append(v)
    if len(items) == 0:
        return x[None], 0
    return np.stack(items), len(items)


@runs(randn(3, 2), randn(1, 2, seed=5))
def dict_updated_in_loop(x):
    stats = {"sum": np.zeros(x.shape[1], np.float32), "count": 0}
    for row in x:
        stats["sum"] = stats["sum"] + row
        stats["count"] = stats["count"] + 1
    return stats["sum"] / stats["count"], stats["count"]


@runs(f32([3.0, 1.0]), f32([0.1]))
def tuple_state_in_while(x):
    state = (x, 0, 0.0)
    while state[0].max() > 0.5:
        v, n, total = state
        state = (v * 0.5, n + 1, total + float(v.sum()))
    return state


@runs(POS, NEG)
def list_pop_insert_sorted(x):
    items = [3, 1, 2]
    last = items.pop()
    items.insert(0, 9)
    tensors = [x, x * 2.0]
    top = tensors.pop()
    return items, last, sorted(items), top, len(tensors)


@runs(POS, NEG, f32([0.0, 0.0, 1.0]))
def any_all_over_runtime_bools(x):
    conds = [x[0] > 0, x[1] > 0, x[2] > 0]
    return any(conds), all(conds), any([c for c in conds])


@runs(randn(2, 3), randn(2, 3, seed=3))
def nested_lists_indexed_in_loops(x):
    grid = [[x[i, j] * (i + j) for j in range(3)] for i in range(2)]
    total = np.float32(0.0)
    for i in range(2):
        for j in range(3):
            total = total + grid[i][j]
    return total, grid[1][2]


def test_program(program, check_program):
    """Compiled and eager agree on every input."""
    check_program(program)

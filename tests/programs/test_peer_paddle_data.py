"""Paddle dy2static's list, dict, slice, set-item, shape and len programs (issue 14), rewritten
for NumPy: lists appended and popped in branches and in loops with run-time trip counts, then
concatenated or stacked; dicts passed to sub-Cells and updated, popped with defaults; items of
arrays written through slices, ellipses, fancy and 0-d array indices; reshapes by shapes read
in the program."""
import numpy as np

from amber import nn
from harness import f32, i32, i64, randn, runs

INTS = i32([3, 1, 2])
NEG_INTS = i32([-3, 1, 2])


# -- lists ---------------------------------------------------------------------------------

@runs(INTS)
def append_under_a_constant_condition(x):
    a = []
    if 2 > 1:
        a.append(x)
    return a


@runs(INTS, NEG_INTS)
def append_different_shapes_in_branches(x):
    a = []
    if x[0] > 0:
        a.append(x)
    else:
        a.append(np.full((1, 2), 9, np.int64))
    return a[0]


@runs((INTS, 3), (INTS, 0))
def append_in_a_loop_then_read_first(x, iter_num):
    n = np.full((1,), iter_num, np.int32)
    a = [x * 0]
    for i in range(n[0]):
        a.append(x)
    return a[0], a[-1], len(a)


@runs(randn(3, 4), randn(1, 4, seed=3))
def append_in_a_shape_loop_then_concatenate(x):
    a = []
    for i in range(x.shape[0]):
        x = x + 1
        a.append(x)
    out = np.concatenate(a)
    return out[0], out.shape


@runs(randn(3, 4), randn(1, 4, seed=3))
def append_in_a_while_then_concatenate(x):
    n = x.shape[0]
    a = []
    i = 0
    while i < n:
        x = x + 1
        a.append(x)
        i += 1
    return np.concatenate(a)[0]


@runs((INTS, 3), (INTS, 1))
def append_in_a_run_time_loop_then_concatenate(x, iter_num):
    n = np.full((1,), iter_num, np.int32)
    a = []
    for i in range(n[0]):
        a.append(x * i)
    return np.concatenate(a, axis=0)


@runs((INTS, 3), (INTS, 1))
def append_in_a_run_time_while_then_stack(x, iter_num):
    n = np.full((1,), iter_num, np.int32)
    a = []
    i = 0
    while i < n[0]:
        a.append(x + i)
        i += 1
    return np.stack(a, axis=1)


@runs(INTS)
def list_of_arrays_sliced(x):
    a = []
    for i in range(np.array(3)):
        a.append(np.array(i))
    t = a[1:3]
    return a[2], len(t)


@runs(INTS)
def pop_the_only_item(x):
    a = []
    if 2 > 1:
        a.append(x)
    a.pop()
    return a


@runs(INTS)
def pop_by_index(x):
    a = []
    if 2 > 1:
        a.append(x)
        a.append(x + 1)
    last = a.pop(1)
    return last, len(a)


@runs(INTS, NEG_INTS)
def pop_after_appends_in_branches(x):
    a = []
    b = [x * 2 + (x + 1)]
    if x[0] > 0:
        a.append(x)
        b.append(x + 1)
        a.append(np.full((3,), 1, np.int64))
    else:
        a.append(x + 1)
        b.append(x - 1)
        a.append(np.full((3,), 2, np.int64))
    item = a.pop(1)
    return item, b[-1]


@runs((INTS, 3), (INTS, 1))
def pop_in_a_loop_after_appends_in_a_loop(x, iter_num):
    n = np.full((1,), iter_num, np.int32)
    a = []
    b = [x - 1, x + 1]
    for i in range(n[0]):
        a.append(x + i)
        b.append(x * 2)
    one = np.ones((1,), np.int32)
    for i in range(one[0]):
        item = a.pop()
    return a[0] if len(a) else x, item, b[1]


@runs((INTS, 3), (INTS, 4))
def pop_every_other_iteration(x, iter_num):
    n = np.full((1,), iter_num, np.int32)
    a = []
    b = [x]
    b.append(x)
    b.pop()
    i = 0
    while i < n:
        a.append(x + i)
        b.append(x - i)
        i += 1
        if i % 2 == 1:
            a.pop()
    return a[0], b[2], len(a)


class ListThenBranch(nn.Cell):
    def construct(self, x, index):
        y = np.maximum(x, 0)
        a = []
        for v in y:
            a.append(v)
        if index > 0:
            res = a[0] * a[0]
            y = y + 1
        else:
            res = a[-1] * a[-1]
            y = y - 1
        return a[-1] * res * y[0]


runs((f32([2.0, 3.0, 4.0]), i64([1])), (f32([2.0, 3.0, 4.0]), i64([0])))(ListThenBranch)


# -- dicts ---------------------------------------------------------------------------------

class AttentionWithCache(nn.Cell):
    def __init__(self, hidden=4):
        super().__init__()
        self.q = nn.Dense(hidden, hidden, weight_init="ones", has_bias=False)
        self.k = nn.Dense(hidden, hidden, weight_init="ones", has_bias=False)
        self.v = nn.Dense(hidden, hidden, weight_init="ones", has_bias=False)

    def construct(self, x, cache=None):
        q, k, v = self.q(x) * 0.6, self.k(x) * 0.5, self.v(x) * 0.2
        if cache is not None:
            k = 0.1 * cache["k"] + k
            v = 0.2 * cache["v"] + v
            cache["k"], cache["v"] = k, v
        weight = np.matmul(q, k.T)
        weight = np.exp(weight - weight.max(axis=-1, keepdims=True))
        weight = weight / weight.sum(axis=-1, keepdims=True)
        return np.matmul(weight, v)


def softmax_every_value(cache):
    for key, val in cache.items():
        e = np.exp(val - val.max(axis=-1, keepdims=True))
        cache[key] = e / e.sum(axis=-1, keepdims=True)
    return cache


class DecoderWithCache(nn.Cell):
    def __init__(self, batch=3, hidden=4):
        super().__init__()
        self.batch, self.hidden = batch, hidden
        self.sub = AttentionWithCache(hidden)

    def construct(self, x, max_len=4):
        cache = {"k": np.full((self.batch, self.hidden), 0, np.float32),
                 "v": np.full((self.batch, self.hidden), 0, np.float32)}
        out = x
        for i in range(max_len):
            out = self.sub(out, cache)
            cache = softmax_every_value(cache)
        return out, cache["k"]


runs(randn(3, 4) * 0.1, (randn(3, 4) * 0.1, 0))(DecoderWithCache)


@runs(INTS)
def dict_pop_with_and_without_default(x):
    d = {"red": 0, "green": 1, "blue": 2}
    m = d.pop("red")
    n = d.pop("black", 3)
    return x + m + n, len(d)


@runs(INTS)
def dict_of_arrays_popped(x):
    d = {"red": x, "green": x + 1, "blue": x + 3}
    m = d.pop("red")
    n = d.pop("black", 3)
    return x + m + n, sorted(d)


@runs(0)
def dict_updated_from_a_comprehension_in_a_zip_loop(k):
    pos = [1, 3]
    neg = [-1, -3]
    vals = {"minus": k}
    for x, y in zip(pos, neg):
        val = x - y
        vals.update({key: val + vals[key] for key, v in vals.items()})
    for i, (x, y) in enumerate(zip(pos, neg)):
        vals.update({key: x - y + vals[key] + i for key, v in vals.items()})
    return vals


# -- slices and set-item -------------------------------------------------------------------

@runs(INTS)
def list_item_replaced(x):
    a = [x]
    a[0] = np.full((2,), 2, np.float32)
    return a[0]


@runs(INTS, NEG_INTS)
def list_item_replaced_in_branches(x):
    a = []
    if x[0] > 0:
        a.append(x)
    else:
        a.append(np.full((3,), 9, np.int32))
    if x[0] > 0:
        a[0] = x
    a[0] = x + 1
    return a[0]


@runs(INTS)
def list_items_replaced_in_a_while(x, iter_num=3):
    n = np.full((1,), iter_num, np.int32)
    a = []
    i = 0
    while i < n:
        a.append(x)
        i += 1
    i = 0
    while i < n[0]:
        a[i] = np.full((3,), 2, np.int32)
        i += 1
    out = a[0:iter_num]
    return out[0]


@runs(INTS)
def list_items_replaced_in_a_for(x, iter_num=3):
    n = np.full((1,), iter_num, np.int32)
    a = []
    for i in range(n[0]):
        a.append(x)
    for i in range(n[0]):
        a[i] = x * i
    return a[2]


@runs(np.full((3, 4, 5), 5, np.float32))
def rows_and_blocks_assigned(x):
    x = np.copy(x)
    x[0] = np.full((1,), 2, np.float32)
    x[1:2, 0:1] = 10
    return x


class DenseThenFirstRow(nn.Cell):
    def __init__(self):
        super().__init__()
        self.fc = nn.Dense(10, 2, weight_init="ones")

    def construct(self, x):
        x = self.fc(x)
        x[0] = 1
        return x


runs(np.full((5, 10), 5, np.float32))(DenseThenFirstRow)


@runs(np.arange(80).reshape((5, 4, 4)).astype(np.int64), np.ones((0, 0, 0), np.float32))
def stepped_and_empty_slices(x):
    return x[::2], x[::-2], x[1:2]


X4 = randn(4, 8, 6, 5, seed=11)


@runs(X4)
def set_item_by_index_slice_and_step(x):
    y = x + 1
    y[:, 2] = x[:, 2] + 99
    y[2] = x[2] + 99
    y[1::2] = x[1::2] + 99
    return y


@runs(X4)
def set_item_by_tuples_and_ellipsis(x):
    y = x + 1
    y[1, 2] = x[1, 2] + 99
    y[[1, 2], [2, 3]] = x[[1, 2], [2, 3]] + 99
    y[1, :, 3] = x[1, :, 3] + 99
    y[1, ..., 2] = x[1, ..., 2] + 99
    y[..., 4:6] = y[..., 4:6] * 10  # NOTE: Paddle's 10000 drowns finite differences
    return y


@runs(X4)
def set_item_by_index_arrays(x):
    y = x + 1
    index = np.array([1, 2], dtype=np.int64)
    y[index] = x[index] + 99
    one = np.array(1, dtype=np.int64)
    two = np.array(2, dtype=np.int64)
    y[one, :, :, 2] = x[1, :, :, two] + 100
    return y


@runs((X4, np.ones((6, 5), np.float32)))
def set_item_from_an_argument(x, value):
    y = x + 1
    y[2, 4] = value
    return y


@runs(0)
def rows_filled_in_a_shape_loop(k):
    res = np.zeros((4, 3, 2))
    b = np.zeros((4, 3, 2))
    v = np.array(1.0 + k)
    for i in range(b.shape[0]):
        res[i] = v
    for i in range(4):
        res[i] = res[i] + i
    return res


@runs(0)
def shifted_columns_then_flatten(k):
    x = np.arange(8).reshape((2, 4)).astype("float32") + k
    x[:, 1:] = x[:, :-1].copy()
    x[:, 0] = 1
    return x.flatten()


@runs((np.ones((1, 6, 6, 3), np.float32), np.full((1,), 6, np.int32),
       np.full((1,), 4, np.int32)))
def pad_widths_written_from_arrays(x, h, w):
    b, _, _, c = x.shape
    pads = np.zeros((4,), np.int32)
    pads[3] = h[0] // 2
    pads[1] = w[0] // 2
    return pads, np.pad(x, ((0, 0), (0, 0), (0, 0), (0, 0))) * b * c


# -- shapes and len ------------------------------------------------------------------------

@runs(np.ones(5, np.int32))
def reshape_by_shapes_read_back(x):
    a = np.reshape(x, x.shape)
    shape = x.shape
    shape2 = shape
    b = np.reshape(x, shape2)
    y = np.ones((1, 5))
    c = np.reshape(x, y.shape)
    d = np.reshape(x, (-1, x.shape[0], len(x.shape)))
    s = x.shape[0]
    e = np.reshape(x, (-1, s))
    f = np.reshape(x, x.shape[0:])
    return a, b, c, d, e, f


@runs(np.ones((5, 7), np.int32))
def shape_unpacked_then_swapped(x):
    a, b = x.shape
    r1 = np.reshape(x, (b, a))
    shape = x.shape
    a, b = shape
    r2 = np.reshape(x, (b, a))
    a, b = np.shape(x)
    r3 = np.reshape(x, (b, a))
    return r1, r2, r3


@runs(np.ones(5, np.int32), np.ones(0, np.int32))
def shape_in_nested_branches(x):
    res = np.reshape(x, (-1, 1))
    if x.shape[0] < 1:
        if res.shape[0] > 1:
            res = np.full(x.shape, 2, np.int32)
        else:
            res = np.full(x.shape, 3, np.int32)
    if len(x.shape) < 1:
        other = x
    else:
        other = np.full(x.shape, 8, np.int32)
    return res, other


@runs(np.ones((5, 7), np.int32))
def shape_kept_after_reshape(x):
    a, b = x.shape
    x = np.reshape(x, (-1, 1))
    return np.reshape(x, (b, a))


@runs(0)
def len_of_a_shape_prints(k):
    x = np.array([1, 2, 3]) + k
    if len(np.shape(x)) > 0:
        print(x)
    a = {}
    a["shape"] = x.shape[0]
    return a


@runs(randn(10, 16), randn(0, 3))
def len_of_an_array(x):
    return len(x), len([x, x])


def test_program(program, check_program):
    """Compiled and eager agree on every input."""
    check_program(program)

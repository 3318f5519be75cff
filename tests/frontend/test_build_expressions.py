"""Expressions compiled by the frontend agree with eager Python/NumPy (reference interpreter)."""
import numpy as np
import pytest

from amber import ops
from amber.frontend.reference import agree

F32 = np.arange(6, dtype=np.float32).reshape(2, 3) - 2
I32 = np.arange(6, dtype=np.int32).reshape(2, 3)
V = np.array([0.5, -1.5, 2.0])


def arith(x, y):
    return x + y * 2 - x / 3 + y ** 2


def int_floor_mod(x):
    return x // 2 + x % 4 - (x * 2) + (x & 3) ^ (x | 1)


def promote_weak(x):
    return x * 2.5 + 1  # Python scalars are weak: float32 stays float32


def promote_strong(x, y):
    return x + y  # int32 + float32 -> float64? NumPy says float64


def broadcast(x, v):
    return x[:, :, None] * v[None, None, :]


def matmul(x, y):
    return x @ y.T


def unary_ops(x):
    return -x, +x, ~(x > 0), not True


def py_scalars(n, m):
    return n / m, n // m, n % m, -n, n ** 2, n < m, n == 3


def compare_ops(x, y):
    return x < y, x <= y, x > y, x >= y, x == y, x != y


def chained_runtime(x):
    return 0 < x.sum() < 10


def chained_const(n):
    return 1 < n < 5 < 10


def and_or_values(x, y):
    a = x.sum() > 0 and y.sum()
    b = x.sum() < 0 or y.mean()
    return a, b


def and_short_circuit(x):
    return x.shape[0] > 10 and x[10] > 0


def or_runtime_chain(x):
    return x.sum() > 100 or x.max() > 50 or x.min() < 0


def not_value(x):
    return not (x.sum() > 0), not x.shape


def ternary(x):
    y = x * 2 if x.sum() > 0 else x - 1
    return y if y.shape[0] == 2 else None


def size1_bool(x):
    if x[0:1]:
        return 1
    return 2


def subscripts(x):
    return x[0], x[1, 2], x[:, 1], x[::-1], x[..., 0], x[None, 1:, :2], x[-1, -1]


def runtime_index(x, i):
    k = int(x[0, 0]) + i
    return x[k], x[:, k:], x[k, ::2]


def fancy_index(x):
    return x[[1, 0]], x[x > 0], x[:, (0, 2)]


def shape_facts(x):
    n, m = x.shape
    return n * m, x.ndim, x.size, x.dtype == np.float32, x.T, len(x)


def methods(x):
    return (x.sum(axis=1), x.mean(), x.max(), x.min(axis=0), x.reshape(3, 2),
            x.reshape((-1,)), x.astype(np.int64), x.transpose(), x.transpose(1, 0),
            x.flatten(), x.clip(0, 1), x.round())


def tuples_lists(x):
    t = (x, x + 1)
    a, b = t
    c, *rest = [x, 1, 2]
    t2 = t + (3,)
    return a + b, c, len(rest), t2[2], t[1:]


def is_none(x, y=None):
    return x is None, y is None, x is not None, y is not None


def contains(n):
    return n in (1, 2, 3), "a" in "abc", 4 not in [1, 2]


def builtins_ct(n):
    return (len((1, 2, 3)), list(range(n)), abs(-n), min(n, 3), max(1, n, 2), int(2.7),
            float(n), bool(n), isinstance(n, int), sum([1, 2, n]), tuple(reversed((1, 2))))


def builtins_rt(x):
    s = x.sum()
    return abs(s), int(s), float(s), bool(s), min(s, 1.0), max(x[0], x[1]), isinstance(x,
                                                                                        np.ndarray)


def enumerate_zip_ct(x):
    out = 0
    for i, (a, b) in enumerate(zip((1, 2, 3), (x, x * 2, x * 3))):
        out = out + i * a * b
    return out


def comprehension(x):
    ys = [x * i for i in range(4) if i % 2 == 1]
    pairs = [a + b for a in (1, 2) for b in (10, 20)]
    rows = [r.sum() for r in x]
    return ops.stack(ys), pairs, rows[1]


def fstring(n):
    return f"n={n:03d} {n!r}"


def numpy_literals(x):
    return x + np.array([1.0, 2.0, 3.0], dtype=np.float32), np.zeros(3), np.pi * x


def numpy_calls(x):
    return np.tanh(x), np.maximum(x, 0), np.where(x > 0, x, 0.0), np.sqrt(np.abs(x))


WEIGHTS = (0.5, 1.5, -2.0)
CONFIG = {"depth": 2, "act": "tanh"}


def constant_tuple_runtime_index(x):
    s = x[0] * 0
    for i in range(3):
        s = s + x[i] * WEIGHTS[i]
    return s


def config_lookup(x):
    if CONFIG["act"] == "tanh":
        x = np.tanh(x)
    return x * CONFIG["depth"], CONFIG.get("missing", 7)


def runtime_slice_bounds(x):
    k = int(x[0, 0] > 0) + 1
    return x[:, :k], x[k - 1:, ::k]


def shape_compare(x):
    return x.shape == (2, 3), x.shape[1:] + (4,), x[..., None].shape


def sums_of_lists(x):
    parts = [x, x * 2, x * 3]
    return sum(parts), max((1, 5, 3)), min(x[0, 0], x[1, 1])


def numpy_scalar_cast(x):
    return np.float32(x.sum()), np.int64(3) * x, x.item() if x.size == 1 else x.sum().item()


def string_ops(n):
    name = "layer" + str(n)
    return name.upper(), name.startswith("lay"), len(name), "-".join(["a", "b"])


def any_all(x):
    conds = [x[0, 0] > 0, x[1, 1] > 0, True]
    return any(conds), all(conds), any([False, x.sum() > 100]), all([])


def list_arithmetic(x):
    items = [x, x * 2, x * 3]
    head, tail = items[0], items[1:]
    return len(tail), items[::-1][0], len(items + [x]), len(items * 2), head + tail[-1]


PROGRAMS = [
    (arith, (F32, F32 + 1)), (int_floor_mod, (I32,)), (promote_weak, (F32,)),
    (promote_strong, (I32, F32)), (broadcast, (F32, V)), (matmul, (F32, F32)),
    (unary_ops, (I32,)), (py_scalars, (7, 2)), (compare_ops, (F32, F32.T[:2, :2].sum())),
    (chained_runtime, (F32,)), (chained_runtime, (F32 + 5,)), (chained_const, (3,)),
    (and_or_values, (F32, F32)), (and_or_values, (-F32 - 5, F32)),
    (and_short_circuit, (F32,)), (or_runtime_chain, (F32,)), (not_value, (F32,)),
    (ternary, (F32,)), (ternary, (-F32 - 9,)), (size1_bool, (V,)), (size1_bool, (-V,)),
    (subscripts, (F32,)), (runtime_index, (np.abs(F32), 0)), (fancy_index, (F32,)),
    (shape_facts, (F32,)), (methods, (F32,)), (tuples_lists, (F32,)), (is_none, (F32,)),
    (contains, (2,)), (builtins_ct, (4,)), (builtins_rt, (F32,)), (enumerate_zip_ct, (F32,)),
    (comprehension, (F32,)), (fstring, (7,)), (numpy_literals, (F32[0],)),
    (numpy_calls, (F32,)), (constant_tuple_runtime_index, (V,)), (config_lookup, (F32,)),
    (runtime_slice_bounds, (F32,)), (shape_compare, (F32,)), (sums_of_lists, (F32,)),
    (numpy_scalar_cast, (F32,)), (numpy_scalar_cast, (V[:1],)), (string_ops, (3,)),
    (list_arithmetic, (F32,)), (any_all, (F32,)), (any_all, (-F32,)),
]


@pytest.mark.parametrize("fn,args", PROGRAMS, ids=[p[0].__name__ for p in PROGRAMS])
def test_expression_agrees_with_eager(fn, args):
    agree(fn, *args)


def test_weak_scalar_keeps_float32():
    result = agree(promote_weak, F32)
    assert result.graph.outputs[0].type.dtype == np.float32


def test_compile_time_arithmetic_makes_no_nodes():
    def f(n):
        return (n * 3 + 1) // 2, n / 4, "a" * n
    result = agree(f, 5)
    assert [node.name for node in result.graph.walk()] == ["constant"]


def test_short_circuit_builds_right_side_in_a_branch():
    result = agree(or_runtime_chain, F32)
    ifs = [n for n in result.graph.walk() if n.name == "if"]
    assert ifs and all(n.else_.nodes for n in ifs[:1])


def test_compile_time_short_circuit_skips_right_side():
    def f(x):
        return x.shape[0] > 10 and x[10]  # x[10] would be out of range
    result = agree(f, F32)
    assert not any(n.name == "getitem" for n in result.graph.walk())

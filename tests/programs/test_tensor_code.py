"""Straight-line tensor code: arithmetic and NumPy 2 dtype promotion, broadcasting, matmul,
slicing and indexing, item assignment, functional `amber.ops` spellings."""
import numpy as np

from amber import ops
from harness import f32, i32, i64, randint, randn, runs

A = randn(3, 4)
B = randn(3, 4, seed=1)
V4 = randn(4, seed=2)
C3 = randn(3, seed=3)


@runs(A, randn(2, 2, 2, seed=5), f32(1.5))
def affine_float32(x):
    return x * 2.0 + 1.0


@runs((C3, V4), (randn(1), randn(5, seed=1)))
def outer_broadcast(x, y):
    return x[:, None] * y[None, :] - y


@runs((A, V4), (randn(2, 5, 4, seed=4), V4))
def bias_broadcast(x, b):
    return np.maximum(x + b, 0.0)


@runs(i32([1, 2, 3]), i32([-4, 0, 9]))
def int32_with_python_int(x):
    return x * 3 + 7, x - 1


@runs(i32([1, 2, 3]), i64([-4, 0]))
def int_with_python_float(x):
    return x * 2.5, x / 2


@runs((i32([1, 2]), i64([3, 4])), (i32([-1]), i64([5, 6, 7])))
def mixed_int_widths(a, b):
    return a + b, a * b


@runs((A, B), (C3, -C3))
def float32_with_float64_scalar(x, y):
    return x + np.float64(0.5), y * np.float32(2.0)


@runs((A, B), (C3, C3))
def compare_and_logic(x, y):
    m = (x > 0) & (y < 0.5)
    n = ~m | (x == y)
    return m, n, np.logical_xor(m, n)


@runs(i64([7, -7, 8, -1]), i32([5, 0, 3]))
def int_division_family(x):
    return x // 2, x % 3, x / 4, -x // 3


@runs(A, f32([0.0, 4.0, 9.0]))
def powers(x):
    return x ** 2, np.abs(x) ** 0.5, 2.0 ** x, x ** 3


@runs(A, i32([1, -2]))
def unary_ops(x):
    return -x, +x, abs(x), np.negative(x), np.sign(x)


@runs((randn(3, 4), randn(4, 2, seed=1)), (randn(1, 5), randn(5, 1, seed=2)))
def matmul_2d(a, b):
    return a @ b, np.matmul(a, b) * 2.0


@runs((randn(3, 4), V4), (randn(2, 3, 4, seed=6), randn(4, 5, seed=7)))
def matmul_mixed_ranks(a, b):
    return a @ b


@runs(randn(5, 6), randn(4, 4, seed=8))
def basic_slices(x):
    return x[1:3], x[::-1], x[:, -1], x[..., 0], x[None], x[1, 2], x[-1], x[1:, ::2]


@runs(randn(6, 2), randn(5, 2, seed=1), randn(1, 2, seed=2))
def slice_bounds_from_shape(x):
    half = x.shape[0] // 2
    return x[:half], x[half:], x[half - 1 if half > 0 else 0]


@runs((randn(5, 3), i64([0, 4, 4, 1])), (randn(2, 3, seed=1), i32([1])))
def fancy_indexing(x, idx):
    return x[idx], x[idx, 0], x[:, [2, 0]]


@runs(randn(7), randn(3, seed=5), f32([-1.0, -2.0]))
def boolean_mask_dynamic_shape(x):
    kept = x[x > 0]
    return kept, kept.shape[0]


@runs(C3, f32([5.0, 6.0, 7.0]))
def item_assignment_on_local(x):
    y = np.zeros((3, 3), np.float32)
    y[1] = x
    y[:, 0] = 1.0
    y[2, 2] = x[0] * 2.0
    y[0, 1:] = x[1:]
    return y


@runs((A, B), (C3, C3 + 1.0))
def augmented_assignments(x, y):
    z = x * 1.0
    z += 2.0
    z *= y
    z -= x
    z /= 4.0
    return z


@runs(A, C3)
def where_with_scalars(x):
    return np.where(x > 0, x, 0.0), np.where(x < 0, -1.0, 1.0), ops.select(x > 0.5, x, -x)


@runs(A, f32([-10.0, 0.0, 10.0]))
def clip_min_max(x):
    return np.clip(x, -0.5, 0.5), np.minimum(x, 0.2), ops.clip_by_value(x, -1.0, 1.0)


@runs(A, randn(2, 6, seed=9, scale=30.0))
def softmax_by_hand(x):
    z = x - np.max(x, axis=-1, keepdims=True)
    e = np.exp(z)
    return e / np.sum(e, axis=-1, keepdims=True)


@runs(randn(2, 3, 4), randn(1, 2, 5, seed=2))
def transposes(x):
    return x.T, np.transpose(x, (1, 0, 2)), x.transpose(2, 0, 1), ops.permute(x, (0, 2, 1))


@runs(A, f32([0.5, -1.5, 2.5]))
def astype_round_trip(x):
    i = (x * 10.0).astype(np.int32)
    b = (x > 0).astype(np.float32)
    return i, b, i.astype(np.float32) / 10.0


@runs((C3, C3 * 2.0), (randn(2, 4), randn(2, 4, seed=1)))
def concat_and_stack(x, y):
    return np.concatenate([x, y], axis=0), np.stack((x, y), axis=-1), ops.concat((y, x), 0)


@runs((A, B), (C3, C3))
def repeated_subexpressions(x, y):
    a = x * y + 1.0
    b = x * y + 1.0
    unused = np.exp(a) * 100.0  # noqa: F841 (dead code the compiler drops)
    return a + b, a * b


@runs(A, i32([1, 2]))
def folded_constants(x):
    c = 2 * 3 + 1
    d = c / 2
    return x * c, x + d, x - (c % 4)


@runs(randn(2, 8), randn(3, 8, seed=1))
def ops_spellings(x):
    h = ops.relu(x)
    s = ops.sigmoid(x)
    r = ops.reshape(h + s, (-1, 4))
    return ops.tanh(r), ops.exp(ops.neg(ops.square(r)))


@runs(randint(3, 4, low=0, high=3, dtype=np.int32), randint(5, low=0, high=3, seed=1))
def bool_and_int_arith(x):
    t = x > 1
    return t + 1, t * 2.5, np.sum(t), t & (x < 3)


def test_program(program, check_program):
    """Compiled and eager agree on every input."""
    check_program(program)

"""Reductions (axes, keepdims, 0-d results, integer and bool inputs) and shape arithmetic
(shape / ndim / size / len, reshape, expand and squeeze, tile and broadcast_to, split)."""
import numpy as np

from amber import ops
from harness import f32, i64, randint, randn, runs

A = randn(3, 4)
T = randn(2, 3, 4, seed=1)
I = randint(3, 5, seed=2, dtype=np.int32)


@runs(A, T, f32(2.5))
def full_reductions(x):
    return x.sum(), x.mean(), x.max(), x.min(), np.prod(x)


@runs(A, T)
def axis_reductions(x):
    return x.sum(axis=0), np.mean(x, axis=-1), np.max(x, 1), x.min(axis=(0, 1))


@runs(A, T)
def keepdims_reductions(x):
    m = x.mean(axis=-1, keepdims=True)
    v = ((x - m) ** 2).mean(axis=-1, keepdims=True)
    return (x - m) / np.sqrt(v + 1e-5)


@runs(I, i64([[1, 2], [3, 4]]))
def int_reductions(x):
    return x.sum(), x.sum(axis=1), x.max(axis=0), np.prod(x, axis=0), x.mean()


@runs(A, T)
def arg_reductions(x):
    return x.argmax(), np.argmax(x, axis=-1), x.argmin(axis=0), ops.argmax(x, -1)


@runs(A, f32([[0.0, 1.0], [0.0, 0.0]]))
def bool_reductions(x):
    pos = x > 0
    return pos.any(), pos.all(), np.any(pos, axis=0), pos.sum(axis=-1), pos.all(axis=1)


@runs(A, T)
def ops_reductions(x):
    return (ops.reduce_sum(x, -1), ops.reduce_mean(x, (0,)), ops.reduce_max(x, -1, True),
            ops.reduce_min(x), ops.reduce_prod(x, 0))


@runs(A, T, randn(5, seed=4))
def shape_queries(x):
    return x.shape, x.ndim, x.size, len(x), x.shape[-1], ops.rank(x)


@runs(A, randn(6, 2, seed=3))
def shape_arithmetic(x):
    n, m = x.shape
    flat = x.reshape(n * m)
    half = flat.reshape(-1, 2)
    return half, half.shape[0] * 2 == n * m, flat[: n * m // 3]


@runs(A, T, randn(2, 2, seed=5))
def reshape_spellings(x):
    return x.reshape(-1), np.reshape(x, (x.shape[0], -1)), ops.reshape(x, (-1,)), x.flatten()


@runs(randn(3, seed=6), A)
def expand_and_squeeze(x):
    e = np.expand_dims(x, 0)
    u = ops.unsqueeze(x, -1)
    return e, u, np.squeeze(e, 0), ops.squeeze(u, -1), e.squeeze()


@runs(randn(2, 3), randn(1, 3, seed=1))
def tile_repeat_broadcast(x):
    return np.tile(x, (2, 1)), np.repeat(x, 2, axis=0), np.broadcast_to(x, (4, 2, 3))


@runs(randn(6, 4), randn(6, 2, seed=7))
def split_parts(x):
    a, b, c = np.split(x, 3, axis=0)
    p, q = ops.split(x, x.shape[1] // 2, 1)
    return a + c, b, p - q


@runs(A, T)
def reduce_then_broadcast_back(x):
    total = x.sum(axis=0)
    frac = x / (total + 10.0)
    return frac, frac.sum(axis=0)


@runs(A, randn(4, 4, seed=3))
def variance_two_ways(x):
    m = x.mean()
    v1 = ((x - m) ** 2).mean()
    v2 = (x * x).mean() - m * m
    return v1, v2


@runs(randn(4, 6), randn(2, 6, seed=2))
def pairwise_distances(x):
    d = x[:, None, :] - x[None, :, :]
    return np.sqrt((d * d).sum(axis=-1))


@runs(randn(3, 5), randn(1, 5, seed=9))
def log_sum_exp(x):
    m = x.max(axis=-1, keepdims=True)
    return m[..., 0] + np.log(np.exp(x - m).sum(axis=-1))


@runs(randn(2, 3, 4, 5), randn(1, 2, 2, 2, seed=2))
def conv_like_shape_math(x):
    n, c, h, w = x.shape
    pooled = x.reshape(n, c, h * w).mean(axis=-1)
    return pooled, (h - 1) // 2 + 1, w * h * c


@runs(A, randn(5, 5, seed=8))
def normalize_columns(x):
    lo = x.min(axis=0)
    hi = x.max(axis=0)
    return (x - lo) / (hi - lo + 1e-6)


@runs(randint(4, 3, low=0, high=10, seed=1), randint(2, 2, low=-3, high=3, seed=3))
def integer_statistics(x):
    return x.max() - x.min(), np.abs(x).sum(axis=0), (x % 2 == 0).sum()


@runs(randn(2, 3), randn(4, 1, seed=5))
def creation_from_shapes(x):
    z = np.zeros(x.shape, np.float32)
    o = np.ones((x.shape[1], 2), np.int32)
    f = np.full_like(x, 7.0)
    e = np.eye(x.shape[0], dtype=np.float32)
    r = np.arange(x.shape[1]) * 2
    return z + x, o, f, e @ x, r


@runs(randn(3, 4), randn(2, 2, seed=2))
def zeros_ones_like(x):
    return np.zeros_like(x) + 1.0, ops.ones_like(x) * x, ops.full((2,), 3, dtype=np.int32)


@runs(randn(5, 3), randn(2, 3, seed=6))
def cumulative_by_matmul(x):
    n = x.shape[0]
    tri = np.ones((n, n), np.float32)
    for i in range(n):
        for j in range(i + 1, n):
            tri[i, j] = 0.0
    return tri @ x


def test_program(program, check_program):
    """Compiled and eager agree on every input."""
    check_program(program)

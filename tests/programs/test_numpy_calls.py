"""NumPy calls people write inside construct: np.asarray / np.array / np.copy / ndarray.copy
of run-time values (aliasing exactly as NumPy: asarray of an array is that array), lists and
tuples as array operands, `out=`, np.pad with a run-time fill, np.triu / np.tril, arrays built
from constants and then written, np.meshgrid (xy and ij indexing, sparse, views with copy=False,
inputs of several dtypes and ranks), NumPy's global random functions after np.random.seed (the
same draws in the same order, in branches and run-time loops)."""
import numpy as np

from harness import f32, i32, randn, runs

POS = f32([1.0, 2.0, 3.0])
NEG = f32([-1.0, -2.0, 0.5])
M = randn(3, 4, seed=3)


@runs(POS, NEG)
def asarray_is_the_same_array(x):
    y = np.asarray(x)
    y[0] = 10.0  # x changes too
    z = np.asarray(x, dtype=np.float64)  # a converted copy
    z[1] = -1.0
    return x, y, z, np.asarray(x, np.float32) is x


@runs(POS, NEG)
def array_is_a_copy(x):
    y = np.array(x)
    y[0] = 5.0
    c = x.copy()
    c[1] = 7.0
    d = np.copy(x)
    d[2] = 9.0
    return x, y, c, d


@runs(POS, NEG)
def arrays_of_scalars(x):
    s = x.sum()
    a = np.array(s)  # a 0-d array
    b = np.asarray(x[0])
    c = np.asarray(float(x[1]))
    a += 1
    return a, b, c, s


@runs(POS, NEG)
def array_of_a_list_of_run_time_values(x):
    v = np.array([x.sum(), x.max(), 1.0])
    w = np.asarray([[x[0], x[1]], [x[2], 0.0]], dtype=np.float32)
    u = np.array([x, x * 2])
    return v, w, u


@runs(POS, NEG)
def lists_and_tuples_as_operands(x):
    a = np.concatenate([x, x * 2])
    b = np.stack([x, x + 1])
    c = np.maximum(x, [1, 2, 2.5])
    d = x * (1.0, 2.0, 3.0)
    e = x + [x[0], x[1], 0.5]
    f = np.where(x > 0, x, (7.0, 8.0, 9.0))
    return a, b, c, d, e, f


@runs(POS, NEG)
def constant_arrays_written(x):
    a = np.array([1.0, 2.0, 3.0])
    alias = a
    a[0] = x.sum()
    a += x
    table = np.arange(6).reshape(2, 3)
    table[1] = 0
    return alias, table


@runs((POS, 2.0), (NEG, -1.0))
def pad_with_a_run_time_fill(x, c):
    v = x.sum()
    m = x.reshape(1, 3) * np.ones((2, 1), np.float32)
    return np.pad(x, (1, 2), constant_values=v), np.pad(m, ((0, 1), (2, 0)), constant_values=c)


@runs(M, M * -1)
def triangles(m):
    return np.triu(m), np.tril(m, -1), np.triu(m * 2, 1), np.tril(m > 0)


@runs((POS, i32([4, 5])), (NEG, i32([])))
def meshgrids_in_both_indexings(x, n):
    gx, gy = np.meshgrid(x, n)
    ix, iy, iz = np.meshgrid(x, n, [0.5, 1.5], indexing="ij")
    (single,) = np.meshgrid(M)
    return gx, gy, ix, iy, iz, single, gx * gy


@runs(POS, NEG)
def sparse_meshgrids_copied_or_viewed(x):
    a, b = np.meshgrid(x, x[:2], sparse=True)
    a[0, 0] = 50.0  # a copy: x keeps its value
    c, d = np.meshgrid(x, x[:2], sparse=True, copy=False)
    c[0, 1] = -7.0  # a view of x
    return x, a, b, c, d, a + b


@runs((POS, 3), (NEG, 0))
def meshgrid_of_a_run_time_size(x, k):
    rows, cols = np.meshgrid(np.arange(k), x)
    return rows * cols, rows.shape


@runs(POS, NEG)
def seeded_draws_in_branches(x):
    np.random.seed(7)
    noise = np.random.normal(0.0, 0.1, size=(3,))
    if x.sum() > 0:
        pick = np.random.randint(0, 10, size=2)
    else:
        pick = np.random.choice(5, 2, replace=False)
    return x + noise, pick, np.random.rand(), np.random.uniform(-1.0, 1.0, (2, 2))


@runs((POS, i32(3)), (NEG, i32(0)))
def seeded_draws_in_a_run_time_loop(x, n):
    np.random.seed(11)
    for i in range(n):
        x = x + np.random.standard_normal(3).astype(np.float32)
    return x, np.random.random(2)


def test_program(program, check_program):
    """Compiled and eager agree on every input."""
    check_program(program)

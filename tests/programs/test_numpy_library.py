"""NumPy functions amber writes with other ops (frontend/arrays.py) and the newer ufuncs:
np.var / np.std and their methods (axis, ddof, keepdims; ints and bools in float64), np.outer,
np.swapaxes / np.moveaxis, np.ravel (a view, as NumPy's), np.diff, np.vstack / np.hstack,
np.sort / np.argsort (NumPy's algorithm: ties in NumPy's order), np.cumsum, np.roll,
np.atleast_1d/2d/3d, np.count_nonzero, np.isclose / np.allclose, np.trace, arctan2 / hypot /
fmod / logaddexp,
log1p / expm1 / log2 / log10 / exp2 / tan / arctan / sinh / cosh / trunc / rint / isinf. Each
is compared with eager NumPy, in every compile mode; the differentiable ones are in the
gradient corpus too."""
import numpy as np

from harness import f32, i32, randn, runs

V = f32([0.5, -1.0, 2.0, 0.25])
M = randn(3, 4, seed=5)
T3 = randn(2, 3, 4, seed=6)


@runs(V, M, T3)
def variance_and_deviation(x):
    return np.var(x), np.std(x), x.var(), x.std()


@runs(M, T3)
def variance_over_axes_with_ddof_and_keepdims(x):
    return (np.var(x, axis=0), np.std(x, axis=-1, keepdims=True), x.var(axis=(0, 1), ddof=1),
            np.std(x, 1, ddof=2))


@runs(i32([1, 2, 3, 7]), np.array([[True, False], [True, True]]))
def variance_of_ints_and_bools_is_float64(x):
    return np.var(x), x.std(axis=0), np.var(x, ddof=1)


@runs(f32([3.0]), f32([1.0, 2.0]))
def variance_with_ddof_past_the_count_divides_by_zero(x):
    with_ddof = np.var(x, ddof=1)  # inf/nan with a RuntimeWarning, as NumPy
    return np.isinf(with_ddof) | np.isnan(with_ddof), np.var(x)


@runs(M)
def layer_norm_by_hand(x):
    mu = x.mean(-1, keepdims=True)
    return (x - mu) / np.sqrt(x.var(-1, keepdims=True) + 1e-5)


@runs((V, f32([1.0, -2.0])), (M, V))
def outer_products(a, b):
    return np.outer(a, b), np.outer(b, 2.0), np.outer(a, [1, 2])


@runs(T3)
def axes_swapped_and_moved(x):
    return (np.swapaxes(x, 0, 2), x.swapaxes(1, -1), np.moveaxis(x, 0, -1),
            np.moveaxis(x, [0, 1], [-1, -2]))


@runs(M, T3)
def ravel_is_a_view_of_a_contiguous_array(x):
    flat = np.ravel(x)
    flat[0] = 100.0  # writes x too, as in NumPy
    r = x.ravel()
    return flat, r, x


@runs(M)
def ravel_of_a_transpose_is_a_copy(x):
    flat = x.T.ravel()
    flat[0] = -5.0  # x keeps its value
    return flat, x


@runs(V, M, np.array([True, False, False, True]), i32([1, 4, 9, 16]))
def differences(x):
    return np.diff(x), np.diff(x, n=2), np.diff(x, axis=0), np.diff(x, n=0)


@runs((V, f32([1.0, 2.0, 3.0, 4.0])), (M, randn(2, 4, seed=7)))
def stacked_rows_and_columns(a, b):
    return np.vstack([a, b]), np.vstack((a, b, a)), np.hstack([a, b]), np.hstack((b, a))


@runs(V, M, f32([0.0, -0.5, 1e-8, 3.0]))
def more_ufuncs(x):
    p = np.abs(x) + 0.5
    return (np.log1p(p), np.expm1(x), np.log2(p), np.log10(p), np.exp2(x), np.tan(x * 0.5),
            np.arctan(x), np.sinh(x), np.cosh(x), np.trunc(x * 3.0), np.rint(x * 3.0),
            np.isinf(x / 0.0), np.fix(x * 2.5))


@runs(V)
def ufuncs_in_place_in_a_loop(x):
    y = x.copy()
    for _ in range(3):
        y = np.log1p(np.abs(y)) + np.arctan(y)
    return y


@runs(V, M, T3, f32([2.0, 2.0, -1.0, 2.0]))
def sorted_values_and_orders(x):
    return np.sort(x), np.sort(x, axis=0), np.argsort(x), x.argsort(axis=0), np.argsort(
        x, kind="stable")


@runs(V, M)
def sorted_then_weighted(x):
    ranks = np.sort(x) * np.arange(x.shape[-1])  # differentiable through the sort
    return ranks.sum(axis=-1)


@runs(V, M, T3, i32([1, 2, 3, 4]), np.array([True, False, True]))
def running_sums(x):
    return np.cumsum(x), x.cumsum(axis=0), np.cumsum(x, axis=-1) if x.ndim else x


@runs(V, M)
def running_sum_in_a_loop(x):
    total = x * 0.0
    for _ in range(2):
        total = total + np.cumsum(x, axis=-1) * 0.5
    return total


@runs((V, f32([1.0, -2.0, 0.5, 3.0])), (M, randn(3, 4, seed=8)))
def binary_ufuncs(a, b):
    return np.arctan2(a, b), np.hypot(a, b), np.fmod(a * 3.0, b), np.logaddexp(a, b)


@runs(V, M, T3)
def rolled(x):
    return np.roll(x, 1), np.roll(x, -5), np.roll(x, 2, axis=0), np.roll(x, 0)


@runs(M, T3)
def rolled_along_several_axes(x):
    return np.roll(x, (1, -1), axis=(0, 1))


@runs(V, M)
def at_least_ranks(x):
    s = x.sum()
    return (np.atleast_1d(s), np.atleast_2d(x), np.atleast_3d(x), np.atleast_2d(s),
            np.atleast_1d(x) is x)


@runs(V, M, np.array([True, False, True]), i32([0, 3, 0, 1]))
def nonzero_counts(x):
    return np.count_nonzero(x), np.count_nonzero(x, axis=0), np.count_nonzero(
        x, axis=-1, keepdims=True)


@runs(V, M, f32([np.inf, np.nan, 1.0, -np.inf]))
def closeness(x):
    y = x + 1e-7
    return (np.isclose(x, y), np.isclose(x, 0.5), np.isclose(2.0, x), np.allclose(x, y),
            np.isclose(x, x, equal_nan=True), np.allclose(x, x + 1), np.isclose(
                x, y, rtol=0.0, atol=1e-9))


@runs(randn(3, 3, seed=9), randn(2, 4, seed=10))
def traces(m):
    return np.trace(m), np.trace(m, 1), np.trace(m, -1), np.trace(m.astype(np.int32))


@runs(M)
def axis_out_of_range_is_refused_where_eager_raises(x):
    return np.var(x, axis=2)


def test_program(program, check_program):
    """Compiled and eager agree on every input."""
    check_program(program)

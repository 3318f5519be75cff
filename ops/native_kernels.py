"""Numba-compatible helpers the ops' `numba` spellings (ops/native.py) call.

Each is plain Python over NumPy that Numba compiles in nopython mode; codegen copies their
source into a generated module that uses Numba (decorated `@numba.njit`), so they may use only
`np`, builtins and each other. They reproduce NumPy's results exactly where NumPy's order of
operations is known: `sum_all` is NumPy's pairwise summation (8 accumulators, blocks of 128),
reductions go in NumPy's order, and the integer and Python-scalar helpers raise or wrap where
NumPy or Python do. Nothing here imports Numba: the functions also run as plain Python.
"""
from __future__ import annotations

import numpy as np

# ---- Python scalars: Python's semantics on 64-bit machine integers ----------------------------


def py_add(x, y):
    """`x + y` of Python ints; OverflowError where the exact result leaves 64 bits (Python
    would give a big int, which a Numba kernel cannot hold). Checked before adding: Numba's
    integer arithmetic may assume it never overflows."""
    if (y > 0 and x > 9223372036854775807 - y) or (y < 0 and x < -9223372036854775808 - y):
        raise OverflowError("Python int too large for a Numba kernel; use backend='numpy'")
    return x + y


def py_sub(x, y):
    """`x - y` of Python ints (OverflowError as `py_add`)."""
    if (y < 0 and x > 9223372036854775807 + y) or (y > 0 and x < -9223372036854775808 + y):
        raise OverflowError("Python int too large for a Numba kernel; use backend='numpy'")
    return x - y


def py_mul(x, y):
    """`x * y` of Python ints (OverflowError as `py_add`; also for the few products within
    2**-12 of the limit, which a float estimate cannot tell apart from overflowing ones)."""
    if abs(float(x) * float(y)) >= 9.22e18:
        raise OverflowError("Python int too large for a Numba kernel; use backend='numpy'")
    return x * y


def py_truediv(x, y):
    """`x / y` of Python numbers: ZeroDivisionError for a zero divisor."""
    if y == 0:
        raise ZeroDivisionError("division by zero")
    return x / y


def py_floordiv(x, y):
    """`x // y` of Python numbers: ZeroDivisionError for a zero divisor."""
    if y == 0:
        raise ZeroDivisionError("integer division or modulo by zero")
    return x // y


def py_mod(x, y):
    """`x % y` of Python numbers: ZeroDivisionError for a zero divisor."""
    if y == 0:
        raise ZeroDivisionError("integer division or modulo by zero")
    return x % y


# ---- NumPy integer arithmetic: division by zero gives 0, as NumPy's loops do ----------------


def int_floordiv(x, y):
    """NumPy's `floor_divide` of two integers of one dtype: 0 for a zero divisor, and the
    most negative value divided by -1 wraps."""
    if y == 0:
        return x - x
    if y == -1:
        return -x
    return x // y


def int_mod(x, y):
    """NumPy's `remainder` of two integers of one dtype: 0 for a zero divisor; the sign of the
    divisor, as Python's `%`."""
    if y == 0 or y == -1:
        return x - x
    return x % y


# ---- indexing ----------------------------------------------------------------------------------


def checked_index(i, n, axis):
    """An index into an axis of length `n` as NumPy reads it (negative counts from the end);
    IndexError when it is out of range."""
    if i < -n or i >= n:
        raise IndexError("index out of bounds for an axis of the indexed array")
    return i + n if i < 0 else i


# ---- reductions over every element, in NumPy's order -------------------------------------------


def sum_block(flat, start, n, zero):
    """NumPy's pairwise sum of `flat[start:start + n]` for n <= 128
    (numpy/_core/src/umath/loops_utils.h): below 8 elements one by one from `zero`, else with 8
    interleaved accumulators (of the elements' dtype) combined as a tree, then the rest."""
    if n < 8:
        res = zero
        for i in range(n):
            res += flat[start + i]
        return res
    r0, r1, r2, r3 = flat[start], flat[start + 1], flat[start + 2], flat[start + 3]
    r4, r5, r6, r7 = flat[start + 4], flat[start + 5], flat[start + 6], flat[start + 7]
    i = 8
    while i < n - n % 8:
        k = start + i
        r0 += flat[k]
        r1 += flat[k + 1]
        r2 += flat[k + 2]
        r3 += flat[k + 3]
        r4 += flat[k + 4]
        r5 += flat[k + 5]
        r6 += flat[k + 6]
        r7 += flat[k + 7]
        i += 8
    res = ((r0 + r1) + (r2 + r3)) + ((r4 + r5) + (r6 + r7))
    while i < n:
        res += flat[start + i]
        i += 1
    return res


def pairwise_sum(flat, start, n, zero):
    """NumPy's pairwise sum of any length: blocks of at most 128 (`sum_block`), halves split
    at a multiple of 8 above that, each half summed before the two are added.

    The recursion runs on explicit stacks: Numba's on-disk cache crashes the next process that
    loads a recursive function (numba/numba#6061). A frame is a range and how far it has got
    (0: not split, 1: left half done, 2: both done); `partial` holds the finished sums."""
    if n <= 128:
        return sum_block(flat, start, n, zero)
    starts = np.empty(64, np.int64)  # NOTE: depth <= log2(n) + 1 < 64
    sizes = np.empty(64, np.int64)
    stage = np.zeros(64, np.int64)
    partial = np.full(65, zero)
    starts[0], sizes[0] = start, n
    depth, done = 1, 0
    while depth > 0:
        top = depth - 1
        s, m = starts[top], sizes[top]
        if m <= 128:
            partial[done] = sum_block(flat, s, m, zero)
            done += 1
            depth -= 1
            continue
        half = m // 2
        half -= half % 8
        if stage[top] == 2:
            partial[done - 2] = partial[done - 2] + partial[done - 1]
            done -= 1
            depth -= 1
            continue
        stage[top] += 1
        starts[depth] = s if stage[top] == 1 else s + half
        sizes[depth] = half if stage[top] == 1 else m - half
        stage[depth] = 0
        depth += 1
    return partial[0]


def flat_2d(x, out):
    """The elements of a 2-d array in C order, copied into the 1-d `out`."""
    n = x.shape[1]
    for i in range(x.shape[0]):
        for j in range(n):
            out[i * n + j] = x[i, j]
    return out


def flat_3d(x, out):
    """The elements of a 3-d array in C order, copied into the 1-d `out`."""
    n, p = x.shape[1], x.shape[2]
    for i in range(x.shape[0]):
        for j in range(n):
            for k in range(p):
                out[(i * n + j) * p + k] = x[i, j, k]
    return out


def prod_all(flat, one):
    """`x.prod()` of the elements `flat`: one by one, in the dtype of `one`."""
    acc = one
    for i in range(flat.shape[0]):
        acc *= flat[i]
    return acc


def max_all(flat):
    """`x.max()` of the elements `flat`: NaN wins; among equal values the later one (so -0.0
    and 0.0 come out as NumPy has them)."""
    acc = flat[0]
    for i in range(1, flat.shape[0]):
        v = flat[i]
        if not (acc > v or acc != acc):
            acc = v
    return acc


def min_all(flat):
    """`x.min()` of the elements `flat`: NaN wins; among equal values the later one."""
    acc = flat[0]
    for i in range(1, flat.shape[0]):
        v = flat[i]
        if not (acc < v or acc != acc):
            acc = v
    return acc


def argmax_all(flat):
    """`x.argmax()` of the elements `flat` (C order): the first maximum, or the first NaN."""
    best = 0
    for i in range(flat.size):
        v = flat[i]
        if v != v:
            return i
        if v > flat[best]:
            best = i
    return best


def argmin_all(flat):
    """`x.argmin()` of the elements `flat` (C order): the first minimum, or the first NaN."""
    best = 0
    for i in range(flat.size):
        v = flat[i]
        if v != v:
            return i
        if v < flat[best]:
            best = i
    return best


def all_true(flat):
    """`x.all()` of the elements `flat`."""
    for i in range(flat.shape[0]):
        if not flat[i]:
            return False
    return True


def any_true(flat):
    """`x.any()` of the elements `flat`."""
    for i in range(flat.shape[0]):
        if flat[i]:
            return True
    return False


def sum_ints(flat, zero):
    """`x.sum()` of integers or bools `flat`, added up in the dtype of `zero`."""
    acc = zero
    for i in range(flat.shape[0]):
        acc += flat[i]
    return acc


# ---- products ------------------------------------------------------------------------------


SMALL_PRODUCT = 512
"""Products of at most this many multiply-adds run as loops in the kernel; larger float ones
call BLAS through `np.dot`. Measured inside a kernel (float32, one BLAS thread): the loops take
about 0.4 ns per multiply-add on any layout, `np.dot` about 0.15 us per call plus 0.05 ns per
multiply-add, so they break even near 512 (2x16x16); at 16x32x64 the loops are 6x slower."""


def matmul_2d(a, b, out):
    """`a @ b` of 2-d arrays into `out` (zeroed here): each element summed over the inner axis
    in order."""
    m, k = a.shape
    n = b.shape[1]
    out[:, :] = 0
    for i in range(m):
        for p in range(k):
            x = a[i, p]
            for j in range(n):
                out[i, j] += x * b[p, j]
    return out


def matvec(a, v, out, zero):
    """`a @ v` of a 2-d array and a 1-d one into `out`, each element summed in order from
    `zero`."""
    m, k = a.shape
    for i in range(m):
        acc = zero
        for p in range(k):
            acc += a[i, p] * v[p]
        out[i] = acc
    return out


def vecmat(v, b, out):
    """`v @ b` of a 1-d array and a 2-d one into `out`."""
    k, n = b.shape
    out[:] = 0
    for p in range(k):
        x = v[p]
        for j in range(n):
            out[j] += x * b[p, j]
    return out


def vecdot(u, v, zero):
    """`u @ v` of two 1-d arrays, summed in order in the dtype of `zero`."""
    acc = zero
    for p in range(u.shape[0]):
        acc += u[p] * v[p]
    return acc


# ---- elementwise --------------------------------------------------------------------------------


def tanh_f32(x):
    """`np.tanh` of a float32, as a rational function a kernel can vectorize (Numba calls the C
    library's `tanhf` one element at a time, about 11 ns an element against NumPy's 0.8).

    tanh(x) = x * P(t) / Q(t) with t = x*x / 9.1**2, P and Q of degree 5, evaluated in float64
    and rounded once to float32; |x| is clamped to 9.1 first (beyond it tanh rounds to +-1 in
    float32: 1 - tanh(9.1) is 2.5e-8, under half the spacing of float32 below 1). The coefficients were fitted
    to tanh(x)/x on [0, 9.1] (least squares on relative error, reweighted towards the minimax
    fit): relative error at most 4.2e-11 in float64, so the float32 result is the correctly
    rounded tanh for all but a few of the 2**32 inputs and at most 1 ulp from it (checked on every
    float32 by tests/native/test_tanh.py, which also compares NumPy's own float32 tanh).
    NaN stays NaN (no comparison holds), +-inf give +-1, -0.0 gives -0.0."""
    y = np.float64(x)
    if y > 9.1:
        y = 9.1
    elif y < -9.1:
        y = -9.1
    t = y * y * 0.012075836251660426  # NOTE: 1 / 9.1**2
    p = ((((0.14168154154222112 * t + 5.200980032369123) * t + 23.949153275844694) * t
          + 30.324367084201352) * t + 11.673150239228185) * t + 0.9999999999593115
    q = ((((11.408979939746395 * t + 122.00918694965809) * t + 283.9848622498835) * t
          + 200.1534264790748) * t + 39.2764835357035) * t + 1.0
    return np.float32(y * p / q)



def maximum_(a, b):
    """NumPy's `maximum` of two numbers: NaN wins, and on a tie the second (so
    `maximum(-0.0, 0.0)` is 0.0 and `maximum(0.0, -0.0)` is -0.0, as NumPy's loops give)."""
    return a if a > b or a != a else b


def minimum_(a, b):
    """NumPy's `minimum` of two numbers (NaN wins; on a tie the second)."""
    return a if a < b or a != a else b


def sign_(x, zero, one):
    """NumPy's `sign`: 1, -1, 0 (a positive zero for -0.0 too) or NaN."""
    if x > zero:
        return one
    if x < zero:
        return -one
    if x == zero:
        return zero
    return x


def scalar_power(x, y, one):
    """`x ** y` for an array and a scalar exponent, with NumPy's fast paths (`x * x` for 2,
    `sqrt` for 0.5, ...) so the results are NumPy's; `one` is 1 in x's type."""
    if y == 2:
        return x * x
    if y == 0.5:
        return np.sqrt(x)
    if y == 1:
        return x
    if y == -1:
        return one / x
    if y == 0:
        return one
    return x ** y


def py_int(x):
    """`int(x)` of a float: ValueError for NaN and OverflowError for infinities, as Python."""
    if x != x:
        raise ValueError("cannot convert float NaN to integer")
    if x == np.inf or x == -np.inf:
        raise OverflowError("cannot convert float infinity to integer")
    return int(x)


def py_min(a, b):
    """Python's `min(a, b)`: the first of the smallest (by `<`)."""
    return b if b < a else a


def py_max(a, b):
    """Python's `max(a, b)`: the first of the largest (by `>`)."""
    return b if b > a else a


def set_item(x, key, value):
    """`x[key] = value`, handing `x` on (setitem's result is the array itself)."""
    x[key] = value
    return x

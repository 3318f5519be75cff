"""Small numerical algorithms whose loops depend on the data: bisection, power iteration,
gradient descent, searching and sorting, sieves, exponentiation by squaring, fixed points."""
import numpy as np

from harness import f32, i32, i64, randn, runs


@runs(f32(2.0), f32(9.0), f32(0.25),
      refused_on_numpy1="`(lo + hi) / 2` is float64 under NumPy 1: `lo` and `hi` each turn "
      "float64 in the iteration that first assigns them, which depends on the data")
def bisection_sqrt(a):
    lo = np.float32(0.0)
    hi = np.maximum(a, np.float32(1.0))
    while hi - lo > 1e-4:
        mid = (lo + hi) / 2
        if mid * mid > a:
            hi = mid
        else:
            lo = mid
    return lo


@runs(f32([[2.0, 1.0], [1.0, 3.0]]), f32([[4.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 2.0]]))
def power_iteration(m):
    v = np.ones(m.shape[0], np.float32)
    lam = np.float32(0.0)
    for it in range(200):
        w = m @ v
        new = np.sqrt((w * w).sum())
        v = w / new
        if np.abs(new - lam) < 1e-5:
            break
        lam = new
    return lam, it


@runs(f32([3.0, -2.0]), f32([0.0, 0.0]), f32([100.0, 50.0]))
def gradient_descent_quadratic(start):
    x = start
    steps = 0
    grad = 2.0 * (x - 1.0)
    while np.abs(grad).max() > 1e-3 and steps < 500:
        x = x - 0.1 * grad
        grad = 2.0 * (x - 1.0)
        steps += 1
    return x, steps


@runs((f32([1.0, 3.0, 5.0, 7.0, 9.0]), f32(7.0)), (f32([1.0, 3.0]), f32(0.0)),
      (f32([2.0]), f32(5.0)), (f32([1.0, 2.0, 2.0, 2.0, 3.0]), f32(2.0)))
def binary_search(xs, target):
    lo = 0
    hi = xs.shape[0]
    while lo < hi:
        mid = (lo + hi) // 2
        if xs[mid] < target:
            lo = mid + 1
        else:
            hi = mid
    return lo


@runs(f32([3.0, 1.0, 2.0]), randn(6, seed=4), f32([1.0]))
def bubble_sort(x):
    a = x * 1.0
    n = a.shape[0]
    for i in range(n):
        swapped = False
        for j in range(n - 1 - i):
            if a[j] > a[j + 1]:
                t = a[j]
                a[j] = a[j + 1]
                a[j + 1] = t
                swapped = True
        if not swapped:
            break
    return a


@runs(i32([5, 2, 4, 6, 1, 3]), i32([1, 2, 3]), i32([3, 2, 1]))
def insertion_sort(x):
    a = x * 1
    for i in range(1, a.shape[0]):
        key = a[i]
        j = i - 1
        while j >= 0 and a[j] > key:
            a[j + 1] = a[j]
            j -= 1
        a[j + 1] = key
    return a


@runs(randn(5), f32([1.0, 1.0, 1.0]))
def cumulative_sum_by_loop(x):
    out = np.zeros_like(x)
    running = np.float32(0.0)
    for i in range(x.shape[0]):
        running = running + x[i]
        out[i] = running
    return out


@runs(0, 1, 2, 10)
def fibonacci_tensor(n):
    a = np.zeros(2, np.int64)
    a[1] = 1
    for _ in range(n):
        a = np.stack([a[1], a[0] + a[1]])
    return a[0]


@runs(30, 2, 1)
def prime_sieve(n):
    is_prime = np.ones(n + 1, np.int32)
    is_prime[0] = 0
    if n >= 1:
        is_prime[1] = 0
    p = 2
    while p * p <= n:
        if is_prime[p] == 1:
            for m in range(p * p, n + 1, p):
                is_prime[m] = 0
        p += 1
    return is_prime.sum(), is_prime


@runs(randn(7), f32([2.0, 2.0]), f32([-1.0]))
def argmax_by_loop(x):
    best = 0
    for i in range(1, x.shape[0]):
        if x[i] > x[best]:
            best = i
    return best, x[best]


@runs((randn(2, 3), randn(3, 2, seed=1)), (randn(1, 1), randn(1, 4, seed=2)))
def matmul_triple_loop(a, b):
    out = np.zeros((a.shape[0], b.shape[1]), np.float32)
    for i in range(a.shape[0]):
        for j in range(b.shape[1]):
            s = np.float32(0.0)
            for k in range(a.shape[1]):
                s = s + a[i, k] * b[k, j]
            out[i, j] = s
    return out


@runs((f32([1.0, 2.0, 3.0, 4.0]), f32(4.5)), (f32([5.0]), f32(1.0)), (f32([1.0, 1.0]), f32(9.0)))
def count_until_threshold(x, limit):
    i = 0
    s = np.float32(0.0)
    while i < x.shape[0] and s < limit:
        s = s + x[i]
        i += 1
    return i, s


@runs(f32([1.0, 2.0, -1.0, 3.0, 4.0, 5.0, -2.0]), f32([-1.0]), f32([1.0, 1.0]))
def longest_positive_run(x):
    best = 0
    cur = 0
    for v in x:
        if v > 0:
            cur += 1
            if cur > best:
                best = cur
        else:
            cur = 0
    return best


@runs((f32([2.0]), 10), (f32([1.5, -1.0]), 0), (f32([0.5]), 7))
def power_by_squaring(x, n):
    result = np.ones_like(x)
    base = x
    while n > 0:
        if n % 2 == 1:
            result = result * base
        base = base * base
        n = n // 2
    return result


@runs(f32([5.0, -7.0, 0.5]), f32([0.1, 0.2]))
def clamp_by_repeated_halving(x):
    rounds = 0
    while (np.abs(x) > 1.0).any():
        x = np.where(np.abs(x) > 1.0, x / 2.0, x)
        rounds += 1
    return x, rounds


@runs(f32([[4.0, 1.0], [1.0, 3.0]]), f32([[10.0, 2.0, 1.0], [1.0, 8.0, 2.0], [0.0, 1.0, 5.0]]))
def jacobi_iteration(a):
    b = np.ones(a.shape[0], np.float32)
    d = np.zeros(a.shape[0], np.float32)
    for i in range(a.shape[0]):
        d[i] = a[i, i]
    x = np.zeros_like(b)
    for it in range(100):
        new = (b - (a @ x - d * x)) / d
        if np.abs(new - x).max() < 1e-6:
            x = new
            break
        x = new
    return x, it


@runs(randn(3, 5), randn(2, 5, seed=3, scale=10.0),
      refused_on_numpy1="`t * 2` turns the float32 `t` float64 under NumPy 1 in the iteration "
      "that first doubles it, and the early return merges both dtypes (not peeled yet)")
def temperature_search(logits):
    t = np.float32(1.0)
    while True:
        z = logits / t
        z = z - z.max(axis=-1, keepdims=True)
        p = np.exp(z) / np.exp(z).sum(axis=-1, keepdims=True)
        if p.max() < 0.6 or t > 100:
            return p, t
        t = t * 2


@runs(i64([12, 18]), i64([7, 5]), i64([0, 9]))
def euclid_on_python_ints(x):
    a = int(x[0])
    b = int(x[1])
    while b:
        a, b = b, a % b
    return a


def test_program(program, check_program):
    """Compiled and eager agree on every input."""
    check_program(program)

"""The nesting matrix, part 2: each of if / while / for after each of the three, the values of the
first flowing into the second, with break and continue variants."""
import numpy as np

from harness import f32, i32, randn, runs

POS = f32([1.0, 2.0, 3.0])
NEG = f32([-1.0, -2.0, 0.5])
MIX = f32([2.0, -3.0, 0.25])


@runs(POS, NEG, MIX)
def if_after_if(x):
    a = 0
    if x[0] > 0:
        a = 1
    if x[1] > 0:
        a = a + 10
    return a


@runs(POS, NEG)
def while_after_if(x):
    limit = 2
    if x.sum() > 0:
        limit = 5
    i = 0
    while i < limit:
        x = x + 0.5
        i += 1
    return x, i


@runs(POS, NEG, MIX)
def for_after_if(x):
    scale = 1.0
    if x.max() > 2.5:
        scale = 0.5
    acc = np.zeros_like(x)
    for k in range(3):
        acc = acc + x * scale
    return acc


@runs(f32([0.5]), f32([9.0]), f32([300.0, 1.0]))
def if_after_while(x):
    n = 0
    while x.sum() > 2.0:
        x = x / 3.0
        n += 1
    if n > 2:
        x = x * 100.0
    return x, n


@runs((POS, 0), (POS, 2), (NEG, 5))
def while_after_while(x, n):
    i = 0
    while i < n:
        x = x * 1.5
        i += 1
    j = i
    while j > 0:
        x = x - 1.0
        j -= 2
    return x, i, j


@runs(f32([1.0]), f32([20.0, 30.0]))
def for_after_while(x):
    while x.max() > 4.0:
        x = x / 2.0
    for k in range(x.shape[0]):
        x = x + k
    return x


@runs(randn(3, 2), randn(5, 2, seed=9), f32([[2.0, 1.0], [0.5, -1.0]]))
def if_after_for(x):
    s = np.zeros(2, np.float32)
    for row in x:
        s = s + row
    if s[0] > s[1]:
        return s[0]
    return s[1]


@runs(i32([3, 1, 2]), i32([0, 0]), i32([7]))
def while_after_for(x):
    total = 0
    for v in x:
        total = total + int(v)
    steps = 0
    while total > 0:
        total = total - 2
        steps += 1
    return total, steps


@runs((POS, 0), (POS, 1), (MIX, 3))
def for_after_for(x, n):
    for i in range(n):
        x = x + i
    for j in range(n, 0, -1):
        x = x * 0.5 + j
    return x


@runs(randn(6), randn(6, seed=2), f32([-1.0]), f32([1.0, 2.0]))
def for_break_then_for(x):
    start = x.shape[0]
    for i in range(x.shape[0]):
        if x[i] < 0:
            start = i
            break
    acc = np.float32(0.0)
    for j in range(start, x.shape[0]):
        acc = acc + x[j]
    return start, acc


@runs((POS, 0), (POS, 7), (NEG, 7))
def while_continue_then_if(x, n):
    i = 0
    odd = 0
    while i < n:
        i += 1
        if i % 3 == 0:
            continue
        odd += 1
    if odd > 3:
        x = x * odd
    return x, odd


@runs(randn(5), randn(5, seed=4), f32([-1.0, -2.0]))
def for_continue_then_while(x):
    kept = 0
    for v in x:
        if v < 0:
            continue
        kept += 1
    y = x
    while kept > 0:
        y = y + 1.0
        kept -= 1
    return y


@runs((POS, 2), (NEG, 0), (MIX, 4))
def loop_variable_reused(x, n):
    for i in range(n):
        x = x + i
    for i in range(3):
        x = x * 0.5
    return x, i


@runs((POS, 0), (POS, 3), (NEG, 1))
def if_reads_loop_variable(x, n):
    last = -1
    for i in range(n):
        last = i
    if last >= 1:
        x = x * 10.0
    return x, last


@runs(POS, NEG, MIX, f32([0.0, 0.0, 0.0]))
def three_ifs_in_a_row(x):
    a = x[0]
    b = x[1]
    if a > 0:
        a = a * 2
    if b > 0:
        b = b * 3
    if a + b > 0:
        a = a - b
    return a, b


@runs(f32([1.0, 5.0, -2.0, 8.0]), f32([-1.0, -1.0]), f32([3.0]))
def two_breaking_whiles(x):
    i = 0
    while i < x.shape[0]:
        if x[i] < 0:
            break
        i += 1
    j = x.shape[0] - 1
    while j >= 0:
        if x[j] > 4:
            break
        j -= 1
    return i, j


@runs(randn(4, 3), randn(2, 3, seed=5))
def for_builds_if_picks_while_refines(x):
    best = x[0]
    for row in x:
        if row.sum() > best.sum():
            best = row
    if best.max() > 1.0:
        best = best / best.max()
    n = 0
    while np.abs(best).sum() > 0.5 and n < 20:
        best = best * 0.5
        n += 1
    return best, n


def test_program(program, check_program):
    """Compiled and eager agree on every input."""
    check_program(program)

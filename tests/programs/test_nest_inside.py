"""The nesting matrix, part 1: each of if / while / for inside each of the three, plus break and
continue in the inner and the outer statement."""
import numpy as np

from harness import f32, i64, randn, runs

POS = f32([1.0, 2.0, 3.0])
NEG = f32([-1.0, -2.0, 0.5])
MIX = f32([2.0, -3.0, 0.25])


@runs(POS, NEG, MIX, f32([-1.0, 4.0, 0.0]), f32([1.0, 3.0, 0.0]))
def if_in_if(x):
    if x[0] > 0:
        if x[1] > 2.5:
            x = x * 2.0
        else:
            x = x - 1.0
    else:
        x = -x
    return x


@runs((POS, 0), (POS, 3), (NEG, 3))
def while_in_if(x, n):
    i = 0
    if x.sum() > 0:
        while i < n:
            x = x * 0.5
            i += 1
    return x, i


@runs(POS, NEG, MIX)
def for_in_if(x):
    y = x
    if x.min() < 0:
        for k in range(3):
            y = y + np.abs(x) * k
    return y


@runs(i64(1), i64(6), i64(7), i64(27))
def collatz_if_in_while(n):
    steps = 0
    while n != 1:
        if n % 2 == 0:
            n = n // 2
        else:
            n = 3 * n + 1
        steps += 1
    return n, steps


@runs((POS, 0), (POS, 1), (NEG, 4))
def while_in_while(x, n):
    i = 0
    while i < n:
        j = 0
        while j < i:
            x = x + 0.25
            j += 1
        i += 1
    return x


@runs(f32([0.5]), f32([5.0]), f32([40.0, 3.0]))
def for_in_while(x):
    rounds = 0
    while x.max() > 1.0:
        for k in range(2):
            x = x * 0.75
        rounds += 1
    return x, rounds


@runs(randn(4, 3), randn(1, 3, seed=1), randn(6, 3, seed=2))
def if_in_for(x):
    pos = np.zeros(3, np.float32)
    neg = np.zeros(3, np.float32)
    for row in x:
        if row.sum() > 0:
            pos = pos + row
        else:
            neg = neg + row
    return pos, neg


@runs(f32([0.5, 3.0, 9.0]), f32([0.1, 0.2]), f32([100.0]))
def while_in_for(x):
    out = np.zeros_like(x)
    for i in range(x.shape[0]):
        v = x[i]
        while v > 1.0:
            v = v / 2.0
        out[i] = v
    return out


@runs((POS, 0), (POS, 1), (NEG, 4))
def for_in_for_triangular(x, n):
    total = x * 0.0
    for i in range(n):
        for j in range(i):
            total = total + x * (i - j)
    return total


@runs(POS, NEG, f32([-5.0, 1.0, 1.0]))
def if_in_while_break(x):
    i = 0
    while i < 10:
        x = x + 1.0
        if x.min() > 0:
            break
        i += 1
    return x, i


@runs((POS, 0), (POS, 6), (NEG, 6))
def if_in_while_continue(x, n):
    i = 0
    acc = x * 0.0
    while i < n:
        i += 1
        if i % 2 == 0:
            continue
        acc = acc + x * i
    return acc


@runs(randn(5, 2), randn(3, 2, seed=4) + 2.0, randn(4, 2, seed=5) - 2.0)
def if_in_for_break(x):
    found = -1
    for i in range(x.shape[0]):
        if x[i].sum() < 0:
            found = i
            break
    return found


@runs(randn(6), randn(6, seed=1), f32([1.0, -1.0]))
def if_in_for_continue(x):
    total = np.float32(0.0)
    for v in x:
        if v < 0:
            continue
        total = total + v
    return total


@runs(randn(4, 5), randn(2, 5, seed=3))
def for_in_for_break_inner(x):
    counts = []
    for i in range(x.shape[0]):
        c = 0
        for j in range(x.shape[1]):
            if x[i, j] < 0:
                break
            c += 1
        counts.append(c)
    return counts


@runs((POS, 4), (NEG, 4), (POS, 0))
def for_in_for_continue_outer(x, n):
    acc = x
    for i in range(n):
        for j in range(2):
            acc = acc + 0.5
        if i == 1:
            continue
        acc = acc * 0.5
    return acc


@runs(f32([5.0, 0.1, 2.0]), f32([0.5]), f32([64.0, 64.0]))
def while_in_for_break_inner(x):
    steps = 0
    for i in range(x.shape[0]):
        v = x[i]
        while True:
            v = v / 2.0
            steps += 1
            if v < 1.0:
                break
    return steps


@runs(POS, f32([10.0, 10.0, 10.0]), f32([0.0, 0.0, 0.0]))
def for_in_while_break_outer(x):
    rounds = 0
    done = False
    while not done:
        for k in range(3):
            x = x + k
        rounds += 1
        if x.sum() > 20 or rounds >= 5:
            done = True
    return x, rounds


@runs((POS, 0), (POS, 3), (NEG, 5))
def while_in_while_continue(x, n):
    i = 0
    while i < n:
        i += 1
        j = 0
        while j < 3:
            j += 1
            if j == 2:
                continue
            x = x + j
    return x


@runs(POS, NEG)
def while_in_if_break(x):
    n = 0
    if x[2] > 0:
        while True:
            x = x * 2.0
            n += 1
            if np.abs(x).max() > 50:
                break
    return x, n


@runs(POS, NEG, MIX)
def for_in_if_continue(x):
    s = x * 0.0
    if x[0] != 0:
        for i in range(x.shape[0]):
            if x[i] < 0:
                continue
            s[i] = x[i] * 10.0
    return s


@runs(randn(3, 4), randn(5, 4, seed=7))
def for_over_rows_and_cols(x):
    best = np.float32(-1e9)
    for row in x:
        for v in row:
            if v > best:
                best = v
    return best


def test_program(program, check_program):
    """Compiled and eager agree on every input."""
    check_program(program)

"""The nesting matrix, part 3: three statements deep (if in while in for, ...), with break and
continue at each level."""
import numpy as np

from harness import f32, i64, randn, runs

POS = f32([1.0, 2.0, 3.0])
NEG = f32([-1.0, -2.0, 0.5])
MIX = f32([2.0, -3.0, 0.25])


@runs(f32([0.5, 3.0, 17.0]), f32([2.0]), f32([-4.0, 100.0]))
def if_in_while_in_for(x):
    halvings = 0
    for i in range(x.shape[0]):
        v = np.abs(x[i])
        while v > 1.0:
            if v > 10.0:
                v = v / 4.0
            else:
                v = v / 2.0
            halvings += 1
    return halvings


@runs((POS, 0), (POS, 2), (NEG, 3), (MIX, 3))
def while_in_for_in_if(x, n):
    total = 0
    if x[0] > 0:
        for i in range(n):
            j = 0
            while j < i:
                total += 1
                j += 1
    return total


@runs((POS, 3), (NEG, 3), (MIX, 0))
def for_in_if_in_while(x, n):
    i = 0
    while i < n:
        if x[i] > 0:
            for k in range(2):
                x = x + 1.0
        i += 1
    return x


@runs(POS, NEG, MIX, f32([1.0, -1.0, -1.0]), f32([-1.0, 1.0, 1.0]), f32([1.0, 1.0, -1.0]))
def if_in_if_in_if(x):
    r = 0
    if x[0] > 0:
        if x[1] > 0:
            if x[2] > 0:
                r = 7
            else:
                r = 6
        else:
            r = 4
    elif x[2] > 0:
        if x[1] < -1.5:
            r = 3
    return r


@runs((2, 3, 4), (0, 3, 4), (3, 1, 0))
def for_in_for_in_for(a, b, c):
    count = 0
    for i in range(a):
        for j in range(b):
            for k in range(c):
                count += i * j + k
    return count


@runs(f32([3.0]), f32([0.0]), f32([5.0]))
def while_in_while_in_while(x):
    i = x
    n = 0
    while i > 0:
        j = i
        while j > 0:
            k = j
            while k > 0:
                n += 1
                k = k - 1.0
            j = j - 1.0
        i = i - 1.0
    return n


@runs(randn(3, 4), randn(2, 4, seed=11))
def if_in_for_in_for(x):
    pos = 0
    neg = 0
    for i in range(x.shape[0]):
        for j in range(x.shape[1]):
            if x[i, j] > 0:
                pos += 1
            else:
                neg += 1
    return pos, neg


@runs(POS, NEG)
def for_in_for_in_if(x):
    out = x
    if x.sum() > 0:
        for i in range(2):
            for j in range(3):
                out = out + x[j] * i
    return out


@runs(f32([4.0, 0.5, 9.0]), f32([0.25]))
def while_in_if_in_for(x):
    out = []
    for v in x:
        steps = 0
        if v > 1.0:
            while v > 1.0:
                v = np.sqrt(v) - 0.1
                steps += 1
        out.append(steps)
    return out


@runs((POS, 5), (NEG, 0), (MIX, 2))
def if_in_for_in_while(x, n):
    y = x * 1.0
    i = 0
    while i < n:
        for j in range(x.shape[0]):
            if (i + j) % 2 == 0:
                y[j] = y[j] + 1.0
        i += 1
    return y


@runs(f32([3.0, 1.0]), f32([0.2, 0.2]), f32([-6.0, -6.0]))
def for_in_while_in_if(x):
    if x.sum() != 0:
        while np.abs(x).sum() > 1.0:
            for k in range(2):
                x = x * 0.8
    return x


@runs(randn(5, 4), randn(3, 4, seed=1), f32([[1.0, 1.0], [-1.0, 1.0]]))
def break_innermost_of_three(x):
    hits = 0
    for i in range(x.shape[0]):
        for j in range(x.shape[1]):
            k = 0
            while k < 3:
                if x[i, j] * k > 1.0:
                    break
                hits += 1
                k += 1
    return hits


@runs(randn(4, 4), randn(4, 4, seed=6))
def continue_middle_of_three(x):
    s = np.float32(0.0)
    for i in range(x.shape[0]):
        for j in range(x.shape[1]):
            if x[i, j] < 0:
                continue
            k = 0
            while k < 2:
                s = s + x[i, j]
                k += 1
    return s


@runs(randn(3, 3), randn(3, 3, seed=3) + 3.0, randn(3, 3, seed=4) - 3.0)
def break_all_three_by_flag(x):
    stop = False
    found = (-1, -1)
    for i in range(3):
        for j in range(3):
            if x[i, j] > 1.0:
                found = (i, j)
                stop = True
                break
        if stop:
            break
    return found


@runs((POS, 4), (NEG, 4), (POS, 0))
def continue_outer_break_inner(x, n):
    log = []
    for i in range(n):
        if i == 1:
            continue
        for j in range(4):
            if j > i:
                break
            if x[j % 3] < 0:
                continue
            log.append(i * 10 + j)
    return log


@runs(i64([5, 3, 8]), i64([1, 1]), i64([12]))
def gcd_chain(x):
    g = x[0]
    for i in range(1, x.shape[0]):
        b = x[i]
        while b != 0:
            if g < b:
                g, b = b, g
            g, b = b, g % b
    return g


@runs((POS, 0), (POS, 2), (MIX, 3))
def deep_else_branches(x, n):
    for i in range(n):
        if x[0] > 1:
            x = x - 0.5
        else:
            j = 0
            while j < 2:
                if x[1] > 0:
                    x = x + 1.0
                else:
                    x = x * 0.5
                j += 1
    return x


def test_program(program, check_program):
    """Compiled and eager agree on every input."""
    check_program(program)

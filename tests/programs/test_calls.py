"""Calls: module-level helpers with control flow (three levels deep), defaults, keywords and
varargs, methods and static methods, sub-cells with control flow, cells three levels deep."""
import numpy as np

import amber
from amber import nn, ops
from harness import f32, randn, runs

POS = f32([1.0, 2.0, 3.0])
NEG = f32([-1.0, -2.0, 0.5])
SCALE = 0.5


def _clamp_if_large(v):
    if np.abs(v).max() > 2.0:
        v = v / np.abs(v).max()
    return v


def _halve_until_small(v, limit=1.0):
    n = 0
    while np.abs(v).sum() > limit:
        v = v * SCALE
        n += 1
    return v, n


def _level3(v):
    if v.sum() > 0:
        return v - 1.0
    return v + 1.0


def _level2(v, k):
    for i in range(k):
        v = _level3(v) * 0.9
    return v


def _level1(v):
    out = _level2(v, 2)
    if out.max() > 0:
        out = _level2(out, 1)
    return out


def _first_negative(v):
    for i in range(v.shape[0]):
        if v[i] < 0:
            return i
    return -1


def _power(v, n):
    r = np.ones_like(v)
    for _ in range(n):
        r = r * v
    return r


def _sum_all(*xs):
    total = xs[0]
    for t in xs[1:]:
        total = total + t
    return total


def _affine(v, *, scale=2.0, shift=0.0):
    return v * scale + shift


def _apply_twice(layer, v):
    return layer(layer(v))


@runs(POS, NEG, f32([5.0, 1.0]))
def call_helper_with_if(x):
    return _clamp_if_large(x) + _clamp_if_large(x * 3.0)


@runs(POS, f32([0.1]), NEG)
def call_helper_with_while(x):
    y, n = _halve_until_small(x)
    z, m = _halve_until_small(x, limit=4.0)
    return y, n, z, m


@runs(POS, NEG, f32([0.2, 0.1, -0.4]))
def helpers_three_deep(x):
    return _level1(x)


@runs(POS, NEG, f32([-4.0]))
def helper_early_return_in_loop(x):
    i = _first_negative(x)
    j = _first_negative(-x)
    return i, j


@runs(randn(3, 2), randn(5, 2, seed=1))
def helper_called_in_loop(x):
    acc = np.zeros(2, np.float32)
    for row in x:
        acc = acc + _clamp_if_large(row * 4.0)
    return acc


@runs(POS, NEG)
def helper_in_both_branches(x):
    if x[0] > 0:
        y = _level3(x)
    else:
        y = _level3(-x) * 2.0
    return y


@runs((POS, 0), (POS, 1), (NEG, 3))
def helper_with_scalar_arg(x, n):
    return _power(x, n), _power(x, 2)


@runs((POS, NEG), (NEG, NEG))
def helper_with_varargs(x, y):
    return _sum_all(x, y), _sum_all(x, y, x * y), _sum_all(x)


@runs(POS, NEG)
def helper_with_keywords(x):
    return _affine(x), _affine(x, shift=1.0), _affine(x, shift=-1.0, scale=0.5)


class Gate(nn.Cell):
    """relu when the input sums positive, tanh otherwise."""

    def construct(self, x):
        if x.sum() > 0:
            return ops.relu(x)
        return ops.tanh(x)


class Repeat(nn.Cell):
    """Applies its sub-cell `times` times."""

    def __init__(self, times=3):
        super().__init__()
        self.times = times
        self.gate = Gate()

    def construct(self, x):
        for _ in range(self.times):
            x = self.gate(x - 0.5)
        return x


@runs(POS, NEG, f32([0.3, 0.3, 0.3]))
class SubCellWithIf(nn.Cell):
    def __init__(self):
        super().__init__()
        self.gate = Gate()

    def construct(self, x):
        return self.gate(x) + self.gate(-x)


@runs(POS, NEG, init=(3,), tag="3")
@runs(POS, NEG, init=(0,), tag="0")
class SubCellInLoop(Repeat):
    pass


class Inner(nn.Cell):
    def __init__(self):
        super().__init__()
        self.fc = nn.Dense(3, 3, "xavier_uniform")

    def construct(self, x):
        y = self.fc(x)
        while np.abs(y).max() > 1.0:
            y = y * 0.5
        return y


class Middle(nn.Cell):
    def __init__(self):
        super().__init__()
        self.inner = Inner()
        self.gate = Gate()

    def construct(self, x):
        h = self.inner(x)
        if h.mean() > 0:
            h = self.gate(h)
        return h, self.inner(h)


@runs(randn(2, 3), randn(4, 3, seed=1, scale=5.0), randn(1, 3, seed=2))
class CellsThreeDeep(nn.Cell):
    def __init__(self):
        super().__init__()
        self.middle = Middle()

    def construct(self, x):
        a, b = self.middle(x)
        for i in range(2):
            a, b = self.middle(a + b)
        return a - b


@runs(POS, NEG, f32([10.0, 0.0, -10.0]))
class MethodsCallingMethods(nn.Cell):
    def __init__(self):
        super().__init__()
        self.limit = 4.0

    def _bounded(self, v):
        if np.abs(v).max() > self.limit:
            return self._rescale(v)
        return v

    def _rescale(self, v):
        return _clamp_if_large(v) * self.limit

    @staticmethod
    def _square(v):
        return v * v

    def construct(self, x):
        return self._bounded(self._square(x)), self._bounded(x)


@runs(randn(2, 4), randn(3, 4, seed=5))
class HelperReceivesCell(nn.Cell):
    def __init__(self):
        super().__init__()
        self.fc = nn.Dense(4, 4, activation="tanh")

    def construct(self, x):
        return _apply_twice(self.fc, x), _apply_twice(ops.relu, x)


@runs(randn(2, 4), randn(1, 4, seed=2))
class TupleReturningSubCell(nn.Cell):
    def __init__(self):
        super().__init__()
        self.split = SplitHalves()

    def construct(self, x):
        lo, hi = self.split(x)
        return hi, lo, self.split(x)[0] * 2.0


class SplitHalves(nn.Cell):
    def construct(self, x):
        n = x.shape[-1] // 2
        return x[..., :n], x[..., n:]


@amber.jit
class DecoratedNet(nn.Cell):
    """A class decorated with amber.jit: its instances run compiled when called."""

    def __init__(self):
        super().__init__()
        self.fc = nn.Dense(3, 2)
        self.gate = Gate()

    def construct(self, x):
        h = self.gate(x)
        if h.shape[0] > 1:
            h = h[1:]
        return self.fc(h)


@runs(randn(3, 3), randn(1, 3, seed=8))
class UsesDecoratedSubCell(nn.Cell):
    def __init__(self):
        super().__init__()
        self.net = DecoratedNet()

    def construct(self, x):
        return self.net(x) * 2.0


runs(randn(3, 3), randn(1, 3, seed=8), -randn(2, 3, seed=9))(DecoratedNet)


def test_program(program, check_program):
    """Compiled and eager agree on every input."""
    check_program(program)

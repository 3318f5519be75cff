"""0-d values: a 0-d array (`np.array(3)`, `x[...]`, a 0-d Parameter or argument) is mutable,
so an in-place operator, `x[...] = v` or `out=x` changes it under every name, while a NumPy
scalar (`x.sum()`, `x[0]`, `a + 1`) is immutable and `s += 1` rebinds s. Compiled code must
make the same choice as NumPy, in loops and helpers too."""
import numpy as np

from amber import Parameter, nn, ops
from harness import f32, i32, runs

POS = f32([1.0, 2.0, 3.0])
NEG = f32([-1.0, -2.0, 0.5])


@runs(i32([3, 2]), i32([0, 5]), i32([2, 0]))
def countdown_through_an_alias(x):
    b = np.array(x[0])  # a 0-d array
    count = 0
    while b > 0:
        tmp = b  # the same array: `tmp -= 1` counts b down too
        while tmp > 0:
            tmp -= 1
            count += 1
        b -= 1
    return count, b


@runs(i32([3, 2]), i32([0, 5]))
def countdown_of_a_scalar_copy(x):
    b = x[0]  # a NumPy scalar: `tmp -= 1` rebinds tmp only
    count = 0
    while b > 0:
        tmp = b
        while tmp > 0:
            tmp -= 1
            count += 1
        b -= 1
    return count, b


@runs(POS, NEG)
def scalar_augmented_rebinds(x):
    s = x.sum()
    kept = s
    s += 1.0
    s *= 2
    return s, kept


@runs(POS, NEG)
def zero_d_augmented_writes_in_place(x):
    s = np.zeros((), np.float32)
    kept = s
    s += x.sum()
    s *= 2
    return s, kept


@runs(POS, NEG)
def ellipsis_store_into_zero_d(x):
    s = np.array(0.0, np.float32)
    t = s
    t[...] = x.sum()
    return s, t


@runs(POS, NEG)
def out_argument_on_zero_d_and_vector(x):
    s = np.zeros((), np.float32)
    alias = s
    np.add(s, x.sum(), out=s)
    v = np.ones(3, np.float32)
    np.multiply(v, x, out=v)
    r = np.maximum(x, 0.5, out=x)
    return alias, v, r is x


@runs(f32(2.5), f32(-1.0))
def zero_d_argument_written_in_place(x):
    x += 1.0
    x *= 2.0
    return x


@runs(f32(2.5), np.float32(2.5))
def zero_d_argument_or_numpy_scalar(x):
    y = x
    y += 1.0  # in place for an array argument (the caller sees it), a rebinding for a scalar
    return x, y


@runs((POS, 3), (NEG, 0))
def zero_d_array_carried_in_place(x, n):
    total = np.array(0.0, np.float32)
    seen = total
    for i in range(n):
        total += x[i % 3]
    return total, seen


@runs((POS, 3), (NEG, 0), (POS, 1))
def zero_d_array_becomes_scalar_in_loop(x, n):
    total = np.array(0.0, np.float32)
    for i in range(n):
        total = total + x[i % 3]  # a NumPy scalar from the first iteration on
    return total


@runs(i32([1, 2]), i32([-1, 4]))
def views_of_zero_d_arrays(x):
    a = np.array(x[1])
    v = a[...]  # a view of a
    v += 3
    c = a.reshape(())  # a view too
    c -= 1
    return a, v, c, a[()]


@runs(POS, NEG)
class ZeroDParameterUpdates(nn.Cell):
    """`self.p += v`, `self.p[...] = v` and `out=self.p` on a 0-d Parameter persist."""

    def __init__(self):
        super().__init__()
        self.p = Parameter(np.array(1.5, np.float32), name="p")
        self.q = Parameter(np.array(0.0, np.float32), name="q")
        self.r = Parameter(np.array(2.0, np.float32), name="r")

    def construct(self, x):
        self.p += x.sum()
        self.q[...] = x.max()
        np.multiply(self.r, 1.5, out=self.r)
        return x * self.p + self.q


@runs(POS, NEG)
class CounterBumpedFromBranches(nn.Cell):
    """A 0-d Parameter updated with `+=` inside a helper method called from both branches."""

    def __init__(self):
        super().__init__()
        self.count = Parameter(np.array(0, np.int32), name="count")

    def bump(self, by):
        self.count += by

    def construct(self, x):
        if x.sum() > 0:
            self.bump(1)
        else:
            self.bump(2)
            self.bump(3)
        local = self.count
        local += 10  # the Parameter itself
        return x * self.count


@runs(POS, NEG)
class ParameterAssignedANumber(nn.Cell):
    """Assigning a NumPy scalar or a Python number to a Parameter attribute writes its data
    (MindSpore's set_data), eagerly and compiled."""

    def __init__(self):
        super().__init__()
        self.weight = Parameter(np.array(2, np.int32), name="weight")
        self.scale = Parameter(np.array(1.0, np.float32), name="scale")

    def construct(self, x):
        self.weight = self.weight + 1
        self.scale = 0.5
        if x.sum() > 0:
            self.scale = x.max()
        return x * self.weight * self.scale


@runs(POS)
class AssignShapeOneIntoZeroD(nn.Cell):
    """`ops.assign` of a shape-(1,) value into a 0-d Parameter (leading 1s are dropped)."""

    def __init__(self):
        super().__init__()
        self.p = Parameter(np.array(1.0, np.float32), name="p")

    def construct(self, x):
        ops.assign(self.p, x[:1])
        return self.p * 2


def test_program(program, check_program):
    """Compiled and eager agree on every input."""
    check_program(program)

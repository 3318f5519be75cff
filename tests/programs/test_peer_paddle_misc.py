"""Paddle dy2static's conversion, isinstance, cast, assert and print programs (issue 14),
rewritten for NumPy: a flag argument that picks a return of a different arity, `isinstance` on
sub-Cells deciding what to set, `int`/`float`/`bool` of 1-element arrays, reshapes by a read
shape, asserts and prints in branches, plain Python objects made inside and their attributes
rewritten in a while."""
import numpy as np

from amber import nn
from harness import f32, i32, i64, randn, runs

GRID = i64([[1, 2, 3], [4, 5, 6]])


@runs((GRID, False), (GRID, True))
def flag_picks_a_pair_or_none(x, use_cache=False):
    if use_cache:
        y = x + 1
        z = x + 2
        return y, z
    else:
        c = x + 1  # noqa: F841
        z = x - 1
        return None


@runs((GRID, False), (GRID, True))
def flag_picks_a_pair_or_an_array(x, use_cache=False):
    if use_cache:
        y = x + 1
        z = x + 2
        return y, z
    else:
        c = x + 1
        return c


@runs((GRID, False), (GRID, True))
def flag_picks_a_triple_or_a_pair(x, use_cache=False):
    if use_cache:
        return x + 1, x + 2, 1
    else:
        c = x + 1
        d = x - 1
        return c, d


class RowsOfZeros(nn.Cell):
    def construct(self, x):
        x = np.reshape(x, (-1, x.shape[1]))
        bs = x.shape[0]
        return np.zeros((bs, 1), np.float32)


runs(np.zeros((4, 1), np.float32))(RowsOfZeros)


# -- isinstance on sub-Cells ---------------------------------------------------------------

class PassThrough(nn.Cell):
    def construct(self, x):
        return x


class AddsAttr(nn.Cell):
    def __init__(self):
        super().__init__()
        self.scale = 2

    def construct(self, x):
        return x * self.scale + 1


class ChecksItsLayer(nn.Cell):
    def __init__(self, layer):
        super().__init__()
        self.layer = layer

    def construct(self, x):
        if isinstance(self.layer, (AddsAttr,)):
            x = x - 1
        return self.layer(x)


runs(np.ones((2, 3), np.int32), init=(PassThrough(),), tag="pass")(ChecksItsLayer)
runs(np.ones((2, 3), np.int32), init=(AddsAttr(),), tag="adds")(ChecksItsLayer)


class ChecksEachLayer(nn.Cell):
    def __init__(self):
        super().__init__()
        layers = []
        for i in range(3):
            layers.append(PassThrough())
            layers.append(AddsAttr())
        self.layers = nn.CellList(layers)

    def construct(self, x):
        res = x
        for layer in self.layers:
            if isinstance(layer, AddsAttr):
                res = res - 1
            res = layer(res)
        return res


runs(np.ones((2, 3), np.int32))(ChecksEachLayer)


# -- plain Python objects made inside ----------------------------------------------------

class Holder:
    """A plain Python object (a record of attributes), made inside compiled code."""

    def __init__(self):
        self.a = 3
        self.b = 4
        self.c = 5


@runs(f32([1.0, 2.0]), f32([3.0, 4.0]))
def python_object_made_inside(x):
    foo = Holder()
    if x.sum() > foo.a:
        x = x + foo.b
    return x


@runs(i32([0]))
def object_attributes_rewritten_in_a_while(x):
    foo = Holder()
    i = np.copy(x)
    while i < 10:
        foo.b = np.zeros((1,), np.float32)
        foo.c = foo.b + foo.a
        i += 1
        if foo.c > 6:
            break
    return foo.c


# -- casts ---------------------------------------------------------------------------------

@runs(f32([2.0]), f32([0.0]))
def bool_of_a_one_element_array(x):
    return bool(x)


@runs(f32([6.7]), f32([-3.2]))
def int_of_a_one_element_array(x):
    return int(x)


@runs(np.array([True]), np.array([False]))
def float_of_a_one_element_bool_array(x):
    return float(x)


@runs(3.14, 2)
def int_of_a_python_number(x):
    return int(x)


@runs(f32([6.7]), f32([0.4]))
def int_float_bool_float_chain(x):
    x = int(x)
    x = float(x)
    x = bool(x)
    x = float(x)
    return x


@runs(randn(8, 4) * 5)
def astype_chain(x):
    return x.astype("int32").astype("float32").astype("bool").astype("float32")


# -- asserts and prints --------------------------------------------------------------------

@runs(np.array([True]), np.array([False]))
def assert_on_a_bool_array(x):
    assert x, "x must be true"
    return x


@runs(f32([1.0, 2.0]), f32([-1.0, 2.0]))
def assert_in_a_branch(x):
    if x.sum() > 2:
        assert x[0] > 0, "first item must be positive"
        x = x * 2
    return x


@runs(f32([1.0, 2.0]), f32([-1.0, 2.0]))
def prints_in_branches_and_loops(x):
    print("start", x)
    if x.sum() > 2:
        print("big", x.sum())
    for i in range(2):
        print(i, x[i])
    return x


@runs(i32([3]), i32([-2]))
def item_and_tolist(x):
    v = x.item()
    if v > 0:
        return x * 2, v
    return x, v


def test_program(program, check_program):
    """Compiled and eager agree on every input."""
    check_program(program)

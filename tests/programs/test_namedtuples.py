"""Namedtuples in compiled code (`collections.namedtuple` and `typing.NamedTuple` classes defined
at module level): built with positional, keyword and default fields, read by name, index and
unpacking, `_replace`/`_asdict`, methods and properties of subclasses, passed to helpers,
carried through branches and run-time loops, kept in lists, printed, and returned as the same
class eager returns (a namedtuple argument or constant included). Refusals are in
test_bad_semantics.py."""
import collections
import typing

import numpy as np

import amber
from amber import nn
from harness import f32, i32, runs

Pair = collections.namedtuple("Pair", ("a", "b"))
Point = collections.namedtuple("Point", "x y z", defaults=(0.0,))
ORIGIN = Point(0, 0)
POS = f32([1.0, 2.0, 3.0])
NEG = f32([-1.0, -2.0, 0.5])


class Stats(typing.NamedTuple):
    """A typed namedtuple with a default, a method and a property."""
    mean: typing.Any
    count: int = 1

    def scaled(self, k):
        return self.mean * k

    @property
    def total(self):
        return self.mean * self.count


def _summarize(x):
    return Stats(x.mean(), len(x))


def _swap(p):
    return Pair(p.b, p.a)


@runs(POS, NEG)
def built_read_and_returned(x):
    p = Pair(x, b=2)
    q = Point(1, y=x)
    first, second = p
    return p.a + p[1], first, second, q, q.z, len(q)


@runs((Pair(1, POS),), (Pair(2.5, NEG),))
def namedtuple_argument_returned(p):
    return p, p.b * p.a, Pair(p.a, p.b + 1)


@runs(POS)
def module_constant_returned(x):
    return ORIGIN, ORIGIN.x + x, Pair(1, 2)


@runs(POS, NEG)
def replace_in_a_branch(x):
    p = Pair(x, 0)
    if x.sum() > 0:
        p = p._replace(b=x * 2)
    else:
        p = p._replace(a=-x)
    return p, p._asdict()


@runs((POS, i32(3)), (NEG, i32(0)))
def carried_through_a_run_time_loop(x, n):
    p = Pair(x, 0)
    for i in range(n):
        p = Pair(p.a * 2, p.b + i)
    return p


@runs(POS, NEG)
def carried_through_a_while(x):
    s = Stats(x, 0)
    while s.count < 3 and s.mean.sum() < 10:
        s = Stats(s.mean + 1, s.count + 1)
    return s, s.total


@runs(i32(3), i32(0))
def kept_in_a_list_of_a_run_time_loop(n):
    items = []
    for i in range(n):
        items.append(Pair(i, np.float32(i) * 2))
    if len(items) > 0:
        return items, items[-1], items[-1].b
    return items, None, None


@runs(POS, NEG)
def helpers_methods_and_properties(x):
    s = _summarize(x)
    return _swap(Pair(x, s)), s.scaled(2.0), s.total, isinstance(s, Stats), s.count


@runs(POS)
def a_field_holding_a_list_written_through(x):
    p = Pair([], x)
    p.a.append(x * 2)
    p.a.append(1)
    return p, len(p.a)


@runs(POS)
def printed(x):
    p = Pair(x, "label")
    print(p, Point(1, 2))
    return 0


@runs(POS)
def slices_and_concatenation_are_plain_tuples(x):
    p = Pair(x, 1)
    return p[:1], p + (3,), p * 2, tuple(p), list(p), p == (x, 1), Pair._fields


@runs(POS)
def wrong_number_of_fields_raises_where_it_runs(x):
    if x.sum() > 0:
        return Pair(x)
    return Pair(x, x)


@runs(POS, NEG)
def namedtuple_or_plain_tuple_returned_by_a_run_time_condition(x):
    if x.sum() > 0:
        p = Pair(x, 1)
    else:
        p = (x, 1)
    return p


class ConfiguredByANamedtuple(nn.Cell):
    """A Cell whose configuration attribute is a namedtuple (compile-time values)."""

    def __init__(self):
        super().__init__()
        self.cfg = Point(2, 3)

    def construct(self, x):
        y = x * self.cfg.x + self.cfg.y
        return Pair(y, self.cfg), self.cfg


runs(POS, NEG)(ConfiguredByANamedtuple)


def test_program(program, check_program):
    """Compiled and eager agree on every input."""
    check_program(program)


def test_namedtuple_arguments_are_keyed_by_their_items():
    """A namedtuple argument's numbers are compile-time: each new value compiles anew (keyed by
    class and items, never by the object's identity, which a dead object's successor reuses)."""
    jitted = amber.jit(_scaled_by_a_field)
    x = f32([1.0, 2.0])
    for k in range(5):
        np.testing.assert_array_equal(jitted(Pair(k, x)), x * k)
    np.testing.assert_array_equal(jitted(Pair(3, -x)), x * -3)
    assert jitted.stats.specializations == 5


def _scaled_by_a_field(p):
    return p.b * p.a

"""Objects of plain user classes made inside compiled code (records: `__init__` setting
attributes, methods, properties, class constants): attributes read and rewritten in branches
and run-time loops, methods that write `self` called in loops, objects passed to helpers and
nested in other objects, tuples and dicts, several names for one object, `isinstance` and
`hasattr`. Such an object never leaves compiled code; the refusals (returning or printing one,
one object or another picked at run time, a class with operators) are in test_bad_semantics.py."""
import numpy as np

from amber import nn
from harness import f32, i32, runs

POS = f32([1.0, 2.0, 3.0])
NEG = f32([-1.0, -2.0, 0.5])


class Accumulator:
    """Sums what it is given and counts it."""
    scale = 2

    def __init__(self, like, count=0):
        self.total = like * 0
        self.count = count

    def add(self, v):
        self.total = self.total + v
        self.count += 1
        return self.count

    @property
    def mean(self):
        return self.total / max(self.count, 1)

    @classmethod
    def starting_at_one(cls, like):
        return cls(like, 1)


class Node:
    """Holds a value and, maybe, a child."""

    def __init__(self, value, child=None):
        self.value = value
        self.child = child

    def depth(self):
        if self.child is None:
            return 1
        return 1 + self.child.depth()


def _add_twice(acc, v):
    acc.add(v)
    acc.add(v * 2)


@runs((POS, i32(3)), (NEG, i32(0)))
def method_writing_self_in_a_run_time_loop(x, n):
    acc = Accumulator(x)
    for i in range(n):
        acc.add(x * i)
    return acc.total, acc.count, acc.mean


@runs(POS, NEG)
def attributes_rewritten_in_branches(x):
    acc = Accumulator.starting_at_one(x)
    if x.sum() > 0:
        acc.add(x)
        acc.label = 1.5
    else:
        acc.label = -1.0
    return acc.total, acc.count, acc.label, acc.scale * acc.label


@runs((POS, i32(5)), (NEG, i32(1)))
def while_with_a_break_decided_by_a_method(x, n):
    acc = Accumulator(x)
    i = 0
    while i < n:
        if acc.add(x) > 2:
            break
        i += 1
    return acc.count, acc.total, i


@runs(POS)
def objects_passed_to_helpers_and_nested(x):
    acc = Accumulator(x)
    _add_twice(acc, x)
    tree = Node(x, Node(x * 2, Node(acc.total)))
    tree.child.value = tree.child.value + 1
    return acc.count, acc.total, tree.depth(), tree.child.value, tree.child.child.value


@runs(POS)
def one_object_under_several_names(x):
    acc = Accumulator(x)
    alias = acc
    held = {"acc": acc}
    pair = (acc, 1)
    alias.add(x)
    held["acc"].add(x)
    pair[0].count = pair[0].count * 10
    return acc.count, alias is acc, held["acc"].count, acc.total


@runs(POS)
def isinstance_hasattr_and_getattr(x):
    node = Node(x)
    return (isinstance(node, Node), isinstance(node, Accumulator), hasattr(node, "child"),
            hasattr(node, "depth"), hasattr(node, "missing"), getattr(node, "value") * 2,
            getattr(node, "missing", 7))


@runs(POS, NEG)
def closure_writing_an_object(x):
    acc = Accumulator(x)

    def bump():
        acc.add(x)

    bump()
    if x.sum() > 0:
        bump()
    return acc.count, acc.total


class ConfiguredByAnObject(nn.Cell):
    """A Cell whose construct makes a record of settings and reads it back."""

    def __init__(self, rounds):
        super().__init__()
        self.rounds = rounds

    def construct(self, x):
        state = Node(x)
        for _ in range(self.rounds):
            state.value = state.value * 2 + 1
        return state.value


runs(POS, init=(3,))(ConfiguredByAnObject)


def test_program(program, check_program):
    """Compiled and eager agree on every input."""
    check_program(program)

"""Recursion is a call of the same function on the same object: the same `construct` on another
cell (nested SequentialCells, a tree of cells) compiles, and so does a recursion whose
compile-time arguments change from level to level (a counter, a shape); a function or a cell
calling itself with arguments the compiler cannot tell apart is a CompileError at its line,
naming the cycle."""
import inspect

import numpy as np
import pytest

import amber
from amber import nn
from amber.frontend import CompileError, build_graph

X = np.linspace(-1, 1, 6, dtype=np.float32).reshape(2, 3)


class Block(nn.Cell):
    """A cell whose construct runs a SequentialCell that holds another SequentialCell."""

    def __init__(self):
        super().__init__()
        self.body = nn.SequentialCell(nn.Dense(3, 3), nn.SequentialCell(nn.Tanh(), nn.ReLU()))

    def construct(self, x):
        return self.body(x) + x


class Tree(nn.Cell):
    """The same class nested `depth` times: one construct inlined into another of its kind."""

    def __init__(self, depth):
        super().__init__()
        self.child = Tree(depth - 1) if depth else None
        self.scale = float(depth + 1)

    def construct(self, x):
        if self.child is None:
            return x
        return self.child(x) * self.scale


class Shared(nn.Cell):
    """One sub-cell used twice in a row (not recursion either)."""

    def __init__(self):
        super().__init__()
        self.block = Block()
        self.seq = nn.SequentialCell(self.block, self.block)

    def construct(self, x):
        return self.seq(x)


def compiled_equals_eager(net, x):
    amber.set_seed(0)
    got = amber.jit(net)(x)
    np.testing.assert_allclose(got, net.construct(x), rtol=1e-6, atol=1e-7)


@pytest.mark.parametrize("make", [
    lambda: nn.SequentialCell(Block(), nn.SequentialCell(nn.ReLU(), Block())),
    lambda: nn.SequentialCell(nn.SequentialCell(nn.SequentialCell(nn.Dense(3, 3)))),
    lambda: Tree(4),
    Shared,
], ids=["nested-sequential", "three-deep", "tree", "shared"])
def test_the_same_construct_on_other_cells_is_not_recursion(make):
    amber.set_seed(0)
    compiled_equals_eager(make(), X)


class CallsItself(nn.Cell):
    def construct(self, x):
        return self(x)  # error


class CallsItsConstruct(nn.Cell):
    def construct(self, x):
        return self.construct(x) + 1  # error


def helper(x, n):
    return helper(x * 2.0, n) if n else x  # error


def helper_entry(x):
    return helper(x, 3)


def countdown(x, n):
    return countdown(x * 2.0, n - 1) + n if n else x


def halving(x):
    if x.shape[0] <= 1:
        return x
    return halving(x[: x.shape[0] // 2]) + x[: x.shape[0] // 2].sum()


def countdown_entry(x):
    return countdown(x, 3)


def halving_entry(x):
    return halving(np.concatenate([x, x, x]))


@pytest.mark.parametrize("target", [countdown_entry, halving_entry],
                         ids=["compile-time-depth", "shrinking-shape"])
def test_recursion_steered_by_compile_time_values_is_inlined(target):
    """Each level's compile-time arguments (a counter, a shape) differ from its caller's, so the
    recursion ends while compiling, at the level where the condition is decided."""
    np.testing.assert_allclose(amber.jit(target)(X), target(X), rtol=1e-6, atol=1e-6)


def ping(x):
    return pong(x)


def pong(x):
    return ping(x)  # error


def error_line(target):
    lines, start = inspect.getsourcelines(target)
    return start + next(i for i, text in enumerate(lines) if "# error" in text)


@pytest.mark.parametrize("target, where, cycle", [
    (CallsItself(), CallsItself.construct, "CallsItself.construct -> CallsItself.construct"),
    (CallsItsConstruct(), CallsItsConstruct.construct,
     "CallsItsConstruct.construct -> CallsItsConstruct.construct"),
    (helper_entry, helper, "recursive call: helper -> helper"),
    (ping, pong, "ping -> pong -> ping"),
], ids=["cell-calls-itself", "construct-calls-itself", "function", "mutual"])
def test_real_recursion_is_an_error_naming_the_cycle(target, where, cycle):
    with pytest.raises(CompileError) as info:
        build_graph(target, (X,))
    err = info.value
    assert cycle in err.message, str(err)
    assert (err.file, err.line) == (__file__, error_line(where)), str(err)
    assert "loop" in err.hint and "inlin" in err.hint


def test_recursion_on_one_cell_says_it_is_the_same_object():
    with pytest.raises(CompileError, match="on the same CallsItself object"):
        build_graph(CallsItself(), (X,))

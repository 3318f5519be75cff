"""Code compiled from a method is not served once the method changed (issue 29, item 3): the
root `construct`, a sub-cell's, a helper method, a library layer's (`nn.Dense.construct`), a
function's `__code__`, from memory and from the disk cache."""
from __future__ import annotations

import numpy as np
import pytest

import amber
from amber import nn

X = np.arange(6, dtype=np.float32).reshape(2, 3)


def _classes() -> tuple[type, type]:
    """A fresh jit Cell class with a sub-cell and a helper method (each test replaces some)."""
    class Sub(nn.Cell):
        def construct(self, x):
            return x + 1

    @amber.jit
    class Net(nn.Cell):
        def __init__(self):
            super().__init__()
            self.sub = Sub()
            self.fc = nn.Dense(3, 3)

        def helper(self, x):
            return x * 2

        def construct(self, x):
            return self.fc(self.helper(self.sub(x)))
    return Net, Sub


def _agrees(net: nn.Cell) -> None:
    np.testing.assert_allclose(net(X), net.construct(X), rtol=1e-6)


@pytest.mark.parametrize("fresh_jit", [False, True], ids=["memory", "disk"])
def test_every_replaced_method_compiles_again(fresh_jit: bool,
                                              monkeypatch: pytest.MonkeyPatch) -> None:
    def construct_times_ten(self, x):
        return self.sub(x) * 10

    def sub_minus_five(self, x):
        return x - 5

    def helper_times_three(self, x):
        return x * 3

    def identity_layer(self, x):
        return x

    def helper_times_seven(self, x):
        return x * 7

    Net, Sub = _classes()
    net = Net()
    _agrees(net)
    original = Net.construct
    steps = [lambda: setattr(Net, "construct", construct_times_ten),  # the root
             lambda: setattr(Sub, "construct", sub_minus_five),  # a sub-cell's class
             lambda: setattr(Net, "construct", original),  # back: the first code fits again
             lambda: setattr(Net, "helper", helper_times_three),  # a helper method
             lambda: monkeypatch.setattr(nn.Dense, "construct", identity_layer),  # a library
             lambda: setattr(helper_times_three, "__code__", helper_times_seven.__code__)]
    for step in steps:
        step()
        if fresh_jit:  # NOTE: a new jit object finds only the disk cache's entries
            Net.__call__.cache_clear()
        _agrees(net)
    monkeypatch.undo()
    _agrees(net)



@pytest.mark.filterwarnings("ignore:.*cannot be kept in the disk cache")
def test_a_function_whose_code_is_replaced_compiles_again() -> None:
    def helper(x):
        return x + 1

    def root(x):
        return helper(x) * 2

    def helper_minus(x):
        return x - 1

    def root_plus(x):
        return helper(x) + 2

    fast = amber.jit(root)
    np.testing.assert_allclose(fast(X), root(X))
    helper.__code__ = helper_minus.__code__  # an inlined helper
    np.testing.assert_allclose(fast(X), root(X))
    root.__code__ = root_plus.__code__  # the root itself
    np.testing.assert_allclose(fast(X), root(X))
    assert fast.stats.compiles == 3

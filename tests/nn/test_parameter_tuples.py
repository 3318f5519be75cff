"""ParameterTuple attributes (how optimizers hold parameters and state) and one array reached
by two attribute paths: written through one, read through the other, compiled like eager."""
from __future__ import annotations

import numpy as np
import pytest

import amber
from amber import nn, ops


class Shared(nn.Cell):
    """Reads `self.w` before and after writing it through `self.group` (a ParameterTuple)."""

    def __init__(self, alias: bool = True) -> None:
        super().__init__()
        self.w = nn.Parameter(np.ones(3, np.float32), "w")
        other = self.w if alias else nn.Parameter(np.ones(3, np.float32), "v")
        self.group = nn.ParameterTuple((other,))

    def construct(self, x):
        before = self.w * x
        for p in self.group:
            ops.assign(p, p + 1.0)
        after = self.w * x
        return before, after


def results(net: nn.Cell, compiled: amber.jit, x: np.ndarray) -> tuple:
    state = [np.array(p) for p in net.get_parameters()]
    eager = net.construct(x)
    for p, s in zip(net.get_parameters(), state):
        p.set_data(s)
    return eager, compiled(x)


def test_write_through_one_path_is_seen_through_the_other():
    net = Shared()
    x = np.arange(3, dtype=np.float32)
    eager, got = results(net, amber.jit(net), x)
    for e, g in zip(eager, got):
        np.testing.assert_array_equal(g, e)
    np.testing.assert_array_equal(got[1], 2 * x)


def test_paths_that_stop_aliasing_recompile():
    net = Shared()
    call = amber.jit(net)
    x = np.ones(3, np.float32)
    call(x)
    net.group = nn.ParameterTuple((nn.Parameter(np.ones(3, np.float32), "v"),))
    eager, got = results(net, call, x)
    for e, g in zip(eager, got):
        np.testing.assert_array_equal(g, e)
    assert call.stats.specializations == 2


def test_paths_that_start_aliasing_recompile():
    net = Shared(alias=False)
    call = amber.jit(net)
    x = np.ones(3, np.float32)
    call(x)
    net.group = nn.ParameterTuple((net.w,))
    eager, got = results(net, call, x)
    for e, g in zip(eager, got):
        np.testing.assert_array_equal(g, e)
    assert call.stats.specializations == 2


def test_parameter_tuple_items_are_parameters_of_the_cell_once():
    net = nn.Dense(2, 3)
    opt = nn.Momentum(net.trainable_params(), 0.1, 0.9)
    paths = dict(opt.parameters_and_names())
    assert paths["parameters.0"] is net.weight and paths["moments.1"] is opt.moments[1]
    names = sorted(p.name for p in opt.get_parameters())
    assert names == ["bias", "learning_rate", "moments.bias", "moments.weight", "momentum",
                     "weight"]

    class Holder(nn.Cell):  # auto_prefix: its own children are renamed, tuple views are not
        def __init__(self):
            super().__init__()
            self.net = net
            self.opt = opt

    holder = Holder()
    assert net.weight.name == "net.weight"
    assert opt.moments[0].name == "moments.weight"
    assert len(list(holder.get_parameters())) == 6  # each Parameter once
    assert dict(holder.parameters_and_names())["net.weight"] is net.weight


def test_parameter_tuple_names_must_be_unique():
    a = nn.Parameter(np.ones(2), "same")
    b = nn.Parameter(np.ones(2), "same")

    class Bad(nn.Cell):
        def __init__(self):
            super().__init__()
            self.group = nn.ParameterTuple((a, b))

    with pytest.raises(ValueError, match="two different Parameters named 'same'"):
        Bad()


def test_replacing_a_parameter_tuple_attribute_forgets_it():
    opt = nn.SGD(nn.Dense(2, 2).trainable_params())
    opt.parameters = None
    assert all(not path.startswith("parameters.") for path, _ in opt.parameters_and_names())

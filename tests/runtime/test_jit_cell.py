"""`amber.jit(cell)` behaves as the cell everywhere a program touches it (attributes, set_train,
parameter and cell walks, to_float, insert_child_to_cell, checkpoints, repr, isinstance) while
its calls run compiled."""
from __future__ import annotations

import numpy as np
import pytest

import amber
from amber import nn

X = np.linspace(-1, 1, 12, dtype=np.float32).reshape(4, 3)
Y = np.zeros((4, 2), np.float32)


def _step():
    amber.set_seed(0)
    net = nn.Dense(3, 2)
    cell = nn.TrainOneStepCell(nn.WithLossCell(net, nn.MSELoss()),
                               nn.Momentum(net.trainable_params(), 0.1, 0.9))
    return net, cell


def test_the_readme_training_lines_run_compiled():
    _, cell = _step()
    step = amber.jit(cell)
    assert step.set_train() is step and cell.training and step.training
    assert isinstance(step, nn.Cell) and isinstance(step, nn.TrainOneStepCell)
    losses = [float(step(X, Y)) for _ in range(3)]
    assert step.stats.compiles == 1 and losses[2] < losses[0]
    assert step.to_float(amber.float32) is step


def test_walks_and_attributes_are_the_cells():
    _, cell = _step()
    step = amber.jit(cell)
    assert step.trainable_params() == cell.trainable_params()
    assert list(step.parameters_and_names()) == list(cell.parameters_and_names())
    assert [n for n, _ in step.cells_and_names()] == [n for n, _ in cell.cells_and_names()]
    assert step.network is cell.network and step.optimizer is cell.optimizer
    step.custom_flag = 3  # written on the cell
    assert cell.custom_flag == 3 and step.custom_flag == 3
    del step.custom_flag
    assert not hasattr(cell, "custom_flag")
    assert repr(step) == repr(cell)
    assert "optimizer" in dir(step)


def test_an_attribute_written_through_the_wrapper_changes_the_compiled_call():
    class Scale(nn.Cell):
        def __init__(self):
            super().__init__()
            self.factor = 2.0

        def construct(self, x):
            return x * self.factor

    fast = amber.jit(Scale())
    np.testing.assert_array_equal(fast(X), X * 2.0)
    fast.factor = 3.0
    np.testing.assert_array_equal(fast(X), X * 3.0)  # a guard saw the change


def test_insert_child_and_checkpoints_go_to_the_cell(tmp_path):
    holder = nn.SequentialCell([nn.Dense(3, 2)])
    fast = amber.jit(holder)
    extra = nn.Dense(2, 2)
    fast.insert_child_to_cell("extra", extra)
    assert holder.extra is extra and extra.weight.name == "extra.weight"

    net, cell = _step()
    step = amber.jit(cell)
    amber.save_checkpoint(step, tmp_path / "step.ckpt")
    saved = amber.load_checkpoint(tmp_path / "step.ckpt")
    assert {"weight", "moments.weight", "momentum", "learning_rate"} <= set(saved)
    net.weight.set_data(np.zeros((2, 3), np.float32))
    amber.load_param_into_net(step, saved)
    np.testing.assert_array_equal(net.weight, saved["weight"])


def test_a_wrapped_cell_inside_another_cell_is_its_sub_cell_and_inlined():
    amber.set_seed(1)
    net = nn.Dense(3, 2)
    outer = nn.WithLossCell(amber.jit(net), nn.MSELoss())
    assert [p for _, p in outer.parameters_and_names()] == [net.weight, net.bias]
    fast = amber.jit(outer)
    np.testing.assert_allclose(fast(X, Y), outer.construct(X, Y), rtol=1e-6)


def test_an_unknown_attribute_is_an_attribute_error():
    step = amber.jit(nn.Dense(3, 2))
    with pytest.raises(AttributeError, match="no_such"):
        step.no_such

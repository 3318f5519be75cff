"""MindSpore's execution modes: PYNATIVE_MODE (the default) compiles what `jit` wraps and runs a
bare Cell call as Python; GRAPH_MODE compiles every Cell called from Python on its call (a
CompileError where it cannot: no silent eager run), and a Cell called inside compiled code is
inlined into its caller; `jit_enabled=False` (MindSpore's MS_JIT=0) runs everything eagerly."""
from __future__ import annotations

import numpy as np
import pytest

import amber
from amber import nn, ops
from amber.runtime.cellcall import graph_mode_runner

X = np.linspace(-1, 1, 8, dtype=np.float32).reshape(2, 4)
Y = np.array([[0.5, -0.25, 1.0], [0.0, 0.75, -1.0]], np.float32)


class Inner(nn.Cell):
    def __init__(self):
        super().__init__()
        self.fc = nn.Dense(4, 3)

    def construct(self, x):
        return ops.tanh(self.fc(x))


class Outer(nn.Cell):
    def __init__(self):
        super().__init__()
        self.inner = Inner()

    def construct(self, x):
        h = self.inner(x)
        if h.sum() > 0:
            h = h * 2.0
        return h


class PythonOnly(nn.Cell):
    """Fine as Python, refused by the compiler (a class statement inside construct)."""

    def construct(self, x):
        class Local:
            pass
        return x + 1.0


def test_pynative_is_the_default_and_runs_a_bare_cell_call_as_python():
    assert amber.get_context("mode") == amber.PYNATIVE_MODE
    net = Outer()
    np.testing.assert_array_equal(net(X), net.construct(X))
    assert graph_mode_runner(Outer) is None  # nothing was compiled
    np.testing.assert_array_equal(PythonOnly()(X), X + 1.0)


def test_graph_mode_compiles_a_bare_cell_call_and_inlines_the_cells_it_calls():
    amber.set_context(mode=amber.GRAPH_MODE)
    net = Outer()
    got = net(X)
    amber.set_context(jit_enabled=False)
    want = net(X)  # the same call as plain Python
    amber.set_context(jit_enabled=True)
    np.testing.assert_allclose(got, want, rtol=1e-6)
    runner = graph_mode_runner(Outer)
    assert runner is not None and runner.stats.compiles == 1
    assert "np.tanh(" in runner.code  # Inner's construct is in Outer's code ...
    assert graph_mode_runner(Inner) is None  # ... not compiled on its own
    net(X)
    assert runner.stats.compiles == 1  # the second call reuses the code


def test_graph_mode_refuses_what_it_cannot_compile():
    amber.set_context(mode=amber.GRAPH_MODE)
    with pytest.raises(amber.CompileError, match="class"):
        PythonOnly()(X)
    amber.set_context(mode=amber.PYNATIVE_MODE)
    np.testing.assert_array_equal(PythonOnly()(X), X + 1.0)


def _train_losses(steps: int) -> tuple[list[float], np.ndarray]:
    amber.set_seed(3)
    net = Inner()
    step = nn.TrainOneStepCell(nn.WithLossCell(net, nn.MSELoss()),
                               nn.Momentum(net.trainable_params(), 0.1, 0.9))
    step.set_train()
    return [float(step(X, Y)) for _ in range(steps)], net.fc.weight.asnumpy()


def test_graph_mode_train_step_called_bare_compiles_once_and_trains_as_python():
    want_losses, want_weight = _train_losses(3)
    amber.set_context(mode=amber.GRAPH_MODE)
    runner = graph_mode_runner(nn.TrainOneStepCell)  # NOTE: other tests may have made it
    before = 0 if runner is None else runner.stats.specializations
    losses, weight = _train_losses(3)
    np.testing.assert_allclose(losses, want_losses, rtol=1e-5)
    np.testing.assert_allclose(weight, want_weight, rtol=1e-5, atol=1e-7)
    assert graph_mode_runner(nn.TrainOneStepCell).stats.specializations == before + 1


@pytest.mark.filterwarnings("ignore:.*cannot be kept in the disk cache")
def test_graph_mode_quick_start_style_step():
    """value_and_grad of a function, then `optimizer(grads)` called bare: both compiled."""
    amber.set_context(mode=amber.GRAPH_MODE)
    amber.set_seed(1)
    net = Inner()
    loss_fn = nn.MSELoss()
    opt = nn.SGD(net.trainable_params(), 0.5)

    def forward(x, y):
        return loss_fn(net(x), y)

    grad_fn = amber.value_and_grad(forward, None, opt.parameters)
    before, bias = net.fc.weight.asnumpy(), net.fc.bias.asnumpy()
    loss, grads = grad_fn(X, Y)
    opt(grads)
    np.testing.assert_allclose(net.fc.weight.asnumpy(), before - 0.5 * grads[0], rtol=1e-5,
                               atol=1e-7)
    assert graph_mode_runner(type(opt)).stats.specializations >= 1
    assert float(loss) == pytest.approx(float(((np.tanh(X @ before.T + bias) - Y) ** 2
                                               ).mean()), rel=1e-5)


def test_jit_disabled_runs_graph_mode_cell_calls_as_python():
    class AlsoPythonOnly(PythonOnly):
        pass

    amber.set_context(mode=amber.GRAPH_MODE, jit_enabled=False)
    np.testing.assert_array_equal(AlsoPythonOnly()(X), X + 1.0)
    assert graph_mode_runner(AlsoPythonOnly) is None

"""State and effects under differentiation behave as in MindSpore: BatchNorm in train mode
updates its moving statistics once (in the forward part) and differentiates through the batch
statistics; Dropout's backward uses the forward's mask; a parameter written in place after it
is read is differentiated at the value read; print and assert run once per call."""
from __future__ import annotations

import copy

import numpy as np
import pytest

import amber
import numeric
from amber import nn, ops

MODES = ["compiled", "eager"]  # eager: jit_enabled=False, the graph op by op
RNG = np.random.default_rng(5)


class BnNet(nn.Cell):
    def __init__(self):
        super().__init__()
        self.fc = nn.Dense(4, 5)
        self.bn = nn.BatchNorm1d(5)
        self.out = nn.Dense(5, 2)

    def construct(self, x):
        return (ops.tanh(self.out(ops.relu(self.bn(self.fc(x))))) ** 2).sum()


def _float64(net):
    for _, cell in net.cells_and_names():
        for name, p in list(cell._params.items()):
            setattr(cell, name, amber.Parameter(p.astype(np.float64), name=p.name,
                                                requires_grad=p.requires_grad))
    return net


@pytest.mark.parametrize("mode", MODES)
def test_batchnorm_in_train_mode(mode):
    amber.set_seed(1)
    net = _float64(BnNet()).set_train(True)
    reference = copy.deepcopy(net)
    x = RNG.standard_normal((6, 4))
    amber.set_context(jit_enabled=mode == "compiled")
    loss, (dx, dws) = amber.value_and_grad(net, 0, net.trainable_params())(x)
    amber.set_context(jit_enabled=True)
    eager_loss = reference.construct(x)  # one eager forward from the same state
    numeric.close(loss, eager_loss, rtol=1e-12, atol=1e-12)
    numeric.close(net.bn.moving_mean, reference.bn.moving_mean, rtol=1e-12, atol=1e-12)
    numeric.close(net.bn.moving_variance, reference.bn.moving_variance, rtol=1e-12, atol=1e-12)
    assert not np.allclose(net.bn.moving_mean, 0)  # updated, once
    probe = copy.deepcopy(reference)  # finite differences move its statistics, not the net's
    numeric.close(dx, numeric.gradient(probe.construct, (x,), 0), rtol=1e-5, atol=1e-6)
    for w, g in zip(probe.trainable_params(), dws):
        numeric.close(g, numeric.parameter_gradient(probe.construct, (x,), w), rtol=1e-5,
                      atol=1e-6)


class DropNet(nn.Cell):
    def __init__(self):
        super().__init__()
        self.drop = nn.Dropout(p=0.4)
        self.scale = amber.Parameter(np.linspace(0.5, 2.0, 8), name="scale")

    def construct(self, x):
        y = self.drop(x * 1.0)
        return (y * self.scale).sum(), y


@pytest.mark.parametrize("mode", MODES)
def test_dropout_backward_uses_the_forward_mask(mode):
    amber.set_seed(2)
    net = DropNet().set_train(True)
    x = RNG.standard_normal(8) + 3.0  # NOTE: no zeros, so the mask is y != 0
    amber.set_context(jit_enabled=mode == "compiled")
    grad = amber.value_and_grad(net, 0, net.trainable_params(), has_aux=True)
    masks = []
    for _ in range(3):
        (loss, y), (dx, (dscale,)) = grad(x)
        kept = y != 0
        masks.append(kept)
        numeric.close(dx, kept / (1 - 0.4) * net.scale, rtol=1e-12, atol=1e-12)
        numeric.close(dscale, y, rtol=1e-12, atol=1e-12)
        numeric.close(loss, (y * net.scale).sum(), rtol=1e-12, atol=1e-12)
    assert not all(np.array_equal(masks[0], m) for m in masks[1:])  # a new mask each call


class Counting(nn.Cell):
    """Reads w, then updates w and a step counter in place (MindSpore-style state)."""

    def __init__(self):
        super().__init__()
        self.w = amber.Parameter(np.array([0.5, -1.0, 2.0]), name="w")
        self.steps = amber.Parameter(np.zeros(()), name="steps", requires_grad=False)

    def construct(self, x):
        y = (self.w * self.w * x).sum()
        self.w -= 0.1
        ops.assign_add(self.steps, np.ones(()))
        print("step", self.steps)
        assert y > -1e9, "not reached"
        return y


@pytest.mark.parametrize("mode", MODES)
def test_in_place_updates_and_effects_happen_once(mode, capsys):
    net = Counting()
    w0 = np.array(net.w)
    x = np.array([1.0, 2.0, 3.0])
    amber.set_context(jit_enabled=mode == "compiled")
    grad = amber.grad(net, None, [net.w])
    (dw,) = grad(x)
    numeric.close(dw, 2 * w0 * x, rtol=1e-12, atol=1e-12)  # at the value read
    numeric.close(net.w, w0 - 0.1, rtol=1e-12, atol=1e-12)
    assert float(net.steps) == 1.0
    assert capsys.readouterr().out == "step 1.0\n"
    grad(x)
    assert float(net.steps) == 2.0
    assert capsys.readouterr().out == "step 2.0\n"


def failing_assert(x):
    y = (x * x).sum()
    assert y < 0, "y is not negative"
    return y


@pytest.mark.parametrize("mode", MODES)
def test_an_assert_in_the_forward_raises_as_in_python(mode):
    amber.set_context(jit_enabled=mode == "compiled")
    with pytest.raises(AssertionError, match="y is not negative"):
        amber.grad(failing_assert)(np.ones(3))

"""Where MindSpore is installed: checkpoints cross between it and amber both ways, in .ckpt and
safetensors, with equal outputs (1e-5), and an optimizer's state saved by one and resumed by the
other gives the same next step (optional: skipped without MindSpore)."""
from __future__ import annotations

import numpy as np
import pytest

import amber
from amber import nn

ms = pytest.importorskip("mindspore", reason="comparing with MindSpore needs it installed "
                         "(pip install mindspore)")
pytest.importorskip("google.protobuf", reason="the .ckpt format needs protobuf")

RNG = np.random.default_rng(0)
X = RNG.standard_normal((8, 5)).astype(np.float32)
Y = RNG.standard_normal((8, 3)).astype(np.float32)


def _net(lib):
    class Net(lib.nn.Cell):
        def __init__(self):
            super().__init__()
            self.fc1 = lib.nn.Dense(5, 6)
            self.fc2 = lib.nn.Dense(6, 3)
            self.relu = lib.nn.ReLU()

        def construct(self, x):
            return self.fc2(self.relu(self.fc1(x)))
    return Net()


def _step(lib, optimizer):
    net = _net(lib)
    params = net.trainable_params()
    opt = lib.nn.Adam(params, 0.01) if optimizer == "Adam" else \
        lib.nn.Momentum(params, 0.05, 0.9)
    step = lib.nn.TrainOneStepCell(lib.nn.WithLossCell(net, lib.nn.MSELoss()), opt)
    return net, step.set_train()


def _ms_out(net, x):
    return net(ms.Tensor(x)).asnumpy()


@pytest.fixture(autouse=True)
def pynative():
    ms.set_context(mode=ms.PYNATIVE_MODE)


@pytest.mark.parametrize("fmt", ["ckpt", "safetensors"])
def test_weights_cross_both_ways(tmp_path, fmt):
    theirs, ours = _net(ms), _net(amber)
    ms.save_checkpoint(theirs, str(tmp_path / f"theirs.{fmt}"), format=fmt)
    missing, unused = amber.load_param_into_net(ours, amber.load_checkpoint(
        tmp_path / f"theirs.{fmt}"))
    assert missing == [] and unused == []
    np.testing.assert_allclose(ours(X), _ms_out(theirs, X), rtol=1e-5, atol=1e-6)

    ours, theirs = _net(amber), _net(ms)
    amber.save_checkpoint(ours, tmp_path / f"ours.{fmt}", format=fmt)
    not_loaded, _ = ms.load_param_into_net(theirs, ms.load_checkpoint(
        str(tmp_path / f"ours.{fmt}"), format=fmt))
    assert not_loaded == []
    np.testing.assert_allclose(_ms_out(theirs, X), ours(X), rtol=1e-5, atol=1e-6)


def _ms_train(step, times):
    return [float(step(ms.Tensor(X), ms.Tensor(Y)).asnumpy()) for _ in range(times)]


@pytest.mark.parametrize("optimizer", ["Adam", "Momentum"])
def test_optimizer_state_resumes_across_frameworks(tmp_path, optimizer):
    # MindSpore trains and saves; amber resumes: the same next steps
    their_net, theirs = _step(ms, optimizer)
    _ms_train(theirs, 3)
    ms.save_checkpoint(theirs, str(tmp_path / "theirs.ckpt"))
    our_net, ours = _step(amber, optimizer)
    _, unused = amber.load_param_into_net(ours, amber.load_checkpoint(tmp_path / "theirs.ckpt"))
    assert set(unused) <= {"global_step"}  # MindSpore counts steps even at a fixed rate
    np.testing.assert_allclose([float(ours(X, Y)) for _ in range(2)], _ms_train(theirs, 2),
                               rtol=1e-5)
    for (name, a), b in zip(our_net.parameters_and_names(), their_net.trainable_params()):
        np.testing.assert_allclose(a, b.asnumpy(), rtol=1e-5, atol=1e-6, err_msg=name)

    # amber trains and saves; MindSpore resumes
    our_net, ours = _step(amber, optimizer)
    for _ in range(3):
        ours(X, Y)
    amber.save_checkpoint(ours, tmp_path / "ours.ckpt")
    their_net, theirs = _step(ms, optimizer)
    ms.load_param_into_net(theirs, ms.load_checkpoint(str(tmp_path / "ours.ckpt")))
    np.testing.assert_allclose(_ms_train(theirs, 2), [float(ours(X, Y)) for _ in range(2)],
                               rtol=1e-5)
    for (name, a), b in zip(our_net.parameters_and_names(), their_net.trainable_params()):
        np.testing.assert_allclose(b.asnumpy(), a, rtol=1e-5, atol=1e-6, err_msg=name)

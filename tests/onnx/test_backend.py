"""backend="onnxruntime": inference through one onnxruntime session per specialization, equal to
the NumPy backend; weights fed per call; gradients refused (training stays on the NumPy
backend). A new process served from the disk cache: test_processes.py."""
from __future__ import annotations

import numpy as np
import pytest

import amber
from amber.samples.lenet import LeNet5
from amber.samples.rnn import EarlyStopRNN, example_inputs


def images(n):
    return np.random.default_rng(n).standard_normal((n, 1, 32, 32)).astype(np.float32)


def test_lenet_on_onnxruntime_equals_numpy():
    amber.set_seed(0)
    net = LeNet5()
    fast = amber.jit(net, backend="onnxruntime", dynamic=True)  # NOTE: one session, any batch
    reference = amber.jit(net, backend="numpy", dynamic=True)
    for batch in (1, 3):
        np.testing.assert_allclose(fast(images(batch)), reference(images(batch)),
                                   rtol=1e-5, atol=1e-6)
    assert "onnxruntime.InferenceSession" in fast.code and fast.stats.compiles == 1


def test_weights_changed_after_compiling_are_used():
    """Parameters are the session's inputs, fed on every call (as NumPy modules take them)."""
    amber.set_seed(0)
    net = LeNet5()
    fast = amber.jit(net, backend="onnxruntime")
    before = fast(images(2))
    net.fc3.bias.set_data(net.fc3.bias.asnumpy() + 1.0)
    np.testing.assert_allclose(fast(images(2)), before + 1.0, rtol=1e-5, atol=1e-5)


def test_python_results_keep_their_types():
    amber.set_seed(0)
    net = EarlyStopRNN()
    (x,) = example_inputs()
    h, steps = amber.jit(net, backend="onnxruntime")(x)
    want_h, want_steps = net.construct(x)
    assert type(steps) is int and steps == want_steps
    np.testing.assert_allclose(h, want_h, rtol=1e-5, atol=1e-6)


def test_set_context_selects_it_and_gradients_are_refused():
    def loss(x, w):
        return (x * w).sum()  # the line gradients are refused at

    before = amber.get_context().options.backend
    amber.set_context(backend="onnxruntime")
    try:
        assert amber.jit(loss)(np.ones(3, np.float32), np.ones(3, np.float32)) == 3.0
        with pytest.raises(amber.CompileError, match="inference only"):
            amber.grad(loss)(np.ones(3, np.float32), np.ones(3, np.float32))
    finally:
        amber.set_context(backend=before)

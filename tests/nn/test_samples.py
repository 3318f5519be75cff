"""The sample models: each `main()` runs, and the outputs match what the model should compute."""
from __future__ import annotations

import importlib.util
from pathlib import Path
from types import ModuleType

import numpy as np
import pytest

import amber
from amber.ops.parallel import one_blas_thread

SAMPLES = Path(__file__).resolve().parents[2] / "samples"


def load(name: str) -> ModuleType:
    spec = importlib.util.spec_from_file_location(f"amber_sample_{name}", SAMPLES / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize("name,shape", [("network", "(2, 10)"), ("lenet", "(1, 10)"),
                                        ("rnn", "(2, 16)"), ("resnet_block", "(2, 10)")])
def test_main_runs_and_prints_shape_and_checksum(name, shape, capsys):
    load(name).main()
    out = capsys.readouterr().out
    assert shape in out and "checksum" in out


def test_main_is_deterministic(capsys):
    """Two runs print the same, and compiled equals eager bit for bit when both run BLAS at one
    thread: the compiled LeNet-5 holds BLAS at one thread (`@one_blas_thread`, at
    `num_threads` > 1), and on some CPUs OpenBLAS rounds a GEMM differently at two threads
    (NumPy 1.26's OpenBLAS on an AVX-512 machine: 1e-11 on outputs of 1e-4)."""
    sample = load("lenet")
    main = one_blas_thread(sample.main)
    main()
    first = capsys.readouterr().out
    main()
    assert capsys.readouterr().out == first
    assert "max abs difference 0" in first


def test_network_equals_layer_by_layer_numpy():
    sample = load("network")
    amber.set_seed(0)
    net = sample.Network()
    (x,) = sample.example_inputs()
    h = x.reshape(len(x), -1)
    dense = [net.dense_relu_sequential[i] for i in (0, 2, 4)]
    for i, layer in enumerate(dense):
        h = h @ layer.weight.T + layer.bias
        h = np.maximum(h, 0) if i < 2 else h
    np.testing.assert_allclose(net(x), h, rtol=1e-5, atol=1e-7)


def test_lenet_shapes_and_headless_variant():
    sample = load("lenet")
    amber.set_seed(0)
    (x,) = sample.example_inputs()
    assert x.shape == (1, 1, 32, 32) and x.dtype == np.float32
    out = sample.LeNet5()(x)
    assert out.shape == (1, 10) and out.dtype == np.float32
    assert sample.LeNet5(include_top=False)(x).shape == (1, 16, 5, 5)
    names = [n for n, _ in sample.LeNet5().parameters_and_names()]
    assert names == ["conv1.weight", "conv2.weight", "fc1.weight", "fc1.bias", "fc2.weight",
                     "fc2.bias", "fc3.weight", "fc3.bias"]


def test_rnn_stops_early_where_a_numpy_loop_does():
    sample = load("rnn")
    amber.set_seed(0)
    net = sample.EarlyStopRNN()
    (x,) = sample.example_inputs()
    h, steps = net(x)
    w_ih, b = net.input_to_hidden.weight, net.input_to_hidden.bias
    w_hh = net.hidden_to_hidden.weight
    ref, t = np.zeros((x.shape[1], net.hidden_size), np.float32), 0
    while t < len(x):
        ref = np.tanh(x[t] @ w_ih.T + b + ref @ w_hh.T)
        t += 1
        if np.linalg.norm(ref) > net.threshold:
            break
    assert 0 < steps == t < len(x)  # the example really stops early
    np.testing.assert_allclose(h, ref, rtol=1e-5, atol=1e-6)


def test_resnet_block_shortcut_branches():
    sample = load("resnet_block")
    amber.set_seed(0)
    down = sample.ResidualBlock(8, 16, stride=2)
    same = sample.ResidualBlock(16, 16)
    assert down.down_sample and not same.down_sample and same.down_sample_layer is None
    x = np.random.default_rng(0).standard_normal((1, 8, 6, 6)).astype(np.float32)
    y = down(x)
    assert y.shape == (1, 16, 3, 3) and (y >= 0).all()
    z = same(y)
    branch = same.bn3(same.conv3(same.relu(same.bn2(same.conv2(same.relu(same.bn1(
        same.conv1(y))))))))
    np.testing.assert_allclose(z, np.maximum(branch + y, 0), rtol=1e-5, atol=1e-6)

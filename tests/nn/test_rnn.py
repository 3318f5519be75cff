"""RNN and LSTM against hand-written NumPy step loops."""
from __future__ import annotations

import numpy as np
import pytest

import amber
from amber import nn


def sigmoid(x: np.ndarray) -> np.ndarray:
    return 1 / (1 + np.exp(-x))


def lstm_direction(x, h, c, w_ih, w_hh, b_ih, b_hh, reverse):
    """One direction of one layer, in float64: (outputs [T, B, H], h, c)."""
    n = h.shape[-1]
    steps = range(x.shape[0] - 1, -1, -1) if reverse else range(x.shape[0])
    out = np.zeros((x.shape[0],) + h.shape)
    for t in steps:
        z = x[t] @ w_ih.T + h @ w_hh.T + b_ih + b_hh
        i, f = sigmoid(z[:, :n]), sigmoid(z[:, n:2 * n])
        g, o = np.tanh(z[:, 2 * n:3 * n]), sigmoid(z[:, 3 * n:])
        c = f * c + i * g
        h = o * np.tanh(c)
        out[t] = h
    return out, h, c


def lstm_reference(net, x, h0, c0):
    dirs = 2 if net.bidirectional else 1
    hs, cs = [], []
    for layer in range(net.num_layers):
        outs = []
        for d in range(dirs):
            suffix = f"_l{layer}" + ("_reverse" if d else "")
            k = layer * dirs + d
            w = [getattr(net, name + suffix).astype(np.float64)
                 for name in ("weight_ih", "weight_hh", "bias_ih", "bias_hh")]
            out, h, c = lstm_direction(x, h0[k], c0[k], *w, reverse=bool(d))
            outs.append(out)
            hs.append(h)
            cs.append(c)
        x = np.concatenate(outs, axis=-1)
    return x, np.stack(hs), np.stack(cs)


@pytest.mark.parametrize("num_layers,bidirectional", [(1, False), (2, False), (2, True)])
def test_lstm_matches_step_loop(num_layers, bidirectional):
    amber.set_seed(0)
    net = nn.LSTM(3, 4, num_layers=num_layers, bidirectional=bidirectional)
    rng = np.random.default_rng(1)
    x = rng.standard_normal((5, 2, 3)).astype(np.float32)
    dirs = 2 if bidirectional else 1
    h0 = rng.standard_normal((num_layers * dirs, 2, 4)).astype(np.float32)
    c0 = rng.standard_normal((num_layers * dirs, 2, 4)).astype(np.float32)
    out, (h_n, c_n) = net(x, (h0, c0))
    ref_out, ref_h, ref_c = lstm_reference(net, x.astype(np.float64), h0, c0)
    assert out.shape == (5, 2, 4 * dirs) and out.dtype == np.float32
    np.testing.assert_allclose(out, ref_out, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(h_n, ref_h, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(c_n, ref_c, rtol=1e-5, atol=1e-6)


def test_lstm_batch_first_and_zero_state():
    amber.set_seed(0)
    net = nn.LSTM(3, 4, batch_first=True)
    x = np.random.default_rng(2).standard_normal((2, 6, 3)).astype(np.float32)
    out, (h_n, c_n) = net(x)
    zeros = np.zeros((1, 2, 4))
    ref_out, ref_h, ref_c = lstm_reference(net, x.transpose(1, 0, 2).astype(np.float64), zeros,
                                           zeros)
    np.testing.assert_allclose(out, ref_out.transpose(1, 0, 2), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(h_n, ref_h, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(out[:, -1], h_n[0], rtol=1e-6)


def test_lstm_parameters_and_init_range():
    net = nn.LSTM(3, 5, num_layers=2, bidirectional=True, has_bias=False)
    names = [name for name, _ in net.parameters_and_names()]
    assert names == ["weight_ih_l0", "weight_hh_l0", "weight_ih_l0_reverse",
                     "weight_hh_l0_reverse", "weight_ih_l1", "weight_hh_l1",
                     "weight_ih_l1_reverse", "weight_hh_l1_reverse"]
    assert net.weight_ih_l0.shape == (20, 3) and net.weight_ih_l1.shape == (20, 10)
    bound = 1 / np.sqrt(5)
    assert all(np.abs(p).max() <= bound and p.dtype == np.float32 for p in net.get_parameters())


def test_rnn_matches_step_loop():
    amber.set_seed(3)
    for nonlinearity, act in (("tanh", np.tanh), ("relu", lambda z: np.maximum(z, 0))):
        net = nn.RNN(3, 4, nonlinearity=nonlinearity)
        x = np.random.default_rng(4).standard_normal((6, 2, 3)).astype(np.float32)
        out, h_n = net(x)
        h = np.zeros((2, 4))
        for t in range(6):
            h = act(x[t] @ net.weight_ih_l0.T + net.bias_ih_l0 + h @ net.weight_hh_l0.T
                    + net.bias_hh_l0)
            np.testing.assert_allclose(out[t], h, rtol=1e-5, atol=1e-6)
        np.testing.assert_allclose(h_n[0], h, rtol=1e-5, atol=1e-6)


def test_rnn_dropout_between_layers_only_when_training():
    amber.set_seed(0)
    net = nn.RNN(3, 4, num_layers=2, dropout=0.5)
    x = np.random.default_rng(5).standard_normal((4, 2, 3)).astype(np.float32)
    out_a, _ = net(x)
    out_b, _ = net(x)
    np.testing.assert_array_equal(out_a, out_b)
    net.set_train()
    assert net.dropout_op.training
    out_c, _ = net(x)
    assert not np.allclose(out_c, out_a)


def test_recurrent_errors_name_layer_and_shapes():
    net = nn.LSTM(3, 4)
    with pytest.raises(ValueError, match=r"LSTM\(input_size=3, hidden_size=4, num_layers=1\): "
                                         r"input last dim \(input_size\) is 5"):
        net(np.zeros((2, 1, 5), np.float32))
    with pytest.raises(ValueError, match="input must be 3-D"):
        net(np.zeros((2, 3), np.float32))
    with pytest.raises(ValueError, match=r"h_0 has shape \(1, 2, 4\), expected \(1, 3, 4\)"):
        net(np.zeros((2, 3, 3), np.float32), (np.zeros((1, 2, 4)), np.zeros((1, 3, 4))))
    with pytest.raises(ValueError, match="nonlinearity must be one of"):
        nn.RNN(3, 4, nonlinearity="sigmoid")

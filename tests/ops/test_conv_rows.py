"""The window-row lowering of conv2d (ops/conv_kernels.py: conv2d_rows, conv2d_grad_weight_rows,
taken from 16 input channels): forward and weight gradient against float64 loops over the
textbook definition, blocks of images that do not divide the batch, a single image taken in
bands of output rows (its rows past 128 KiB), and a compiled network (symbolic batch) whose
input and weight gradients match finite differences."""
import os
import sys

import numpy as np
import pytest

import amber
from amber import nn
from amber.ops.conv_kernels import conv2d_grad_input, conv2d_grad_weight, conv2d_rows
from amber.ops.nn_kernels import window_pads

sys.path.insert(0, os.path.join(os.path.dirname(__file__), os.pardir, "gradients"))
import numeric  # noqa: E402


def conv_loops(x, w, stride, pads, dilation):
    """conv2d by definition in float64: one einsum per kernel offset over the padded input."""
    x64 = np.pad(x.astype(np.float64), ((0, 0), (0, 0), pads[:2], pads[2:]))
    o, _, kh, kw = w.shape
    oh = (x64.shape[2] - (kh - 1) * dilation[0] - 1) // stride[0] + 1
    ow = (x64.shape[3] - (kw - 1) * dilation[1] - 1) // stride[1] + 1
    out = np.zeros((x.shape[0], o, oh, ow))
    for i in range(kh):
        for j in range(kw):
            r, q = i * dilation[0], j * dilation[1]
            patch = x64[:, :, r:r + stride[0] * oh:stride[0], q:q + stride[1] * ow:stride[1]]
            out += np.einsum("nchw,oc->nohw", patch, w[:, :, i, j].astype(np.float64))
    return out


def weight_grad_loops(x, g, w_shape, stride, pads, dilation):
    """d sum(conv2d * g) / d weight by definition in float64."""
    x64 = np.pad(x.astype(np.float64), ((0, 0), (0, 0), pads[:2], pads[2:]))
    _, _, kh, kw = w_shape
    oh, ow = g.shape[2:]
    out = np.zeros(w_shape)
    for i in range(kh):
        for j in range(kw):
            r, q = i * dilation[0], j * dilation[1]
            patch = x64[:, :, r:r + stride[0] * oh:stride[0], q:q + stride[1] * ow:stride[1]]
            out[:, :, i, j] = np.einsum("nchw,nohw->oc", patch, g.astype(np.float64))
    return out


CASES = [  # x_shape, w_shape, stride, pads, dilation, step (images a block)
    ((5, 16, 7, 6), (3, 16, 3, 3), (1, 1), (1, 1, 1, 1), (1, 1), 2),   # last block partial
    ((3, 17, 9, 8), (4, 17, 3, 3), (2, 2), (0, 1, 0, 1), (1, 1), 1),   # strided 'same'
    ((2, 16, 11, 10), (5, 16, 5, 4), (3, 2), (2, 1, 0, 3), (1, 1), 3),  # odd kernel, asymmetric
    ((2, 16, 9, 9), (3, 16, 3, 2), (1, 2), (2, 2, 1, 0), (2, 1), 2),   # dilated
    ((4, 20, 5, 5), (6, 20, 1, 1), (1, 1), (1, 0, 0, 1), (1, 1), 4),   # 1x1 with padding
    ((1, 16, 4, 4), (2, 16, 3, 3), (1, 1), (0, 0, 0, 0), (1, 1), 1),   # valid, one image
    ((1, 16, 45, 47), (3, 16, 3, 3), (1, 1), (1, 0, 2, 1), (1, 1), 1),  # bands of output rows
]


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("x_shape, w_shape, stride, pads, dilation, step", CASES)
def test_rows_forward_matches_the_definition(x_shape, w_shape, stride, pads, dilation, step,
                                             dtype) -> None:
    rng = np.random.default_rng(sum(x_shape) + 3 * sum(w_shape))
    x = rng.standard_normal(x_shape).astype(dtype)
    w = rng.standard_normal(w_shape).astype(dtype)
    bias = rng.standard_normal(w_shape[0]).astype(dtype)
    expected = conv_loops(x, w, stride, pads, dilation)
    got = conv2d_rows(x, w, bias, kernel=w_shape[2:], out_size=expected.shape[2:], step=step,
                      stride=stride, dilation=dilation, pads=pads)
    assert got.shape == expected.shape and got.dtype == dtype
    tol = 1e-4 if dtype == np.float32 else 1e-10
    np.testing.assert_allclose(got, expected + bias[:, None, None], rtol=tol, atol=tol)


def test_rows_forward_promotes_to_a_wider_bias() -> None:
    rng = np.random.default_rng(1)
    x = rng.standard_normal((2, 16, 4, 4)).astype(np.float32)
    w = rng.standard_normal((3, 16, 3, 3)).astype(np.float32)
    bias = rng.standard_normal(3)
    got = conv2d_rows(x, w, bias, kernel=(3, 3), out_size=(4, 4), step=1, pads=(1, 1, 1, 1))
    expected = conv_loops(x, w, (1, 1), (1, 1, 1, 1), (1, 1)) + bias[:, None, None]
    assert got.dtype == np.float64
    np.testing.assert_allclose(got, expected, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("x_shape, w_shape, stride, pads, dilation, step", CASES)
def test_rows_weight_gradient_matches_the_definition(x_shape, w_shape, stride, pads, dilation,
                                                     step) -> None:
    rng = np.random.default_rng(sum(x_shape) * 5 + sum(w_shape))
    x = rng.standard_normal(x_shape).astype(np.float32)
    out = conv_loops(x, np.zeros(w_shape), stride, pads, dilation)
    g = rng.standard_normal(out.shape).astype(np.float32)
    got = conv2d_grad_weight(x, g, w_shape=w_shape, stride=stride, padding=pads, pad_mode="pad",
                             dilation=dilation)
    assert got.shape == w_shape and got.dtype == np.float32 and got.flags.c_contiguous
    np.testing.assert_allclose(got, weight_grad_loops(x, g, w_shape, stride, pads, dilation),
                               rtol=1e-4, atol=1e-3)


def test_stride1_input_gradient_through_rows_matches_the_transpose() -> None:
    """At 16 or more output channels the flipped-kernel convolution runs as rows: its result
    is the transpose of the forward, <conv(x), g> == <x, dx>."""
    rng = np.random.default_rng(2)
    x = rng.standard_normal((3, 4, 6, 5))
    w = rng.standard_normal((16, 4, 3, 3))
    pads = window_pads((6, 5), (3, 3), (1, 1), (1, 1), "same", (0, 0, 0, 0))
    g = rng.standard_normal(conv_loops(x, w, (1, 1), pads, (1, 1)).shape)
    dx = conv2d_grad_input(g, w, x_shape=x.shape, pad_mode="same")
    np.testing.assert_allclose((conv_loops(x, w, (1, 1), pads, (1, 1)) * g).sum(),
                               (x * dx).sum(), rtol=1e-10)


class WideBlock(nn.Cell):
    """A 16-channel residual pair (the rows lowering), a strided 16-channel convolution and a
    3-channel stem (the column lowering), through tanh."""

    def __init__(self) -> None:
        super().__init__()
        self.stem = nn.Conv2d(3, 16, 3, pad_mode="same", has_bias=True)
        self.inner = nn.Conv2d(16, 16, 3, pad_mode="same", has_bias=True)
        self.down = nn.Conv2d(16, 4, 3, stride=2, pad_mode="same")

    def construct(self, x: np.ndarray) -> np.ndarray:
        h = np.tanh(self.stem(x))
        return np.sin(self.down(np.tanh(self.inner(h)) + h)).sum()


def test_compiled_rows_gradients_with_a_symbolic_batch_match_finite_differences() -> None:
    amber.set_seed(0)
    net = WideBlock()
    for p in net.get_parameters():
        p.set_data(p.asnumpy().astype(np.float64))
    inner = net.inner.weight
    # NOTE: -O1: no layout pass, which would make these convolutions NHWC (its own tests)
    grad = amber.jit(amber.grad(net, grad_position=0, weights=[inner]), dynamic={"x": 0},
                     opt_level=1)
    x = np.random.default_rng(3).standard_normal((2, 3, 5, 4))
    dx, (dw,) = grad(x)
    assert "conv2d_rows(" in grad.code
    np.testing.assert_allclose(dx, numeric.gradient(net.construct, (x,), 0), rtol=1e-6,
                               atol=1e-6)
    # NOTE: the weight gradient along random directions (a central difference each), not
    # per element: 2,304 elements would take seconds of eager calls. The Parameter stays
    # float32, so the difference is taken over the move it really stored.
    rng, start = np.random.default_rng(4), np.array(inner, copy=True)
    for _ in range(3):
        direction = rng.standard_normal(start.shape)
        values, stored = [], []
        for step in (1e-4, -1e-4):
            inner[...] = start + step * direction
            stored.append(np.array(inner, np.float64))
            values.append(float(net.construct(x)))
        inner[...] = start
        np.testing.assert_allclose((dw * (stored[0] - stored[1])).sum(), values[0] - values[1],
                                   rtol=1e-5, atol=1e-9)
    forward = amber.jit(net, dynamic={"x": 0}, opt_level=1)
    for batch in (1, 3):
        xb = np.random.default_rng(batch).standard_normal((batch, 3, 5, 4))
        np.testing.assert_allclose(forward(xb), net.construct(xb), rtol=1e-10)

"""The pair_gradients pass (graph/passes/pair_gradients.py) and its kernel (ops/conv_pairs.py):
a convolution's input and weight gradients on two threads at once, bit for bit one thread's;
made only at `num_threads=2` where each gradient reaches PAIR_MIN_WORK; compiled gradients
equal one thread's and float64 central differences."""
import numpy as np
import pytest

import amber
from amber import nn
from amber.graph.passes.pair_gradients import PAIR_MIN_WORK
from amber.ops.conv_nhwc import conv2d_nhwc_grad_input_kernel, conv2d_nhwc_grad_weight_kernel
from amber.ops.conv_pairs import conv2d_nhwc_grads_kernel
from amber.ops.parallel import hold_blas, kernel_threads
from central_differences import SquaredSum  # conftest puts it on the path

needs_blas_control = pytest.mark.skipif(
    kernel_threads().blas is None,
    reason="NumPy's BLAS is not an OpenBLAS amber can hold at one thread: the pair runs in turn")

# (x NHWC, w OIHW, stride, pads, dilation): one image, strided, dilated, a 1x1 projection;
# strided ones whose input gradient, and a 16-channel one whose weight gradient, the worker
# shares in parts
CASES = [
    ((1, 20, 18, 16), (16, 16, 3, 3), (1, 1), (1, 1, 1, 1), (1, 1)),
    ((5, 15, 17, 16), (24, 16, 3, 3), (2, 2), (1, 0, 1, 2), (1, 1)),
    ((3, 12, 12, 32), (32, 32, 3, 3), (1, 1), (2, 2, 2, 2), (2, 2)),
    ((4, 9, 9, 16), (32, 16, 1, 1), (2, 2), (0, 0, 0, 0), (1, 1)),
    ((23, 32, 32, 16), (32, 16, 3, 3), (2, 2), (0, 1, 0, 1), (1, 1)),  # shared: 4 parts
    ((15, 64, 64, 16), (64, 16, 3, 3), (3, 3), (1, 1, 1, 1), (1, 1)),  # shared: 2 parts
    ((11, 24, 24, 16), (16, 16, 3, 3), (1, 1), (1, 1, 1, 1), (1, 1)),  # weights shared: 3
]


@pytest.mark.parametrize("x_shape, w_shape, stride, pads, dilation", CASES)
def test_the_pair_kernel_is_both_one_thread_kernels(x_shape, w_shape, stride, pads,
                                                    dilation) -> None:
    rng = np.random.default_rng(sum(x_shape))
    x = rng.standard_normal(x_shape).astype(np.float32)
    w = rng.standard_normal(w_shape).astype(np.float32)
    attrs = {"stride": stride, "padding": pads, "pad_mode": "pad", "dilation": dilation}
    n, h, wd, c = x_shape
    oh = (h + pads[0] + pads[1] - (w_shape[2] - 1) * dilation[0] - 1) // stride[0] + 1
    ow = (wd + pads[2] + pads[3] - (w_shape[3] - 1) * dilation[1] - 1) // stride[1] + 1
    g = rng.standard_normal((n, oh, ow, w_shape[0])).astype(np.float32)
    nchw = (n, c, h, wd)
    hold_blas(kernel_threads(), 1)  # NOTE: one thread's bits are at one BLAS thread
    try:
        dx, dw = conv2d_nhwc_grads_kernel(x, g, w, x_shape=nchw, w_shape=w_shape, threads=2,
                                          **attrs)
        one_dx = conv2d_nhwc_grad_input_kernel(g, w, x_shape=nchw, **attrs)
        one_dw = conv2d_nhwc_grad_weight_kernel(x, g, w_shape=w_shape, **attrs)
    finally:
        hold_blas(kernel_threads(), -1)
    assert np.array_equal(dx, one_dx) and np.array_equal(dw, one_dw)
    assert dx.shape == x.shape and dw.shape == w_shape


class Block(nn.Cell):
    """Two 16-channel convolutions on 16x16 images: 0.6M multiply-adds a convolution an
    image, so sixteen images pair and one does not."""

    def __init__(self, dtype: type) -> None:
        super().__init__()
        self.conv1 = nn.Conv2d(16, 16, 3, pad_mode="same", has_bias=True)
        self.conv2 = nn.Conv2d(16, 16, 3, stride=2, pad_mode="same", has_bias=True)
        self.relu = nn.ReLU()
        for p in self.trainable_params():
            p.set_data(np.asarray(p, dtype))

    def construct(self, x: np.ndarray) -> np.ndarray:
        return self.conv2(self.relu(self.conv1(x)))


def _compiled_gradients(net: nn.Cell, x: np.ndarray, threads: int) -> tuple[str, tuple]:
    amber.set_context(num_threads=threads)
    grad = amber.jit(amber.grad(SquaredSum(net), grad_position=0, weights=net.trainable_params()))
    hold_blas(kernel_threads(), 1)
    try:
        result = grad(x)
        return grad.code, result
    finally:
        hold_blas(kernel_threads(), -1)


@needs_blas_control
def test_compiled_pairs_equal_one_thread_and_finite_differences(restore_threads) -> None:
    assert 16 * 16 * 16 * 16 * 9 * 16 >= PAIR_MIN_WORK > 16 * 16 * 16 * 9 * 16
    amber.set_seed(0)
    net = Block(np.float64)
    x = np.random.default_rng(0).standard_normal((16, 16, 16, 16))
    code_one, (dx_one, dws_one) = _compiled_gradients(net, x, 1)
    code_two, (dx_two, dws_two) = _compiled_gradients(net, x, 2)
    assert "conv2d_nhwc_grads" not in code_one
    assert code_two.count("= conv2d_nhwc_grads_kernel(") == 1  # NOTE: conv1's dx is not needed
    assert np.array_equal(dx_one, dx_two)
    assert all(np.array_equal(a, b) for a, b in zip(dws_one, dws_two))
    loss, rng, eps = SquaredSum(net).construct, np.random.default_rng(1), 1e-6
    d = rng.standard_normal(x.shape)
    np.testing.assert_allclose((dx_two * d).sum(),
                               (loss(x + eps * d) - loss(x - eps * d)) / (2 * eps), rtol=1e-6)
    weight = net.conv2.weight  # NOTE: float32 storage: the difference of the stored weights
    d = rng.standard_normal(weight.shape) * 1e-3  # is the step (the loss is quadratic in it)
    saved = np.array(weight)
    try:
        weight.set_data(saved + d)
        up, up_weight = loss(x), np.array(weight, np.float64)
        weight.set_data(saved - d)
        down, down_weight = loss(x), np.array(weight, np.float64)
    finally:
        weight.set_data(saved)
    dw = dws_two[[p.name for p in net.trainable_params()].index(weight.name)]
    np.testing.assert_allclose((dw * (up_weight - down_weight)).sum(), up - down, rtol=1e-7)

def test_small_work_and_other_thread_counts_keep_two_kernels(restore_threads) -> None:
    amber.set_seed(0)
    net = Block(np.float32)
    one_image = np.ones((1, 16, 16, 16), np.float32)
    assert "conv2d_nhwc_grads" not in _compiled_gradients(net, one_image, 2)[0]
    many = np.ones((16, 16, 16, 16), np.float32)
    assert "conv2d_nhwc_grads" not in _compiled_gradients(net, many, 3)[0]

"""The layout pass (graph/passes/layout.py): chains of window-row convolutions run channels-last
with the transposes cancelled between them; compiled results equal eager ones (strides,
padding modes, dilation, odd sizes, a residual block, a symbolic batch) and gradients equal
central differences along random directions."""
import numpy as np

import amber
from amber import nn


class Chain(nn.Cell):
    """A 3-channel stem (columns, stays NCHW), a residual block of 16 channels, a strided
    convolution with a 1x1 strided projection, a dilated 'pad' convolution, global mean."""

    def __init__(self) -> None:
        super().__init__()
        self.stem = nn.Conv2d(3, 16, 3, pad_mode="same", has_bias=True)
        self.conv1 = nn.Conv2d(16, 16, 3, pad_mode="same", has_bias=True)
        self.conv2 = nn.Conv2d(16, 16, 3, pad_mode="same")
        self.down = nn.Conv2d(16, 20, 3, stride=2, pad_mode="same", has_bias=True)
        self.project = nn.Conv2d(16, 20, 1, stride=2, pad_mode="same")
        self.wide = nn.Conv2d(20, 6, (3, 2), pad_mode="pad", padding=(1, 2, 0, 1),
                              dilation=(2, 1), has_bias=True)
        self.relu = nn.ReLU()

    def construct(self, x: np.ndarray) -> np.ndarray:
        h = self.relu(self.stem(x))
        h = self.relu(self.conv2(self.relu(self.conv1(h))) + h)
        h = np.tanh(self.down(h) + self.project(h)) * 0.5
        return self.wide(h).mean(axis=(2, 3))


def _net(dtype) -> Chain:
    amber.set_seed(0)
    net = Chain()
    for p in net.get_parameters():
        p.set_data(p.asnumpy().astype(dtype))
    return net


def test_the_chain_runs_channels_last_and_matches_eager() -> None:
    net = _net(np.float32)
    fast = amber.jit(net, dynamic={"x": 0})
    for batch, size in ((2, (9, 7)), (1, (5, 6)), (3, (9, 7))):
        x = np.random.default_rng(batch).standard_normal((batch, 3, *size)).astype(np.float32)
        np.testing.assert_allclose(fast(x), net.construct(x), rtol=1e-5, atol=1e-5)
    code = fast.code[fast.code.index("def Chain_construct"):]
    assert code.count("conv2d_nhwc_kernel(") == 5 and "conv2d_rows(" not in code
    # NOTE: one transpose into the chain (after the stem); the mean reduces NHWC axes
    assert code.count(".transpose(") == 1 and ".mean(axis=(1, 2))" in code


def test_without_the_pass_the_layout_stays_nchw() -> None:
    net = _net(np.float32)
    slow = amber.jit(net, opt_level=1)
    x = np.random.default_rng(0).standard_normal((2, 3, 9, 7)).astype(np.float32)
    np.testing.assert_allclose(slow(x), amber.jit(net)(x), rtol=1e-5, atol=1e-5)
    assert "conv2d_nhwc" not in slow.code


def test_train_step_gradients_match_central_differences() -> None:
    """Input and weight gradients of the whole chain in float64 (backward channels-last too:
    NHWC input and weight gradients, the ReLU masks and the bias sums over NHWC axes)."""
    net = _net(np.float64)
    weights = [net.conv1.weight, net.down.weight, net.wide.bias]
    loss = lambda x: (np.sin(net.construct(x)) * 1.5).sum()  # noqa: E731

    class Loss(nn.Cell):
        def __init__(self) -> None:
            super().__init__()
            self.net = net

        def construct(self, x: np.ndarray) -> np.ndarray:
            return (np.sin(self.net(x)) * 1.5).sum()

    grad = amber.jit(amber.grad(Loss(), grad_position=0, weights=weights), dynamic={"x": 0})
    x = np.random.default_rng(3).standard_normal((2, 3, 9, 7))
    dx, dws = grad(x)
    code = grad.code
    assert "conv2d_nhwc_grad_input_kernel(" in code and "conv2d_nhwc_grad_weight_kernel(" in code
    rng, eps = np.random.default_rng(4), 1e-5
    for _ in range(2):
        d = rng.standard_normal(x.shape)
        np.testing.assert_allclose((dx * d).sum(),
                                   (loss(x + eps * d) - loss(x - eps * d)) / (2 * eps),
                                   rtol=1e-6, atol=1e-8)
    for w, dw in zip(weights, dws):
        start = np.array(w, copy=True)
        d = rng.standard_normal(start.shape)
        values, stored = [], []
        for step in (1e-4, -1e-4):  # NOTE: Parameters keep float32: the move really stored
            w[...] = start + step * d
            stored.append(np.array(w, np.float64))
            values.append(loss(x))
        w[...] = start
        np.testing.assert_allclose((dw * (stored[0] - stored[1])).sum(), values[0] - values[1],
                                   rtol=1e-5, atol=1e-9)


def test_sgd_train_step_matches_eager() -> None:
    """One SGD step compiled and eager from the same weights: the same loss and weights."""
    def step_of(net):
        loss = nn.WithLossCell(net, nn.SoftmaxCrossEntropyWithLogits(sparse=True,
                                                                     reduction="mean"))
        return nn.TrainOneStepCell(loss, nn.SGD(net.trainable_params(), 0.1))
    dtype = np.float32
    x = np.random.default_rng(5).standard_normal((4, 3, 9, 7)).astype(dtype)
    y = np.array([0, 3, 5, 1], np.int32)
    eager, compiled = _net(dtype), _net(dtype)
    want = step_of(eager).construct(x, y)
    got = amber.jit(step_of(compiled))(x, y)
    tol = 1e-4
    np.testing.assert_allclose(np.asarray(got), np.asarray(want), rtol=tol, atol=tol)
    for a, b in zip(compiled.get_parameters(), eager.get_parameters()):
        np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=tol, atol=tol)


class Looped(nn.Cell):
    """Convolutions inside a loop and an If arm: the pass rewrites them in their blocks; the
    values the regions carry stay NCHW."""

    def __init__(self) -> None:
        super().__init__()
        self.conv = nn.Conv2d(16, 16, 3, pad_mode="same", has_bias=True)
        self.other = nn.Conv2d(16, 16, 1)

    def construct(self, x: np.ndarray) -> np.ndarray:
        h = x
        for _ in range(3):
            h = np.maximum(self.conv(h), 0) + h * 0.5
        if h.sum() > 0:
            h = self.other(h) - 1.0
        return h


def test_convolutions_in_regions_match_eager() -> None:
    amber.set_seed(0)
    net = Looped()
    fast = amber.jit(net)
    for seed in (0, 1):
        x = np.random.default_rng(seed).standard_normal((2, 16, 6, 5)).astype(np.float32)
        x = x if seed == 0 else -np.abs(x) * 10
        np.testing.assert_allclose(fast(x), net.construct(x), rtol=1e-5, atol=1e-5)
    assert "conv2d_nhwc_kernel(" in fast.code

"""The layout pass (graph/passes/layout.py): chains of window-row convolutions run channels-last
with the transposes cancelled between them, a 3-channel stem joining them; compiled results
equal eager ones (strides, padding modes, dilation, odd sizes, a residual block, a symbolic
batch) and gradients equal central differences along random directions."""
import numpy as np

import amber
from amber import nn


class Chain(nn.Cell):
    """A 3-channel stem (columns, NHWC out), a residual block of 16 channels, a strided
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
    assert code.count("conv2d_nhwc_kernel(") == 6 and "conv2d_rows(" not in code
    assert "conv2d_gemm(" not in code
    # NOTE: one transpose into the chain (a view of the input); the mean reduces NHWC axes
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
    weights = [net.stem.weight, net.conv1.weight, net.down.weight, net.wide.bias]
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
    entry = code[code.index("def Loss_"):]
    # NOTE: the stem's weight gradient reads the chain's NHWC adjoint; its input gradient
    # (returned to the user) stays NCHW, and no ReLU mask is transposed
    assert "conv2d_grad_weight(" not in entry and "conv2d_grad_input(" in entry
    assert "> 0).transpose(" not in entry
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
        # NOTE: Parameters keep float32: the move really stored is used; a small one, since
        # moving all 432 stem weights by 1e-4 flipped a ReLU (a kink: 4% off)
        for step in (1e-6, -1e-6):
            w[...] = start + step * d
            stored.append(np.array(w, np.float64))
            values.append(loss(x))
        w[...] = start
        np.testing.assert_allclose((dw * (stored[0] - stored[1])).sum(), values[0] - values[1],
                                   rtol=1e-5, atol=1e-11)


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


class Bordering(nn.Cell):
    """Few-channel convolutions that do not border only the chain keep their NCHW columns: one
    pooled (LeNet's), one whose activation the user gets too."""

    def __init__(self) -> None:
        super().__init__()
        self.first = nn.Conv2d(3, 8, 3, pad_mode="same", has_bias=True)
        self.pool = nn.MaxPool2d(kernel_size=2, stride=2)
        self.stem = nn.Conv2d(8, 16, 3, stride=2, pad_mode="same")
        self.conv = nn.Conv2d(16, 16, 3, pad_mode="same")

    def construct(self, x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        h = self.pool(np.maximum(self.first(x), 0))
        s = np.maximum(self.stem(h), 0)
        return self.conv(s) + 1.0, s


def test_few_channel_convolutions_join_only_where_they_border_the_chain() -> None:
    amber.set_seed(0)
    net = Bordering()
    fast = amber.jit(net)
    x = np.random.default_rng(0).standard_normal((2, 3, 12, 10)).astype(np.float32)
    for got, want in zip(fast(x), net.construct(x)):
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)
    code = fast.code[fast.code.index("def Bordering_construct"):]
    assert code.count("conv2d_nhwc_kernel(") == 1


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


class Bottleneck(nn.Cell):
    """A 3-channel convolution inside the chain (16 -> 3 -> 16, the second strided): it joins
    it with its input gradient (3 channels out, read by the chain) and weight gradient."""

    def __init__(self) -> None:
        super().__init__()
        self.squeeze = nn.Conv2d(16, 3, 3, pad_mode="same", has_bias=True)
        self.expand = nn.Conv2d(3, 16, 3, stride=2, pad_mode="same", has_bias=True)
        self.head = nn.Conv2d(16, 16, 1)

    def construct(self, x: np.ndarray) -> np.ndarray:
        return (np.sin(self.head(np.maximum(self.expand(np.maximum(self.squeeze(x), 0)), 0)))
                * 1.5).sum()


def test_a_few_channel_convolution_inside_the_chain_matches_central_differences() -> None:
    amber.set_seed(0)
    net = Bottleneck()
    for p in net.get_parameters():
        p.set_data(p.asnumpy().astype(np.float64))
    grad = amber.jit(amber.grad(net, grad_position=0, weights=[net.expand.weight]))
    x = np.random.default_rng(6).standard_normal((3, 16, 9, 8))
    dx, (dw,) = grad(x)
    entry = grad.code[grad.code.index("def Bottleneck_"):]
    assert "conv2d_grad_input(" not in entry and "conv2d_grad_weight(" not in entry
    # NOTE: the boundary transposes only: the input into the chain, its gradient out
    assert "conv2d_gemm(" not in entry and entry.count(".transpose(") == 2
    rng, eps = np.random.default_rng(7), 1e-6
    d = rng.standard_normal(x.shape)
    np.testing.assert_allclose((dx * d).sum(), (net.construct(x + eps * d) -
                                                net.construct(x - eps * d)) / (2 * eps),
                               rtol=1e-6, atol=1e-9)
    w, start = net.expand.weight, np.array(net.expand.weight, copy=True)
    d = rng.standard_normal(start.shape)
    values, stored = [], []
    for step in (1e-6, -1e-6):
        w[...] = start + step * d
        stored.append(np.array(w, np.float64))
        values.append(net.construct(x))
    w[...] = start
    np.testing.assert_allclose((dw * (stored[0] - stored[1])).sum(), values[0] - values[1],
                               rtol=1e-5, atol=1e-11)

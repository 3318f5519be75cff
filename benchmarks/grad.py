"""Gradients: an MLP 784-256-128-10 and LeNet-5 (batch 64, softmax cross-entropy) and the
early-stopping RNN's `while` loop (hidden 64, 50 steps), each `value_and_grad` over the loss cell
with respect to every weight: amber (compiled) vs careful hand-written NumPy (preallocated
buffers, the backward written out, the weights read as they are at each call) vs pynative amber
("eager": the same graph interpreted op by op), and torch where installed. Notes give each
version's backward/forward time ratio; peak memory includes the RNN's tape."""
from __future__ import annotations

import sys
from pathlib import Path
from typing import Any, Callable

import numpy as np

import amber
from amber import nn, ops
from harness import CLOCK, Workload

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "samples"))
from lenet import LeNet5  # noqa: E402
from rnn import EarlyStopRNN  # noqa: E402

TITLE = "Gradients: value_and_grad vs hand-written NumPy backward"

BATCH = 64
RNN_STEPS, RNN_BATCH, RNN_INPUT, RNN_HIDDEN = 50, 16, 32, 64


class Mlp(nn.Cell):
    """784-256-128-10 with ReLU."""

    def __init__(self) -> None:
        super().__init__()
        self.fc1 = nn.Dense(784, 256)
        self.fc2 = nn.Dense(256, 128)
        self.fc3 = nn.Dense(128, 10)
        self.relu = nn.ReLU()

    def construct(self, x: np.ndarray) -> np.ndarray:
        return self.fc3(self.relu(self.fc2(self.relu(self.fc1(x)))))


class RnnLoss(nn.Cell):
    """Mean squared distance of the RNN's final state from a target."""

    def __init__(self, rnn: EarlyStopRNN) -> None:
        super().__init__()
        self.rnn = rnn

    def construct(self, x: np.ndarray, target: np.ndarray) -> np.ndarray:
        h, _ = self.rnn(x)
        d = h - target
        return (d * d).mean()


# -- hand-written NumPy ----------------------------------------------------------------------

def _softmax_ce(logits: np.ndarray, labels: np.ndarray, rows: np.ndarray) -> np.float32:
    """Mean sparse softmax cross-entropy (the forward's loss)."""
    m = logits.max(axis=1, keepdims=True)
    shifted = logits - m
    lse = np.log(np.exp(shifted).sum(axis=1))
    return np.float32((lse - shifted[rows, labels]).mean())


def _softmax_ce_backward(logits: np.ndarray, labels: np.ndarray, rows: np.ndarray
                         ) -> tuple[np.float32, np.ndarray]:
    """Mean sparse softmax cross-entropy and its gradient, in place in `logits`."""
    n = logits.shape[0]
    m = logits.max(axis=1, keepdims=True)
    logits -= m
    np.exp(logits, out=logits)
    s = logits.sum(axis=1, keepdims=True)
    loss = np.log(s).mean() - (np.log(logits[rows, labels]).mean())
    logits /= s
    logits[rows, labels] -= 1.0
    logits *= np.float32(1.0 / n)
    return np.float32(loss), logits


class HandMlp:
    """Forward keeping the activations, backward written out; buffers per batch size. The
    weights are read as they are at each call (a gradient function for training cannot cache
    transposed copies: the weights change every step)."""

    def __init__(self, net: Mlp) -> None:
        self.w = [layer.weight.view(np.ndarray) for layer in (net.fc1, net.fc2, net.fc3)]
        self.b = [layer.bias.view(np.ndarray) for layer in (net.fc1, net.fc2, net.fc3)]
        self.rows = np.arange(BATCH)
        n = BATCH
        self.h = [np.empty((n, 256), np.float32), np.empty((n, 128), np.float32),
                  np.empty((n, 10), np.float32)]
        self.d = [np.empty((n, 256), np.float32), np.empty((n, 128), np.float32)]

    def forward(self, x: np.ndarray, labels: np.ndarray) -> Any:
        return _softmax_ce(self.logits(x), labels, self.rows)

    def logits(self, x: np.ndarray) -> Any:
        a = x
        for i in range(3):
            h = np.matmul(a, self.w[i].T, out=self.h[i])
            h += self.b[i]
            if i < 2:
                np.maximum(h, 0, out=h)
            a = h
        return a

    def __call__(self, x: np.ndarray, labels: np.ndarray) -> tuple[Any, tuple]:
        h1, h2 = self.h[0], self.h[1]
        loss, d3 = _softmax_ce_backward(self.logits(x), labels, self.rows)
        g3, gb3 = d3.T @ h2, d3.sum(axis=0)
        d2 = np.matmul(d3, self.w[2], out=self.d[1])
        d2 *= h2 > 0
        g2, gb2 = d2.T @ h1, d2.sum(axis=0)
        d1 = np.matmul(d2, self.w[1], out=self.d[0])
        d1 *= h1 > 0
        g1, gb1 = d1.T @ x, d1.sum(axis=0)
        return loss, (g1, gb1, g2, gb2, g3, gb3)


def _windows(x: np.ndarray, k: int) -> np.ndarray:
    """[C, N, H, W] -> a [C, k, k, N, OH, OW] strided view of the k x k windows."""
    c, n, h, w = x.shape
    sc, sn, sh, sw = x.strides
    return np.lib.stride_tricks.as_strided(x, (c, k, k, n, h - k + 1, w - k + 1),
                                           (sc, sh, sw, sn, sh, sw))


def _pool2(x: np.ndarray, out: np.ndarray) -> np.ndarray:
    w = x.shape[-1]
    rows = x.reshape(*x.shape[:-2], x.shape[-2] // 2, 2 * w)
    tall = np.maximum(rows[..., :w], rows[..., w:])
    return np.maximum(tall[..., 0::2], tall[..., 1::2], out=out)


def _unpool2(x: np.ndarray, pooled: np.ndarray, grad: np.ndarray, out: np.ndarray) -> None:
    """2x2 max pooling's backward: `grad` to the positions of the maximum (a mask; ties are
    measure-zero for these inputs)."""
    up = np.repeat(np.repeat(pooled, 2, axis=-2), 2, axis=-1)
    g = np.repeat(np.repeat(grad, 2, axis=-2), 2, axis=-1)
    np.multiply(g, x == up, out=out)


class HandLeNet:
    """LeNet-5 forward (channel-major, im2col + one GEMM per conv, ReLU after pooling) keeping
    what the backward needs; backward: dW = dY @ cols.T, col2im by 25 shifted adds, pooling
    by a max mask."""

    def __init__(self, net: LeNet5) -> None:
        p = {name: v.view(np.ndarray) for name, v in net.parameters_and_names()}
        self.w1, self.w2 = p["conv1.weight"].reshape(6, 25), p["conv2.weight"].reshape(16, 150)
        self.f = [p["fc1.weight"], p["fc2.weight"], p["fc3.weight"]]
        self.fb = [p["fc1.bias"], p["fc2.bias"], p["fc3.bias"]]
        n = BATCH
        shapes = {"cols1": (25, n * 784), "y1": (6, n * 784), "p1": (6, n, 14, 14),
                  "cols2": (150, n * 100), "y2": (16, n * 100), "p2": (16, n, 5, 5),
                  "flat": (n, 400), "h1": (n, 120), "h2": (n, 84), "out": (n, 10),
                  "dflat": (n, 400), "dh1": (n, 120), "dh2": (n, 84), "dy2": (16, n * 100),
                  "dp1": (6, n, 14, 14), "dy1": (6, n * 784)}
        self.buf = {k: np.empty(v, np.float32) for k, v in shapes.items()}
        self.rows = np.arange(n)

    def forward(self, x: np.ndarray, labels: np.ndarray) -> Any:
        return _softmax_ce(self.logits(x), labels, self.rows)

    def logits(self, x: np.ndarray) -> np.ndarray:
        b, n = self.buf, x.shape[0]
        cols1 = b["cols1"]
        np.copyto(cols1.reshape(1, 5, 5, n, 28, 28), _windows(x.transpose(1, 0, 2, 3), 5))
        y1 = np.matmul(self.w1, cols1, out=b["y1"])
        p1 = _pool2(y1.reshape(6, n, 28, 28), b["p1"])
        np.maximum(p1, 0, out=p1)
        cols2 = b["cols2"]
        np.copyto(cols2.reshape(6, 5, 5, n, 10, 10), _windows(p1, 5))
        y2 = np.matmul(self.w2, cols2, out=b["y2"])
        p2 = _pool2(y2.reshape(16, n, 10, 10), b["p2"])
        np.maximum(p2, 0, out=p2)
        flat = b["flat"]
        np.copyto(flat.reshape(n, 16, 5, 5), p2.transpose(1, 0, 2, 3))
        a = flat
        for i, name in enumerate(("h1", "h2", "out")):
            h = np.matmul(a, self.f[i].T, out=b[name])
            h += self.fb[i]
            if i < 2:
                np.maximum(h, 0, out=h)
            a = h
        return a

    def __call__(self, x: np.ndarray, labels: np.ndarray) -> tuple[Any, tuple]:
        b, n = self.buf, x.shape[0]
        loss, d = _softmax_ce_backward(self.logits(x), labels, self.rows)
        grads: list[np.ndarray] = []
        acts = [b["flat"], b["h1"], b["h2"]]
        douts = [b["dflat"], b["dh1"], b["dh2"]]
        for i in (2, 1, 0):
            grads[:0] = [d.T @ acts[i], d.sum(axis=0)]
            d = np.matmul(d, self.f[i], out=douts[i])
            if i > 0:
                d *= acts[i] > 0
        p2 = b["p2"]
        dp2 = d.reshape(n, 16, 5, 5).transpose(1, 0, 2, 3) * (p2 > 0)
        dy2 = b["dy2"]
        _unpool2(b["y2"].reshape(16, n, 10, 10), p2, dp2, dy2.reshape(16, n, 10, 10))
        gw2 = dy2 @ b["cols2"].T
        dcols2 = (self.w2.T @ dy2).reshape(6, 5, 5, n, 10, 10)
        dp1 = b["dp1"]
        dp1.fill(0)
        for i in range(5):
            for j in range(5):
                dp1[:, :, i:i + 10, j:j + 10] += dcols2[:, i, j]
        dp1 *= b["p1"] > 0
        dy1 = b["dy1"]
        _unpool2(b["y1"].reshape(6, n, 28, 28), b["p1"], dp1, dy1.reshape(6, n, 28, 28))
        gw1 = dy1 @ b["cols1"].T
        return loss, (gw1.reshape(6, 1, 5, 5), gw2.reshape(16, 6, 5, 5), *grads)


class HandRnn:
    """Backpropagation through time: the forward keeps every state in one preallocated array;
    the input and recurrent weight gradients are one GEMM each over all steps."""

    def __init__(self, rnn: EarlyStopRNN) -> None:
        self.wih = rnn.input_to_hidden.weight.view(np.ndarray)
        self.bih = rnn.input_to_hidden.bias.view(np.ndarray)
        self.whh = rnn.hidden_to_hidden.weight.view(np.ndarray)
        self.threshold = rnn.threshold
        self.hs = np.zeros((RNN_STEPS + 1, RNN_BATCH, RNN_HIDDEN), np.float32)
        self.dpre = np.empty((RNN_STEPS, RNN_BATCH, RNN_HIDDEN), np.float32)

    def forward(self, x: np.ndarray) -> tuple[np.ndarray, int]:
        xw = x @ self.wih.T
        xw += self.bih
        hs = self.hs
        t = 0
        while t < x.shape[0]:
            h = np.matmul(hs[t], self.whh.T, out=hs[t + 1])
            h += xw[t]
            np.tanh(h, out=h)
            t += 1
            if np.sqrt((h * h).sum()) > self.threshold:
                break
        return hs[t], t

    def __call__(self, x: np.ndarray, target: np.ndarray) -> tuple[Any, tuple]:
        h, steps = self.forward(x)
        diff = h - target
        loss = np.float32((diff * diff).mean())
        dh = diff * np.float32(2.0 / diff.size)
        hs, dpre = self.hs, self.dpre
        for t in range(steps - 1, -1, -1):
            d = dpre[t]
            np.multiply(hs[t + 1], hs[t + 1], out=d)
            np.subtract(1, d, out=d)
            d *= dh
            dh = d @ self.whh
        flat = dpre[:steps].reshape(-1, RNN_HIDDEN)
        gwih = flat.T @ x[:steps].reshape(-1, RNN_INPUT)
        gb = flat.sum(axis=0)
        gwhh = flat.T @ hs[:steps].reshape(-1, RNN_HIDDEN)
        return loss, (gwih, gb, gwhh)


# -- torch, where installed ------------------------------------------------------------------

def _torch_versions(kind: str, net: Any) -> dict[str, Callable[..., Any]]:
    try:
        import torch
    except ImportError:
        return {}
    torch.set_num_threads(1)
    params = [torch.tensor(np.array(p), requires_grad=True) for p in net.trainable_params()]
    F = torch.nn.functional

    def mlp(x: Any) -> Any:
        w1, b1, w2, b2, w3, b3 = params
        return F.linear(F.relu(F.linear(F.relu(F.linear(x, w1, b1)), w2, b2)), w3, b3)

    def lenet(x: Any) -> Any:
        c1, c2, w1, b1, w2, b2, w3, b3 = params
        y = F.max_pool2d(F.relu(F.conv2d(x, c1)), 2)
        y = F.max_pool2d(F.relu(F.conv2d(y, c2)), 2).flatten(1)
        return F.linear(F.relu(F.linear(F.relu(F.linear(y, w1, b1)), w2, b2)), w3, b3)

    def rnn_loss(x: Any, target: Any) -> Any:
        wih, bih, whh = params
        h = torch.zeros(x.shape[1], RNN_HIDDEN)
        t = 0
        while t < x.shape[0]:
            h = torch.tanh(F.linear(x[t], wih, bih) + F.linear(h, whh))
            t += 1
            if float(torch.sqrt((h * h).sum())) > net.rnn.threshold:
                break
        return ((h - target) ** 2).mean()

    def run(*args: np.ndarray) -> Any:
        for p in params:
            p.grad = None
        inputs = [torch.from_numpy(a) for a in args]
        if kind == "rnn":
            loss = rnn_loss(*inputs)
        else:
            logits = (mlp if kind == "mlp" else lenet)(inputs[0])
            loss = F.cross_entropy(logits, inputs[1].long())
        loss.backward()
        return loss.detach().numpy(), tuple(p.grad.numpy() for p in params)
    return {"torch": run}


# -- the workloads ---------------------------------------------------------------------------

def _pynative(fn: Callable[..., Any]) -> Callable[..., Any]:
    def run(*args: Any) -> Any:
        amber.set_context(jit_enabled=False)
        try:
            return fn(*args)
        finally:
            amber.set_context(jit_enabled=True)
    return run


def _all_arrays(out: Any) -> list[np.ndarray]:
    loss, grads = out
    return [np.asarray(loss), *(np.asarray(g) for g in grads)]


def _seconds(fn: Callable[..., Any], inputs: tuple, calls: int) -> float:
    fn(*inputs)
    best = float("inf")
    for _ in range(5):
        start = CLOCK()
        for _ in range(calls):
            fn(*inputs)
        best = min(best, (CLOCK() - start) / calls)
    return best


def _ratio_note(grad_amber: Callable[..., Any], forward_amber: Callable[..., Any],
                hand: Any, inputs: tuple, calls: int) -> str:
    """Backward/forward: (forward+backward time) / forward time - 1, for amber and hand."""
    fa, ga = _seconds(forward_amber, inputs, calls), _seconds(grad_amber, inputs, calls)
    fh, gh = _seconds(hand.forward, inputs, calls), _seconds(hand, inputs, calls)
    return (f"backward/forward time: amber {ga / fa - 1:.2f} (forward {fa * 1e6:,.0f} us), "
            f"numpy {gh / fh - 1:.2f} (forward {fh * 1e6:,.0f} us)")


def workloads(quick: bool) -> list[Workload]:
    """MLP, LeNet-5 and RNN-while gradients, built with seed 0."""
    amber.set_seed(0)
    rng = np.random.default_rng(0)
    scale = 1 if quick else 3
    loss = nn.SoftmaxCrossEntropyWithLogits(sparse=True, reduction="mean")
    labels = rng.integers(0, 10, BATCH).astype(np.int32)
    out = []

    mlp = Mlp()
    mlp_loss = nn.WithLossCell(mlp, loss)
    grad_mlp = amber.value_and_grad(mlp_loss, None, mlp.trainable_params())
    hand_mlp = HandMlp(mlp)
    x = rng.standard_normal((BATCH, 784)).astype(np.float32)
    out.append(Workload(
        "MLP 784-256-128-10 batch 64 gradient",
        {"eager": _pynative(grad_mlp), "amber": grad_mlp, "numpy": hand_mlp,
         **_torch_versions("mlp", mlp)}, (x, labels), 20 * scale, compare=_all_arrays,
        notes=[_ratio_note(grad_mlp, amber.jit(mlp_loss), hand_mlp, (x, labels),
                           20 * scale)]))

    lenet = LeNet5()
    lenet_loss = nn.WithLossCell(lenet, loss)
    grad_lenet = amber.value_and_grad(lenet_loss, None, lenet.trainable_params())
    hand_lenet = HandLeNet(lenet)
    images = rng.standard_normal((BATCH, 1, 32, 32)).astype(np.float32)
    out.append(Workload(
        "LeNet-5 batch 64 gradient",
        {"eager": _pynative(grad_lenet), "amber": grad_lenet, "numpy": hand_lenet,
         **_torch_versions("lenet", lenet)}, (images, labels), 2 * scale,
        compare=_all_arrays,
        notes=[_ratio_note(grad_lenet, amber.jit(lenet_loss), hand_lenet, (images, labels),
                           2 * scale)]))

    rnn = RnnLoss(EarlyStopRNN(RNN_INPUT, RNN_HIDDEN, threshold=1e6))
    grad_rnn = amber.value_and_grad(rnn, None, rnn.trainable_params())
    hand_rnn = HandRnn(rnn.rnn)
    seq = (rng.standard_normal((RNN_STEPS, RNN_BATCH, RNN_INPUT)) * 0.5).astype(np.float32)
    target = rng.standard_normal((RNN_BATCH, RNN_HIDDEN)).astype(np.float32) * 0.5
    out.append(Workload(
        f"RNN while-loop gradient (hidden {RNN_HIDDEN}, {RNN_STEPS} steps)",
        {"eager": _pynative(grad_rnn), "amber": grad_rnn, "numpy": hand_rnn,
         **_torch_versions("rnn", rnn)}, (seq, target), 5 * scale, compare=_all_arrays,
        notes=[_ratio_note(grad_rnn, amber.jit(rnn), _RnnForward(hand_rnn), (seq, target),
                           5 * scale)]))
    return out


class _RnnForward:
    """The hand RNN's forward plus its loss (what the gradient's forward part computes)."""

    def __init__(self, hand: HandRnn) -> None:
        self.hand = hand

    def forward(self, x: np.ndarray, target: np.ndarray) -> Any:
        h, _ = self.hand.forward(x)
        return ((h - target) ** 2).mean()

    def __call__(self, x: np.ndarray, target: np.ndarray) -> Any:
        return self.hand(x, target)

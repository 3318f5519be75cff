"""Forward passes: LeNet-5 (batch 1 and 64), the early-stopping RNN sample and a control-flow
micro loop, each eager vs amber vs careful hand-written NumPy."""
from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

import amber
from amber import nn
from harness import Workload

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "samples"))
from lenet import LeNet5  # noqa: E402
from rnn import EarlyStopRNN, example_inputs as rnn_inputs  # noqa: E402

TITLE = "Forward: eager vs amber vs hand-written NumPy"

LOOP_ITERATIONS = 200


class ControlLoop(nn.Cell):
    """200 iterations of an if/else on `x.sum()`: Python-level control flow dominates."""

    def construct(self, x: np.ndarray) -> np.ndarray:
        for _ in range(LOOP_ITERATIONS):
            if x.sum() > 0:
                x = x * 0.5 - 1.0
            else:
                x = x * 0.5 + 1.0
        return x


# -- hand-written NumPy references -----------------------------------------------------------

def _im2col(x: np.ndarray, k: int, out: np.ndarray) -> np.ndarray:
    """Channel-major [C, H, W] planes of a batch (x is [C, N, H, W]) -> columns [C*k*k, N*OH*OW]
    written into `out`, copied out of a strided view of the windows (`as_strided`: a fraction
    of `sliding_window_view`'s per-call checks)."""
    c, n, h, w = x.shape
    sc, sn, sh, sw = x.strides
    windows = np.lib.stride_tricks.as_strided(x, (c, k, k, n, h - k + 1, w - k + 1),
                                              (sc, sh, sw, sn, sh, sw))
    np.copyto(out.reshape(windows.shape), windows)
    return out


def _pool2(x: np.ndarray, out: np.ndarray) -> np.ndarray:
    """2x2 max pooling with stride 2 over the last two axes of contiguous `x`: the maximum of
    each pair of whole rows first, then of each pair of columns."""
    w = x.shape[-1]
    rows = x.reshape(*x.shape[:-2], x.shape[-2] // 2, 2 * w)
    tall = np.maximum(rows[..., :w], rows[..., w:])
    return np.maximum(tall[..., 0::2], tall[..., 1::2], out=out)


class HandLeNet:
    """LeNet-5 by hand: activations kept channel-major ([C, N, H, W]) so each conv is im2col +
    one GEMM with the weight on the left and no transposes in between; weights reshaped and
    transposed once; buffers preallocated per batch size; ReLU and bias applied in place."""

    def __init__(self, net: LeNet5) -> None:
        plain = {name: np.array(p) for name, p in net.parameters_and_names()}
        self.w1 = plain["conv1.weight"].reshape(6, 25)                  # [O, C*kh*kw]
        self.w2 = plain["conv2.weight"].reshape(16, 150)
        self.f1, self.b1 = plain["fc1.weight"].T.copy(), plain["fc1.bias"]
        self.f2, self.b2 = plain["fc2.weight"].T.copy(), plain["fc2.bias"]
        self.f3, self.b3 = plain["fc3.weight"].T.copy(), plain["fc3.bias"]
        self._buffers: dict[int, dict[str, np.ndarray]] = {}

    def _for_batch(self, n: int) -> dict[str, np.ndarray]:
        if n not in self._buffers:
            shapes = {"cols1": (25, n * 784), "y1": (6, n * 784), "p1": (6, n, 14, 14),
                      "cols2": (150, n * 100), "y2": (16, n * 100), "p2": (16, n, 5, 5),
                      "flat": (n, 400), "h1": (n, 120), "h2": (n, 84)}
            self._buffers[n] = {k: np.empty(v, np.float32) for k, v in shapes.items()}
        return self._buffers[n]

    def __call__(self, x: np.ndarray) -> np.ndarray:
        n = x.shape[0]
        b = self._for_batch(n)
        cols1 = _im2col(x.transpose(1, 0, 2, 3), 5, b["cols1"])
        y1 = np.matmul(self.w1, cols1, out=b["y1"])
        p1 = _pool2(y1.reshape(6, n, 28, 28), b["p1"])
        np.maximum(p1, 0, out=p1)  # NOTE: ReLU after pooling (they commute): 4x less work
        y2 = np.matmul(self.w2, _im2col(p1, 5, b["cols2"]), out=b["y2"])
        p2 = _pool2(y2.reshape(16, n, 10, 10), b["p2"])
        np.maximum(p2, 0, out=p2)
        flat = b["flat"]
        np.copyto(flat.reshape(n, 16, 5, 5), p2.transpose(1, 0, 2, 3))
        h1 = np.matmul(flat, self.f1, out=b["h1"])
        h1 += self.b1
        np.maximum(h1, 0, out=h1)
        h2 = np.matmul(h1, self.f2, out=b["h2"])
        h2 += self.b2
        np.maximum(h2, 0, out=h2)
        out = h2 @ self.f3
        out += self.b3
        return out


class HandRNN:
    """The early-stopping RNN with the input projection of every step done as one GEMM."""

    def __init__(self, net: EarlyStopRNN) -> None:
        self.wih = np.array(net.input_to_hidden.weight).T.copy()
        self.bih = np.array(net.input_to_hidden.bias)
        self.whh = np.array(net.hidden_to_hidden.weight).T.copy()
        self.threshold = net.threshold
        self.hidden = net.hidden_size

    def __call__(self, x: np.ndarray) -> tuple[np.ndarray, int]:
        xw = x @ self.wih
        xw += self.bih
        h = np.zeros((x.shape[1], self.hidden), x.dtype)
        tmp = np.empty_like(h)
        t = 0
        while t < x.shape[0]:
            np.matmul(h, self.whh, out=tmp)
            tmp += xw[t]
            h = np.tanh(tmp)
            t += 1
            if np.sqrt((h * h).sum()) > self.threshold:
                break
        return h, t


def hand_loop(x: np.ndarray) -> np.ndarray:
    """The micro loop with one buffer updated in place."""
    y = x.copy()
    for _ in range(LOOP_ITERATIONS):
        y *= 0.5
        y += -1.0 if y.sum() > 0 else 1.0  # NOTE: sum of 0.5*y has the sign of y.sum()
    return y



def workloads(quick: bool) -> list[Workload]:
    """The forward set, built with seed 0."""
    amber.set_seed(0)
    lenet = LeNet5()
    compiled_lenet, hand_lenet = amber.jit(lenet), HandLeNet(lenet)
    rng = np.random.default_rng(0)
    x1 = rng.standard_normal((1, 1, 32, 32), dtype=np.float32)
    x64 = rng.standard_normal((64, 1, 32, 32), dtype=np.float32)
    rnn = EarlyStopRNN()
    loop = ControlLoop()
    scale = 1 if quick else 4

    def versions(eager, compiled, hand):
        return {"eager": eager, "amber": compiled, "numpy": hand}

    def same_steps(out):  # the RNN returns (h, steps): both must agree
        return [np.asarray(out[0]), np.asarray(out[1])]

    return [
        Workload("LeNet-5 batch 1", versions(lenet.construct, compiled_lenet, hand_lenet), (x1,),
                 20 * scale),
        Workload("LeNet-5 batch 64", versions(lenet.construct, compiled_lenet, hand_lenet),
                 (x64,), 2 * scale),
        Workload("RNN (early stop)", versions(rnn.construct, amber.jit(rnn), HandRNN(rnn)),
                 rnn_inputs(), 10 * scale, compare=same_steps),
        Workload(f"if/else loop x{LOOP_ITERATIONS}",
                 versions(loop.construct, amber.jit(loop), hand_loop),
                 (rng.standard_normal(16).astype(np.float32),), 2 * scale),
    ]

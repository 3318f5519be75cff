"""Realistic models: the textbook Network, LeNet-5, the residual block with optional down-sampling,
RNN / LSTM with early stop, greedy decoding with break on an end token, an MLP with dropout in
train and eval modes, BatchNorm training side effects, attention, an early-exit classifier."""
import importlib.util
import sys
from pathlib import Path
from types import ModuleType

import numpy as np

from amber import nn, ops
from harness import i64, randn, runs

SAMPLES = Path(__file__).resolve().parents[2] / "samples"
"""The repository's samples, read from the checkout: the wheel does not ship them."""


def _sample(name: str) -> ModuleType:
    spec = importlib.util.spec_from_file_location(f"amber_sample_{name}", SAMPLES / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


LeNet5 = _sample("lenet").LeNet5
Network = _sample("network").Network
_resnet = _sample("resnet_block")
ResidualBlock, ResidualStage = _resnet.ResidualBlock, _resnet.ResidualStage
EarlyStopRNN = _sample("rnn").EarlyStopRNN

XAVIER = "xavier_uniform"

runs(randn(2, 28, 28), randn(1, 28, 28, seed=1))(Network)
runs(randn(1, 1, 32, 32), randn(2, 1, 32, 32, seed=1), tag="top")(LeNet5)
runs(randn(1, 1, 32, 32), randn(3, 1, 32, 32, seed=2), init=(10, 1, False), tag="features")(
    LeNet5)
runs(randn(2, 16, 8, 8), randn(1, 16, 5, 5, seed=3), init=(16, 32, 2), tag="downsample")(
    ResidualBlock)
runs(randn(1, 32, 6, 6), randn(2, 32, 4, 4, seed=1), init=(32, 32, 1), tag="identity")(
    ResidualBlock)
runs(randn(2, 16, 8, 8), randn(4, 16, 4, 4, seed=5), init=(16, 32, 2), train=True, tag="train")(
    ResidualBlock)
runs(randn(2, 16, 16, 16), randn(1, 16, 8, 8, seed=4))(ResidualStage)
RAMP = np.linspace(0.05, 3.0, 24, dtype=np.float32).reshape(24, 1, 1)
runs(randn(24, 2, 8) * RAMP, randn(5, 3, 8, seed=2, scale=0.1), randn(0, 2, 8))(EarlyStopRNN)


@runs(randn(6, 2, 4), randn(1, 3, 4, seed=1))
class StackedLSTM(nn.Cell):
    """Two-layer LSTM (the library layer, loops over time inside) and a linear head."""

    def __init__(self):
        super().__init__()
        self.lstm = nn.LSTM(4, 8, num_layers=2)
        self.head = nn.Dense(8, 3, XAVIER)

    def construct(self, x):
        out, (h, c) = self.lstm(x)
        return self.head(out[-1]), h, c


@runs(randn(2, 5, 4), randn(3, 1, 4, seed=3))
class BidirectionalRNN(nn.Cell):
    def __init__(self):
        super().__init__()
        self.rnn = nn.RNN(4, 6, batch_first=True, bidirectional=True, nonlinearity="relu")

    def construct(self, x):
        out, h = self.rnn(x)
        return out.mean(axis=1), h


@runs(randn(10, 2, 4, scale=0.1), randn(10, 2, 4, seed=1, scale=4.0), randn(1, 1, 4, seed=2))
class LSTMEarlyStop(nn.Cell):
    """A hand-written LSTM cell stepping until the hidden state saturates."""

    def __init__(self, input_size=4, hidden=5, threshold=0.5):
        super().__init__()
        self.hidden = hidden
        self.threshold = threshold
        self.gates = nn.Dense(input_size + hidden, 4 * hidden, XAVIER)

    def construct(self, x):
        n = self.hidden
        h = ops.zeros((x.shape[1], n), x.dtype)
        c = h
        steps = 0
        for t in range(x.shape[0]):
            z = self.gates(ops.concat((x[t], h), -1))
            i, f, g, o = ops.sigmoid(z[:, :n]), ops.sigmoid(z[:, n:2 * n]), \
                ops.tanh(z[:, 2 * n:3 * n]), ops.sigmoid(z[:, 3 * n:])
            c = f * c + i * g
            h = o * ops.tanh(c)
            steps += 1
            if np.abs(h).max() > self.threshold:
                break
        return h, c, steps


@runs(i64(0), i64(3), i64(7), i64(5))
@runs(i64(1), i64(6), i64(7), init=(3,), tag="short")
class GreedyDecoder(nn.Cell):
    """Embed the token, update a tanh RNN state, pick the arg-max next token; stop at END."""

    def __init__(self, max_len=12, vocab=8, hidden=6):
        super().__init__()
        self.max_len = max_len
        self.end = vocab - 1
        self.embed = nn.Embedding(vocab, hidden)
        self.cell = nn.Dense(2 * hidden, hidden, XAVIER, activation="tanh")
        self.out = nn.Dense(hidden, vocab, weight_init="normal")
        # NOTE: a shift matrix dominates the logits, so token t is followed by t + 1 (mod vocab):
        # every start token reaches END, after a start-dependent number of steps.
        self.shift = np.roll(np.eye(vocab, dtype=np.float32), 1, axis=1) * 10.0

    def construct(self, start):
        token = start
        h = ops.zeros((self.cell.out_channels,), np.float32)
        tokens = []
        for step in range(self.max_len):
            e = self.embed(token)
            h = self.cell(ops.concat((e, h), -1))
            logits = self.out(h) + self.shift[token]
            token = np.argmax(logits)
            tokens.append(token)
            if token == self.end:
                break
        return np.stack(tokens), len(tokens)


@runs(randn(4, 10), randn(1, 10, seed=1), train=True, tag="train")
@runs(randn(4, 10), randn(1, 10, seed=1), tag="eval")
class DropoutMLP(nn.Cell):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Dense(10, 16, XAVIER, activation="relu")
        self.drop = nn.Dropout(p=0.5)
        self.fc2 = nn.Dense(16, 16, XAVIER, activation="relu")
        self.drop2 = nn.Dropout(keep_prob=0.8)
        self.fc3 = nn.Dense(16, 3, XAVIER)

    def construct(self, x):
        h = self.drop(self.fc1(x))
        h = self.drop2(self.fc2(h))
        return self.fc3(h)


@runs(randn(8, 6), randn(3, 6, seed=1, scale=3.0), train=True, tag="train")
@runs(randn(8, 6), randn(2, 6, seed=2), tag="eval")
class BatchNormClassifier(nn.Cell):
    """BatchNorm1d updates its moving statistics in training mode (a side effect on
    parameters the harness compares after every call)."""

    def __init__(self):
        super().__init__()
        self.fc = nn.Dense(6, 5, XAVIER)
        self.bn = nn.BatchNorm1d(5)
        self.head = nn.Dense(5, 2, XAVIER)

    def construct(self, x):
        return self.head(ops.relu(self.bn(self.fc(x))))


@runs(randn(2, 5, 8), randn(1, 3, 8, seed=4))
class CausalSelfAttention(nn.Cell):
    def __init__(self, dim=8):
        super().__init__()
        self.q = nn.Dense(dim, dim, XAVIER)
        self.k = nn.Dense(dim, dim, XAVIER)
        self.v = nn.Dense(dim, dim, XAVIER)
        self.norm = nn.LayerNorm((dim,))
        self.scale = 1.0 / float(np.sqrt(dim))

    def construct(self, x):
        t = x.shape[1]
        scores = self.q(x) @ np.transpose(self.k(x), (0, 2, 1)) * self.scale
        pos = np.arange(t)
        mask = pos[None, :] > pos[:, None]
        scores = np.where(mask, -1e9, scores)
        att = ops.softmax(scores, -1)
        return self.norm(x + att @ self.v(x))


@runs(randn(1, 6), randn(1, 6, seed=5, scale=8.0), randn(1, 6, seed=1, scale=4.0), randn(2, 6))
class EarlyExitClassifier(nn.Cell):
    """Stages of a SequentialCell; return as soon as a stage's classifier is confident."""

    def __init__(self, threshold=0.6):
        super().__init__()
        self.threshold = threshold
        self.stages = nn.CellList([nn.Dense(6, 6, XAVIER, activation="relu") for _ in range(3)])
        self.heads = nn.CellList([nn.Dense(6, 4, XAVIER) for _ in range(3)])

    def construct(self, x):
        h = x
        for k in range(3):
            h = self.stages[k](h)
            p = ops.softmax(self.heads[k](h), -1)
            if p.max() > self.threshold:
                return p, k
        return p, 3


@runs(randn(3, 8), randn(2, 8, seed=7))
class ResidualMLP(nn.Cell):
    """A CellList walked by `for layer in`, adding a residual when the shapes match."""

    def __init__(self):
        super().__init__()
        self.layers = nn.CellList([nn.Dense(8, 8, XAVIER), nn.Dense(8, 4, XAVIER),
                                   nn.Dense(4, 4, XAVIER)])
        self.act = nn.GELU()

    def construct(self, x):
        h = x
        for layer in self.layers:
            out = self.act(layer(h))
            if out.shape == h.shape:
                out = out + h
            h = out
        return h


def test_program(program, check_program):
    """Compiled and eager agree on every input."""
    check_program(program)

"""Training: one SGD step (forward, backward, update in place) of the MLP 784-256-128-10 and of
LeNet-5, batch 64, softmax cross-entropy: eager vs amber (`amber.jit(nn.TrainOneStepCell(...))`,
one generated function) vs careful hand-written NumPy with preallocated buffers, and torch / JAX /
MindSpore (GRAPH_MODE) where installed.

Each version trains its own copy of the same initial weights; the first step of every version is
checked against eager's (the loss and an updated weight), then the versions are timed step by step
(they keep training, so later losses differ)."""
from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from typing import Any, Callable

import numpy as np

import amber
from amber import nn
from harness import Workload

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "samples"))
from lenet import LeNet5  # noqa: E402

TITLE = "Train step (SGD): eager vs amber vs hand-written NumPy (and peers where installed)"

LR = 0.01
BATCH = 64


class MLP(nn.Cell):
    """784-256-128-10 with ReLU."""

    def __init__(self) -> None:
        super().__init__()
        self.fc1 = nn.Dense(784, 256, activation="relu")
        self.fc2 = nn.Dense(256, 128, activation="relu")
        self.fc3 = nn.Dense(128, 10)

    def construct(self, x: np.ndarray) -> np.ndarray:
        return self.fc3(self.fc2(self.fc1(x)))


def train_step(net: nn.Cell) -> nn.TrainOneStepCell:
    """What a MindSpore user writes: the loss, SGD, one step."""
    loss = nn.WithLossCell(net, nn.SoftmaxCrossEntropyWithLogits(sparse=True, reduction="mean"))
    return nn.TrainOneStepCell(loss, nn.SGD(net.trainable_params(), LR))


# -- hand-written NumPy ------------------------------------------------------------------------

def _softmax_xent_grad(out: np.ndarray, labels: np.ndarray, d: np.ndarray) -> float:
    """The mean cross entropy of `out` [N, C]; writes its gradient w.r.t. `out` into `d`."""
    n = out.shape[0]
    np.subtract(out, out.max(axis=1, keepdims=True), out=d)
    np.exp(d, out=d)
    total = d.sum(axis=1, keepdims=True)
    rows = np.arange(n)
    loss = float(np.mean(np.log(total[:, 0]) - np.log(d[rows, labels])))
    d /= total
    d[rows, labels] -= 1.0
    d *= 1.0 / n
    return np.float32(loss)


class HandMLPStep:
    """Forward, backward and SGD update of the MLP with every buffer preallocated, weights in
    their [out, in] layout (BLAS reads the transposes), gradients scaled and subtracted in place."""

    def __init__(self, net: MLP, n: int) -> None:
        self.w = [np.array(l.weight) for l in (net.fc1, net.fc2, net.fc3)]
        self.b = [np.array(l.bias) for l in (net.fc1, net.fc2, net.fc3)]
        sizes = [w.shape[0] for w in self.w]
        self.h = [np.empty((n, s), np.float32) for s in sizes]
        self.d = [np.empty((n, s), np.float32) for s in sizes]
        self.dw = [np.empty_like(w) for w in self.w]

    def __call__(self, x: np.ndarray, labels: np.ndarray) -> tuple[Any, np.ndarray]:
        w, b, h, d, dw = self.w, self.b, self.h, self.d, self.dw
        inputs = [x, h[0], h[1]]
        for k in range(3):
            np.matmul(inputs[k], w[k].T, out=h[k])
            h[k] += b[k]
            if k < 2:
                np.maximum(h[k], 0, out=h[k])
        loss = _softmax_xent_grad(h[2], labels, d[2])
        for k in (2, 1, 0):
            np.matmul(d[k].T, inputs[k], out=dw[k])
            db = d[k].sum(axis=0)
            if k:
                np.matmul(d[k], w[k], out=d[k - 1])
                d[k - 1] *= h[k - 1] > 0
            dw[k] *= LR
            w[k] -= dw[k]
            db *= LR
            b[k] -= db
        return loss, w[0]


def _windows(x: np.ndarray, k: int) -> np.ndarray:
    """[C, N, H, W] -> a strided view [C, k, k, N, OH, OW] of every k x k window."""
    c, n, h, w = x.shape
    sc, sn, sh, sw = x.strides
    return np.lib.stride_tricks.as_strided(x, (c, k, k, n, h - k + 1, w - k + 1),
                                           (sc, sh, sw, sn, sh, sw))


def _pool2(x: np.ndarray, out: np.ndarray) -> np.ndarray:
    """2x2 max pooling, stride 2, of contiguous [C, N, H, W] into `out`: the maximum of each
    pair of whole rows first (long contiguous runs), then of each pair of columns."""
    c, n, h, w = x.shape
    rows = x.reshape(c, n, h // 2, 2 * w)
    tall = np.maximum(rows[..., :w], rows[..., w:])
    return np.maximum(tall[..., 0::2], tall[..., 1::2], out=out)


def _unpool2(x: np.ndarray, pooled: np.ndarray, grad: np.ndarray, out: np.ndarray) -> None:
    """The gradient of `_pool2` into `out` [C, N, H, W]: `grad` where `x` held its window's max
    (one strided quarter of the windows at a time)."""
    for i in (0, 1):
        for j in (0, 1):
            np.multiply(x[..., i::2, j::2] == pooled, grad, out=out[..., i::2, j::2])


class HandLeNetStep:
    """LeNet-5's forward, backward and SGD update by hand: activations channel-major
    ([C, N, H, W]) so each convolution is im2col plus one GEMM; ReLU after pooling (they
    commute); the pooling gradient routed by a max mask; col2im as 25 strided adds; every
    buffer preallocated."""

    def __init__(self, net: LeNet5, n: int) -> None:
        p = {name: np.array(v) for name, v in net.parameters_and_names()}
        self.c1, self.c2 = p["conv1.weight"], p["conv2.weight"]          # [6,1,5,5], [16,6,5,5]
        self.f = [p["fc1.weight"], p["fc2.weight"], p["fc3.weight"]]
        self.b = [p["fc1.bias"], p["fc2.bias"], p["fc3.bias"]]
        e = lambda *s: np.empty(s, np.float32)  # noqa: E731
        self.cols1, self.y1, self.p1 = e(25, n * 784), e(6, n, 28, 28), e(6, n, 14, 14)
        self.cols2, self.y2, self.p2 = e(150, n * 100), e(16, n, 10, 10), e(16, n, 5, 5)
        self.flat = e(n, 400)
        self.h = [e(n, 120), e(n, 84), e(n, 10)]
        self.d = [e(n, 120), e(n, 84), e(n, 10)]
        self.dflat, self.dy2, self.dp1, self.dy1 = e(n, 400), e(16, n, 10, 10), \
            e(6, n, 14, 14), e(6, n, 28, 28)
        self.dcols2 = e(150, n * 100)
        self.dc1, self.dc2 = np.empty_like(self.c1), np.empty_like(self.c2)
        self.df = [np.empty_like(w) for w in self.f]

    def __call__(self, x: np.ndarray, labels: np.ndarray) -> tuple[Any, np.ndarray]:
        n = x.shape[0]
        np.copyto(self.cols1.reshape(1, 5, 5, n, 28, 28), _windows(x.transpose(1, 0, 2, 3), 5))
        np.matmul(self.c1.reshape(6, 25), self.cols1, out=self.y1.reshape(6, n * 784))
        _pool2(self.y1, self.p1)
        np.maximum(self.p1, 0, out=self.p1)
        np.copyto(self.cols2.reshape(6, 5, 5, n, 10, 10), _windows(self.p1, 5))
        np.matmul(self.c2.reshape(16, 150), self.cols2, out=self.y2.reshape(16, n * 100))
        _pool2(self.y2, self.p2)
        np.maximum(self.p2, 0, out=self.p2)
        np.copyto(self.flat.reshape(n, 16, 5, 5), self.p2.transpose(1, 0, 2, 3))
        inputs = [self.flat, self.h[0], self.h[1]]
        for k in range(3):
            np.matmul(inputs[k], self.f[k].T, out=self.h[k])
            self.h[k] += self.b[k]
            if k < 2:
                np.maximum(self.h[k], 0, out=self.h[k])
        loss = _softmax_xent_grad(self.h[2], labels, self.d[2])
        grads = []
        for k in (2, 1, 0):
            np.matmul(self.d[k].T, inputs[k], out=self.df[k])
            grads.append((self.f[k], self.df[k]))
            grads.append((self.b[k], self.d[k].sum(axis=0)))
            if k:
                np.matmul(self.d[k], self.f[k], out=self.d[k - 1])
                self.d[k - 1] *= self.h[k - 1] > 0
        np.matmul(self.d[0], self.f[0], out=self.dflat)
        dp2 = self.dflat.reshape(n, 16, 5, 5).transpose(1, 0, 2, 3) * (self.p2 > 0)
        _unpool2(self.y2, self.p2, dp2, self.dy2)
        dy2 = self.dy2.reshape(16, n * 100)
        np.matmul(dy2, self.cols2.T, out=self.dc2.reshape(16, 150))
        grads.append((self.c2, self.dc2))
        np.matmul(self.c2.reshape(16, 150).T, dy2, out=self.dcols2)
        self.dp1.fill(0.0)
        cols = self.dcols2.reshape(6, 5, 5, n, 10, 10)
        for i in range(5):
            for j in range(5):
                self.dp1[:, :, i:i + 10, j:j + 10] += cols[:, i, j]
        self.dp1 *= self.p1 > 0
        _unpool2(self.y1, self.p1, self.dp1, self.dy1)
        np.matmul(self.dy1.reshape(6, n * 784), self.cols1.T, out=self.dc1.reshape(6, 25))
        grads.append((self.c1, self.dc1))
        for param, grad in grads:
            grad *= LR
            param -= grad
        return loss, self.c1


# -- peers ---------------------------------------------------------------------------------------

def _installed(name: str) -> bool:
    return importlib.util.find_spec(name) is not None


def torch_step(net: nn.Cell, kind: str) -> Callable[..., Any] | None:
    """The same model in torch (weights copied), one `loss.backward(); opt.step()`."""
    if not _installed("torch"):
        return None
    import torch
    torch.set_num_threads(1)
    p = {name: torch.tensor(np.array(v)) for name, v in net.parameters_and_names()}
    F = torch.nn.functional
    if kind == "mlp":
        def model(x):
            x = F.relu(F.linear(x, p["fc1.weight"], p["fc1.bias"]))
            x = F.relu(F.linear(x, p["fc2.weight"], p["fc2.bias"]))
            return F.linear(x, p["fc3.weight"], p["fc3.bias"])
        first = "fc1.weight"
    else:
        def model(x):
            x = F.max_pool2d(F.relu(F.conv2d(x, p["conv1.weight"])), 2)
            x = F.max_pool2d(F.relu(F.conv2d(x, p["conv2.weight"])), 2)
            x = x.flatten(1)
            x = F.relu(F.linear(x, p["fc1.weight"], p["fc1.bias"]))
            x = F.relu(F.linear(x, p["fc2.weight"], p["fc2.bias"]))
            return F.linear(x, p["fc3.weight"], p["fc3.bias"])
        first = "conv1.weight"
    for v in p.values():
        v.requires_grad_(True)
    opt = torch.optim.SGD(list(p.values()), lr=LR)

    def step(x: np.ndarray, labels: np.ndarray) -> tuple[Any, np.ndarray]:
        opt.zero_grad(set_to_none=True)
        loss = F.cross_entropy(model(torch.from_numpy(x)), torch.from_numpy(labels).long())
        loss.backward()
        opt.step()
        return loss.detach().numpy(), lambda: p[first].detach().numpy()
    return step


def jax_step(net: nn.Cell, kind: str) -> Callable[..., Any] | None:
    """The same model in JAX: `jax.jit` of value_and_grad plus the update (buffers donated)."""
    if not _installed("jax"):
        return None
    import jax
    import jax.numpy as jnp
    jax.config.update("jax_platforms", "cpu")
    params = {name.replace(".", "_"): jnp.asarray(np.array(v))
              for name, v in net.parameters_and_names()}

    def dense(x, p, name):
        return x @ p[f"{name}_weight"].T + p[f"{name}_bias"]

    def pool(x):
        return jax.lax.reduce_window(x, -jnp.inf, jax.lax.max, (1, 1, 2, 2), (1, 1, 2, 2),
                                     "VALID")

    def conv(x, w):
        return jax.lax.conv_general_dilated(x, w, (1, 1), "VALID")

    def forward(p, x):
        if kind == "lenet":
            x = pool(jax.nn.relu(conv(x, p["conv1_weight"])))
            x = pool(jax.nn.relu(conv(x, p["conv2_weight"])))
            x = x.reshape(x.shape[0], -1)
            x = jax.nn.relu(dense(x, p, "fc1"))
            x = jax.nn.relu(dense(x, p, "fc2"))
            return dense(x, p, "fc3")
        x = jax.nn.relu(dense(x, p, "fc1"))
        x = jax.nn.relu(dense(x, p, "fc2"))
        return dense(x, p, "fc3")

    def loss_fn(p, x, y):
        logp = jax.nn.log_softmax(forward(p, x))
        return -jnp.mean(jnp.take_along_axis(logp, y[:, None], axis=1))

    @jax.jit
    def update(p, x, y):
        loss, g = jax.value_and_grad(loss_fn)(p, x, y)
        return loss, jax.tree_util.tree_map(lambda a, b: a - LR * b, p, g)

    update = jax.jit(update, donate_argnums=0)
    state = {"p": params}
    first = "fc1_weight" if kind == "mlp" else "conv1_weight"

    def step(x: np.ndarray, labels: np.ndarray) -> tuple[Any, np.ndarray]:
        loss, state["p"] = update(state["p"], x, labels)
        loss.block_until_ready()  # NOTE: JAX dispatches asynchronously
        return loss, lambda: np.asarray(state["p"][first])
    return step


def mindspore_step(net: nn.Cell, kind: str) -> Callable[..., Any] | None:
    """The same model in MindSpore GRAPH_MODE (weights copied): its own TrainOneStepCell."""
    if not _installed("mindspore"):
        return None
    import mindspore as ms
    from mindspore import nn as msnn
    ms.set_context(mode=ms.GRAPH_MODE, device_target="CPU")

    class Model(msnn.Cell):
        def __init__(self) -> None:
            super().__init__()
            if kind == "lenet":
                self.conv1 = msnn.Conv2d(1, 6, 5, pad_mode="valid")
                self.conv2 = msnn.Conv2d(6, 16, 5, pad_mode="valid")
                self.pool = msnn.MaxPool2d(kernel_size=2, stride=2)
                self.fc1 = msnn.Dense(400, 120)
                self.fc2 = msnn.Dense(120, 84)
                self.fc3 = msnn.Dense(84, 10)
            else:
                self.fc1 = msnn.Dense(784, 256)
                self.fc2 = msnn.Dense(256, 128)
                self.fc3 = msnn.Dense(128, 10)
            self.relu = msnn.ReLU()

        def construct(self, x):
            if kind == "lenet":
                x = self.pool(self.relu(self.conv1(x)))
                x = self.pool(self.relu(self.conv2(x)))
                x = x.reshape(x.shape[0], -1)
            x = self.relu(self.fc1(x))
            return self.fc3(self.relu(self.fc2(x)))

    model = Model()
    theirs = dict(model.parameters_and_names())
    for name, p in net.parameters_and_names():
        theirs[name].set_data(ms.Tensor(np.array(p)))
    loss = msnn.WithLossCell(model, msnn.SoftmaxCrossEntropyWithLogits(sparse=True,
                                                                       reduction="mean"))
    step = msnn.TrainOneStepCell(loss, msnn.SGD(model.trainable_params(), LR))
    first = theirs["fc1.weight" if kind == "mlp" else "conv1.weight"]

    def run(x: np.ndarray, labels: np.ndarray) -> tuple[Any, Any]:
        return step(ms.Tensor(x), ms.Tensor(labels)).asnumpy(), lambda: first.asnumpy()
    return run


# -- the suite -----------------------------------------------------------------------------------

def _versions(make: Callable[[], nn.Cell], kind: str, hand: Callable[..., Any]
              ) -> tuple[dict[str, Callable[..., Any]], _KeptMemory]:
    """Each version on its own copy of the seed-0 weights; the note on memory kept."""
    def fresh() -> nn.Cell:
        amber.set_seed(0)
        return make()

    eager_net = fresh()
    eager_step = train_step(eager_net)
    amber_net = fresh()
    amber_step = amber.jit(train_step(amber_net))
    first = "fc1" if kind == "mlp" else "conv1"

    def eager(x, y):
        amber.set_context(jit_enabled=False)
        try:
            return eager_step(x, y), getattr(eager_net, first).weight
        finally:
            amber.set_context(jit_enabled=True)

    def compiled(x, y):
        return amber_step(x, y), getattr(amber_net, first).weight

    hand_step = hand(fresh(), BATCH)
    versions = {"eager": eager, "amber": compiled, "numpy": hand_step}
    for label, peer in (("torch", torch_step), ("jax", jax_step),
                        ("mindspore", mindspore_step)):
        fn = peer(fresh(), kind)
        if fn is not None:
            versions[label] = fn
    return versions, _KeptMemory(amber_step, hand_step)


class _KeptMemory:
    """The note on memory kept between calls, which the peak of one call does not show: amber's
    idle buffer sets (codegen/buffers.py) and the hand code's preallocated buffers (weights
    aside). Read when printed, after the calls."""

    def __init__(self, step: Any, hand: Any) -> None:
        self.step, self.hand = step, hand

    def __str__(self) -> str:
        from amber.codegen.buffers import kept_bytes
        ours = kept_bytes(self.step.last.fn) if self.step.last is not None else 0
        weights = {"w", "b", "c1", "c2", "f"}
        theirs = sum(a.nbytes for name, v in vars(self.hand).items() if name not in weights
                     for a in (v if isinstance(v, list) else [v]) if isinstance(a, np.ndarray))
        return (f"kept between calls (not in the peak): amber's buffers {ours / 1024:,.1f} KiB, "
                f"numpy's preallocated buffers {theirs / 1024:,.1f} KiB")


def workloads(quick: bool) -> list[Workload]:
    """The train-step set: MLP and LeNet-5, batch 64, seed 0."""
    rng = np.random.default_rng(0)
    labels = rng.integers(0, 10, BATCH).astype(np.int32)
    x_mlp = rng.standard_normal((BATCH, 784), dtype=np.float32)
    x_lenet = rng.standard_normal((BATCH, 1, 32, 32), dtype=np.float32)
    compare = lambda out: [np.asarray(out[0]), np.asarray(out[1]() if callable(out[1])  # noqa: E731
                                                          else out[1])]
    calls = 2 if quick else 8
    (mlp, mlp_kept), (lenet, lenet_kept) = (_versions(MLP, "mlp", HandMLPStep),
                                            _versions(LeNet5, "lenet", HandLeNetStep))
    return [
        Workload("train step, MLP 784-256-128-10, batch 64", mlp, (x_mlp, labels), calls,
                 compare=compare, rtol=1e-4, atol=1e-5, notes=[mlp_kept]),
        Workload("train step, LeNet-5, batch 64", lenet, (x_lenet, labels), calls,
                 compare=compare, rtol=1e-4, atol=1e-5, notes=[lenet_kept]),
    ]

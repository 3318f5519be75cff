"""Forward inference on three backends: amber's NumPy code, amber's onnxruntime backend (the
graph's ONNX model in one InferenceSession) and JAX (jax.jit of the same network written with
jax.numpy and lax, where JAX is installed), on LeNet-5 and a small ResNet (three residual
stages of bottleneck blocks, BatchNorm folded by nothing but the backends themselves), batch 1
and 32. Eager Python is the reference each version is checked against.

    python benchmarks/run.py --only inference
(The module is not named onnx.py: run.py puts this directory first on sys.path.)
"""
from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from typing import Any, Callable

import numpy as np

import amber
from amber import nn, ops
from harness import Workload

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "samples"))
from lenet import LeNet5  # noqa: E402
from resnet_block import ResidualBlock  # noqa: E402

TITLE = "Forward inference: NumPy backend vs onnxruntime backend vs JAX"


class SmallResNet(nn.Cell):
    """A 3x3 stem, three residual stages (16, 32, 64 channels; the last two down-sample by 2),
    global average pooling and a classifier: CIFAR-sized, as in the issue."""

    def __init__(self, num_classes: int = 10) -> None:
        super().__init__()
        self.stem = nn.Conv2d(3, 16, 3, pad_mode="same", weight_init="he_normal")
        self.bn = nn.BatchNorm2d(16)
        self.relu = nn.ReLU()
        self.stage1 = ResidualBlock(16, 16, stride=1)
        self.stage2 = ResidualBlock(16, 32, stride=2)
        self.stage3 = ResidualBlock(32, 64, stride=2)
        self.fc = nn.Dense(64, num_classes)

    def construct(self, x: np.ndarray) -> np.ndarray:
        x = self.relu(self.bn(self.stem(x)))
        x = self.stage3(self.stage2(self.stage1(x)))
        return self.fc(ops.reduce_mean(x, (2, 3)))


def workloads(quick: bool) -> list[Workload]:
    amber.set_seed(0)
    rng = np.random.default_rng(0)
    found = []
    for name, net, shape in (("LeNet-5", LeNet5(), (1, 32, 32)),
                             ("ResNet-3stage", SmallResNet(), (3, 32, 32))):
        net.set_train(False)
        for batch in (1, 32):
            x = rng.standard_normal((batch, *shape)).astype(np.float32)
            versions: dict[str, Callable[..., Any]] = {
                "eager": net.construct,
                "amber": amber.jit(net, backend="numpy"),
                "onnxruntime": amber.jit(net, backend="onnxruntime"),
            }
            jax_version = jax_forward(net)
            if jax_version is not None:
                versions["jax"] = jax_version
            calls = 1 if batch == 32 or quick else 5
            found.append(Workload(f"{name} forward, batch {batch}", versions, (x,), calls))
    return found


# -- JAX: the same networks, parameters read from the amber net ------------------------------

def _installed(name: str) -> bool:
    return importlib.util.find_spec(name) is not None


def jax_forward(net: nn.Cell) -> Callable[[np.ndarray], Any] | None:
    """jax.jit of `net`'s forward (LeNet-5 or SmallResNet), or None without JAX."""
    if not _installed("jax"):
        return None
    import jax
    import jax.numpy as jnp
    jax.config.update("jax_platforms", "cpu")
    params = {name: jnp.asarray(p.asnumpy()) for name, p in net.parameters_and_names()}

    def conv(x, prefix, stride=1, same=True):
        w = params[f"{prefix}.weight"]
        pad = "SAME" if same else "VALID"
        y = jax.lax.conv_general_dilated(x, w, (stride, stride), pad)
        return y + params[f"{prefix}.bias"][None, :, None, None] \
            if f"{prefix}.bias" in params else y

    def bn(x, prefix, eps=1e-5):
        p = lambda k: params[f"{prefix}.{k}"][None, :, None, None]
        return (x - p("moving_mean")) / jnp.sqrt(p("moving_variance") + eps) * p("gamma") \
            + p("beta")

    def dense(x, prefix):
        return x @ params[f"{prefix}.weight"].T + params[f"{prefix}.bias"]

    def pool(x):
        return jax.lax.reduce_window(x, -jnp.inf, jax.lax.max, (1, 1, 2, 2), (1, 1, 2, 2),
                                     "VALID")

    def block(x, prefix, down, stride):
        out = jax.nn.relu(bn(conv(x, f"{prefix}.conv1"), f"{prefix}.bn1"))
        out = jax.nn.relu(bn(conv(out, f"{prefix}.conv2", stride), f"{prefix}.bn2"))
        out = bn(conv(out, f"{prefix}.conv3"), f"{prefix}.bn3")
        if down:
            x = bn(conv(x, f"{prefix}.down_sample_layer.0", stride),
                   f"{prefix}.down_sample_layer.1")
        return jax.nn.relu(out + x)

    if isinstance(net, LeNet5):
        def forward(x):
            x = pool(jax.nn.relu(conv(x, "conv1", same=False)))
            x = pool(jax.nn.relu(conv(x, "conv2", same=False)))
            x = x.reshape(x.shape[0], -1)
            x = jax.nn.relu(dense(x, "fc1"))
            x = jax.nn.relu(dense(x, "fc2"))
            return dense(x, "fc3")
    else:
        def forward(x):
            x = jax.nn.relu(bn(conv(x, "stem"), "bn"))
            for prefix, stride in (("stage1", 1), ("stage2", 2), ("stage3", 2)):
                x = block(x, prefix, getattr(net, prefix).down_sample, stride)
            return dense(x.mean(axis=(2, 3)), "fc")
    compiled = jax.jit(forward)
    return lambda x: np.asarray(compiled(x).block_until_ready())

"""Symbolic sizes: code compiled once for every batch size ("amber", a symbolic batch N) against
code compiled for the one batch size being run ("static", `jit(dynamic=False)`), on the same
inputs in the same run: LeNet-5 at batch 64, the early-stopping RNN at batch 64 (its axis 1), a
LeNet train step at batch 32, and LeNet-5 over a mix of batch sizes (one call each). Each
workload notes how many compiles each version made.
"""
from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import numpy as np

import amber
from amber import nn
from harness import Workload

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "samples"))
from lenet import LeNet5  # noqa: E402
from rnn import EarlyStopRNN  # noqa: E402

TITLE = "Symbolic batch: eager vs amber (one compile for every batch size) vs static amber"

MIXED = (1, 7, 13, 32, 64)
"""The batch sizes of the mixed workload, one call each."""


def _images(n: int, seed: int) -> np.ndarray:
    return np.random.default_rng(seed).standard_normal((n, 1, 32, 32), dtype=np.float32)


def _sequence(n: int) -> np.ndarray:
    rng = np.random.default_rng(n)
    ramp = np.linspace(0.05, 3.0, 24, dtype=np.float32).reshape(24, 1, 1)
    return rng.standard_normal((24, n, 8), dtype=np.float32) * ramp / np.float32(np.sqrt(n))


def _compiles(**fns: Any) -> str:
    return "compiles: " + ", ".join(f"{label} {fn.stats.compiles}" for label, fn in fns.items())


def _lenet(scale: int) -> list[Workload]:
    amber.set_seed(0)
    net = LeNet5()
    symbolic = amber.jit(net, dynamic={"x": 0})
    static = amber.jit(net, dynamic=False)
    for n in MIXED:  # NOTE: compile the symbolic code once, from the first size
        symbolic(_images(n, n))
    x64 = _images(64, 0)
    batch64 = Workload("LeNet-5 batch 64", {"eager": net.construct, "amber": symbolic,
                                            "static": static}, (x64,), 4 * scale)
    mixed = [_images(n, n) for n in MIXED]
    for x in mixed:
        static(x)

    def each(fn: Any) -> Any:
        return lambda xs: [fn(x) for x in xs]

    mix = Workload(f"LeNet-5 over batch sizes {MIXED}, one call each",
                   {"eager": each(net.construct), "amber": each(symbolic),
                    "static": each(static)}, (mixed,), scale,
                   compare=lambda outs: [np.concatenate(outs)])
    batch64.notes.append(_compiles(amber=symbolic, static=static)
                         + f" (after sizes {MIXED}: the symbolic code serves them all)")
    return [batch64, mix]


def _rnn(scale: int) -> Workload:
    amber.set_seed(0)
    net = EarlyStopRNN()
    symbolic = amber.jit(net, dynamic={"x": 1})
    symbolic(_sequence(3))
    static = amber.jit(net, dynamic=False)
    work = Workload("RNN (early stop) batch 64", {"eager": net.construct, "amber": symbolic,
                                                  "static": static}, (_sequence(64),),
                    40 * scale,
                    compare=lambda out: [np.asarray(out[0]), np.asarray(out[1])])
    work.notes.append("the symbolic code was compiled at batch 3")
    return work


def _train(scale: int) -> Workload:
    def step() -> nn.TrainOneStepCell:
        amber.set_seed(0)
        net = LeNet5()
        loss = nn.WithLossCell(net, nn.SoftmaxCrossEntropyWithLogits(sparse=True,
                                                                     reduction="mean"))
        return nn.TrainOneStepCell(loss, nn.SGD(net.trainable_params(), 0.01))

    declared = step()
    declared.set_inputs(amber.Tensor(shape=[None, 1, 32, 32], dtype=amber.float32),
                        amber.Tensor(shape=[None], dtype=amber.int32))
    symbolic, static = amber.jit(declared), amber.jit(step(), dynamic=False)
    rng = np.random.default_rng(0)
    labels = rng.integers(0, 10, 32).astype(np.int32)
    work = Workload("LeNet-5 train step batch 32 (set_inputs)",
                    {"eager": step().construct, "amber": symbolic, "static": static},
                    (_images(32, 1), labels), scale, rtol=1e-3, atol=1e-4)
    work.notes.append("each version trains its own copy; the first step's losses are checked")
    return work


def workloads(quick: bool) -> list[Workload]:
    """The symbolic-size set, built with seed 0."""
    scale = 1 if quick else 3
    return [*_lenet(scale), _rnn(scale), _train(scale)]

"""Random small convolution nets in MindSpore style, for `test_random_conv_nets.py`.

`random_spec(rng)` draws a net: an input (channels, height, width), a few layers — Conv2d with
any kernel 1..5 (rectangular too), stride 1..3, pad_mode same/valid/pad (asymmetric pads),
dilation, groups and bias; ReLU; a residual block whose skip is the identity or a strided 1x1
projection; MaxPool2d/AvgPool2d — then a head (the map itself, mean over H and W, or a flatten
or reshape into a Dense layer); batch sizes at and just above the block and band sizes the
kernels use; float32 or float64. `build(spec)` makes the Cell with weights drawn from the
spec's seed, so two builds are the same net. `spec.source()` prints the net as the Python a
user would write: the program of a failure report.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

import amber
from amber import nn

CHANNELS = (1, 2, 3, 4, 5, 8, 15, 16, 17, 24, 31, 32, 33, 48, 64, 70)
"""Input and output channels: both sides of the thresholds (pixel pairs at <= 16 output
channels, window rows at >= 16 input channels, row taps at <= 32 or >= 16 pixels across)."""
BATCHES = (1, 2, 3, 4, 5, 7, 8, 9, 15, 16, 17, 23, 24, 25, 33, 40)
"""Batch sizes around the image blocks (powers of two, 7, 24) and the thread splits."""


@dataclass
class Spec:
    seed: int
    dtype: Any
    in_shape: tuple[int, int, int]
    layers: list[tuple] = field(default_factory=list)
    head: str = "map"
    out_shape: tuple[int, ...] = ()
    batches: tuple[int, ...] = (1,)
    work: int = 0
    """Multiply-adds of one image through every convolution."""

    def source(self) -> str:
        """The net as user code (the body of `construct` and the layers it calls)."""
        lines = [f"# seed {self.seed}, {np.dtype(self.dtype).name}, x: (N, {self.in_shape}), "
                 f"batches {self.batches}"]
        for layer in self.layers:
            lines.append(_layer_source(layer))
        lines.append(f"head: {self.head} -> {self.out_shape}")
        return "\n".join(lines)


def _conv_source(c: dict) -> str:
    return (f"nn.Conv2d({c['cin']}, {c['cout']}, {c['kernel']}, stride={c['stride']}, "
            f"pad_mode={c['pad_mode']!r}, padding={c['padding']}, dilation={c['dilation']}, "
            f"group={c['group']}, has_bias={c['has_bias']})")


def _layer_source(layer: tuple) -> str:
    kind = layer[0]
    if kind == "conv":
        return _conv_source(layer[1])
    if kind == "residual":
        body = " -> ".join(_layer_source(part) for part in layer[1])
        skip = _conv_source(layer[2]) if layer[2] else "identity"
        return f"residual: ({body}) + ({skip})"
    if kind == "pool":
        return f"nn.{layer[1]}(kernel_size={layer[2]}, stride={layer[3]}, pad_mode={layer[4]!r})"
    return kind


def _out_size(size: int, kernel: int, stride: int, dilation: int, mode: str,
              pads: tuple[int, int]) -> int:
    if mode == "same":
        return -(-size // stride)
    span = dilation * (kernel - 1) + 1
    padded = size + (sum(pads) if mode == "pad" else 0)
    return (padded - span) // stride + 1 if padded >= span else 0


def _random_conv(rng: np.random.Generator, cin: int, hw: tuple[int, int],
                 cout: int | None = None, stride: tuple[int, int] | None = None,
                 mode: str | None = None) -> tuple[dict, tuple[int, int]] | None:
    """A Conv2d on `cin` channels of size `hw` and its output size; None when it does not fit."""
    cout = cout or int(rng.choice(CHANNELS))
    kh = int(rng.integers(1, 6))
    kw = kh if rng.random() < 0.7 else int(rng.integers(1, 6))
    if stride is None:
        s = int(rng.choice((1, 1, 2, 2, 3)))
        stride = (s, s) if rng.random() < 0.8 else (s, int(rng.integers(1, 4)))
    dilation = (1, 1) if rng.random() < 0.75 else (int(rng.integers(1, 3)),
                                                   int(rng.integers(1, 4)))
    mode = mode or str(rng.choice(("same", "valid", "pad")))
    padding: Any = 0
    if mode == "pad":
        padding = tuple(int(p) for p in rng.integers(0, 3, 4))
    pads = padding if mode == "pad" else (0, 0, 0, 0)
    group = 1
    if rng.random() < 0.2:
        shared = [g for g in range(2, min(cin, cout) + 1) if cin % g == 0 and cout % g == 0]
        if shared:
            group = int(rng.choice(shared))
    out = (_out_size(hw[0], kh, stride[0], dilation[0], mode, pads[:2]),
           _out_size(hw[1], kw, stride[1], dilation[1], mode, pads[2:]))
    if min(out) < 1:
        return None
    conv = {"cin": cin, "cout": cout, "kernel": (kh, kw), "stride": stride, "pad_mode": mode,
            "padding": padding, "dilation": dilation, "group": group,
            "has_bias": bool(rng.random() < 0.7)}
    return conv, out


def _conv_work(conv: dict, out: tuple[int, int]) -> int:
    kh, kw = conv["kernel"]
    return out[0] * out[1] * conv["cout"] * conv["cin"] // conv["group"] * kh * kw


def random_spec(rng: np.random.Generator, seed: int, max_work: int = 2_000_000,
                dtype: Any = None) -> Spec:
    """A random net whose convolutions take at most `max_work` multiply-adds per batch (nets
    heavier on one image are drawn again)."""
    while True:
        spec = _draw_spec(rng, seed, dtype)
        if spec.work <= max_work:
            fit = max_work // max(spec.work, 1)
            choices = [b for b in BATCHES if b <= fit]
            spec.batches = tuple(int(b) for b in rng.choice(choices, 3))
            return spec


def _draw_spec(rng: np.random.Generator, seed: int, dtype: Any) -> Spec:
    dtype = dtype or (np.float32 if rng.random() < 0.5 else np.float64)
    c = int(rng.choice(CHANNELS))
    hw = (int(rng.integers(1, 41)), int(rng.integers(1, 41)))
    if rng.random() < 0.6:
        hw = (hw[0], hw[0] + int(rng.integers(-1, 2)) or 1)
    spec = Spec(seed, dtype, (c, *hw))
    for _ in range(int(rng.integers(1, 5))):
        kind = str(rng.choice(("conv", "conv", "conv", "residual", "residual", "pool", "relu")))
        if kind == "conv":
            made = _random_conv(rng, c, hw)
            if made:
                spec.layers.append(("conv", made[0]))
                spec.work += _conv_work(*made)
                c, hw = made[0]["cout"], made[1]
        elif kind == "residual":
            s = int(rng.choice((1, 1, 2)))
            cout = c if rng.random() < 0.5 else int(rng.choice(CHANNELS))
            first = _random_conv(rng, c, hw, cout, (s, s), "same")
            body = [("conv", first[0]), ("relu",)]
            spec.work += _conv_work(*first)
            if rng.random() < 0.4:
                second = _random_conv(rng, cout, first[1], cout, (1, 1), "same")
                body.append(("conv", second[0]))
                spec.work += _conv_work(*second)
            skip = None
            if s != 1 or cout != c:
                skip = {"cin": c, "cout": cout, "kernel": (1, 1), "stride": (s, s),
                        "pad_mode": "same", "padding": 0, "dilation": (1, 1), "group": 1,
                        "has_bias": bool(rng.random() < 0.5)}
                spec.work += _conv_work(skip, first[1])
            spec.layers.append(("residual", body, skip))
            c, hw = cout, first[1]
        elif kind == "pool":
            k, s = int(rng.integers(1, 4)), int(rng.integers(1, 4))
            mode = str(rng.choice(("same", "valid")))
            out = (_out_size(hw[0], k, s, 1, mode, (0, 0)), _out_size(hw[1], k, s, 1, mode, (0, 0)))
            if min(out) >= 1:
                kind = str(rng.choice(("MaxPool2d", "AvgPool2d")))
                spec.layers.append(("pool", kind, k, s, mode))
                hw = out
        else:
            spec.layers.append(("relu",))
    if not any(layer[0] in ("conv", "residual") for layer in spec.layers):
        made = _random_conv(rng, c, hw, mode="same")
        spec.layers.append(("conv", made[0]))
        spec.work += _conv_work(*made)
        c, hw = made[0]["cout"], made[1]
    spec.head = str(rng.choice(("map", "mean", "mean_dense", "flatten_dense", "reshape_dense")))
    units = int(rng.integers(1, 11))
    spec.out_shape = {"map": (c, *hw), "mean": (c,)}.get(spec.head, (units,))
    return spec


class Residual(nn.Cell):
    def __init__(self, body: nn.Cell, skip: nn.Cell) -> None:
        super().__init__()
        self.body, self.skip = body, skip

    def construct(self, x: np.ndarray) -> np.ndarray:
        return self.body(x) + self.skip(x)


class Mean(nn.Cell):
    def construct(self, x: np.ndarray) -> np.ndarray:
        return x.mean(axis=(2, 3))


class MeanDense(nn.Cell):
    def __init__(self, dense: nn.Cell) -> None:
        super().__init__()
        self.dense = dense

    def construct(self, x: np.ndarray) -> np.ndarray:
        return self.dense(np.maximum(x, 0).mean(axis=(2, 3)))


class FlattenDense(nn.Cell):
    def __init__(self, dense: nn.Cell) -> None:
        super().__init__()
        self.flatten, self.dense = nn.Flatten(), dense

    def construct(self, x: np.ndarray) -> np.ndarray:
        return self.dense(self.flatten(x))


class ReshapeDense(nn.Cell):
    def __init__(self, dense: nn.Cell) -> None:
        super().__init__()
        self.dense = dense

    def construct(self, x: np.ndarray) -> np.ndarray:
        return self.dense(x.reshape(x.shape[0], -1))


class Net(nn.Cell):
    def __init__(self, body: nn.Cell, head: nn.Cell) -> None:
        super().__init__()
        self.body, self.head = body, head

    def construct(self, x: np.ndarray) -> np.ndarray:
        return self.head(self.body(x))


def _weighted(cell: nn.Cell, rng: np.random.Generator, dtype: Any) -> nn.Cell:
    """`cell` with weights N(0, 1/fan_in) in `dtype` (set_data would keep float32), replaced
    before a parent cell names them."""
    for name, p in list(cell._params.items()):
        fan_in = int(np.prod(p.shape[1:])) if p.ndim > 1 else 1
        data = (rng.standard_normal(p.shape) / np.sqrt(fan_in)).astype(dtype)
        setattr(cell, name, amber.Parameter(data, name=p.name))
    return cell


def _make_conv(c: dict, rng: np.random.Generator, dtype: Any) -> nn.Cell:
    return _weighted(nn.Conv2d(c["cin"], c["cout"], c["kernel"], stride=c["stride"],
                               pad_mode=c["pad_mode"], padding=c["padding"],
                               dilation=c["dilation"], group=c["group"],
                               has_bias=c["has_bias"]), rng, dtype)


def _make_layer(layer: tuple, rng: np.random.Generator, dtype: Any) -> nn.Cell:
    kind = layer[0]
    if kind == "conv":
        return _make_conv(layer[1], rng, dtype)
    if kind == "residual":
        body = nn.SequentialCell(*[_make_layer(part, rng, dtype) for part in layer[1]])
        return Residual(body, _make_conv(layer[2], rng, dtype) if layer[2] else nn.Identity())
    if kind == "pool":
        return getattr(nn, layer[1])(kernel_size=layer[2], stride=layer[3], pad_mode=layer[4])
    return nn.ReLU()


def build(spec: Spec) -> Net:
    """The Cell of `spec`, weights drawn from the spec's seed, in its dtype."""
    rng = np.random.default_rng(spec.seed + 1)
    body = nn.SequentialCell(*[_make_layer(layer, rng, spec.dtype) for layer in spec.layers])
    head: nn.Cell = nn.Identity() if spec.head == "map" else Mean()
    if spec.head.endswith("dense"):
        last = _last_shape(spec)
        features = last[0] if spec.head == "mean_dense" else int(np.prod(last))
        dense = _weighted(nn.Dense(features, spec.out_shape[0]), rng, spec.dtype)
        head = {"mean_dense": MeanDense, "flatten_dense": FlattenDense,
                "reshape_dense": ReshapeDense}[spec.head](dense)
    return Net(body, head)


def _last_shape(spec: Spec) -> tuple[int, int, int]:
    """The body's output (channels, height, width), recomputed from the layers."""
    c, h, w = spec.in_shape
    for layer in spec.layers:
        if layer[0] == "pool":
            k, s, mode = layer[2:]
            h, w = _out_size(h, k, s, 1, mode, (0, 0)), _out_size(w, k, s, 1, mode, (0, 0))
        elif layer[0] in ("conv", "residual"):
            conv = layer[1] if layer[0] == "conv" else layer[1][0][1]
            pads = conv["padding"] if conv["pad_mode"] == "pad" else (0, 0, 0, 0)
            h = _out_size(h, conv["kernel"][0], conv["stride"][0], conv["dilation"][0],
                          conv["pad_mode"], pads[:2])
            w = _out_size(w, conv["kernel"][1], conv["stride"][1], conv["dilation"][1],
                          conv["pad_mode"], pads[2:])
            c = conv["cout"]
            if layer[0] == "residual" and len(layer[1]) > 2:
                c = layer[1][2][1]["cout"]
    return c, h, w

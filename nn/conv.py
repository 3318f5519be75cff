"""Convolution and pooling layers on NCHW inputs: `Conv2d`, `Conv2dTranspose`, `MaxPool2d`,
`AvgPool2d`.

Padding modes follow MindSpore: 'valid' (none), 'same' (output size ceil(in / stride)) and, for
Conv2d, 'pad' (explicit `padding`).
"""
from __future__ import annotations

from typing import Any

import numpy as np

from .. import ops
from .cell import Cell
from .checks import (check_bool, check_choice, check_dim, check_int, check_rank, int_tuple,
                     layer_error, make_param)


def _padding4(padding: Any) -> tuple[int, int, int, int]:
    """Conv2d's padding as (top, bottom, left, right) from an int, (h, w) or a 4-tuple."""
    pads = int_tuple("Conv2d", "padding", padding, (4, 2), minimum=0)
    if len(pads) == 2:
        return (pads[0], pads[0], pads[1], pads[1])
    return pads  # type: ignore[return-value]


def _check_window(cell: Cell, shape: tuple | None, kernel: tuple[int, int],
                  dilation: tuple[int, int], pads: tuple[int, int, int, int]) -> None:
    """Raise when the (dilated) kernel does not fit the (padded) spatial size."""
    if shape is None:
        return
    for axis, name in ((2, "height"), (3, "width")):
        size = shape[axis]
        if not isinstance(size, int):
            continue
        span = dilation[axis - 2] * (kernel[axis - 2] - 1) + 1
        padded = size + pads[2 * axis - 4] + pads[2 * axis - 3]
        if padded < span:
            raise layer_error(cell, f"input {name} {size} (padded {padded}) is smaller than the "
                                    f"kernel extent {span} (input shape {shape})")


class Conv2d(Cell):
    """2-D convolution: weight [out_channels, in_channels / group, kh, kw], optional bias."""

    def __init__(self, in_channels: int, out_channels: int, kernel_size: int | tuple[int, int],
                 stride: int | tuple[int, int] = 1, pad_mode: str = "same",
                 padding: int | tuple[int, ...] = 0, dilation: int | tuple[int, int] = 1,
                 group: int = 1, has_bias: bool = False, weight_init: Any = "normal",
                 bias_init: Any = "zeros", data_format: str = "NCHW") -> None:
        super().__init__()
        self.in_channels = check_int("Conv2d", "in_channels", in_channels)
        self.out_channels = check_int("Conv2d", "out_channels", out_channels)
        self.kernel_size = int_tuple("Conv2d", "kernel_size", kernel_size, (2,))
        self.stride = int_tuple("Conv2d", "stride", stride, (2,))
        self.pad_mode = check_choice("Conv2d", "pad_mode", str(pad_mode).lower(),
                                     ("same", "valid", "pad"))
        self.padding = _padding4(padding)
        if self.pad_mode != "pad" and any(self.padding):
            raise ValueError(f"Conv2d: padding must be 0 unless pad_mode='pad', got "
                             f"padding={padding!r} with pad_mode={pad_mode!r}")
        self.dilation = int_tuple("Conv2d", "dilation", dilation, (2,))
        self.group = check_int("Conv2d", "group", group)
        if self.in_channels % self.group or self.out_channels % self.group:
            raise ValueError(f"Conv2d: in_channels={in_channels} and out_channels={out_channels} "
                             f"must both be divisible by group={group}")
        check_choice("Conv2d", "data_format", data_format, ("NCHW",))
        self.has_bias = check_bool("Conv2d", "has_bias", has_bias)
        shape = (self.out_channels, self.in_channels // self.group, *self.kernel_size)
        self.weight = make_param("Conv2d", "weight_init", weight_init, shape, "weight")
        self.bias = None
        if self.has_bias:
            self.bias = make_param("Conv2d", "bias_init", bias_init, (self.out_channels,), "bias")

    def check_inputs(self, x: Any) -> None:
        shape = check_rank(self, x, (4,))
        check_dim(self, shape, 1, self.in_channels, "input channels (dim 1)")
        pads = self.padding if self.pad_mode == "pad" else (0, 0, 0, 0)
        if self.pad_mode != "same":
            _check_window(self, shape, self.kernel_size, self.dilation, pads)

    def construct(self, x: np.ndarray) -> np.ndarray:
        return ops.conv2d(x, self.weight, self.bias, stride=self.stride, pad_mode=self.pad_mode,
                          padding=self.padding, dilation=self.dilation, groups=self.group)

    def extend_repr(self) -> str:
        return _conv_repr(self, f", padding={self.padding}")


class Conv2dTranspose(Cell):
    """2-D transposed convolution (the gradient of a Conv2d with respect to its input): weight
    [in_channels, out_channels / group, kh, kw], optional bias. Output height for input height h
    (kernel extent k = dilation * (kh - 1) + 1): 'same' h * stride; 'valid' (h - 1) * stride + k
    (h * stride when the kernel is shorter than the stride); 'pad' (h - 1) * stride + k - top -
    bottom, then `output_padding` rows and columns of zeros at the bottom and right (after the
    bias, as MindSpore pads: they hold 0, not the bias)."""

    def __init__(self, in_channels: int, out_channels: int, kernel_size: int | tuple[int, int],
                 stride: int | tuple[int, int] = 1, pad_mode: str = "same",
                 padding: int | tuple[int, ...] = 0, output_padding: int | tuple[int, int] = 0,
                 dilation: int | tuple[int, int] = 1, group: int = 1, has_bias: bool = False,
                 weight_init: Any = "normal", bias_init: Any = "zeros",
                 dtype: Any = np.float32) -> None:
        super().__init__()
        name = "Conv2dTranspose"
        self.in_channels = check_int(name, "in_channels", in_channels)
        self.out_channels = check_int(name, "out_channels", out_channels)
        self.kernel_size = int_tuple(name, "kernel_size", kernel_size, (2,))
        self.stride = int_tuple(name, "stride", stride, (2,))
        self.pad_mode = check_choice(name, "pad_mode", str(pad_mode).lower(),
                                     ("same", "valid", "pad"))
        self.padding = _padding4(padding)
        self.output_padding = int_tuple(name, "output_padding", output_padding, (2,),
                                        minimum=0)
        if self.pad_mode != "pad" and (any(self.padding) or any(self.output_padding)):
            raise ValueError(f"{name}: padding and output_padding must be 0 unless "
                             f"pad_mode='pad', got padding={padding!r}, "
                             f"output_padding={output_padding!r} with pad_mode={pad_mode!r}")
        self.dilation = int_tuple(name, "dilation", dilation, (2,))
        for axis in (0, 1):
            if self.output_padding[axis] >= max(self.stride[axis], self.dilation[axis]):
                raise ValueError(f"{name}: output_padding must be smaller than max(stride, "
                                 f"dilation), got {output_padding!r}")
        self.group = check_int(name, "group", group)
        if self.in_channels % self.group or self.out_channels % self.group:
            raise ValueError(f"{name}: in_channels={in_channels} and out_channels={out_channels} "
                             f"must both be divisible by group={group}")
        self.has_bias = check_bool(name, "has_bias", has_bias)
        shape = (self.in_channels, self.out_channels // self.group, *self.kernel_size)
        self.weight = make_param(name, "weight_init", weight_init, shape, "weight")
        self.bias = None
        if self.has_bias:
            self.bias = make_param(name, "bias_init", bias_init, (self.out_channels,), "bias")
        self.transpose = ops.Conv2DTranspose(self.in_channels, self.kernel_size,
                                             pad_mode=self.pad_mode, pad=self.padding,
                                             stride=self.stride, dilation=self.dilation,
                                             group=self.group)

    def output_length(self, size: int, axis: int) -> int:
        """The output height (axis 0) or width (axis 1) for an input of `size`."""
        stride = self.stride[axis]
        extent = self.dilation[axis] * (self.kernel_size[axis] - 1) + 1
        if self.pad_mode == "same":
            return size * stride
        if self.pad_mode == "valid":
            return size * stride + max(extent - stride, 0)
        pads = self.padding[2 * axis] + self.padding[2 * axis + 1]
        return (size - 1) * stride + extent - pads

    def check_inputs(self, x: Any) -> None:
        shape = check_rank(self, x, (4,))
        check_dim(self, shape, 1, self.in_channels, "input channels (dim 1)")

    def construct(self, x: np.ndarray) -> np.ndarray:
        n, _, h, w = ops.shape(x)
        size = (n, self.out_channels, self.output_length(h, 0), self.output_length(w, 1))
        out = self.transpose(x, self.weight, size)
        if self.has_bias:
            out = out + ops.reshape(self.bias, (1, -1, 1, 1))
        if self.output_padding != (0, 0):
            out = np.pad(out, ((0, 0), (0, 0), (0, self.output_padding[0]),
                               (0, self.output_padding[1])))
        return out

    def extend_repr(self) -> str:
        return _conv_repr(self, f", padding={self.padding}, output_padding={self.output_padding}")


def _pool_config(cell: Cell, kernel_size: Any, stride: Any, pad_mode: str,
                 data_format: str) -> None:
    layer = cell.cls_name
    check_choice(layer, "data_format", data_format, ("NCHW",))
    cell.kernel_size = int_tuple(layer, "kernel_size", kernel_size, (2,))
    cell.stride = int_tuple(layer, "stride", stride, (2,))
    cell.pad_mode = check_choice(layer, "pad_mode", str(pad_mode).lower(), ("valid", "same"))


def _check_pool_input(cell: Cell, x: Any) -> None:
    shape = check_rank(cell, x, (4,))
    if cell.pad_mode == "valid":
        _check_window(cell, shape, cell.kernel_size, (1, 1), (0, 0, 0, 0))


def _pool_repr(cell: Cell) -> str:
    return f"kernel_size={cell.kernel_size}, stride={cell.stride}, pad_mode={cell.pad_mode}"


def _conv_repr(cell: Conv2d | Conv2dTranspose, padding: str) -> str:
    """The repr arguments both convolutions share; `padding` is shown in "pad" mode."""
    text = (f"in_channels={cell.in_channels}, out_channels={cell.out_channels}, "
            f"kernel_size={cell.kernel_size}, stride={cell.stride}, pad_mode={cell.pad_mode}")
    if cell.pad_mode == "pad":
        text += padding
    if cell.dilation != (1, 1):
        text += f", dilation={cell.dilation}"
    if cell.group != 1:
        text += f", group={cell.group}"
    return text + (", has_bias=True" if cell.has_bias else "")


class _Pool2d(Cell):
    """A pooling layer on NCHW inputs: `primitive` (MindSpore's MaxPool or AvgPool, which take a
    pad_mode, unlike the functional ops) over each kernel_size window, moving by stride."""
    primitive: type

    def __init__(self, kernel_size: int | tuple[int, int] = 1, stride: int | tuple[int, int] = 1,
                 pad_mode: str = "valid", data_format: str = "NCHW") -> None:
        super().__init__()
        _pool_config(self, kernel_size, stride, pad_mode, data_format)
        self.pool = self.primitive(kernel_size=self.kernel_size, strides=self.stride,
                                   pad_mode=self.pad_mode)

    def check_inputs(self, x: Any) -> None:
        _check_pool_input(self, x)

    def construct(self, x: np.ndarray) -> np.ndarray:
        return self.pool(x)

    def extend_repr(self) -> str:
        return _pool_repr(self)


class MaxPool2d(_Pool2d):
    """The maximum over each kernel_size window, moving by stride, on NCHW inputs."""
    primitive = ops.MaxPool


class AvgPool2d(_Pool2d):
    """The mean over each kernel_size window, moving by stride, on NCHW inputs."""
    primitive = ops.AvgPool

"""Image resizing: bilinear interpolation of NCHW images (MindSpore's `ResizeBilinearV2` and the
older `ResizeBilinear`), and its gradient. Interpolation is separable and linear, so both are two
small matrix products: out = Wh @ x @ Ww.T, and the gradient Wh.T @ g @ Ww."""
from __future__ import annotations

from typing import Any

import numpy as np

from .batch_rules import folded
from .elementwise import checked
from .opdef import GradContext, OpDef, OpFunction, Primitive
from .types import Tensor, Type, expect_tensor

_ATTRS = {"align_corners": False, "half_pixel_centers": False}


def interpolation_matrix(in_size: int, out_size: int, align_corners: bool,
                         half_pixel_centers: bool, dtype: np.dtype) -> np.ndarray:
    """[out_size, in_size] weights of linear interpolation along one axis: output i reads
    source position src(i) = i * scale (or (i + 0.5) * scale - 0.5 with half-pixel centers),
    scale = (in - 1) / (out - 1) with aligned corners, else in / out; the two nearest inputs
    (clamped to the edges) share it by distance."""
    if align_corners and out_size > 1:
        scale = (in_size - 1) / (out_size - 1)
    else:
        scale = in_size / out_size
    dst = np.arange(out_size, dtype=np.float64)
    src = (dst + 0.5) * scale - 0.5 if half_pixel_centers else dst * scale
    floor = np.floor(src)
    lower = np.clip(floor, 0, in_size - 1).astype(np.int64)
    upper = np.clip(np.ceil(src), 0, in_size - 1).astype(np.int64)
    frac = src - floor
    weights = np.zeros((out_size, in_size), np.float64)
    np.add.at(weights, (np.arange(out_size), lower), 1.0 - frac)
    np.add.at(weights, (np.arange(out_size), upper), frac)
    return weights.astype(dtype)


def resize_bilinear_kernel(x: np.ndarray, size: tuple[int, int], align_corners: bool,
                           half_pixel_centers: bool) -> np.ndarray:
    """NCHW `x` resized to height and width `size` by bilinear interpolation."""
    dtype = x.dtype if x.dtype.kind == "f" else np.float32
    wh = interpolation_matrix(x.shape[2], size[0], align_corners, half_pixel_centers, dtype)
    ww = interpolation_matrix(x.shape[3], size[1], align_corners, half_pixel_centers, dtype)
    return np.matmul(np.matmul(wh, x.astype(dtype, copy=False)), ww.T)


def resize_bilinear_grad_kernel(g: np.ndarray, in_size: tuple[int, int], align_corners: bool,
                                half_pixel_centers: bool) -> np.ndarray:
    """The adjoint of `resize_bilinear_kernel` (to an image of height and width `in_size`)."""
    wh = interpolation_matrix(in_size[0], g.shape[2], align_corners, half_pixel_centers, g.dtype)
    ww = interpolation_matrix(in_size[1], g.shape[3], align_corners, half_pixel_centers, g.dtype)
    return np.matmul(np.matmul(wh.T, g), ww)


def _size(op: str, name: str, value: Any) -> tuple[int, int]:
    if not isinstance(value, tuple | list) or len(value) != 2 or not all(
            type(v) is int and v > 0 for v in value):
        raise TypeError(f"{op}: {name} must be two positive ints known while compiling, got "
                        f"{value!r}")
    return (value[0], value[1])


def _resize_infer(x: Type, *, size: tuple[int, int], align_corners: bool,
                  half_pixel_centers: bool) -> Tensor:
    t = expect_tensor("resize_bilinear", "input (NCHW)", x, rank=4)
    _size("resize_bilinear", "size", size)
    if align_corners and half_pixel_centers:
        raise ValueError("resize_bilinear: align_corners and half_pixel_centers cannot both "
                         "be True")
    return Tensor(t.shape[:2] + tuple(size), t.dtype if t.dtype.kind == "f" else
                  np.dtype(np.float32))


def _resize_grad_infer(g: Type, *, in_size: tuple[int, int], align_corners: bool,
                       half_pixel_centers: bool) -> Tensor:
    t = expect_tensor("resize_bilinear_grad", "adjoint (NCHW)", g, rank=4)
    return Tensor(t.shape[:2] + tuple(in_size), t.dtype)


def _resize_grad(ad: GradContext) -> tuple[Any, ...]:
    x = ad.types[0]
    if not all(isinstance(d, int) for d in x.shape[2:]):
        raise NotImplementedError("the gradient of resizing an image of run-time size")
    flags = {k: ad.attrs[k] for k in _ATTRS}
    return (ad.op("resize_bilinear_grad", ad.g, in_size=tuple(x.shape[2:]), **flags),)


def _resize_grad_grad(ad: GradContext) -> tuple[Any, ...]:
    flags = {k: ad.attrs[k] for k in _ATTRS}
    return (ad.op("resize_bilinear", ad.g, size=tuple(ad.types[0].shape[2:]), **flags),)


resize_bilinear = OpDef(
    "resize_bilinear", ("x",),
    kernel=checked("resize_bilinear", resize_bilinear_kernel, _resize_infer),
    infer=_resize_infer,
    emit="resize_bilinear_kernel(x, size, align_corners, half_pixel_centers)",
    attrs={"size": (1, 1), **_ATTRS}, helpers=(interpolation_matrix, resize_bilinear_kernel),
    fresh=True, grad=_resize_grad, batch=folded())
"""NCHW images resized to `size` (height, width) by bilinear interpolation."""
resize_bilinear_grad = OpDef(
    "resize_bilinear_grad", ("g",),
    kernel=checked("resize_bilinear_grad", resize_bilinear_grad_kernel, _resize_grad_infer),
    infer=_resize_grad_infer,
    emit="resize_bilinear_grad_kernel(g, in_size, align_corners, half_pixel_centers)",
    attrs={"in_size": (1, 1), **_ATTRS},
    helpers=(interpolation_matrix, resize_bilinear_grad_kernel), fresh=True,
    grad=_resize_grad_grad, batch=folded())
"""resize_bilinear's gradient: the adjoint spread back onto an image of `in_size`."""


class ResizeBilinearV2(Primitive):
    """`ops.ResizeBilinearV2(align_corners=False, half_pixel_centers=False)(image, size)`."""
    op = resize_bilinear

    def __init__(self, align_corners: bool = False, half_pixel_centers: bool = False) -> None:
        self.flags = {"align_corners": bool(align_corners),
                      "half_pixel_centers": bool(half_pixel_centers)}

    def binder(self, image: Any, size: Any):
        return (image,), {"size": _size("ResizeBilinearV2", "size", size), **self.flags}


class ResizeBilinear(Primitive):
    """MindSpore 1.x's `ops.ResizeBilinear(size, align_corners=False,
    half_pixel_centers=False)(x)`."""
    op = resize_bilinear

    def __init__(self, size: Any, align_corners: bool = False,
                 half_pixel_centers: bool = False) -> None:
        self.attrs = {"size": _size("ResizeBilinear", "size", size),
                      "align_corners": bool(align_corners),
                      "half_pixel_centers": bool(half_pixel_centers)}

    def binder(self, x: Any):
        return (x,), dict(self.attrs)


def _bind_resize(input_x: Any, size: Any, align_corners: bool = False,
                 half_pixel_centers: bool = False):
    return (input_x,), {"size": _size("resize_bilinear", "size", size),
                        "align_corners": bool(align_corners),
                        "half_pixel_centers": bool(half_pixel_centers)}


OPS = (resize_bilinear, resize_bilinear_grad)
FUNCTIONS = (OpFunction("resize_bilinear", resize_bilinear, _bind_resize),)
PRIMITIVES = (ResizeBilinearV2, ResizeBilinear)

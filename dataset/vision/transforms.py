"""MindSpore's `mindspore.dataset.vision` operations on NumPy images (HWC or HW, as
MindSpore's decoded images are): `Rescale`, `Normalize`, `HWC2CHW`, `Resize`, `RandomCrop`,
`RandomHorizontalFlip`, `ToTensor`. Random operations draw from the dataset seed
(`dataset.config.set_seed`)."""
from __future__ import annotations

from enum import Enum
from typing import Any, Sequence

import numpy as np

from .. import config

__all__ = ["Inter", "Border", "Rescale", "Normalize", "HWC2CHW", "Resize", "RandomCrop",
           "RandomHorizontalFlip", "ToTensor"]


class Inter(Enum):
    """Interpolation modes; amber implements NEAREST and LINEAR (= BILINEAR)."""
    NEAREST = 0
    LINEAR = 1
    BILINEAR = 1
    CUBIC = 2
    AREA = 3
    PILCUBIC = 4
    ANTIALIAS = 5


class Border(Enum):
    """How `RandomCrop` pads: a constant, the edge value, a reflection without or with the
    edge repeated (NumPy's `reflect` / `symmetric`)."""
    CONSTANT = "constant"
    EDGE = "edge"
    REFLECT = "reflect"
    SYMMETRIC = "symmetric"


def _image(x: Any, what: str) -> np.ndarray:
    image = np.asarray(x)
    if image.ndim not in (2, 3):
        raise ValueError(f"{what}: expected an image of shape <H, W> or <H, W, C>, got shape "
                         f"{image.shape}")
    return image


def _size_pair(size: Any, what: str) -> tuple[int, int]:
    pair = (size, size) if isinstance(size, int) else tuple(size)
    if len(pair) != 2 or not all(isinstance(s, int) and not isinstance(s, bool) and s > 0
                                 for s in pair):
        raise ValueError(f"{what}: size must be a positive int or (height, width), got {size!r}")
    return pair


def _cast_like(values: np.ndarray, dtype: np.dtype) -> np.ndarray:
    """Float results back to an integer image dtype: rounded and saturated, as OpenCV does."""
    if dtype.kind in "iu":
        info = np.iinfo(dtype)
        return np.clip(np.rint(values), info.min, info.max).astype(dtype)
    return values.astype(dtype)


class Rescale:
    """`image * rescale + shift`, as float32."""

    def __init__(self, rescale: float, shift: float) -> None:
        self.rescale, self.shift = float(rescale), float(shift)

    def __call__(self, image: Any) -> np.ndarray:
        return (np.asarray(image, np.float32) * np.float32(self.rescale)
                + np.float32(self.shift))


class Normalize:
    """`(image - mean) / std` per channel (the last axis, or the first when `is_hwc=False`),
    as float32."""

    def __init__(self, mean: Sequence[float], std: Sequence[float], is_hwc: bool = True) -> None:
        self.mean = np.asarray(mean, np.float32).reshape(-1)
        self.std = np.asarray(std, np.float32).reshape(-1)
        if self.mean.shape != self.std.shape or not self.mean.size:
            raise ValueError(f"Normalize: mean and std need one value per channel, got {mean!r} "
                             f"and {std!r}")
        if (self.std <= 0).any():
            raise ValueError(f"Normalize: std must be positive, got {std!r}")
        self.is_hwc = bool(is_hwc)

    def __call__(self, image: Any) -> np.ndarray:
        x = _image(image, "Normalize").astype(np.float32)
        channels = 1 if x.ndim == 2 else x.shape[-1 if self.is_hwc else 0]
        if self.mean.size not in (1, channels):
            raise ValueError(f"Normalize: {self.mean.size} mean values for an image of "
                             f"{channels} channel(s)")
        shape = (-1,) if self.is_hwc or x.ndim == 2 else (-1, 1, 1)
        return (x - self.mean.reshape(shape)) / self.std.reshape(shape)


class HWC2CHW:
    """<H, W, C> -> <C, H, W>; an <H, W> image stays as it is."""

    def __call__(self, image: Any) -> np.ndarray:
        x = _image(image, "HWC2CHW")
        return x if x.ndim == 2 else np.ascontiguousarray(x.transpose(2, 0, 1))


class Resize:
    """The image resized to `size` ((height, width); an int sets the shorter side, keeping the
    aspect ratio) with OpenCV's sampling (pixel centres aligned); same dtype."""

    def __init__(self, size: Any, interpolation: Inter = Inter.LINEAR) -> None:
        self.size = size if isinstance(size, int) and size > 0 else _size_pair(size, "Resize")
        if interpolation not in (Inter.NEAREST, Inter.LINEAR):
            raise ValueError(f"Resize: amber implements Inter.NEAREST and Inter.LINEAR, not "
                             f"{interpolation}")
        self.interpolation = interpolation
        self._plans: dict[tuple[int, int], tuple] = {}

    def _target(self, height: int, width: int) -> tuple[int, int]:
        if not isinstance(self.size, int):
            return self.size
        if height <= width:
            return self.size, int(width * self.size / height)
        return int(height * self.size / width), self.size

    def _plan(self, height: int, width: int) -> tuple:
        """The source indices (and linear weights) for this input size, computed once."""
        key = (height, width)
        if key not in self._plans:
            oh, ow = self._target(height, width)
            if self.interpolation is Inter.NEAREST:
                rows = np.minimum((np.arange(oh) * (height / oh)).astype(np.int64), height - 1)
                cols = np.minimum((np.arange(ow) * (width / ow)).astype(np.int64), width - 1)
                self._plans[key] = (rows[:, None], cols[None, :])
            else:
                self._plans[key] = (_taps(height, oh), _taps(width, ow))
        return self._plans[key]

    def __call__(self, image: Any) -> np.ndarray:
        x = _image(image, "Resize")
        plan = self._plan(*x.shape[:2])
        if self.interpolation is Inter.NEAREST:
            return x[plan]
        (y0, y1, fy), (x0, x1, fx) = plan
        f = x.astype(np.float32)
        fx = fx.reshape((1, -1) + (1,) * (x.ndim - 2))
        fy = fy.reshape((-1, 1) + (1,) * (x.ndim - 2))
        top = f[y0][:, x0] * (1 - fx) + f[y0][:, x1] * fx
        bottom = f[y1][:, x0] * (1 - fx) + f[y1][:, x1] * fx
        return _cast_like(top * (1 - fy) + bottom * fy, x.dtype)


def _taps(size: int, out: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """For each output pixel along one axis: the two source pixels and the second's weight."""
    pos = np.maximum((np.arange(out) + 0.5) * (size / out) - 0.5, 0.0)
    lo = np.minimum(np.floor(pos).astype(np.int64), size - 1)
    return lo, np.minimum(lo + 1, size - 1), (pos - lo).astype(np.float32)


class RandomCrop:
    """A random `size` window of the image, after optional `padding` (int: all sides; 2 values:
    left/right, top/bottom; 4: left, top, right, bottom) and, with `pad_if_needed`, padding up
    to `size`; `padding_mode` a `Border`, `fill_value` the constant."""

    def __init__(self, size: Any, padding: Any = None, pad_if_needed: bool = False,
                 fill_value: Any = 0, padding_mode: Border = Border.CONSTANT) -> None:
        self.size = _size_pair(size, "RandomCrop")
        self.padding = self._sides(padding)
        self.pad_if_needed, self.fill_value = bool(pad_if_needed), fill_value
        if not isinstance(padding_mode, Border):
            raise ValueError(f"RandomCrop: padding_mode must be a Border, got {padding_mode!r}")
        self.padding_mode = padding_mode
        self.rng = config.new_generator()

    @staticmethod
    def _sides(padding: Any) -> tuple[int, int, int, int]:
        if padding is None:
            return (0, 0, 0, 0)
        values = [padding] if isinstance(padding, int) else list(padding)
        if len(values) not in (1, 2, 4) or any(not isinstance(v, int) or v < 0 for v in values):
            raise ValueError(f"RandomCrop: padding must be 1, 2 or 4 ints >= 0, got {padding!r}")
        if len(values) == 1:
            return (values[0],) * 4
        if len(values) == 2:
            return (values[0], values[1], values[0], values[1])
        return tuple(values)

    def _pad(self, x: np.ndarray, left: int, top: int, right: int, bottom: int) -> np.ndarray:
        widths = [(top, bottom), (left, right)] + [(0, 0)] * (x.ndim - 2)
        if self.padding_mode is Border.CONSTANT:
            fill = self.fill_value
            if isinstance(fill, tuple | list) and x.ndim == 3:
                return np.stack([np.pad(x[..., c], widths[:2], constant_values=fill[c])
                                 for c in range(x.shape[2])], axis=-1)
            return np.pad(x, widths, constant_values=fill)
        return np.pad(x, widths, mode=self.padding_mode.value)

    def __call__(self, image: Any) -> np.ndarray:
        x = self._pad(_image(image, "RandomCrop"), *self.padding)
        (h, w), (ch, cw) = x.shape[:2], self.size
        if self.pad_if_needed and (h < ch or w < cw):
            dh, dw = max(ch - h, 0), max(cw - w, 0)
            x = self._pad(x, dw // 2, dh // 2, dw - dw // 2, dh - dh // 2)
            h, w = x.shape[:2]
        if h < ch or w < cw:
            raise ValueError(f"RandomCrop: the (padded) image is {h}x{w}, smaller than the crop "
                             f"{ch}x{cw}; pass padding or pad_if_needed=True")
        top = int(self.rng.integers(h - ch + 1))
        left = int(self.rng.integers(w - cw + 1))
        return x[top:top + ch, left:left + cw].copy()


class RandomHorizontalFlip:
    """The image mirrored left-right with probability `prob`."""

    def __init__(self, prob: float = 0.5) -> None:
        if not 0.0 <= prob <= 1.0:
            raise ValueError(f"RandomHorizontalFlip: prob must be in [0, 1], got {prob!r}")
        self.prob = float(prob)
        self.rng = config.new_generator()

    def __call__(self, image: Any) -> np.ndarray:
        x = _image(image, "RandomHorizontalFlip")
        return x[:, ::-1].copy() if self.rng.random() < self.prob else x


class ToTensor:
    """An <H, W, C> (or <H, W>) image in [0, 255] as <C, H, W> in [0, 1] of `output_type`."""

    def __init__(self, output_type: Any = np.float32) -> None:
        self.output_type = np.dtype(output_type)

    def __call__(self, image: Any) -> np.ndarray:
        x = _image(np.asarray(image), "ToTensor")
        x = x[:, :, None] if x.ndim == 2 else x
        return (x.transpose(2, 0, 1) / 255.0).astype(self.output_type)

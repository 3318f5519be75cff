"""MindSpore's `mindspore.dataset.transforms`: `TypeCast`, `Compose`, `OneHot`, operations a
`map` applies to one column's NumPy values (callable on an array directly, as in MindSpore's
eager mode)."""
from __future__ import annotations

from typing import Any, Callable, Sequence

import numpy as np

from ..engine import apply_ops

__all__ = ["TypeCast", "Compose", "OneHot"]


class TypeCast:
    """The values cast to `data_type` (an amber/MindSpore dtype or a NumPy one)."""

    def __init__(self, data_type: Any) -> None:
        try:
            self.dtype = np.dtype(data_type)
        except TypeError:
            raise TypeError(f"TypeCast: {data_type!r} is not a dtype") from None

    def __call__(self, x: Any) -> np.ndarray:
        return np.asarray(x).astype(self.dtype)


class Compose:
    """`transforms` applied in order, as one operation."""

    def __init__(self, transforms: Sequence[Callable[..., Any]]) -> None:
        ops = list(transforms) if isinstance(transforms, list | tuple) else None
        if not ops or not all(callable(op) for op in ops):
            raise TypeError(f"Compose: transforms must be a non-empty list of callables, got "
                            f"{transforms!r}")
        self.transforms = ops

    def __call__(self, *values: Any) -> Any:
        return apply_ops(self.transforms, *values)


class OneHot:
    """An integer label (or array of them) as a one-hot vector of `num_classes` on a new last
    axis, in the label's dtype; with `smoothing_rate` s, float32 `(1 - s) * onehot + s / C`."""

    def __init__(self, num_classes: int, smoothing_rate: float = 0.0) -> None:
        if isinstance(num_classes, bool) or not isinstance(num_classes, int) or num_classes < 1:
            raise ValueError(f"OneHot: num_classes must be a positive int, got {num_classes!r}")
        if not 0.0 <= smoothing_rate <= 1.0:
            raise ValueError(f"OneHot: smoothing_rate must be in [0, 1], got {smoothing_rate!r}")
        self.num_classes, self.smoothing_rate = num_classes, float(smoothing_rate)

    def __call__(self, label: Any) -> np.ndarray:
        label = np.asarray(label)
        if label.dtype.kind not in "iu":
            raise TypeError(f"OneHot: labels must be integers, got {label.dtype}")
        if label.size and (label.min() < 0 or label.max() >= self.num_classes):
            raise ValueError(f"OneHot: a label is outside [0, {self.num_classes})")
        hot = np.arange(self.num_classes) == label[..., None]
        if self.smoothing_rate:
            s = self.smoothing_rate
            return (hot * (1.0 - s) + s / self.num_classes).astype(np.float32)
        return hot.astype(label.dtype)

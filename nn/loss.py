"""Loss layers: `SoftmaxCrossEntropyWithLogits` and `MSELoss` (MindSpore names and defaults)."""
from __future__ import annotations

from typing import Any

import numpy as np

from .. import ops
from .cell import Cell
from .checks import check_bool, check_choice, check_rank, layer_error, static_shape

_REDUCTIONS = ("mean", "sum", "none")


class SoftmaxCrossEntropyWithLogits(Cell):
    """Cross entropy of softmax(logits) [N, C] against one-hot labels [N, C], or class ids [N]
    when `sparse`; per-sample losses unless `reduction` is 'mean' or 'sum'."""

    def __init__(self, sparse: bool = False, reduction: str = "none") -> None:
        super().__init__()
        self.sparse = check_bool("SoftmaxCrossEntropyWithLogits", "sparse", sparse)
        self.reduction = check_choice("SoftmaxCrossEntropyWithLogits", "reduction", reduction,
                                      _REDUCTIONS)

    def check_inputs(self, logits: Any, labels: Any) -> None:
        shape = check_rank(self, logits, (2,), "logits")
        labels_shape = static_shape(labels)
        if shape is None or labels_shape is None:
            return
        expected = shape[:1] if self.sparse else shape
        if len(labels_shape) != len(expected) or any(
                isinstance(a, int) and isinstance(b, int) and a != b
                for a, b in zip(labels_shape, expected)):
            raise layer_error(self, f"labels have shape {labels_shape}, expected {expected} "
                                    f"for logits of shape {shape}")
        dtype = getattr(labels, "dtype", None)
        if self.sparse and dtype is not None and np.dtype(dtype).kind not in "iu":
            raise layer_error(self, f"sparse labels must be integer class ids, got {dtype}")

    def construct(self, logits: np.ndarray, labels: np.ndarray) -> np.ndarray:
        return ops.softmax_cross_entropy(logits, labels, sparse=self.sparse,
                                         reduction=self.reduction)

    def extend_repr(self) -> str:
        return f"sparse={self.sparse}, reduction={self.reduction}"


class MSELoss(Cell):
    """(logits - labels) ** 2, reduced by `reduction` ('mean', 'sum' or 'none')."""

    def __init__(self, reduction: str = "mean") -> None:
        super().__init__()
        self.reduction = check_choice("MSELoss", "reduction", reduction, _REDUCTIONS)

    def check_inputs(self, logits: Any, labels: Any) -> None:
        a, b = static_shape(logits), static_shape(labels)
        if a is None or b is None:
            return
        for x, y in zip(reversed(a), reversed(b)):
            if isinstance(x, int) and isinstance(y, int) and 1 not in (x, y) and x != y:
                raise layer_error(self, f"logits shape {a} and labels shape {b} do not "
                                        f"broadcast")

    def construct(self, logits: np.ndarray, labels: np.ndarray) -> np.ndarray:
        return ops.mse_loss(logits, labels, reduction=self.reduction)

    def extend_repr(self) -> str:
        return f"reduction={self.reduction}"

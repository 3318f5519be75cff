"""Loss layers with MindSpore names and defaults: `SoftmaxCrossEntropyWithLogits`, `MSELoss`,
`SmoothL1Loss`, `HuberLoss`, `KLDivLoss`, `CosineEmbeddingLoss`,
`L1Loss` and `BCEWithLogitsLoss`."""
from __future__ import annotations

from typing import Any

import numpy as np

from .. import ops
from .cell import Cell
from .checks import check_bool, check_choice, check_float, check_rank, layer_error, static_shape

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
        _check_broadcast(self, logits, labels)

    def construct(self, logits: np.ndarray, labels: np.ndarray) -> np.ndarray:
        return ops.mse_loss(logits, labels, reduction=self.reduction)

    def extend_repr(self) -> str:
        return f"reduction={self.reduction}"


def _check_broadcast(cell: Cell, logits: Any, labels: Any) -> None:
    a, b = static_shape(logits), static_shape(labels)
    if a is None or b is None:
        return
    for x, y in zip(reversed(a), reversed(b)):
        if isinstance(x, int) and isinstance(y, int) and 1 not in (x, y) and x != y:
            raise layer_error(cell, f"logits shape {a} and labels shape {b} do not broadcast")


def _reduce(loss: np.ndarray, reduction: str) -> np.ndarray:
    if reduction == "mean":
        return loss.mean()
    if reduction == "sum":
        return loss.sum()
    return loss


class L1Loss(Cell):
    """|logits - labels|, reduced by `reduction` ('mean', 'sum' or 'none')."""

    def __init__(self, reduction: str = "mean") -> None:
        super().__init__()
        self.reduction = check_choice("L1Loss", "reduction", reduction, _REDUCTIONS)

    def check_inputs(self, logits: Any, labels: Any) -> None:
        _check_broadcast(self, logits, labels)

    def construct(self, logits: np.ndarray, labels: np.ndarray) -> np.ndarray:
        return _reduce(ops.abs(logits - labels), self.reduction)

    def extend_repr(self) -> str:
        return f"reduction={self.reduction}"


def _softplus(x: np.ndarray) -> np.ndarray:
    """log(1 + exp(x)) without overflow: max(x, 0) + log(1 + exp(-|x|))."""
    return ops.maximum(x, 0.0) + ops.log(1.0 + ops.exp(-ops.abs(x)))


class BCEWithLogitsLoss(Cell):
    """Binary cross entropy of sigmoid(logits) against labels in [0, 1], computed from the
    logits without overflow: `weight * (pos_weight * labels * softplus(-logits) + (1 - labels)
    * softplus(logits))`, reduced by `reduction`. `weight` and `pos_weight` (arrays that
    broadcast to the logits; `pos_weight` along the classes on the last axis) are optional."""

    def __init__(self, reduction: str = "mean", weight: Any = None,
                 pos_weight: Any = None) -> None:
        super().__init__()
        self.reduction = check_choice("BCEWithLogitsLoss", "reduction", reduction, _REDUCTIONS)
        for arg, value in (("weight", weight), ("pos_weight", pos_weight)):
            if value is not None and not isinstance(value, np.ndarray):
                raise TypeError(f"BCEWithLogitsLoss: {arg} must be an array or None, got "
                                f"{type(value).__name__}")
        self.weight = weight
        self.pos_weight = pos_weight

    def check_inputs(self, logits: Any, labels: Any) -> None:
        a, b = static_shape(logits), static_shape(labels)
        if a is not None and b is not None and a != b:
            raise layer_error(self, f"logits shape {a} and labels shape {b} must be equal")
        dtype = getattr(logits, "dtype", None)
        if dtype is not None and np.dtype(dtype).kind != "f":
            raise layer_error(self, f"logits must be floating point, got {dtype}")

    def construct(self, logits: np.ndarray, labels: np.ndarray) -> np.ndarray:
        if self.pos_weight is None:
            loss = labels * _softplus(-logits) + (1.0 - labels) * _softplus(logits)
        else:
            loss = (self.pos_weight * labels * _softplus(-logits) +
                    (1.0 - labels) * _softplus(logits))
        if self.weight is not None:
            loss = loss * self.weight
        return _reduce(loss, self.reduction)

    def extend_repr(self) -> str:
        return f"reduction={self.reduction}"


class SmoothL1Loss(Cell):
    """`0.5 * d**2 / beta` where |d| = |logits - labels| < beta, else `|d| - 0.5 * beta`
    (MindSpore's `nn.SmoothL1Loss`; its default reduction is 'none')."""

    def __init__(self, beta: float = 1.0, reduction: str = "none") -> None:
        super().__init__()
        self.beta = check_float("SmoothL1Loss", "beta", beta, 0.0, float("inf"),
                                include_low=False)
        self.reduction = check_choice("SmoothL1Loss", "reduction", reduction, _REDUCTIONS)

    def check_inputs(self, logits: Any, labels: Any) -> None:
        _check_broadcast(self, logits, labels)

    def construct(self, logits: np.ndarray, labels: np.ndarray) -> np.ndarray:
        diff = ops.abs(logits - labels)
        loss = ops.select(diff < self.beta, 0.5 * diff * diff / self.beta, diff - 0.5 * self.beta)
        return _reduce(loss, self.reduction)

    def extend_repr(self) -> str:
        return f"beta={self.beta}, reduction={self.reduction}"


class HuberLoss(Cell):
    """`0.5 * d**2` where |d| = |logits - labels| < delta, else `delta * (|d| - 0.5 * delta)`
    (MindSpore's `nn.HuberLoss`)."""

    def __init__(self, reduction: str = "mean", delta: float = 1.0) -> None:
        super().__init__()
        self.reduction = check_choice("HuberLoss", "reduction", reduction, _REDUCTIONS)
        self.delta = check_float("HuberLoss", "delta", delta, 0.0, float("inf"),
                                 include_low=False)

    def check_inputs(self, logits: Any, labels: Any) -> None:
        _check_broadcast(self, logits, labels)

    def construct(self, logits: np.ndarray, labels: np.ndarray) -> np.ndarray:
        diff = ops.abs(logits - labels)
        loss = ops.select(diff < self.delta, 0.5 * diff * diff,
                          self.delta * (diff - 0.5 * self.delta))
        return _reduce(loss, self.reduction)

    def extend_repr(self) -> str:
        return f"reduction={self.reduction}, delta={self.delta}"


class KLDivLoss(Cell):
    """`labels * (log(labels) - logits)` for log-probabilities `logits` (0 where a label is
    0), MindSpore's `nn.KLDivLoss`: 'mean' averages every element, 'batchmean' divides the
    sum by the batch size (the true KL divergence), 'sum', 'none'."""

    def __init__(self, reduction: str = "mean") -> None:
        super().__init__()
        self.reduction = check_choice("KLDivLoss", "reduction", reduction,
                                      (*_REDUCTIONS, "batchmean"))

    def check_inputs(self, logits: Any, labels: Any) -> None:
        a, b = static_shape(logits), static_shape(labels)
        if a is not None and b is not None and a != b:
            raise layer_error(self, f"logits shape {a} and labels shape {b} must be equal")

    def construct(self, logits: np.ndarray, labels: np.ndarray) -> np.ndarray:
        positive = labels > 0
        safe = ops.select(positive, labels, ops.ones_like(labels))
        loss = labels * (ops.log(safe) - logits)
        if self.reduction == "batchmean":
            return ops.sum(loss) / logits.shape[0]
        return _reduce(loss, self.reduction)

    def extend_repr(self) -> str:
        return f"reduction={self.reduction}"


class CosineEmbeddingLoss(Cell):
    """With cos the cosine similarity of `logits_x1` and `logits_x2` along axis 1: `1 - cos`
    where `labels` is 1, `max(0, cos - margin)` where it is -1, 0 elsewhere (MindSpore's
    `nn.CosineEmbeddingLoss`)."""

    def __init__(self, margin: float = 0.0, reduction: str = "mean") -> None:
        super().__init__()
        self.margin = check_float("CosineEmbeddingLoss", "margin", margin, -1.0, 1.0)
        self.reduction = check_choice("CosineEmbeddingLoss", "reduction", reduction,
                                      _REDUCTIONS)

    def check_inputs(self, logits_x1: Any, logits_x2: Any, labels: Any) -> None:
        a, b = static_shape(logits_x1), static_shape(logits_x2)
        if a is not None and b is not None and a != b:
            raise layer_error(self, f"logits_x1 shape {a} and logits_x2 shape {b} must be "
                                    f"equal")
        c = static_shape(labels)
        if a is not None and c is not None and len(a) >= 2 and c != a[:1] + a[2:]:
            raise layer_error(self, f"labels have shape {c}, expected {a[:1] + a[2:]}")

    def construct(self, logits_x1: np.ndarray, logits_x2: np.ndarray,
                  labels: np.ndarray) -> np.ndarray:
        dot = ops.sum(logits_x1 * logits_x2, 1)
        norms = ops.sqrt(ops.sum(logits_x1 * logits_x1, 1)) * \
            ops.sqrt(ops.sum(logits_x2 * logits_x2, 1))
        cosine = dot / norms
        zeros = ops.zeros_like(cosine)
        loss = ops.select(labels == 1, 1.0 - cosine, zeros) + \
            ops.select(labels == -1, ops.maximum(cosine - self.margin, 0.0), zeros)
        return _reduce(loss, self.reduction)

    def extend_repr(self) -> str:
        return f"margin={self.margin}, reduction={self.reduction}"

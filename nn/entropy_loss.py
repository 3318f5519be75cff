"""Likelihood losses with MindSpore 2.x's arguments and results: `CrossEntropyLoss` (class
indices or probabilities, `weight`, `ignore_index`, `reduction`, `label_smoothing`), `NLLLoss`
and `BCELoss`. Each is a composition of ops, so it compiles and differentiates like user code."""
from __future__ import annotations

from typing import Any

import numpy as np

from .. import ops
from .cell import Cell
from .checks import check_choice, check_float, layer_error, static_shape

_REDUCTIONS = ("mean", "sum", "none")
_FLOATS = (np.float16, np.float32, np.float64)
BCE_EPSILON = 1e-12
"""MindSpore's BinaryCrossEntropy adds it inside both logarithms (so log(0) is finite)."""


def _check_weight(layer: str, weight: Any) -> Any:
    if weight is not None and not (isinstance(weight, np.ndarray) and weight.ndim == 1 and
                                   weight.dtype.kind == "f"):
        raise TypeError(f"{layer}: weight must be a 1-D float array (one weight per class) or "
                        f"None, got {weight!r}")
    return weight


def _check_int(layer: str, arg: str, value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, int | np.integer):
        raise TypeError(f"{layer}: {arg} must be an int, got {value!r}")
    return int(value)


def _check_classes(cell: Cell, logits: Any, labels: Any, weight: Any) -> None:
    """Logits [N, C, ...] (or [C]); class ids [N, ...] or probabilities shaped as the logits."""
    shape, labels_shape = static_shape(logits), static_shape(labels)
    if shape is None or labels_shape is None:
        return
    if not shape:
        raise layer_error(cell, "logits must have the classes on axis 1 (or be 1-D), got a 0-d "
                                "array")
    probabilities = np.dtype(labels.dtype) in [np.dtype(t) for t in _FLOATS]
    expected = shape if probabilities else shape[:1] + shape[2:] if len(shape) > 1 else ()
    if len(labels_shape) != len(expected) or any(
            isinstance(a, int) and isinstance(b, int) and a != b
            for a, b in zip(labels_shape, expected)):
        what = "probabilities" if probabilities else "class ids"
        raise layer_error(cell, f"labels ({what}) have shape {labels_shape}, expected "
                                f"{expected} for logits of shape {shape}")
    if not probabilities and np.dtype(labels.dtype).kind not in "iu":
        raise layer_error(cell, f"labels must be integer class ids or float probabilities, got "
                                f"{labels.dtype}")
    classes = shape[1] if len(shape) > 1 else shape[0]
    if weight is not None and isinstance(classes, int) and weight.shape[0] != classes:
        raise layer_error(cell, f"weight has {weight.shape[0]} entries for {classes} classes")


def _class_shaped(weight: np.ndarray, rank: int) -> Any:
    """The per-class weight [C] broadcast along axis 1 of a rank-`rank` array."""
    return ops.reshape(weight, (1, -1) + (1,) * (rank - 2)) if rank > 1 else weight


class NLLLoss(Cell):
    """Negative log likelihood of log-probabilities [N, C, ...] at class ids [N, ...]:
    `-weight[t] * logits[n, t]`, skipping targets equal to `ignore_index`; 'mean' divides by
    the summed weights of the targets kept (MindSpore's `nn.NLLLoss`)."""

    def __init__(self, weight: Any = None, ignore_index: int = -100,
                 reduction: str = "mean") -> None:
        super().__init__()
        self.weight = _check_weight("NLLLoss", weight)
        self.ignore_index = _check_int("NLLLoss", "ignore_index", ignore_index)
        self.reduction = check_choice("NLLLoss", "reduction", reduction, _REDUCTIONS)

    def check_inputs(self, logits: Any, labels: Any) -> None:
        if np.dtype(getattr(labels, "dtype", np.int32)).kind not in "iu":
            raise layer_error(self, f"labels must be integer class ids, got {labels.dtype}")
        _check_classes(self, logits, labels, self.weight)

    def construct(self, logits: np.ndarray, labels: np.ndarray) -> np.ndarray:
        return _nll(logits, labels, self.weight, self.ignore_index, self.reduction)

    def extend_repr(self) -> str:
        return f"ignore_index={self.ignore_index}, reduction={self.reduction}"


def _nll(log_probs: Any, labels: Any, weight: Any, ignore_index: int, reduction: str) -> Any:
    if log_probs.ndim == 1:  # one sample: classes on axis 0, a 0-d target
        loss = _nll(ops.expand_dims(log_probs, 0), ops.reshape(labels, (1,)), weight,
                    ignore_index, reduction)
        return loss[0] if reduction == "none" else loss
    return ops.nll_loss(log_probs, labels, weight, ignore_index, reduction)


class CrossEntropyLoss(Cell):
    """Cross entropy of softmax(logits) along axis 1 (the classes; axis 0 of a 1-D input),
    MindSpore's `nn.CrossEntropyLoss`. Integer labels are class ids: the NLL of the
    log-softmax with `weight` and `ignore_index`; with `label_smoothing` e the loss is
    `(1 - e) * nll + e / C * smooth`, `smooth` the weighted sum of -log-probabilities over the
    classes. Float labels are probabilities shaped as the logits (smoothed towards 1/C); 'mean'
    then divides by the number of samples."""

    def __init__(self, weight: Any = None, ignore_index: int = -100, reduction: str = "mean",
                 label_smoothing: float = 0.0) -> None:
        super().__init__()
        self.weight = _check_weight("CrossEntropyLoss", weight)
        self.ignore_index = _check_int("CrossEntropyLoss", "ignore_index", ignore_index)
        self.reduction = check_choice("CrossEntropyLoss", "reduction", reduction, _REDUCTIONS)
        self.label_smoothing = check_float("CrossEntropyLoss", "label_smoothing",
                                           label_smoothing, 0.0, 1.0)

    def check_inputs(self, logits: Any, labels: Any) -> None:
        _check_classes(self, logits, labels, self.weight)

    def construct(self, logits: np.ndarray, labels: np.ndarray) -> np.ndarray:
        axis = 0 if logits.ndim == 1 else 1
        log_probs = ops.log_softmax(logits, axis)
        if labels.dtype in _FLOATS:
            return self._with_probabilities(log_probs, labels, axis)
        loss = _nll(log_probs, labels, self.weight, self.ignore_index, self.reduction)
        if self.label_smoothing == 0.0:
            return loss
        smooth = self._smooth(log_probs, labels, axis)
        return (1.0 - self.label_smoothing) * loss + \
            self.label_smoothing / logits.shape[axis] * smooth

    def _smooth(self, log_probs: Any, labels: Any, axis: int) -> Any:
        """The weighted sum of -log-probabilities over the classes, for the targets kept,
        reduced as the NLL is (its 'mean' divides by the kept targets' summed weights)."""
        if self.weight is not None:
            log_probs = log_probs * _class_shaped(self.weight, log_probs.ndim)
        kept = labels != self.ignore_index
        per = -ops.sum(log_probs, axis) * kept
        if self.reduction == "none":
            return per
        if self.reduction == "sum":
            return ops.sum(per)
        if self.weight is None:
            return ops.sum(per) / ops.sum(kept)
        safe = ops.select(kept, labels, ops.zeros_like(labels))
        return ops.sum(per) / ops.sum(ops.gather(self.weight, safe, 0) * kept)

    def _with_probabilities(self, log_probs: Any, labels: Any, axis: int) -> Any:
        classes = log_probs.shape[axis]
        if self.label_smoothing > 0.0:
            labels = labels * (1.0 - self.label_smoothing) + self.label_smoothing / classes
        terms = log_probs * labels
        if self.weight is not None:
            terms = terms * _class_shaped(self.weight, log_probs.ndim)
        if self.reduction == "mean":
            return -ops.sum(terms) / (log_probs.size / classes)
        if self.reduction == "sum":
            return -ops.sum(terms)
        return -ops.sum(terms, axis)

    def extend_repr(self) -> str:
        return (f"ignore_index={self.ignore_index}, reduction={self.reduction}, "
                f"label_smoothing={self.label_smoothing}")


class BCELoss(Cell):
    """Binary cross entropy of probabilities `logits` in [0, 1] against `labels`:
    `-weight * (labels * log(logits + eps) + (1 - labels) * log(1 - logits + eps))`, eps =
    1e-12 as MindSpore's kernel adds (MindSpore's `nn.BCELoss`; `weight` broadcasts to the
    logits)."""

    def __init__(self, weight: Any = None, reduction: str = "mean") -> None:
        super().__init__()
        if weight is not None and not isinstance(weight, np.ndarray):
            raise TypeError(f"BCELoss: weight must be an array or None, got "
                            f"{type(weight).__name__}")
        self.weight = weight
        self.reduction = check_choice("BCELoss", "reduction", reduction, _REDUCTIONS)

    def check_inputs(self, logits: Any, labels: Any) -> None:
        a, b = static_shape(logits), static_shape(labels)
        if a is not None and b is not None and a != b:
            raise layer_error(self, f"logits shape {a} and labels shape {b} must be equal")

    def construct(self, logits: np.ndarray, labels: np.ndarray) -> np.ndarray:
        loss = -(labels * ops.log(logits + BCE_EPSILON) +
                 (1.0 - labels) * ops.log(1.0 - logits + BCE_EPSILON))
        if self.weight is not None:
            loss = loss * self.weight
        if self.reduction == "mean":
            return ops.mean(loss)
        if self.reduction == "sum":
            return ops.sum(loss)
        return loss

    def extend_repr(self) -> str:
        return f"reduction={self.reduction}"

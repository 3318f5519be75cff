"""MindSpore's `mindspore.train` metrics, on NumPy values with MindSpore's formulas:
`Accuracy`, `Loss`, `TopKCategoricalAccuracy` (`Top1`, `Top5`), `MAE`, `MSE`, `Precision`,
`Recall`, `Fbeta`/`F1`. Each has `clear`, `update(*inputs)`, `eval()`; `Model` builds them from
names (`metrics={"acc", "loss"}`) with `get_metric_fn`."""
from __future__ import annotations

import functools
import sys
from typing import Any, Callable

import numpy as np

__all__ = ["Metric", "EvaluationBase", "rearrange_inputs", "Accuracy", "Loss",
           "TopKCategoricalAccuracy", "Top1CategoricalAccuracy", "Top5CategoricalAccuracy",
           "MAE", "MSE", "Precision", "Recall", "Fbeta", "F1", "get_metric_fn", "get_metrics",
           "names"]

_EPS = sys.float_info.min
"""MindSpore's guard against 0/0 in precision, recall and F-beta: a class never predicted (or
never present) scores 0."""


def rearrange_inputs(update: Callable[..., Any]) -> Callable[..., Any]:
    """Makes `update` pick its inputs by the metric's `indexes` (see `Metric.set_indexes`)."""
    @functools.wraps(update)
    def wrapper(self: Metric, *inputs: Any) -> Any:
        indexes = self.indexes
        return update(self, *([inputs[i] for i in indexes] if indexes else inputs))
    return wrapper


class Metric:
    """The base class: subclasses define `clear`, `update(*inputs)` and `eval`; calling a
    metric clears, updates once and evaluates."""

    def __init__(self) -> None:
        self._indexes: list[int] | None = None

    @property
    def indexes(self) -> list[int] | None:
        """Which of `update`'s inputs a `rearrange_inputs` update reads (None: all, in order)."""
        return getattr(self, "_indexes", None)

    def set_indexes(self, indexes: list[int]) -> Metric:
        """Have `update` read `inputs[i] for i in indexes`; returns self."""
        if not isinstance(indexes, list) or not all(isinstance(i, int) for i in indexes):
            raise ValueError(f"set_indexes: expected a list of ints, got {indexes!r}")
        self._indexes = indexes
        return self

    @staticmethod
    def _convert_data(data: Any) -> np.ndarray:
        if isinstance(data, list):
            return np.array(data)
        if isinstance(data, np.ndarray):
            return np.asarray(data)
        raise TypeError(f"a metric's inputs must be Tensors, lists or arrays, got "
                        f"{type(data).__name__}")

    def clear(self) -> None:
        raise NotImplementedError(f"{type(self).__name__} must define clear()")

    def update(self, *inputs: Any) -> None:
        raise NotImplementedError(f"{type(self).__name__} must define update()")

    def eval(self) -> Any:
        raise NotImplementedError(f"{type(self).__name__} must define eval()")

    def __call__(self, *inputs: Any) -> Any:
        self.clear()
        self.update(*inputs)
        return self.eval()

    def _inputs(self, inputs: tuple, count: int) -> list[np.ndarray]:
        if len(inputs) != count:
            raise ValueError(f"{type(self).__name__}.update needs {count} input(s), got "
                             f"{len(inputs)}")
        return [self._convert_data(x) for x in inputs]

    def _empty(self) -> RuntimeError:
        return RuntimeError(f"{type(self).__name__}.eval: no samples (call update before eval)")


def _is_onehot(y: np.ndarray) -> bool:
    """0/1 values summing to 1 along axis 1."""
    return y.ndim > 1 and bool(np.equal(y ** 2, y).all()) and bool(
        np.equal(y.sum(axis=1), 1).all())


def _labels(y_pred: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Class indices from index or one-hot labels."""
    return y.argmax(axis=1) if y_pred.ndim == y.ndim and _is_onehot(y) else y


class EvaluationBase(Metric):
    """A metric of classification (`y_pred` [N, C] scores, `y` indices or one-hot) or
    multilabel (`y_pred` and `y` both [N, C] of 0/1) data."""

    def __init__(self, eval_type: str) -> None:
        super().__init__()
        if eval_type not in ("classification", "multilabel"):
            raise TypeError(f"eval_type must be 'classification' or 'multilabel', got "
                            f"{eval_type!r}")
        self._type = eval_type

    def _checked(self, inputs: tuple) -> tuple[np.ndarray, np.ndarray]:
        y_pred, y = self._inputs(inputs, 2)
        if self._type == "classification":
            y = _labels(y_pred, y)
            if y_pred.ndim != y.ndim + 1 or y.shape != (y_pred.shape[0],) + y_pred.shape[2:]:
                raise ValueError(f"{type(self).__name__}: predictions of shape {y_pred.shape} "
                                 f"need labels of shape {(y_pred.shape[0],) + y_pred.shape[2:]}, "
                                 f"got {y.shape}")
        elif y_pred.shape != y.shape or not (np.isin(y_pred, (0, 1)).all()
                                             and np.isin(y, (0, 1)).all()):
            raise ValueError(f"{type(self).__name__}: multilabel predictions and labels must "
                             f"be 0/1 arrays of one shape, got {y_pred.shape} and {y.shape}")
        return y_pred, y

    def _classes(self, y_pred: np.ndarray) -> int:
        if self._class_num == 0:
            self._class_num = y_pred.shape[1]
        elif y_pred.shape[1] != self._class_num:
            raise ValueError(f"{type(self).__name__}: {y_pred.shape[1]} classes, but earlier "
                             f"updates had {self._class_num}")
        return self._class_num


class Accuracy(EvaluationBase):
    """The fraction of samples whose largest score is at the label (multilabel: whose 0/1
    predictions all equal the labels)."""

    def __init__(self, eval_type: str = "classification") -> None:
        super().__init__(eval_type)
        self.clear()

    def clear(self) -> None:
        self._correct_num, self._total_num, self._class_num = 0, 0, 0

    @rearrange_inputs
    def update(self, *inputs: Any) -> None:
        y_pred, y = self._checked(inputs)
        classes = self._classes(y_pred)
        if self._type == "classification":
            result = (y_pred.argmax(axis=1) == y).reshape(-1)
        else:
            last = y_pred.ndim - 1
            result = (y_pred.swapaxes(1, last).reshape(-1, classes)
                      == y.swapaxes(1, last).reshape(-1, classes)).all(axis=1)
        self._correct_num += int(result.sum())
        self._total_num += result.shape[0]

    def eval(self) -> float:
        if self._total_num == 0:
            raise self._empty()
        return self._correct_num / self._total_num


class Loss(Metric):
    """The mean over updates of each update's (mean) loss."""

    def __init__(self) -> None:
        super().__init__()
        self.clear()

    def clear(self) -> None:
        self._sum_loss, self._total_num = 0.0, 0

    @rearrange_inputs
    def update(self, *inputs: Any) -> None:
        (loss,) = self._inputs(inputs, 1)
        if loss.ndim > 1:
            raise ValueError(f"Loss.update: the loss must be 0-d or 1-d, got shape {loss.shape}")
        self._sum_loss += float(loss.reshape(-1).mean(-1))
        self._total_num += 1

    def eval(self) -> float:
        if self._total_num == 0:
            raise self._empty()
        return self._sum_loss / self._total_num


class TopKCategoricalAccuracy(Metric):
    """The fraction of samples whose label is among the `k` largest scores (ties: the earlier
    class first)."""

    def __init__(self, k: int) -> None:
        super().__init__()
        if not isinstance(k, int) or isinstance(k, bool):
            raise TypeError(f"TopKCategoricalAccuracy: k must be an int, got {k!r}")
        if k < 1:
            raise ValueError(f"TopKCategoricalAccuracy: k must be at least 1, got {k}")
        self.k = k
        self.clear()

    def clear(self) -> None:
        self._correct_num, self._samples_num = 0, 0

    @rearrange_inputs
    def update(self, *inputs: Any) -> None:
        y_pred, y = self._inputs(inputs, 2)
        y = _labels(y_pred, y)
        top = np.argsort(-y_pred, axis=1, kind="stable")[:, :self.k]
        self._correct_num += int((top == y.reshape(-1, 1)).any(axis=1).sum())
        self._samples_num += y_pred.shape[0]

    def eval(self) -> float:
        if self._samples_num == 0:
            raise self._empty()
        return self._correct_num / self._samples_num


class Top1CategoricalAccuracy(TopKCategoricalAccuracy):
    """`TopKCategoricalAccuracy(1)`."""

    def __init__(self) -> None:
        super().__init__(1)


class Top5CategoricalAccuracy(TopKCategoricalAccuracy):
    """`TopKCategoricalAccuracy(5)`."""

    def __init__(self) -> None:
        super().__init__(5)


class _MeanError(Metric):
    """Sum of an elementwise error over all elements, divided by the number of samples
    (MindSpore's definition: for [N, D] data that is D times the per-element mean)."""

    def __init__(self) -> None:
        super().__init__()
        self.clear()

    def clear(self) -> None:
        self._error_sum, self._samples_num = 0.0, 0

    @staticmethod
    def _error(diff: np.ndarray) -> np.ndarray:
        raise NotImplementedError

    @rearrange_inputs
    def update(self, *inputs: Any) -> None:
        y_pred, y = self._inputs(inputs, 2)
        self._error_sum += float(self._error(y.reshape(y_pred.shape) - y_pred).sum())
        self._samples_num += y.shape[0]

    def eval(self) -> float:
        if self._samples_num == 0:
            raise self._empty()
        return self._error_sum / self._samples_num


class MAE(_MeanError):
    """Mean absolute error."""

    @staticmethod
    def _error(diff: np.ndarray) -> np.ndarray:
        return np.abs(diff)


class MSE(_MeanError):
    """Mean squared error."""

    @staticmethod
    def _error(diff: np.ndarray) -> np.ndarray:
        return np.square(diff)


class _PrecisionRecall(EvaluationBase):
    """Precision (`tp / predicted positives`) or recall (`tp / actual positives`): per class
    for classification, per sample for multilabel; `eval(average=True)` their mean."""

    _of_prediction = True

    def __init__(self, eval_type: str = "classification") -> None:
        super().__init__(eval_type)
        self.clear()

    def clear(self) -> None:
        self._class_num = 0
        self._true_positives: Any = np.empty(0) if self._type == "multilabel" else 0
        self._positives: Any = np.empty(0) if self._type == "multilabel" else 0

    @rearrange_inputs
    def update(self, *inputs: Any) -> None:
        y_pred, y = self._checked(inputs)
        classes = self._classes(y_pred)
        if self._type == "classification":
            if y.size and y.max() + 1 > classes:
                raise ValueError(f"{type(self).__name__}: a label is {int(y.max())} but the "
                                 f"predictions have {classes} classes")
            y = np.eye(classes)[y.reshape(-1)]
            y_pred = np.eye(classes)[y_pred.argmax(axis=1).reshape(-1)]
        else:
            y_pred = y_pred.swapaxes(1, 0).reshape(classes, -1)
            y = y.swapaxes(1, 0).reshape(classes, -1)
        positives = (y_pred if self._of_prediction else y).sum(axis=0)
        true_positives = (y * y_pred).sum(axis=0)
        if self._type == "multilabel":
            self._true_positives = np.concatenate((self._true_positives, true_positives))
            self._positives = np.concatenate((self._positives, positives))
        else:
            self._true_positives = self._true_positives + true_positives
            self._positives = self._positives + positives

    def eval(self, average: bool = False) -> Any:
        if self._class_num == 0:
            raise self._empty()
        if not isinstance(average, bool):
            raise TypeError(f"{type(self).__name__}.eval: average must be a bool")
        result = self._true_positives / (self._positives + _EPS)
        return result.mean() if average else result


class Precision(_PrecisionRecall):
    """Precision: true positives over predicted positives."""


class Recall(_PrecisionRecall):
    """Recall: true positives over actual positives."""

    _of_prediction = False


class Fbeta(Metric):
    """Per class `(1 + b^2) tp / (b^2 (tp + fn) + tp + fp)` of classification data;
    `eval(average=True)` their mean."""

    def __init__(self, beta: float) -> None:
        super().__init__()
        if not beta > 0:
            raise ValueError(f"Fbeta: beta must be greater than 0, got {beta!r}")
        self.beta = beta
        self.clear()

    def clear(self) -> None:
        self._true_positives: Any = 0
        self._actual_positives: Any = 0
        self._positives: Any = 0
        self._class_num = 0

    @rearrange_inputs
    def update(self, *inputs: Any) -> None:
        y_pred, y = self._inputs(inputs, 2)
        y = _labels(y_pred, y)
        if self._class_num == 0:
            self._class_num = y_pred.shape[1]
        elif y_pred.shape[1] != self._class_num:
            raise ValueError(f"Fbeta: {y_pred.shape[1]} classes, but earlier updates had "
                             f"{self._class_num}")
        classes = self._class_num
        if y.size and y.max() + 1 > classes:
            raise ValueError(f"Fbeta: a label is {int(y.max())} but the predictions have "
                             f"{classes} classes")
        y = np.eye(classes)[y.reshape(-1)]
        y_pred = np.eye(classes)[y_pred.argmax(axis=1).reshape(-1)]
        self._true_positives = self._true_positives + (y * y_pred).sum(axis=0)
        self._positives = self._positives + y_pred.sum(axis=0)
        self._actual_positives = self._actual_positives + y.sum(axis=0)

    def eval(self, average: bool = False) -> Any:
        if self._class_num == 0:
            raise RuntimeError("Fbeta.eval: no samples (call update before eval)")
        b2 = self.beta ** 2
        result = (1.0 + b2) * self._true_positives / (
            b2 * self._actual_positives + self._positives + _EPS)
        return result.mean() if average else result


class F1(Fbeta):
    """`Fbeta(1)`."""

    def __init__(self) -> None:
        super().__init__(1.0)


_FACTORY: dict[str, Callable[[], Metric]] = {
    "accuracy": Accuracy, "acc": Accuracy, "precision": Precision, "recall": Recall,
    "F1": F1, "top_1_accuracy": Top1CategoricalAccuracy,
    "top_5_accuracy": Top5CategoricalAccuracy, "mae": MAE, "mse": MSE, "loss": Loss,
}


def names() -> list[str]:
    """The metric names `get_metric_fn` (and `Model(metrics={...})`) accept."""
    return sorted(_FACTORY)


def get_metric_fn(name: str, *args: Any, **kwargs: Any) -> Metric:
    """A new metric by its name ("acc", "loss", "F1", ...)."""
    if name not in _FACTORY:
        raise KeyError(f"unknown metric {name!r}; amber has {names()}")
    return _FACTORY[name](*args, **kwargs)


def get_metrics(metrics: Any) -> dict[str, Metric] | None:
    """Model's `metrics` argument (a set or list of names, or a dict of name -> Metric) as a
    dict of name -> Metric."""
    if metrics is None:
        return None
    if isinstance(metrics, dict):
        for name, metric in metrics.items():
            if not isinstance(metric, Metric):
                raise TypeError(f"metrics[{name!r}] must be a Metric, got "
                                f"{type(metric).__name__}")
        return dict(metrics)
    if isinstance(metrics, set | list | tuple):
        return {name: get_metric_fn(name) for name in metrics}
    raise TypeError(f"metrics must be a set of names or a dict of name -> Metric, got "
                    f"{type(metrics).__name__}")

"""MindSpore's monitoring callbacks: `LossMonitor` (prints the loss, stops on NaN/inf),
`TimeMonitor` (epoch and step times), `History` (the loss and evaluation results of each
epoch), `LambdaCallback` (hooks from functions) and `EarlyStopping`."""
from __future__ import annotations

import time
from pathlib import Path
from typing import Any, Callable

import numpy as np

from ..communication.management import mean_over_ranks
from ..communication.parallel import ParallelMode, get_auto_parallel_context
from .hooks import HOOKS, Callback, RunContext

__all__ = ["LossMonitor", "TimeMonitor", "History", "LambdaCallback", "EarlyStopping",
           "scalar_loss"]

_SMALLER_IS_BETTER = ("hausdorff_distance", "mae", "mse", "loss", "perplexity",
                      "mean_surface_distance", "root_mean_square_distance", "eval_loss")
"""Monitored names EarlyStopping's mode="auto" minimizes (MindSpore's list)."""


def scalar_loss(outputs: Any) -> Any:
    """The loss in a step's outputs as a float (the first output of a tuple; the mean of an
    array), as MindSpore's callbacks read it."""
    if isinstance(outputs, tuple | list) and outputs:
        outputs = outputs[0]
    if isinstance(outputs, np.ndarray | np.generic):
        return float(np.mean(outputs))
    return outputs


class LossMonitor(Callback):
    """Prints `epoch: E step: S, loss is L` every `per_print_times` steps (0: never) and raises
    ValueError when the loss is NaN or infinite."""

    def __init__(self, per_print_times: int = 1) -> None:
        super().__init__()
        if isinstance(per_print_times, bool) or not isinstance(per_print_times, int) \
                or per_print_times < 0:
            raise ValueError(f"LossMonitor: per_print_times must be an int >= 0, got "
                             f"{per_print_times!r}")
        self._per_print_times = per_print_times
        self._last_print_time = 0

    def on_train_begin(self, run_context: RunContext) -> None:
        self._last_print_time = 0

    def on_train_step_end(self, run_context: RunContext) -> None:
        cb_params = run_context.original_args()
        loss = scalar_loss(cb_params.net_outputs)
        step_in_epoch = (cb_params.cur_step_num - 1) % cb_params.batch_num + 1
        if isinstance(loss, float) and not np.isfinite(loss):
            raise ValueError(f"epoch: {cb_params.cur_epoch_num} step: {step_in_epoch}. Invalid "
                             "loss, terminating training.")
        due = cb_params.cur_step_num - self._last_print_time >= self._per_print_times
        if self._per_print_times and due:
            self._last_print_time = cb_params.cur_step_num
            print(f"epoch: {cb_params.cur_epoch_num} step: {step_in_epoch}, loss is {loss}",
                  flush=True)


class TimeMonitor(Callback):
    """Prints each epoch's time and time per step, in milliseconds."""

    def __init__(self, data_size: int | None = None, data_time: bool = False) -> None:
        super().__init__()
        if data_size is not None and (not isinstance(data_size, int) or data_size <= 0):
            raise ValueError(f"TimeMonitor: data_size must be a positive int, got {data_size!r}")
        self.data_size = data_size
        self.epoch_time = 0.0

    def on_train_epoch_begin(self, run_context: RunContext) -> None:
        self.epoch_time = time.perf_counter()

    def on_train_epoch_end(self, run_context: RunContext) -> None:
        cb_params = run_context.original_args()
        epoch_ms = (time.perf_counter() - self.epoch_time) * 1000
        steps = self.data_size or cb_params.batch_num
        print(f"Train epoch time: {epoch_ms:5.3f} ms, per step time: {epoch_ms / steps:5.3f} ms",
              flush=True)


class History(Callback):
    """Records, at the end of each training epoch, the epoch number (`history.epoch`) and the
    loss of its last step and any evaluation results (`history.history`, name -> list);
    `plot(path)` draws them. In a data-parallel job each rank records its own: the loss of
    its rows of the last batch (MindSpore's History does the same)."""

    def __init__(self) -> None:
        super().__init__()
        self.history: dict[str, list[Any]] = {}
        self.epoch: dict[str, list[int]] = {"epoch": []}
        self._epochs_of: dict[str, list[int]] = {}
        """The epoch of each value of `history` (evaluation results may start later)."""

    def on_train_begin(self, run_context: RunContext) -> None:
        self.epoch = {"epoch": []}

    def on_train_epoch_end(self, run_context: RunContext) -> None:
        cb_params = run_context.original_args()
        epoch = cb_params.get("cur_epoch_num", 1)
        self.epoch["epoch"].append(epoch)
        record = {"net_output": scalar_loss(cb_params.net_outputs)}
        record.update(cb_params.get("eval_results") or {})
        for name, value in record.items():
            self.history.setdefault(name, []).append(value)
            self._epochs_of.setdefault(name, []).append(epoch)

    def plot(self, path: str | Path, title: str = "training") -> Path:
        """Draw each recorded number against the epoch, one panel per name ("loss" for
        MindSpore's `net_output`), into `path` (PNG, SVG, PDF: by its suffix); returns the file.
        Results that are not one number per epoch (a per-class array) are left out. Needs
        matplotlib (the `examples` extra)."""
        from .plots import plot_curves
        numbers = [name for name, values in self.history.items() if values and all(
            np.ndim(v) == 0 and np.asarray(v).dtype.kind in "biuf" for v in values)]
        if not numbers:
            raise ValueError("History.plot: no numbers recorded yet; pass the History to "
                             "Model.train / fit as a callback first")
        label = {name: "loss" if name == "net_output" else name for name in numbers}
        return plot_curves({label[n]: self.history[n] for n in numbers}, path, title,
                           epochs={label[n]: self._epochs_of[n] for n in numbers})


class LambdaCallback(Callback):
    """A callback whose hooks are the functions given by name (`on_train_step_end=fn`, ...);
    each takes the RunContext."""

    def __init__(self, **hooks: Callable[[RunContext], Any] | None) -> None:
        super().__init__()
        for name, fn in hooks.items():
            if name not in HOOKS:
                raise TypeError(f"LambdaCallback: unknown hook {name!r}; the hooks are "
                                f"{', '.join(HOOKS)}")
            if fn is not None:
                setattr(self, name, fn)


class EarlyStopping(Callback):
    """Stops training (`run_context.request_stop()`) once `monitor` ("loss", "eval_loss" or a
    metric name of `Model.fit`'s evaluation) has not improved by more than `min_delta` for
    `patience` epochs; `restore_best_weights` puts back the best epoch's parameters. In a
    data-parallel job it watches the mean of the ranks' values (as MindSpore's does), so every
    rank stops at the same epoch."""

    def __init__(self, monitor: str = "eval_loss", min_delta: float = 0, patience: int = 0,
                 verbose: bool = False, mode: str = "auto", baseline: float | None = None,
                 restore_best_weights: bool = False) -> None:
        super().__init__()
        if mode not in ("auto", "min", "max"):
            raise ValueError(f"EarlyStopping: mode must be 'auto', 'min' or 'max', got {mode!r}")
        if isinstance(patience, bool) or not isinstance(patience, int) or patience < 0:
            raise ValueError(f"EarlyStopping: patience must be an int >= 0, got {patience!r}")
        self.monitor, self.min_delta, self.patience = monitor, abs(min_delta), patience
        self.verbose, self.mode, self.baseline = bool(verbose), mode, baseline
        self.restore_best_weights = bool(restore_best_weights)
        self.minimize = mode == "min" or (mode == "auto" and monitor in _SMALLER_IS_BETTER)
        self._reset()

    def _reset(self) -> None:
        self.wait, self.stopped_epoch = 0, 0
        self.best = np.inf if self.minimize else -np.inf
        self.best_weights: dict[str, np.ndarray] | None = None

    def _improves(self, value: float, reference: float) -> bool:
        if self.minimize:
            return value < reference - self.min_delta
        return value > reference + self.min_delta

    def on_train_begin(self, run_context: RunContext) -> None:
        self._reset()

    def _value(self, cb_params: Any) -> float | None:
        if self.monitor == "loss":
            value = scalar_loss(cb_params.get("net_outputs"))
        else:
            value = (cb_params.get("eval_results") or {}).get(self.monitor)
        if value is None:
            return None
        if np.ndim(value) != 0:
            raise ValueError(f"EarlyStopping: {self.monitor!r} must be a scalar, got shape "
                             f"{np.shape(value)}")
        if get_auto_parallel_context("parallel_mode") != ParallelMode.STAND_ALONE:
            return mean_over_ranks(float(value), f"EarlyStopping({self.monitor!r})")
        return float(value)

    def on_train_epoch_end(self, run_context: RunContext) -> None:
        cb_params = run_context.original_args()
        current = self._value(cb_params)
        if current is None:
            return
        params = cb_params.train_network.parameters_dict()
        if self.restore_best_weights and self.best_weights is None:
            self.best_weights = {k: np.array(v) for k, v in params.items()}
        self.wait += 1
        if self._improves(current, self.best):
            self.best = current
            if self.restore_best_weights:
                self.best_weights = {k: np.array(v) for k, v in params.items()}
            if self.baseline is None or self._improves(current, self.baseline):
                self.wait = 0
        if self.wait >= self.patience:
            self.stopped_epoch = cb_params.cur_epoch_num
            run_context.request_stop()
            if self.restore_best_weights and self.best_weights is not None:
                if self.verbose:
                    print("Restoring model weights from the end of the best epoch.")
                for name, value in self.best_weights.items():
                    params[name][...] = value

    def on_train_end(self, run_context: RunContext) -> None:
        if self.stopped_epoch > 0 and self.verbose:
            print(f"Epoch {self.stopped_epoch:05d}: early stopping")

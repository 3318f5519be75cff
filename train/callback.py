"""MindSpore's `mindspore.train.callback`: the `Callback` base class model files subclass
(`class EvalCallback(Callback)`) and `RunContext`. amber has no `Model.train` loop to call them
from: the hooks are plain methods that do nothing unless overridden, so files defining callbacks
import and build unchanged, and a hand-written loop may call them."""
from __future__ import annotations

from typing import Any

__all__ = ["Callback", "RunContext"]


class RunContext:
    """What a callback hook receives: `original_args()` gives the training state object."""

    def __init__(self, original_args: Any = None) -> None:
        self._original_args = original_args
        self._stop_requested = False

    def original_args(self) -> Any:
        return self._original_args

    def request_stop(self) -> None:
        self._stop_requested = True

    def get_stop_requested(self) -> bool:
        return self._stop_requested


class Callback:
    """A no-op base for training callbacks: every hook (`begin`, `epoch_begin`, `epoch_end`,
    `step_begin`, `step_end`, `end` and their `on_train_*`/`on_eval_*` forms) does nothing."""

    def __enter__(self) -> Callback:
        return self

    def __exit__(self, *err: Any) -> None:
        return None

    def begin(self, run_context: RunContext) -> None:
        """Called once before training starts."""

    def epoch_begin(self, run_context: RunContext) -> None:
        """Called before each epoch."""

    def epoch_end(self, run_context: RunContext) -> None:
        """Called after each epoch."""

    def step_begin(self, run_context: RunContext) -> None:
        """Called before each step."""

    def step_end(self, run_context: RunContext) -> None:
        """Called after each step."""

    def end(self, run_context: RunContext) -> None:
        """Called once after training."""

    on_train_begin = begin
    on_train_epoch_begin = epoch_begin
    on_train_epoch_end = epoch_end
    on_train_step_begin = step_begin
    on_train_step_end = step_end
    on_train_end = end
    on_eval_begin = begin
    on_eval_epoch_begin = epoch_begin
    on_eval_epoch_end = epoch_end
    on_eval_step_begin = step_begin
    on_eval_step_end = step_end
    on_eval_end = end

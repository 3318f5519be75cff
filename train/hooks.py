"""The callback protocol of MindSpore's `Model`: `Callback` (every hook a no-op unless
overridden; the `on_train_*`/`on_eval_*` hooks call the older `begin`/`step_end`/... names, as
MindSpore 2.x does), `RunContext` and the dict of training state it carries, and
`CallbackManager`, which runs a list of callbacks as one."""
from __future__ import annotations

from contextlib import ExitStack
from typing import Any

__all__ = ["Callback", "RunContext", "CallbackManager", "InternalCallbackParam"]


class InternalCallbackParam(dict):
    """The training state callbacks read (`cb_params.cur_step_num` or `["cur_step_num"]`)."""

    def __getattr__(self, key: str) -> Any:
        try:
            return self[key]
        except KeyError:
            raise AttributeError(f"the callback parameters have no {key!r}; they have "
                                 f"{sorted(self)}") from None

    def __setattr__(self, key: str, value: Any) -> None:
        self[key] = value


class RunContext:
    """What a hook receives: `original_args()` gives the training state (an
    `InternalCallbackParam` under `Model`); `request_stop()` ends training after this step."""

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
    """The base of training callbacks: override the hooks you need. A callback is also a
    context manager, entered for the length of `Model.train`/`eval`."""

    def __enter__(self) -> Callback:
        return self

    def __exit__(self, *err: Any) -> None:
        return None

    def begin(self, run_context: RunContext) -> None:
        """Called once before training (or evaluation) starts."""

    def epoch_begin(self, run_context: RunContext) -> None:
        """Called before each epoch."""

    def epoch_end(self, run_context: RunContext) -> None:
        """Called after each epoch."""

    def step_begin(self, run_context: RunContext) -> None:
        """Called before each step."""

    def step_end(self, run_context: RunContext) -> None:
        """Called after each step."""

    def end(self, run_context: RunContext) -> None:
        """Called once after training (or evaluation)."""

    def on_train_begin(self, run_context: RunContext) -> None:
        self.begin(run_context)

    def on_train_epoch_begin(self, run_context: RunContext) -> None:
        self.epoch_begin(run_context)

    def on_train_epoch_end(self, run_context: RunContext) -> None:
        self.epoch_end(run_context)

    def on_train_step_begin(self, run_context: RunContext) -> None:
        self.step_begin(run_context)

    def on_train_step_end(self, run_context: RunContext) -> None:
        self.step_end(run_context)

    def on_train_end(self, run_context: RunContext) -> None:
        self.end(run_context)

    def on_eval_begin(self, run_context: RunContext) -> None:
        self.begin(run_context)

    def on_eval_epoch_begin(self, run_context: RunContext) -> None:
        self.epoch_begin(run_context)

    def on_eval_epoch_end(self, run_context: RunContext) -> None:
        self.epoch_end(run_context)

    def on_eval_step_begin(self, run_context: RunContext) -> None:
        self.step_begin(run_context)

    def on_eval_step_end(self, run_context: RunContext) -> None:
        self.step_end(run_context)

    def on_eval_end(self, run_context: RunContext) -> None:
        self.end(run_context)


HOOKS = tuple(f"on_{stage}_{event}" for stage in ("train", "eval")
              for event in ("begin", "epoch_begin", "step_begin", "step_end", "epoch_end",
                            "end"))
"""The hooks `Model` calls, by name."""


class CallbackManager:
    """A callback, a list of them or None, run in order: `manager.on_train_step_end(ctx)`
    calls each callback's hook."""

    def __init__(self, callbacks: Any) -> None:
        if callbacks is None:
            callbacks = []
        elif isinstance(callbacks, Callback):
            callbacks = [callbacks]
        elif not isinstance(callbacks, list | tuple):
            raise TypeError(f"callbacks must be a Callback or a list of them, got "
                            f"{type(callbacks).__name__}")
        for cb in callbacks:
            if not isinstance(cb, Callback):
                raise TypeError(f"callbacks: every element must be a Callback, got "
                                f"{type(cb).__name__}")
        self.callbacks = list(callbacks)
        self._stack: ExitStack | None = None

    def __enter__(self) -> CallbackManager:
        self._stack = ExitStack().__enter__()
        entered = [self._stack.enter_context(cb) for cb in self.callbacks]
        self.callbacks = [t if isinstance(t, Callback) else cb
                          for t, cb in zip(entered, self.callbacks)]
        return self

    def __exit__(self, *err: Any) -> Any:
        stack, self._stack = self._stack, None
        return stack.__exit__(*err) if stack is not None else None

    def __getattr__(self, hook: str) -> Any:
        if hook not in HOOKS:
            raise AttributeError(hook)

        def run(run_context: RunContext) -> None:
            for cb in self.callbacks:
                getattr(cb, hook)(run_context)
        return run

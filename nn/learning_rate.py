"""Learning rates with MindSpore's names: the dynamic-lr functions (`piecewise_constant_lr`,
`exponential_decay_lr`, ... each a list with one value per step, for an optimizer's
`learning_rate`) and the `LearningRateSchedule` cells an optimizer calls with its step counter
(`ExponentialDecayLR`, `CosineDecayLR`, ...), whose `construct` compiles into the train step.
"""
from __future__ import annotations

import math
from typing import Any, Sequence

import numpy as np

from .. import ops
from .cell import Cell, Parameter

__all__ = ["piecewise_constant_lr", "exponential_decay_lr", "natural_exp_decay_lr",
           "inverse_decay_lr", "cosine_decay_lr", "polynomial_decay_lr", "warmup_lr",
           "LearningRateSchedule", "ExponentialDecayLR", "NaturalExpDecayLR", "InverseDecayLR",
           "CosineDecayLR", "PolynomialDecayLR", "WarmUpLR"]


# -- argument checks ------------------------------------------------------------------------

def _positive_int(fn: str, arg: str, value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, int | np.integer) or value <= 0:
        raise ValueError(f"{fn}: {arg} must be a positive int, got {value!r}")
    return int(value)


def _float(fn: str, arg: str, value: Any, positive: bool = True) -> float:
    if isinstance(value, bool) or not isinstance(value, float | int | np.floating | np.integer):
        raise TypeError(f"{fn}: {arg} must be a float, got {type(value).__name__}")
    if value < 0 or positive and value == 0:
        raise ValueError(f"{fn}: {arg} must be {'positive' if positive else '>= 0'}, got "
                         f"{value}")
    return float(value)


def _decay_args(fn: str, learning_rate: Any, decay_rate: Any, total_step: Any,
                step_per_epoch: Any, decay_epoch: Any, is_stair: Any) -> tuple:
    if not isinstance(is_stair, bool):
        raise TypeError(f"{fn}: is_stair must be a bool, got {is_stair!r}")
    return (_float(fn, "learning_rate", learning_rate), _float(fn, "decay_rate", decay_rate),
            _positive_int(fn, "total_step", total_step),
            _positive_int(fn, "step_per_epoch", step_per_epoch),
            _positive_int(fn, "decay_epoch", decay_epoch))


# -- dynamic learning rates: one value per step ---------------------------------------------

def piecewise_constant_lr(milestone: Sequence[int], learning_rates: Sequence[float]
                          ) -> list[float]:
    """`learning_rates[t]` for the steps in [milestone[t-1], milestone[t]); the list has
    `milestone[-1]` values."""
    fn = "piecewise_constant_lr"
    if not isinstance(milestone, list | tuple) or not isinstance(learning_rates, list | tuple):
        raise TypeError(f"{fn}: milestone and learning_rates must be lists or tuples")
    if len(milestone) != len(learning_rates):
        raise ValueError(f"{fn}: milestone has {len(milestone)} items but learning_rates has "
                         f"{len(learning_rates)}")
    lr: list[float] = []
    last = 0
    for i, (end, rate) in enumerate(zip(milestone, learning_rates)):
        end = _positive_int(fn, f"milestone[{i}]", end)
        rate = _float(fn, f"learning_rates[{i}]", rate, positive=False)
        if end < last:
            raise ValueError(f"{fn}: milestone must increase, but milestone[{i}]={end} < "
                             f"milestone[{i - 1}]={last}")
        lr += [rate] * (end - last)
        last = end
    return lr


def _epochs(total_step: int, step_per_epoch: int) -> list[int]:
    return [math.floor(i / step_per_epoch) for i in range(total_step)]


def exponential_decay_lr(learning_rate: float, decay_rate: float, total_step: int,
                         step_per_epoch: int, decay_epoch: int,
                         is_stair: bool = False) -> list[float]:
    """`learning_rate * decay_rate ** (epoch / decay_epoch)` per step (the exponent floored
    when `is_stair`), with `epoch = floor(step / step_per_epoch)`."""
    lr, rate, total, per_epoch, decay = _decay_args("exponential_decay_lr", learning_rate,
                                                    decay_rate, total_step, step_per_epoch,
                                                    decay_epoch, is_stair)
    return [lr * rate ** (math.floor(e / decay) if is_stair else e / decay)
            for e in _epochs(total, per_epoch)]


def natural_exp_decay_lr(learning_rate: float, decay_rate: float, total_step: int,
                         step_per_epoch: int, decay_epoch: int,
                         is_stair: bool = False) -> list[float]:
    """`learning_rate * e ** (-decay_rate * epoch)` per step (epoch rounded down to a multiple
    of `decay_epoch` when `is_stair`)."""
    lr, rate, total, per_epoch, decay = _decay_args("natural_exp_decay_lr", learning_rate,
                                                    decay_rate, total_step, step_per_epoch,
                                                    decay_epoch, is_stair)
    return [lr * math.e ** (-rate * (math.floor(e / decay) * decay if is_stair else e))
            for e in _epochs(total, per_epoch)]


def inverse_decay_lr(learning_rate: float, decay_rate: float, total_step: int,
                     step_per_epoch: int, decay_epoch: int, is_stair: bool = False) -> list[float]:
    """`learning_rate / (1 + decay_rate * epoch / decay_epoch)` per step (the ratio floored
    when `is_stair`)."""
    lr, rate, total, per_epoch, decay = _decay_args("inverse_decay_lr", learning_rate,
                                                    decay_rate, total_step, step_per_epoch,
                                                    decay_epoch, is_stair)
    return [lr / (1 + rate * (math.floor(e / decay) if is_stair else e / decay))
            for e in _epochs(total, per_epoch)]


def cosine_decay_lr(min_lr: float, max_lr: float, total_step: int, step_per_epoch: int,
                    decay_epoch: int) -> list[float]:
    """`min_lr + (max_lr - min_lr) / 2 * (1 + cos(pi * min(epoch, decay_epoch) /
    decay_epoch))` per step."""
    fn = "cosine_decay_lr"
    low, high = _float(fn, "min_lr", min_lr, positive=False), _float(fn, "max_lr", max_lr)
    if low >= high:
        raise ValueError(f"{fn}: max_lr must be greater than min_lr, got max_lr={high}, "
                         f"min_lr={low}")
    total = _positive_int(fn, "total_step", total_step)
    per_epoch = _positive_int(fn, "step_per_epoch", step_per_epoch)
    decay = _positive_int(fn, "decay_epoch", decay_epoch)
    delta = 0.5 * (high - low)
    return [low + delta * (1 + math.cos(math.pi * min(e, decay) / decay))
            for e in _epochs(total, per_epoch)]


def polynomial_decay_lr(learning_rate: float, end_learning_rate: float, total_step: int,
                        step_per_epoch: int, decay_epoch: int, power: float,
                        update_decay_epoch: bool = False) -> list[float]:
    """`(learning_rate - end_learning_rate) * (1 - epoch / decay_epoch) ** power +
    end_learning_rate` per step, the epoch capped at `decay_epoch` (or, with
    `update_decay_epoch`, `decay_epoch` grown to the next multiple past the epoch)."""
    fn = "polynomial_decay_lr"
    start = _float(fn, "learning_rate", learning_rate)
    end = _float(fn, "end_learning_rate", end_learning_rate, positive=False)
    power = _float(fn, "power", power)
    total = _positive_int(fn, "total_step", total_step)
    per_epoch = _positive_int(fn, "step_per_epoch", step_per_epoch)
    decay = _positive_int(fn, "decay_epoch", decay_epoch)
    if not isinstance(update_decay_epoch, bool):
        raise TypeError(f"{fn}: update_decay_epoch must be a bool, got {update_decay_epoch!r}")
    lr = []
    for e in _epochs(total, per_epoch):
        if update_decay_epoch:
            span, epoch = decay * max(math.ceil(e / decay), 1), e
        else:
            span, epoch = decay, min(e, decay)
        lr.append((start - end) * (1 - epoch / span) ** power + end)
    return lr


def warmup_lr(learning_rate: float, total_step: int, step_per_epoch: int,
              warmup_epoch: int) -> list[float]:
    """`learning_rate * min(epoch, warmup_epoch) / warmup_epoch` per step."""
    fn = "warmup_lr"
    lr = _float(fn, "learning_rate", learning_rate, positive=False)
    total = _positive_int(fn, "total_step", total_step)
    per_epoch = _positive_int(fn, "step_per_epoch", step_per_epoch)
    warmup = _positive_int(fn, "warmup_epoch", warmup_epoch)
    return [lr * min(e, warmup) / warmup for e in _epochs(total, per_epoch)]


# -- schedules: cells computing the rate from the step counter ------------------------------

class LearningRateSchedule(Cell):
    """Base of learning-rate schedules: `construct(global_step)` returns the rate for the step
    (`global_step` is the optimizer's int32 counter of shape (1,))."""

    def construct(self, global_step: np.ndarray) -> Any:
        raise NotImplementedError(f"{self.cls_name} does not define construct(global_step)")


def _step(global_step: np.ndarray) -> np.ndarray:
    return ops.cast(global_step, np.float32)


class _DecaySchedule(LearningRateSchedule):
    def __init__(self, learning_rate: float, decay_rate: float, decay_steps: int,
                 is_stair: bool = False) -> None:
        super().__init__()
        name = self.cls_name
        self.learning_rate = _float(name, "learning_rate", learning_rate)
        self.decay_rate = _float(name, "decay_rate", decay_rate)
        self.decay_steps = _positive_int(name, "decay_steps", decay_steps)
        if not isinstance(is_stair, bool):
            raise TypeError(f"{name}: is_stair must be a bool, got {is_stair!r}")
        self.is_stair = is_stair

    def _progress(self, global_step: np.ndarray) -> np.ndarray:
        p = _step(global_step) / self.decay_steps
        if self.is_stair:
            p = ops.floor(p)
        return p


class ExponentialDecayLR(_DecaySchedule):
    """`learning_rate * decay_rate ** (step / decay_steps)` (exponent floored if `is_stair`)."""

    def construct(self, global_step: np.ndarray) -> np.ndarray:
        return self.learning_rate * ops.pow(self.decay_rate, self._progress(global_step))


class NaturalExpDecayLR(_DecaySchedule):
    """`learning_rate * e ** (-decay_rate * step / decay_steps)` (floored if `is_stair`)."""

    def construct(self, global_step: np.ndarray) -> np.ndarray:
        return self.learning_rate * ops.exp(-self.decay_rate * self._progress(global_step))


class InverseDecayLR(_DecaySchedule):
    """`learning_rate / (1 + decay_rate * step / decay_steps)` (floored if `is_stair`)."""

    def construct(self, global_step: np.ndarray) -> np.ndarray:
        return self.learning_rate / (1.0 + self.decay_rate * self._progress(global_step))


class CosineDecayLR(LearningRateSchedule):
    """`min_lr + (max_lr - min_lr) / 2 * (1 + cos(pi * min(step, decay_steps) /
    decay_steps))`."""

    def __init__(self, min_lr: float, max_lr: float, decay_steps: int) -> None:
        super().__init__()
        self.min_lr = _float("CosineDecayLR", "min_lr", min_lr, positive=False)
        self.max_lr = _float("CosineDecayLR", "max_lr", max_lr)
        if self.min_lr >= self.max_lr:
            raise ValueError(f"CosineDecayLR: max_lr must be greater than min_lr, got "
                             f"max_lr={max_lr}, min_lr={min_lr}")
        self.decay_steps = _positive_int("CosineDecayLR", "decay_steps", decay_steps)

    def construct(self, global_step: np.ndarray) -> np.ndarray:
        p = ops.minimum(_step(global_step), float(self.decay_steps)) / self.decay_steps
        return self.min_lr + 0.5 * (self.max_lr - self.min_lr) * (1.0 + ops.cos(math.pi * p))


class PolynomialDecayLR(LearningRateSchedule):
    """`(learning_rate - end_learning_rate) * (1 - min(step, decay_steps) / decay_steps) **
    power + end_learning_rate`; with `update_decay_steps`, `decay_steps` grows to the next
    multiple past the step instead of capping it."""

    def __init__(self, learning_rate: float, end_learning_rate: float, decay_steps: int,
                 power: float, update_decay_steps: bool = False) -> None:
        super().__init__()
        self.learning_rate = _float("PolynomialDecayLR", "learning_rate", learning_rate)
        self.end_learning_rate = _float("PolynomialDecayLR", "end_learning_rate",
                                        end_learning_rate, positive=False)
        self.decay_steps = _positive_int("PolynomialDecayLR", "decay_steps", decay_steps)
        self.power = _float("PolynomialDecayLR", "power", power)
        if not isinstance(update_decay_steps, bool):
            raise TypeError(f"PolynomialDecayLR: update_decay_steps must be a bool, got "
                            f"{update_decay_steps!r}")
        self.update_decay_steps = update_decay_steps

    def construct(self, global_step: np.ndarray) -> np.ndarray:
        step = _step(global_step)
        if self.update_decay_steps:
            span = self.decay_steps * ops.maximum(ops.ceil(step / self.decay_steps), 1.0)
        else:
            span = float(self.decay_steps)
            step = ops.minimum(step, span)
        delta = self.learning_rate - self.end_learning_rate
        return delta * ops.pow(1.0 - step / span, self.power) + self.end_learning_rate


class WarmUpLR(LearningRateSchedule):
    """`learning_rate * min(step, warmup_steps) / warmup_steps`."""

    def __init__(self, learning_rate: float, warmup_steps: int) -> None:
        super().__init__()
        self.learning_rate = _float("WarmUpLR", "learning_rate", learning_rate)
        self.warmup_steps = _positive_int("WarmUpLR", "warmup_steps", warmup_steps)

    def construct(self, global_step: np.ndarray) -> np.ndarray:
        step = ops.minimum(_step(global_step), float(self.warmup_steps))
        return self.learning_rate * step / self.warmup_steps


# -- what optimizers hold ---------------------------------------------------------------------

class _IteratorLearningRate(LearningRateSchedule):
    """A learning rate given per step (a list or a 1-D array): the value at the step; a step
    past the end is an error (MindSpore reads out of bounds there)."""

    def __init__(self, values: np.ndarray, name: str) -> None:
        super().__init__()
        self.steps = int(values.shape[0])
        self.learning_rate = Parameter(values.astype(np.float32), name=name,
                                       requires_grad=False)
        self.learning_rate.name = name

    def construct(self, global_step: np.ndarray) -> np.ndarray:
        step = global_step[0]
        if step >= self.steps:
            raise ValueError(f"the learning rate was given for {self.steps} steps; there is "
                             "none for this step (give a longer list or a schedule)")
        return self.learning_rate[step]

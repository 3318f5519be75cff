"""`Optimizer`, the base of MindSpore-style optimizers: parameters (a list, or groups as a list of
dicts with their own `lr` and `weight_decay`), the learning rate (a float, a list or 1-D array
with one value per step, or a `LearningRateSchedule`), weight decay (by default not applied to
parameters whose names contain 'beta' or 'gamma'), loss scale and the step counter.

Everything an optimizer updates (the parameters, its moments, its counters) is a `Parameter`,
written in place, so an optimizer's `construct(gradients)` runs eagerly as plain Python and
compiles, inside a train step or alone, into in-place NumPy statements unrolled over the
parameters.
"""
from __future__ import annotations

from typing import Any, Iterable

import numpy as np

from .. import ops
from .cell import Cell, Parameter, ParameterTuple
from .containers import CellList
from .learning_rate import LearningRateSchedule, _IteratorLearningRate

_GROUP_KEYS = ("params", "lr", "weight_decay", "grad_centralization", "order_params")


class Optimizer(Cell):
    """Base class of optimizers; subclasses define `construct(gradients)` over
    `self.parameters` and return True.

    `learning_rate`: a float or int (a fixed rate, kept in the Parameter `learning_rate`), a
    list, tuple or 1-D array (the rate of each step), a 0-d array (fixed) or a
    `LearningRateSchedule`. `parameters`: a list of Parameters, or of dicts with 'params' and
    optionally 'lr', 'weight_decay' and 'order_params'. `weight_decay`: L2 penalty added to
    the gradients (`grad + weight_decay * param`), by default not for parameters whose names
    contain 'beta' or 'gamma'; in groups, each group's own. `loss_scale`: gradients are divided
    by it (and the weight decay multiplied), as MindSpore does."""

    def __init__(self, learning_rate: Any, parameters: Any, weight_decay: float = 0.0,
                 loss_scale: float = 1.0) -> None:
        super().__init__(auto_prefix=False)
        name = self.cls_name
        self.loss_scale = _check_loss_scale(name, loss_scale)
        weight_decay = _check_weight_decay(name, "weight_decay", weight_decay)
        learning_rate = _check_lr(name, "learning_rate", learning_rate)
        params, groups, order = _parse_parameters(name, parameters)
        self.is_group = groups is not None
        if groups is None:
            groups = [{"params": params}]
        lrs = [_check_lr(name, f"group {k} 'lr'", g["lr"]) if "lr" in g else learning_rate
               for k, g in enumerate(groups)]
        decays = [_check_weight_decay(name, f"group {k} 'weight_decay'", g["weight_decay"])
                  if "weight_decay" in g else weight_decay for k, g in enumerate(groups)]
        self.is_group_lr = self.is_group and any("lr" in g for g in groups)
        self.dynamic_lr = any(not isinstance(lr, float) for lr in lrs)

        members = [(p, k) for k, g in enumerate(groups) for p in g["params"]]
        if order is not None:  # 'order_params': the optimizer follows this order
            where = {id(p): k for p, k in members}
            members = [(p, where[id(p)]) for p in order]
        self.parameters = ParameterTuple(p for p, _ in members)
        self.group_of = tuple(k for _, k in members)
        """The group of each parameter (an index into the group learning rates)."""
        if self.is_group:
            decay = tuple(decays[k] * self.loss_scale for k in self.group_of)
        else:  # NOTE: MindSpore's default filter: no decay of BatchNorm/LayerNorm beta, gamma
            decay = tuple(0.0 if "beta" in (p.name or "") or "gamma" in (p.name or "")
                          else decays[0] * self.loss_scale for p in self.parameters)
        self.weight_decay = decay
        """The weight decay of each parameter (0.0: none)."""
        self.exec_weight_decay = any(d > 0 for d in decay)

        if self.dynamic_lr:
            self.global_step = Parameter(np.zeros((1,), np.int32), name="global_step",
                                         requires_grad=False)
        else:
            self.global_step = None
        if self.is_group_lr:
            rates = CellList()
            object.__setattr__(rates, "auto_prefix", False)  # NOTE: keep the rates' names
            self.learning_rate = rates.extend(_lr_cell(lr, f"learning_rate_group_{k}")
                                              for k, lr in enumerate(lrs))
        elif self.dynamic_lr:
            self.learning_rate = _lr_cell(lrs[0], "learning_rate")
        else:
            self.learning_rate = _fixed_lr(lrs[0], "learning_rate")

    # -- what subclasses call in construct ----------------------------------------------------
    def get_lr(self) -> Any:
        """This step's learning rate: one 0-d float32 array, or (group learning rates) a tuple
        with one per parameter; advances the step counter of a dynamic learning rate."""
        if self.is_group_lr:
            rates = [_scalar(lr(self.global_step)) for lr in self.learning_rate]
            lr = tuple([rates[k] for k in self.group_of])
        elif self.dynamic_lr:
            lr = _scalar(self.learning_rate(self.global_step))
        else:
            lr = self.learning_rate
        if self.dynamic_lr:
            ops.assign(self.global_step, self.global_step + 1)
        return lr

    def decay_weight(self, gradients: tuple) -> tuple:
        """`gradient + weight_decay * param` for each parameter that has a weight decay."""
        if not self.exec_weight_decay:
            return gradients
        decayed = []
        for param, grad, decay in zip(self.parameters, gradients, self.weight_decay):
            if decay > 0:
                grad = param * decay + grad
            decayed.append(grad)
        return tuple(decayed)

    def scale_grad(self, gradients: tuple) -> tuple:
        """The gradients divided by `loss_scale` (unchanged when it is 1)."""
        if self.loss_scale == 1.0:
            return gradients
        return tuple([grad * (1.0 / self.loss_scale) for grad in gradients])

    def prepare_gradients(self, gradients: tuple) -> tuple:
        """Weight decay, then the loss scale (MindSpore's order; the decay was multiplied by
        the loss scale, so it ends up as `weight_decay * param`)."""
        return self.scale_grad(self.decay_weight(gradients))

    def check_inputs(self, gradients: Any, *rest: Any) -> None:
        if not isinstance(gradients, tuple | list) or len(gradients) != len(self.parameters):
            count = len(gradients) if isinstance(gradients, tuple | list) else None
            raise ValueError(f"{self.cls_name}: expected a tuple of {len(self.parameters)} "
                             f"gradients (one per parameter), got "
                             f"{type(gradients).__name__ if count is None else count}")
        for param, grad in zip(self.parameters, gradients):
            shape = getattr(grad, "shape", None)
            if shape is not None and tuple(shape) != param.shape:
                raise ValueError(f"{self.cls_name}: the gradient of {param.name!r} has shape "
                                 f"{tuple(shape)}, expected {param.shape}")

    def extend_repr(self) -> str:
        return f"parameters={len(self.parameters)}"


# -- helpers ----------------------------------------------------------------------------------

def _scalar(lr: Any) -> Any:
    """A schedule's rate (often of shape (1,), like the step counter) as a 0-d array."""
    return ops.reshape(lr, ())


def _fixed_lr(value: float, name: str) -> Parameter:
    return Parameter(np.array(value, np.float32), name=name, requires_grad=False)


class _FixedLearningRate(LearningRateSchedule):
    """A fixed rate inside a group of dynamic ones: the same value at every step."""

    def __init__(self, value: float, name: str) -> None:
        super().__init__()
        self.learning_rate = _fixed_lr(value, name)
        self.learning_rate.name = name

    def construct(self, global_step: Any) -> Any:
        return self.learning_rate


def _lr_cell(lr: Any, name: str) -> LearningRateSchedule:
    if isinstance(lr, LearningRateSchedule):
        return lr
    if isinstance(lr, float):
        return _FixedLearningRate(lr, name)
    return _IteratorLearningRate(lr, name)


def _check_lr(optimizer: str, arg: str, lr: Any) -> Any:
    """A float, a 1-D float array (the rate per step) or a schedule; TypeError/ValueError."""
    if isinstance(lr, LearningRateSchedule):
        return lr
    if isinstance(lr, bool) or isinstance(lr, str):
        raise TypeError(f"{optimizer}: {arg} must be a float, a list of floats (one per step), "
                        f"a 1-D array or a LearningRateSchedule, got {lr!r}")
    if isinstance(lr, int | float | np.integer | np.floating):
        if not np.isfinite(lr) or lr < 0:
            raise ValueError(f"{optimizer}: {arg} must be a finite number >= 0, got {lr}")
        return float(lr)
    if isinstance(lr, np.ndarray):
        values = lr
    elif isinstance(lr, Iterable):
        values = list(lr)
        if not values or not all(isinstance(v, int | float | np.integer | np.floating) and
                                 not isinstance(v, bool) for v in values):
            raise TypeError(f"{optimizer}: {arg} as a list must hold one number per step, got "
                            f"{lr!r}")
        values = np.asarray(values, np.float64)
    else:
        raise TypeError(f"{optimizer}: {arg} must be a float, a list of floats (one per step), "
                        f"a 1-D array or a LearningRateSchedule, got {type(lr).__name__}")
    if values.dtype.kind not in "fiu" or values.ndim > 1 or values.size == 0:
        raise ValueError(f"{optimizer}: {arg} as an array must be a number or a non-empty 1-D "
                         f"array of floats, got {values.dtype} of shape {values.shape}")
    if not np.isfinite(values).all() or (values < 0).any():
        raise ValueError(f"{optimizer}: {arg} must hold finite numbers >= 0")
    return float(values) if values.ndim == 0 else values.astype(np.float32)


def _check_weight_decay(optimizer: str, arg: str, value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float | np.integer | np.floating):
        raise TypeError(f"{optimizer}: {arg} must be a float, got {type(value).__name__}")
    if not value >= 0 or not np.isfinite(value):
        raise ValueError(f"{optimizer}: {arg} must be a finite number >= 0, got {value}")
    return float(value)


def _check_loss_scale(optimizer: str, value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float | np.integer | np.floating):
        raise TypeError(f"{optimizer}: loss_scale must be a float, got {type(value).__name__}")
    if not value > 0 or not np.isfinite(value):
        raise ValueError(f"{optimizer}: loss_scale must be a finite number > 0, got {value}")
    return float(value)


def _parse_parameters(optimizer: str, parameters: Any
                      ) -> tuple[list[Parameter], list[dict] | None, list[Parameter] | None]:
    """(every parameter, the groups or None, the 'order_params' order or None), checked: at
    least one parameter, each a Parameter, none twice."""
    if isinstance(parameters, Parameter) or not isinstance(parameters, Iterable) or \
            isinstance(parameters, str | dict):
        raise TypeError(f"{optimizer}: params must be a list of Parameters or of dicts, got "
                        f"{type(parameters).__name__}")
    items = list(parameters)
    if not items:
        raise ValueError(f"{optimizer}: params is empty; pass net.trainable_params() of a "
                         "network that has parameters")
    if all(isinstance(x, dict) for x in items):
        order = [g["order_params"] for g in items if "order_params" in g]
        groups = [g for g in items if "order_params" not in g]
        for k, group in enumerate(groups):
            unknown = set(group) - set(_GROUP_KEYS)
            if unknown:
                raise ValueError(f"{optimizer}: group {k} has unknown keys {sorted(unknown)}; "
                                 f"the keys are {list(_GROUP_KEYS)}")
            if "params" not in group:
                raise ValueError(f"{optimizer}: group {k} has no 'params'")
            group["params"] = _check_params(optimizer, f"group {k} 'params'", group["params"])
        params = [p for g in groups for p in g["params"]]
        if not params:
            raise ValueError(f"{optimizer}: the parameter groups hold no parameters")
        _check_unique(optimizer, params)
        ordered = None
        if order:
            ordered = _check_params(optimizer, "'order_params'", order[-1])
            _check_unique(optimizer, ordered)
            if {id(p) for p in ordered} != {id(p) for p in params}:
                raise ValueError(f"{optimizer}: 'order_params' must list exactly the parameters "
                                 "of the groups")
        return params, [dict(g) for g in groups], ordered
    params = _check_params(optimizer, "params", items)
    _check_unique(optimizer, params)
    return params, None, None


def _check_params(optimizer: str, where: str, params: Any) -> list[Parameter]:
    items = list(params) if isinstance(params, Iterable) and not isinstance(params, str) \
        else [params]
    for i, p in enumerate(items):
        if not isinstance(p, Parameter):
            raise TypeError(f"{optimizer}: {where}[{i}] is a {type(p).__name__}, not a "
                            "Parameter (pass net.trainable_params(), or dicts with 'params')")
        if p.dtype.kind != "f":
            raise TypeError(f"{optimizer}: parameter {p.name!r} is {p.dtype}; only floating-point "
                            "parameters can be optimized")
    return items


def _check_unique(optimizer: str, params: list[Parameter]) -> None:
    seen: dict[int, int] = {}
    for i, p in enumerate(params):
        if id(p) in seen:
            raise ValueError(f"{optimizer}: parameter {p.name!r} is given twice (items "
                             f"{seen[id(p)]} and {i}); each parameter may appear once")
        seen[id(p)] = i

"""Optimizers with MindSpore's names, arguments, defaults and update formulas: `SGD`, `Momentum`
and `Adam`. Each `construct(gradients)` loops over the parameters (unrolled when compiled) and
updates them and its state (Parameters cloned from them: `accum.<name>`, `moments.<name>`,
`moment1.<name>`, ...) in place; it returns True.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from .. import ops
from .cell import Parameter, ParameterTuple
from .optimizer import Optimizer

__all__ = ["SGD", "Momentum", "Adam"]


def _float_arg(optimizer: str, arg: str, value: Any, low: float = 0.0, high: float | None = None,
               open_low: bool = False, open_high: bool = True) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float | np.integer | np.floating):
        raise TypeError(f"{optimizer}: {arg} must be a float, got {type(value).__name__}")
    value = float(value)
    if not np.isfinite(value) or (value <= low if open_low else value < low) or (
            high is not None and (value >= high if open_high else value > high)):
        where = f"{'(' if open_low else '['}{low}, {'inf' if high is None else high}" \
                f"{')' if open_high or high is None else ']'}"
        raise ValueError(f"{optimizer}: {arg} must be in {where}, got {value}")
    return value


def _bool_arg(optimizer: str, arg: str, value: Any) -> bool:
    if not isinstance(value, bool):
        raise TypeError(f"{optimizer}: {arg} must be a bool, got {value!r}")
    return value


def _state(params: ParameterTuple, prefix: str, init: str) -> ParameterTuple:
    """Optimizer state shaped like the parameters, named `prefix.<name>`, not trainable."""
    state = params.clone(prefix, init)
    for p in state:
        p.requires_grad = False
    return state


class SGD(Optimizer):
    """Stochastic gradient descent, optionally with momentum (MindSpore's `nn.SGD`):

        g = gradient (+ weight_decay * p)
        v = momentum * v + (1 - dampening) * g      (v = g on the first step)
        p = p - lr * (g + momentum * v)             if nesterov
        p = p - lr * v                              otherwise (p - lr * g without momentum)

    State: `accum.<name>` (the velocity, with momentum) and, with dampening, `stat.<name>`
    (1 until the first step; one value per parameter, where MindSpore keeps one per element).
    """

    def __init__(self, params: Any, learning_rate: Any = 0.1, momentum: float = 0.0,
                 dampening: float = 0.0, weight_decay: float = 0.0, nesterov: bool = False,
                 loss_scale: float = 1.0) -> None:
        super().__init__(learning_rate, params, weight_decay, loss_scale)
        self.momentum = _float_arg("SGD", "momentum", momentum)
        self.dampening = _float_arg("SGD", "dampening", dampening)
        self.nesterov = _bool_arg("SGD", "nesterov", nesterov)
        if self.nesterov and (self.momentum <= 0.0 or self.dampening != 0.0):
            raise ValueError(f"SGD: nesterov=True needs momentum > 0 and dampening == 0, got "
                             f"momentum={self.momentum}, dampening={self.dampening}")
        if self.momentum > 0.0:
            self.accum = _state(self.parameters, "accum", "zeros")
        else:
            self.accum = ParameterTuple(())
        if self.momentum > 0.0 and self.dampening != 0.0:
            # NOTE: v starts at 0, so without dampening the first step already gives v = g.
            stats = [Parameter(np.ones((), np.float32), f"stat.{p.name}", requires_grad=False)
                     for p in self.parameters]
            self.stat = ParameterTuple(stats)
        else:
            self.stat = ParameterTuple(())

    def construct(self, gradients: tuple) -> bool:
        gradients = self.prepare_gradients(gradients)
        lr = self.get_lr()
        lrs = lr if self.is_group_lr else tuple([lr for _ in self.parameters])
        if self.momentum == 0.0:
            for param, grad, rate in zip(self.parameters, gradients, lrs):
                ops.assign_sub(param, rate * grad)
            return True
        stats = self.stat if self.dampening != 0.0 else tuple([None for _ in self.parameters])
        for param, grad, rate, accum, stat in zip(self.parameters, gradients, lrs, self.accum,
                                                  stats):
            velocity = accum * self.momentum + (1.0 - self.dampening) * grad
            if stat is not None:
                velocity = ops.where(stat > 0, grad, velocity)
                ops.assign(stat, 0.0)
            ops.assign(accum, velocity)
            if self.nesterov:
                ops.assign_sub(param, rate * (grad + self.momentum * accum))
            else:
                ops.assign_sub(param, rate * accum)
        return True

    def extend_repr(self) -> str:
        return (f"parameters={len(self.parameters)}, momentum={self.momentum}, "
                f"dampening={self.dampening}, nesterov={self.nesterov}")


class Momentum(Optimizer):
    """SGD with momentum (MindSpore's `nn.Momentum`, its ApplyMomentum update):

        g = gradient (+ weight_decay * p)
        v = momentum * v + g
        p = p - (g * lr + v * momentum * lr)        if use_nesterov
        p = p - lr * v                              otherwise

    State: `moments.<name>`, and `momentum` a 0-d Parameter, as MindSpore saves it."""

    def __init__(self, params: Any, learning_rate: Any, momentum: float,
                 weight_decay: float = 0.0, loss_scale: float = 1.0,
                 use_nesterov: bool = False) -> None:
        super().__init__(learning_rate, params, weight_decay, loss_scale)
        self.momentum = Parameter(np.array(_float_arg("Momentum", "momentum", momentum),
                                           np.float32), name="momentum", requires_grad=False)
        self.use_nesterov = _bool_arg("Momentum", "use_nesterov", use_nesterov)
        self.moments = _state(self.parameters, "moments", "zeros")

    def construct(self, gradients: tuple) -> bool:
        gradients = self.prepare_gradients(gradients)
        lr = self.get_lr()
        lrs = lr if self.is_group_lr else tuple([lr for _ in self.parameters])
        for param, grad, rate, moment in zip(self.parameters, gradients, lrs, self.moments):
            ops.assign(moment, moment * self.momentum + grad)
            if self.use_nesterov:
                ops.assign_sub(param, grad * rate + moment * self.momentum * rate)
            else:
                ops.assign_sub(param, rate * moment)
        return True

    def extend_repr(self) -> str:
        return (f"parameters={len(self.parameters)}, momentum={float(self.momentum):g}, "
                f"use_nesterov={self.use_nesterov}")


class Adam(Optimizer):
    """Adam (MindSpore's `nn.Adam`, its ApplyAdam update: bias correction folded into the
    step size, eps added to sqrt(v)):

        g = gradient (+ weight_decay * p)
        beta1_power *= beta1; beta2_power *= beta2
        m += (g - m) * (1 - beta1);  v += (g * g - v) * (1 - beta2)
        lr_t = lr * sqrt(1 - beta2_power) / (1 - beta1_power)
        p -= lr_t * m / (sqrt(v) + eps)             (m * beta1 + (1 - beta1) * g if use_nesterov)

    `use_amsgrad` divides by sqrt(max of v so far) instead (state `vhat.<name>`). State:
    `moment1.<name>`, `moment2.<name>`, `beta1_power`, `beta2_power`."""

    def __init__(self, params: Any, learning_rate: Any = 1e-3, beta1: float = 0.9,
                 beta2: float = 0.999, eps: float = 1e-8, use_locking: bool = False,
                 use_nesterov: bool = False, weight_decay: float = 0.0, loss_scale: float = 1.0,
                 use_amsgrad: bool = False, **kwargs: Any) -> None:
        super().__init__(learning_rate, params, weight_decay, loss_scale)
        self.beta1 = _float_arg("Adam", "beta1", beta1, 0.0, 1.0, open_low=True)
        self.beta2 = _float_arg("Adam", "beta2", beta2, 0.0, 1.0, open_low=True)
        self.eps = _float_arg("Adam", "eps", eps, 0.0, open_low=True)
        self.use_locking = _bool_arg("Adam", "use_locking", use_locking)
        self.use_nesterov = _bool_arg("Adam", "use_nesterov", use_nesterov)
        self.use_amsgrad = _bool_arg("Adam", "use_amsgrad", use_amsgrad)
        if self.use_amsgrad and self.use_nesterov:
            raise ValueError("Adam: use_amsgrad and use_nesterov cannot both be True")
        unknown = set(kwargs) - {"use_lazy", "use_offload"}
        if unknown:
            raise TypeError(f"Adam: unexpected keyword arguments {sorted(unknown)}")
        if kwargs.get("use_lazy") or kwargs.get("use_offload"):
            raise ValueError("Adam: use_lazy and use_offload (sparse and host-offloaded Adam) "
                             "are not supported")
        self.beta1_power = Parameter(np.ones((), np.float32), "beta1_power", requires_grad=False)
        self.beta2_power = Parameter(np.ones((), np.float32), "beta2_power", requires_grad=False)
        self.moment1 = _state(self.parameters, "moment1", "zeros")
        self.moment2 = _state(self.parameters, "moment2", "zeros")
        self.vhat = _state(self.parameters, "vhat", "zeros") if self.use_amsgrad else \
            ParameterTuple(())

    def construct(self, gradients: tuple) -> bool:
        gradients = self.prepare_gradients(gradients)
        lr = self.get_lr()
        lrs = lr if self.is_group_lr else tuple([lr for _ in self.parameters])
        ops.assign(self.beta1_power, self.beta1_power * self.beta1)
        ops.assign(self.beta2_power, self.beta2_power * self.beta2)
        correction = ops.sqrt(1.0 - self.beta2_power) / (1.0 - self.beta1_power)
        vhats = self.vhat if self.use_amsgrad else tuple([None for _ in self.parameters])
        for param, grad, rate, m, v, vhat in zip(self.parameters, gradients, lrs, self.moment1,
                                                 self.moment2, vhats):
            ops.assign_add(m, (grad - m) * (1.0 - self.beta1))
            ops.assign_add(v, (grad * grad - v) * (1.0 - self.beta2))
            if vhat is not None:
                ops.assign(vhat, ops.maximum(vhat, v))
                v = vhat
            if self.use_nesterov:
                m = m * self.beta1 + (1.0 - self.beta1) * grad
            ops.assign_sub(param, rate * correction * m / (ops.sqrt(v) + self.eps))
        return True

    def extend_repr(self) -> str:
        return (f"parameters={len(self.parameters)}, beta1={self.beta1}, beta2={self.beta2}, "
                f"eps={self.eps}")

"""Normalization layers: `BatchNorm1d`, `BatchNorm2d` and `LayerNorm`.

BatchNorm follows MindSpore: in training it normalizes with the batch statistics and updates
`moving = momentum * moving + (1 - momentum) * batch` in place (the batch variance there is the
unbiased one, as MindSpore on GPU/Ascend); otherwise it normalizes with the moving statistics.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from .. import ops
from .cell import Cell
from .checks import (check_bool, check_choice, check_dim, check_float, check_int, check_rank,
                     layer_error, make_param, static_shape)


class _BatchNorm(Cell):
    """Batch normalization over the channel axis 1; subclasses fix the accepted input ranks."""
    _ranks: tuple[int, ...] = ()

    def __init__(self, num_features: int, eps: float = 1e-5, momentum: float = 0.9,
                 affine: bool = True, gamma_init: Any = "ones", beta_init: Any = "zeros",
                 moving_mean_init: Any = "zeros", moving_var_init: Any = "ones",
                 use_batch_statistics: bool | None = None, data_format: str = "NCHW") -> None:
        super().__init__()
        layer = self.cls_name
        self.num_features = check_int(layer, "num_features", num_features)
        self.eps = check_float(layer, "eps", eps, 0.0, float("inf"), include_low=False)
        self.momentum = check_float(layer, "momentum", momentum, 0.0, 1.0)
        self.affine = check_bool(layer, "affine", affine)
        check_choice(layer, "use_batch_statistics", use_batch_statistics, (None, True, False))
        self.use_batch_statistics = use_batch_statistics
        check_choice(layer, "data_format", data_format, ("NCHW",))
        shape = (self.num_features,)
        self.gamma = make_param(layer, "gamma_init", gamma_init, shape, "gamma", affine)
        self.beta = make_param(layer, "beta_init", beta_init, shape, "beta", affine)
        self.moving_mean = make_param(layer, "moving_mean_init", moving_mean_init, shape,
                                      "moving_mean", requires_grad=False)
        self.moving_variance = make_param(layer, "moving_var_init", moving_var_init, shape,
                                          "moving_variance", requires_grad=False)

    def check_inputs(self, x: Any) -> None:
        shape = check_rank(self, x, self._ranks)
        check_dim(self, shape, 1, self.num_features, "input channels (dim 1)")

    def construct(self, x: np.ndarray) -> np.ndarray:
        if self.use_batch_statistics is None:
            use_batch = self.training
        else:
            use_batch = self.use_batch_statistics
        if use_batch:
            y, mean, var = ops.batch_norm_train(x, self.gamma, self.beta, eps=self.eps)
            ops.assign(self.moving_mean,
                       self.momentum * self.moving_mean + (1.0 - self.momentum) * mean)
            ops.assign(self.moving_variance,
                       self.momentum * self.moving_variance + (1.0 - self.momentum) * var)
            return y
        return ops.batch_norm(x, self.moving_mean, self.moving_variance, self.gamma, self.beta,
                              eps=self.eps)

    def extend_repr(self) -> str:
        return (f"num_features={self.num_features}, eps={self.eps}, momentum={self.momentum}, "
                f"affine={self.affine}")


class BatchNorm1d(_BatchNorm):
    """Batch normalization of [N, C] or [N, C, L] inputs."""
    _ranks = (2, 3)


class BatchNorm2d(_BatchNorm):
    """Batch normalization of [N, C, H, W] inputs."""
    _ranks = (4,)


class LayerNorm(Cell):
    """Normalize over the axes from `begin_norm_axis` on; scale and shift by gamma and beta of
    shape `normalized_shape` (the axes from `begin_params_axis` on)."""

    def __init__(self, normalized_shape: tuple[int, ...] | list[int], begin_norm_axis: int = -1,
                 begin_params_axis: int = -1, gamma_init: Any = "ones", beta_init: Any = "zeros",
                 epsilon: float = 1e-7) -> None:
        super().__init__()
        if isinstance(normalized_shape, int | np.integer):
            normalized_shape = (normalized_shape,)
        if not isinstance(normalized_shape, tuple | list) or not normalized_shape:
            raise TypeError(f"LayerNorm: normalized_shape must be a non-empty tuple or list of "
                            f"ints, got {normalized_shape!r}")
        self.normalized_shape = tuple(check_int("LayerNorm", "normalized_shape", d)
                                      for d in normalized_shape)
        self.begin_norm_axis = check_int("LayerNorm", "begin_norm_axis", begin_norm_axis, -64)
        self.begin_params_axis = check_int("LayerNorm", "begin_params_axis", begin_params_axis,
                                           -64)
        self.epsilon = check_float("LayerNorm", "epsilon", epsilon, 0.0, float("inf"),
                                   include_low=False)
        self.gamma = make_param("LayerNorm", "gamma_init", gamma_init, self.normalized_shape,
                                "gamma")
        self.beta = make_param("LayerNorm", "beta_init", beta_init, self.normalized_shape, "beta")

    def check_inputs(self, x: Any) -> None:
        shape = static_shape(x)
        if shape is None:
            return
        rank = len(shape)
        for arg in ("begin_norm_axis", "begin_params_axis"):
            axis = getattr(self, arg)
            if not -rank <= axis < rank:
                raise layer_error(self, f"{arg}={axis} is out of range for input shape {shape}")
        tail = shape[self.begin_params_axis % rank:]
        known = all(isinstance(d, int) for d in tail)
        if known and tuple(tail) != self.normalized_shape:
            raise layer_error(self, f"input dims from begin_params_axis are {tuple(tail)}, "
                                    f"expected normalized_shape {self.normalized_shape} "
                                    f"(input shape {shape})")

    def construct(self, x: np.ndarray) -> np.ndarray:
        return ops.layer_norm(x, self.gamma, self.beta, self.begin_norm_axis,
                              self.begin_params_axis, self.epsilon)

    def extend_repr(self) -> str:
        return (f"normalized_shape={self.normalized_shape}, begin_norm_axis="
                f"{self.begin_norm_axis}, begin_params_axis={self.begin_params_axis}")

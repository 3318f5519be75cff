"""Normalization ops: batch norm with given (moving) statistics, batch norm over the batch's own
statistics (training), layer norm and L2 normalization; each with its gradient rule."""
from __future__ import annotations

from typing import Any

import numpy as np

from . import onnx as ox
from .batch_rules import LOOP_ACROSS, along_axis_batch, folded, layer_norm_batch
from .elementwise import helper_call
from .nn_kernels import batch_norm_kernel, batch_norm_train_kernel, layer_norm_kernel
from .opdef import GradContext, OpDef, OpFunction, Primitive
from .types import (UNKNOWN, Dim, Scalar, Tensor, TupleType, Type, broadcast_shapes, check_axis,
                    dim_mul, expect_tensor, may_equal, mean_dtype, result_dtype)


def _channel_params(op: str, x: Tensor, **params: Type) -> tuple[Dim, ...]:
    """Checks per-channel parameters against `x`; the shape of `x` with them applied (the
    kernels broadcast, so a symbolic channel count of 1 takes the parameters')."""
    for role, t in params.items():
        if not may_equal(expect_tensor(op, role, t, rank=1).shape[0], x.shape[1]):
            raise ValueError(f"{op}: {role} {t} does not match the {x.shape[1]} channels of {x}")
    channels = broadcast_shapes(*((t.shape[0],) for t in params.values()), x.shape[1:2])
    return (x.shape[0], *channels, *x.shape[2:])


def _channels(rank: int) -> tuple[int, ...]:
    """The shape a per-channel vector takes to broadcast over NC... data."""
    return (-1,) + (1,) * (rank - 2)


def _batch_norm_infer(x: Type, mean: Type, variance: Type, gamma: Type, beta: Type, *,
                      epsilon: float) -> Tensor:
    expect_tensor("batch_norm", "input", x, min_rank=2)
    shape = _channel_params("batch_norm", x, mean=mean, variance=variance, gamma=gamma,
                            beta=beta)
    return Tensor(shape, result_dtype(x, mean, variance, gamma, beta, Scalar(float)))


def _batch_norm_grad(ad: GradContext) -> tuple[Any, ...]:
    x, mean, var, gamma = ad.input(0), ad.input(1), ad.input(2), ad.input(3)
    rank, g, eps = ad.types[0].rank, ad.g, ad.attrs["epsilon"]
    axes = (0, *range(2, rank))
    per = lambda v: ad.op("reshape", v, shape=_channels(rank))
    inv = 1 / ad.op("sqrt", var + eps)
    centered = x - per(mean)
    dgamma = ad.op("sum", g * centered * per(inv), axis=axes)
    summed = ad.op("sum", g, axis=axes)
    dmean = -summed * gamma * inv
    dvar = ad.op("sum", g * centered, axis=axes) * gamma * -0.5 * inv * inv * inv
    return g * per(gamma * inv), dmean, dvar, dgamma, summed


batch_norm = OpDef(
    "batch_norm", ("x", "mean", "variance", "gamma", "beta"), kernel=batch_norm_kernel,
    infer=_batch_norm_infer, attrs={"epsilon": 1e-5}, helpers=(batch_norm_kernel,), fresh=True,
    emit=helper_call(batch_norm_kernel, "x, mean, variance, gamma, beta", {"epsilon": 1e-5}),
    grad=_batch_norm_grad, onnx=ox.batch_norm, batch=folded())
"""Inference batch norm over axis 1 with given (moving) statistics."""


def _count(ad: GradContext, dims: list[Dim], what: str) -> Any:
    """How many elements `dims` hold: an int, or the run-time value of a symbolic size."""
    count = dim_mul(*dims)
    if isinstance(count, int):
        return count
    if count == UNKNOWN:
        raise NotImplementedError(f"the gradient of {what}")
    return ad.op("dim", value=count)


def _normalized_grad(ad: GradContext, x: Any, dxhat: Any, axes: tuple[int, ...], count: Any,
                     eps: float) -> tuple[Any, Any]:
    """For xhat = (x - mean) / sqrt(var + eps) over `axes` (biased variance, `count`
    elements): (dx given d xhat, xhat)."""
    mu = ad.op("mean", x, axis=axes, keepdims=True)
    centered = x - mu
    inv = 1 / ad.op("sqrt", ad.op("mean", centered * centered, axis=axes, keepdims=True) + eps)
    xhat = centered * inv
    total = ad.op("sum", dxhat, axis=axes, keepdims=True)
    along = ad.op("sum", dxhat * xhat, axis=axes, keepdims=True)
    return (dxhat * count - total - xhat * along) * (inv / count), xhat


def _batch_norm_train_infer(x: Type, gamma: Type, beta: Type, *, epsilon: float) -> TupleType:
    expect_tensor("batch_norm_train", "input", x, min_rank=2)
    shape = _channel_params("batch_norm_train", x, gamma=gamma, beta=beta)
    stat = Tensor(x.shape[1:2], mean_dtype(x.dtype))
    return TupleType((Tensor(shape, result_dtype(stat, gamma, beta, Scalar(float))), stat, stat))


def _batch_norm_train_grad(ad: GradContext) -> tuple[Any, ...]:
    """Through y (normalized by batch statistics), the batch mean and the unbiased variance."""
    x, gamma = ad.input(0), ad.input(1)
    t = ad.types[0]
    axes = (0, *range(2, t.rank))
    count = _count(ad, [t.shape[a] for a in axes], "batch norm over a run-time batch size")
    per = lambda v: ad.op("reshape", v, shape=_channels(t.rank))
    gy, gmean, gvar = ad.gs
    dx = dgamma = dbeta = None
    if gy is not None:
        dx, xhat = _normalized_grad(ad, x, gy * per(gamma), axes, count, ad.attrs["epsilon"])
        dgamma = ad.op("sum", gy * xhat, axis=axes)
        dbeta = ad.op("sum", gy, axis=axes)
    if gmean is not None:
        part = per(gmean) / count + ad.op("zeros_like", x)
        dx = part if dx is None else dx + part
    if gvar is not None and (not isinstance(count, int) or count > 1):
        centered = x - ad.op("mean", x, axis=axes, keepdims=True)
        scale = 2 / (count - 1) if isinstance(count, int) else ad.op(  # NOTE: 0 when count is 1
            "select", count > 1, 2 / ad.op("maximum", count - 1, 1), 0.0)
        part = per(gvar) * centered * scale
        dx = part if dx is None else dx + part
    return dx, dgamma, dbeta


batch_norm_train = OpDef(
    "batch_norm_train", ("x", "gamma", "beta"), kernel=batch_norm_train_kernel,
    infer=_batch_norm_train_infer, attrs={"epsilon": 1e-5}, helpers=(batch_norm_train_kernel,),
    fresh=True, grad=_batch_norm_train_grad,
    emit=helper_call(batch_norm_train_kernel, "x, gamma, beta", {"epsilon": 1e-5}),
    batch=LOOP_ACROSS)
"""Returns (y, batch_mean, unbiased batch_variance): MindSpore on Ascend and GPU updates
moving_variance with the unbiased estimate (n / (n - 1), or 0 when n == 1)."""


_LAYER_NORM = {"begin_norm_axis": -1, "begin_params_axis": -1, "epsilon": 1e-7}


def _layer_norm_infer(x: Type, gamma: Type, beta: Type, *, begin_norm_axis: int,
                      begin_params_axis: int, epsilon: float) -> Tensor:
    expect_tensor("layer_norm", "input", x, min_rank=1)
    check_axis("layer_norm", begin_norm_axis, x.rank)
    expected = x.shape[check_axis("layer_norm", begin_params_axis, x.rank):]
    for role, t in (("gamma", gamma), ("beta", beta)):
        got = expect_tensor("layer_norm", role, t).shape
        if len(got) != len(expected) or not all(map(may_equal, got, expected)):
            raise ValueError(f"layer_norm: {role} {t} must have shape {expected} (input {x} from "
                             f"begin_params_axis={begin_params_axis})")
    shape = broadcast_shapes(x.shape, gamma.shape, beta.shape)  # NOTE: as the kernel does
    return Tensor(shape, np.result_type(mean_dtype(x.dtype), gamma.dtype, beta.dtype))


def _layer_norm_grad(ad: GradContext) -> tuple[Any, ...]:
    x, gamma, g = ad.input(0), ad.input(1), ad.g
    t = ad.types[0]
    axes = tuple(range(ad.attrs["begin_norm_axis"] % t.rank, t.rank))
    count = _count(ad, [t.shape[a] for a in axes], "layer norm over run-time sizes")
    dx, xhat = _normalized_grad(ad, x, g * gamma, axes, count, ad.attrs["epsilon"])
    return dx, g * xhat, g


layer_norm = OpDef(
    "layer_norm", ("x", "gamma", "beta"), kernel=layer_norm_kernel, infer=_layer_norm_infer,
    emit=helper_call(layer_norm_kernel, "x, gamma, beta", _LAYER_NORM), attrs=_LAYER_NORM,
    helpers=(layer_norm_kernel,), fresh=True, grad=_layer_norm_grad, onnx=ox.layer_norm,
    batch=layer_norm_batch)
"""Layer norm over axes begin_norm_axis.. with gamma/beta of shape x.shape[begin_params_axis:]."""


def l2_normalize_kernel(x: np.ndarray, *, axis: int | tuple = 0,
                        epsilon: float = 1e-4) -> np.ndarray:
    """x / sqrt(max(sum(x**2 over axis), epsilon)), MindSpore's L2Normalize."""
    squares = np.sum(x * x, axis=axis, keepdims=True)
    return x / np.sqrt(np.maximum(squares, epsilon))


def _l2_normalize_infer(x: Type, *, axis: Any, epsilon: float) -> Tensor:
    t = expect_tensor("l2_normalize", "input", x, min_rank=1)
    for a in (axis if isinstance(axis, tuple) else (axis,)):
        check_axis("l2_normalize", a, t.rank)
    if t.dtype.kind != "f":
        raise TypeError(f"l2_normalize: expected a float array, got {t}")
    return t


def _l2_normalize_grad(ad: GradContext) -> tuple[Any, ...]:
    """y = x / n with n = sqrt(max(s, eps)), s = sum(x*x): dx = g / n - x * sum(g*x) / n**3
    where s > eps (n depends on x there), else g / n."""
    x, axis, eps = ad.input(0), ad.attrs["axis"], ad.attrs["epsilon"]
    s = ad.op("sum", x * x, axis=axis, keepdims=True)
    n = ad.op("sqrt", ad.op("maximum", s, eps))
    dot = ad.op("sum", ad.g * x, axis=axis, keepdims=True)
    return (ad.g / n - x * (dot / (n * n * n)) * (s > eps),)


l2_normalize = OpDef(
    "l2_normalize", ("x",), kernel=l2_normalize_kernel, infer=_l2_normalize_infer,
    emit=helper_call(l2_normalize_kernel, "x", {"axis": 0, "epsilon": 1e-4}),
    attrs={"axis": 0, "epsilon": 1e-4},
    helpers=(l2_normalize_kernel,), fresh=True, grad=_l2_normalize_grad, batch=along_axis_batch)
"""x divided by its L2 norm over `axis` (an int or a tuple), the norm floored at sqrt(epsilon)."""


def _l2_axis(axis: Any) -> Any:
    return tuple(axis) if isinstance(axis, list | tuple) else axis


class L2Normalize(Primitive):
    """`ops.L2Normalize(axis=0, epsilon=1e-4)(x)`."""
    op = l2_normalize

    def __init__(self, axis: Any = 0, epsilon: float = 1e-4) -> None:
        self.attrs = {"axis": _l2_axis(axis), "epsilon": float(epsilon)}

    def binder(self, x: Any):
        return (x,), dict(self.attrs)


def _bind_batch_norm(input_x: Any, running_mean: Any, running_var: Any, weight: Any, bias: Any,
                     training: bool = False, momentum: float = 0.1, eps: float = 1e-5):
    if training:
        raise NotImplementedError("batch_norm: training=True updates running statistics in "
                                  "place; use ops.batch_norm_train and ops.assign")
    return (input_x, running_mean, running_var, weight, bias), {"epsilon": eps}


def _bind_batch_norm_train(input_x: Any, weight: Any, bias: Any, eps: float = 1e-5):
    return (input_x, weight, bias), {"epsilon": eps}


def _bind_layer_norm(input_x: Any, gamma: Any, beta: Any, begin_norm_axis: int = -1,
                     begin_params_axis: int = -1, epsilon: float = 1e-7):
    return (input_x, gamma, beta), {"begin_norm_axis": begin_norm_axis,
                                    "begin_params_axis": begin_params_axis, "epsilon": epsilon}


OPS = (batch_norm, batch_norm_train, layer_norm, l2_normalize)
FUNCTIONS = (
    OpFunction("batch_norm", batch_norm, _bind_batch_norm),
    OpFunction("batch_norm_train", batch_norm_train, _bind_batch_norm_train),
    OpFunction("layer_norm", layer_norm, _bind_layer_norm),
    OpFunction("l2_normalize", l2_normalize,
               lambda x, axis=0, epsilon=1e-4: ((x,), {"axis": _l2_axis(axis),
                                                       "epsilon": float(epsilon)})),
)
PRIMITIVES = (L2Normalize,)

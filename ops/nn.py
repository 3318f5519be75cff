"""Neural-network ops: matmul and dense, conv2d, pooling, normalization, softmax, losses, dropout,
embedding, gather, and the in-place `assign` that layers use for moving statistics.

Their kernels live in `nn_kernels.py`; the ones generated code calls are listed in `helpers`.
"""
from __future__ import annotations

from typing import Any, Callable, Mapping

import numpy as np

from .nn_kernels import (window_pads, window_view, conv2d_kernel, window_reduce, pad_hw, im2col,
                         conv2d_gemm, fold_planes, max_pool_blocks, max_pool2d_kernel,
                         avg_pool2d_kernel, batch_norm_kernel,
                         batch_norm_train_kernel, layer_norm_kernel, softmax_kernel,
                         log_softmax_kernel, softmax_cross_entropy_kernel, nll_loss_kernel,
                         dropout_kernel, assign_kernel, embedding_kernel, pool_divisor,
                         scatter_windows, conv2d_grad_input, conv2d_grad_weight, first_maxima,
                         max_pool2d_grad, max_pool2d_pick, avg_pool2d_grad)
from .opdef import NO_GRAD, REQUIRED, Dyn, GradContext, OpDef, OpFunction, Primitive, Spelling
from .types import (AnyType, Dim, Scalar, Tensor, TupleType, Type, broadcast_shapes,
                    result_dtype)

REDUCTIONS = ("none", "mean", "sum")


# ---------------------------------------------------------------------------------------------
# Shape rules.


def _tensor(op: str, role: str, t: Type, rank: int | None = None, min_rank: int = 0) -> Tensor:
    if not isinstance(t, Tensor):
        raise TypeError(f"{op}: {role} must be a tensor, got {t}")
    if rank is not None and t.rank != rank:
        raise ValueError(f"{op}: {role} must be {rank}-d, got {t}")
    if t.rank < min_rank:
        raise ValueError(f"{op}: {role} must have at least {min_rank} dims, got {t}")
    return t


def _known(*dims: Dim) -> bool:
    return all(isinstance(d, int) for d in dims)


def _fits(a: Dim, b: Dim) -> bool:
    """Two dims that may be equal at run time."""
    return a == b or not _known(a, b)


def _integer(op: str, role: str, t: Type) -> None:
    kind = t.dtype.kind if isinstance(t, Tensor) else "i" if t == Scalar(int) else None
    if kind not in ("i", "u"):
        raise TypeError(f"{op}: {role} must hold integers, got {t}")


def _float_of(op: str, t: Tensor) -> np.dtype:
    """The dtype exp/log give for `t` (ints go to the smallest float NumPy picks)."""
    if t.dtype.kind == "f":
        return t.dtype
    if t.dtype.kind in "iu":
        return np.result_type(t.dtype, np.float16)
    raise TypeError(f"{op}: expected a float or integer tensor, got {t}")


def _mean_dtype(dtype: np.dtype) -> np.dtype:
    """The dtype `np.mean` returns for `dtype`."""
    return dtype if dtype.kind in "fc" else np.dtype(np.float64)


def _axis(op: str, axis: int, rank: int) -> int:
    if not isinstance(axis, int) or not -rank <= axis < rank:
        raise ValueError(f"{op}: axis {axis!r} is out of range for a {rank}-d tensor")
    return axis % rank


def _matmul_infer(x: Type, y: Type, *, transpose_a: bool = False,
                  transpose_b: bool = False) -> Tensor:
    for role, t, flip in (("x", x, transpose_a), ("y", y, transpose_b)):
        _tensor("matmul", role, t, min_rank=2 if flip else 1)
    a = x.shape[:-2] + x.shape[:-3:-1] if transpose_a else x.shape
    b = y.shape[:-2] + y.shape[:-3:-1] if transpose_b else y.shape
    inner_b = b[0] if len(b) == 1 else b[-2]
    if not _fits(a[-1], inner_b):
        raise ValueError(f"matmul: inner dimensions differ ({a[-1]} vs {inner_b}): {x} @ {y}"
                         + (f" (transpose_a={transpose_a}, transpose_b={transpose_b})"
                            if transpose_a or transpose_b else ""))
    try:
        batch = broadcast_shapes(a[:-2], b[:-2])
    except ValueError:
        raise ValueError(f"matmul: batch dimensions of {x} and {y} do not broadcast") from None
    shape = batch + a[-2:-1] + (b[-1:] if len(b) > 1 else ())
    return Tensor(shape, result_dtype(x, y))


def _dot_infer(x: Type, y: Type) -> Tensor:
    dtype = result_dtype(x, y)  # NOTE: also rejects operands that are not tensors or scalars
    tensors = [t for t in (x, y) if isinstance(t, Tensor)]
    if len(tensors) < 2 or x.rank == 0 or y.rank == 0:  # np.dot with a scalar multiplies
        return Tensor(broadcast_shapes(*(t.shape for t in tensors)), dtype)
    inner_y = y.shape[0] if y.rank == 1 else y.shape[-2]
    if not _fits(x.shape[-1], inner_y):
        raise ValueError(f"dot: shapes {x} and {y} are not aligned ({x.shape[-1]} vs {inner_y})")
    return Tensor(x.shape[:-1] + y.shape[:-2] + (y.shape[-1:] if y.rank > 1 else ()), dtype)


def _dense_infer(x: Type, weight: Type, *bias: Type, has_bias: bool = False) -> Tensor:
    _tensor("dense", "input", x, min_rank=1)
    _tensor("dense", "weight", weight, rank=2)
    if len(bias) != int(has_bias):
        raise ValueError(f"dense: has_bias={has_bias} but {len(bias)} bias inputs")
    if not _fits(x.shape[-1], weight.shape[1]):
        raise ValueError(f"dense: input {x} has {x.shape[-1]} features but weight {weight} "
                         f"([out, in]) expects {weight.shape[1]}")
    shape = x.shape[:-1] + weight.shape[:1]
    for b in bias:
        _tensor("dense", "bias", b)
        try:
            shape = broadcast_shapes(shape, b.shape)
        except ValueError:
            raise ValueError(f"dense: bias {b} does not fit the output shape {shape}") from None
    return Tensor(shape, result_dtype(x, weight, *bias))


def _window_out(op: str, size: Dim, k: Dim, s: int, d: int, pad_mode: str,
                pads: tuple[int, int]) -> Dim:
    """Output length of a window op along one spatial axis."""
    if pad_mode == "same":
        return -(-size // s) if _known(size) else size if s == 1 else "?"
    if not _known(k):
        return "?"
    span = (k - 1) * d + 1
    if not _known(size):
        return size if s == 1 and sum(pads) == span - 1 else "?"
    if size + sum(pads) < span:
        raise ValueError(f"{op}: a window spanning {span} does not fit the padded input size "
                         f"{size + sum(pads)} ({size} + padding {pads})")
    return (size + sum(pads) - span) // s + 1


def _conv2d_infer(x: Type, weight: Type, *bias: Type, stride: tuple[int, int],
                  padding: tuple[int, int, int, int], pad_mode: str, dilation: tuple[int, int],
                  groups: int) -> Tensor:
    _check_window_attrs("conv2d", stride=stride, dilation=dilation, pad_mode=pad_mode,
                        padding=padding)
    (n, c, h, w) = _tensor("conv2d", "input (NCHW)", x, rank=4).shape
    (o, cg, kh, kw) = _tensor("conv2d", "weight (OIHW)", weight, rank=4).shape
    if not isinstance(groups, int) or groups < 1:
        raise ValueError(f"conv2d: groups must be a positive int, got {groups!r}")
    if _known(c, cg) and c != cg * groups:
        raise ValueError(f"conv2d: input {x} has {c} channels but weight {weight} with "
                         f"groups={groups} expects {cg * groups}")
    if _known(o) and o % groups:
        raise ValueError(f"conv2d: weight {weight} has {o} output channels, not divisible by "
                         f"groups={groups}")
    if len(bias) > 1:
        raise TypeError(f"conv2d: expected at most one bias, got {len(bias)}")
    for b in bias:
        if not _fits(_tensor("conv2d", "bias", b, rank=1).shape[0], o):
            raise ValueError(f"conv2d: bias {b} does not match {o} output channels")
    oh = _window_out("conv2d", h, kh, stride[0], dilation[0], pad_mode, padding[:2])
    ow = _window_out("conv2d", w, kw, stride[1], dilation[1], pad_mode, padding[2:])
    return Tensor((n, o, oh, ow), result_dtype(x, weight, *bias))


def _pool_out(op: str, x: Type, kernel_size: tuple[int, int], stride: tuple[int, int],
              padding: tuple[int, int, int, int], pad_mode: str,
              dilation: tuple[int, int]) -> tuple[Dim, ...]:
    _check_window_attrs(op, kernel_size=kernel_size, stride=stride, dilation=dilation,
                        pad_mode=pad_mode, padding=padding)
    _check_pool_padding(op, kernel_size, padding)
    n, c, h, w = _tensor(op, "input (NCHW)", x, rank=4).shape
    if x.dtype.kind not in "fiub":
        raise TypeError(f"{op}: expected a real tensor, got {x}")
    return (n, c, _window_out(op, h, kernel_size[0], stride[0], dilation[0], pad_mode, padding[:2]),
            _window_out(op, w, kernel_size[1], stride[1], dilation[1], pad_mode, padding[2:]))


def _max_pool2d_infer(x: Type, *, kernel_size: tuple[int, int], stride: tuple[int, int],
                      padding: tuple[int, int, int, int], pad_mode: str,
                      dilation: tuple[int, int]) -> Tensor:
    return Tensor(_pool_out("max_pool2d", x, kernel_size, stride, padding, pad_mode, dilation),
                  x.dtype)


def _avg_pool2d_infer(x: Type, *, kernel_size: tuple[int, int], stride: tuple[int, int],
                      padding: tuple[int, int, int, int], pad_mode: str, count_include_pad: bool,
                      divisor_override: int) -> Tensor:
    shape = _pool_out("avg_pool2d", x, kernel_size, stride, padding, pad_mode, (1, 1))
    if not isinstance(divisor_override, int) or divisor_override < 0:
        raise ValueError(f"avg_pool2d: divisor_override must be an int >= 0 (0 = none), "
                         f"got {divisor_override!r}")
    return Tensor(shape, _mean_dtype(x.dtype) if x.dtype.kind != "c" else x.dtype)


def _channel_params(op: str, x: Tensor, **params: Type) -> None:
    for role, t in params.items():
        if not _fits(_tensor(op, role, t, rank=1).shape[0], x.shape[1]):
            raise ValueError(f"{op}: {role} {t} does not match the {x.shape[1]} channels of {x}")


def _batch_norm_infer(x: Type, mean: Type, variance: Type, gamma: Type, beta: Type, *,
                      epsilon: float) -> Tensor:
    _tensor("batch_norm", "input", x, min_rank=2)
    _channel_params("batch_norm", x, mean=mean, variance=variance, gamma=gamma, beta=beta)
    return Tensor(x.shape, result_dtype(x, mean, variance, gamma, beta, Scalar(float)))


def _batch_norm_train_infer(x: Type, gamma: Type, beta: Type, *, epsilon: float) -> TupleType:
    _tensor("batch_norm_train", "input", x, min_rank=2)
    _channel_params("batch_norm_train", x, gamma=gamma, beta=beta)
    stat = Tensor(x.shape[1:2], _mean_dtype(x.dtype))
    return TupleType((Tensor(x.shape, result_dtype(stat, gamma, beta, Scalar(float))), stat, stat))


def _layer_norm_infer(x: Type, gamma: Type, beta: Type, *, begin_norm_axis: int,
                      begin_params_axis: int, epsilon: float) -> Tensor:
    _tensor("layer_norm", "input", x, min_rank=1)
    _axis("layer_norm", begin_norm_axis, x.rank)
    expected = x.shape[_axis("layer_norm", begin_params_axis, x.rank):]
    for role, t in (("gamma", gamma), ("beta", beta)):
        got = _tensor("layer_norm", role, t).shape
        if len(got) != len(expected) or not all(map(_fits, got, expected)):
            raise ValueError(f"layer_norm: {role} {t} must have shape {expected} (input {x} from "
                             f"begin_params_axis={begin_params_axis})")
    return Tensor(x.shape, np.result_type(_mean_dtype(x.dtype), gamma.dtype, beta.dtype))


def _softmax_infer(op: str):
    def infer(x: Type, *, axis: int | tuple[int, ...]) -> Tensor:
        _tensor(op, "input", x, min_rank=1)
        for a in axis if isinstance(axis, tuple) else (axis,):
            _axis(op, a, x.rank)
        return Tensor(x.shape, _float_of(op, x))
    return infer


def _check_reduction(op: str, reduction: str) -> None:
    if reduction not in REDUCTIONS:
        raise ValueError(f"{op}: reduction must be one of {REDUCTIONS}, got {reduction!r}")


def _reduced(shape: tuple[Dim, ...], dtype: np.dtype, reduction: str) -> Tensor:
    return Tensor(shape if reduction == "none" else (), dtype)


def _softmax_cross_entropy_infer(logits: Type, labels: Type, *, sparse: bool,
                                 reduction: str) -> Tensor:
    op = "softmax_cross_entropy"
    _check_reduction(op, reduction)
    _tensor(op, "logits", logits, min_rank=1)
    dtype = _float_of(op, logits)
    expected = logits.shape[:-1] if sparse else logits.shape
    got = _tensor(op, "labels", labels).shape
    if len(got) != len(expected) or not all(map(_fits, got, expected)):
        kind = "class ids" if sparse else "one-hot/probabilities"
        raise ValueError(f"{op}: labels {labels} ({kind}) must have shape {expected} for logits "
                         f"{logits} (sparse={sparse})")
    if sparse:
        _integer(op, "sparse labels", labels)
    else:
        dtype = np.result_type(dtype, labels.dtype)
    return _reduced(logits.shape[:-1], dtype, reduction)


def _nll_loss_infer(log_probs: Type, target: Type, *weight: Type, reduction: str,
                    ignore_index: int) -> Tensor:
    _check_reduction("nll_loss", reduction)
    _tensor("nll_loss", "input", log_probs, min_rank=2)
    _tensor("nll_loss", "target", target)
    _integer("nll_loss", "target", target)
    expected = log_probs.shape[:1] + log_probs.shape[2:]
    if target.rank != len(expected) or not all(map(_fits, target.shape, expected)):
        raise ValueError(f"nll_loss: target {target} must have shape {expected} for input "
                         f"{log_probs} (classes on axis 1)")
    for w in weight:
        if not _fits(_tensor("nll_loss", "weight", w, rank=1).shape[0], log_probs.shape[1]):
            raise ValueError(f"nll_loss: weight {w} does not match the classes of {log_probs}")
    return _reduced(target.shape, result_dtype(log_probs, *weight), reduction)


def _mse_loss_infer(x: Type, y: Type, *, reduction: str) -> Tensor:
    _check_reduction("mse_loss", reduction)
    _tensor("mse_loss", "input", x)
    try:
        shape = broadcast_shapes(x.shape, y.shape if isinstance(y, Tensor) else ())
    except ValueError:
        raise ValueError(f"mse_loss: input {x} and target {y} do not broadcast") from None
    dtype = result_dtype(x, y)
    return _reduced(shape, _mean_dtype(dtype) if reduction == "mean" else dtype, reduction)


def _dropout_infer(x: Type, generator: Type, *, p: float, training: bool) -> Tensor:
    _tensor("dropout", "input", x)
    if x.dtype.kind != "f":
        raise TypeError(f"dropout: expected a float tensor, got {x}")
    if not isinstance(generator, AnyType):
        raise TypeError(f"dropout: generator must be a np.random.Generator, got {generator}")
    _check_probability(p)
    return x


def _embedding_infer(ids: Type, table: Type) -> Tensor:
    _integer("embedding", "ids", ids)
    _tensor("embedding", "table", table, min_rank=1)
    shape = ids.shape if isinstance(ids, Tensor) else ()
    return Tensor(shape + table.shape[1:], table.dtype)


def _gather_infer(params: Type, indices: Type, *, axis: int) -> Tensor:
    _tensor("gather", "params", params, min_rank=1)
    _integer("gather", "indices", indices)
    a = _axis("gather", axis, params.rank)
    shape = indices.shape if isinstance(indices, Tensor) else ()
    return Tensor(params.shape[:a] + shape + params.shape[a + 1:], params.dtype)


def _assign_infer(param: Type, value: Type) -> Tensor:
    _tensor("assign", "param", param)
    if not isinstance(value, Tensor | Scalar):
        raise TypeError(f"assign: value must be a tensor or a Python scalar, got {value}")
    shape = value.shape if isinstance(value, Tensor) else ()
    try:
        fits = broadcast_shapes(param.shape, shape) == param.shape
    except ValueError:
        fits = False
    if not fits:
        raise ValueError(f"assign: value {value} does not broadcast to param {param}")
    if isinstance(value, Tensor) and not np.can_cast(value.dtype, param.dtype, "same_kind"):
        raise TypeError(f"assign: cannot write {value} into param {param}")
    return param


# ---------------------------------------------------------------------------------------------
# Attribute normalization (binders) and checks (shape rules).


def _items(value: Any) -> tuple[Any, ...]:
    if isinstance(value, tuple | list):
        return tuple(value)
    return (value,) if isinstance(value, int) else ()


def _as_pair(op: str, name: str, value: Any) -> tuple[int, int]:
    """An int, a 1- or 2-tuple, or MindSpore's NCHW 4-tuple (1, 1, h, w) -> (h, w)."""
    items = _items(value)
    if len(items) == 1:
        items *= 2
    elif len(items) == 4:
        items = items[2:]
    if len(items) != 2 or not all(isinstance(v, int) and v >= 1 for v in items):
        raise ValueError(f"{op}: {name} must be a positive int or a pair of them, got {value!r}")
    return items


def _as_pads(op: str, padding: Any) -> tuple[int, int, int, int]:
    """An int, (vertical, horizontal), or (top, bottom, left, right)."""
    items = _items(padding)
    if len(items) == 1:
        items *= 4
    elif len(items) == 2:
        items = (items[0], items[0], items[1], items[1])
    if len(items) != 4 or not all(isinstance(v, int) and v >= 0 for v in items):
        raise ValueError(f"{op}: padding must be an int >= 0, a pair or a 4-tuple "
                         f"(top, bottom, left, right), got {padding!r}")
    return items


def _window_attrs(op: str, pad_mode: str, padding: Any) -> dict[str, Any]:
    mode = pad_mode.lower() if isinstance(pad_mode, str) else pad_mode
    if mode not in ("same", "valid", "pad"):
        raise ValueError(f"{op}: pad_mode must be 'same', 'valid' or 'pad', got {pad_mode!r}")
    pads = _as_pads(op, padding)
    if mode != "pad" and any(pads):
        raise ValueError(f"{op}: padding must be 0 unless pad_mode='pad', got {padding!r}")
    return {"pad_mode": "valid" if not any(pads) and mode == "pad" else mode, "padding": pads}


def _check_window_attrs(op: str, *, pad_mode: str, padding: Any, **pairs: Any) -> None:
    """Shape rules take attributes only in the canonical form binders produce."""
    canonical = {name: _as_pair(op, name, v) for name, v in pairs.items()}
    canonical.update(_window_attrs(op, pad_mode, padding))
    given = {**pairs, "pad_mode": pad_mode, "padding": padding}
    for name, value in canonical.items():
        if given[name] != value or type(given[name]) is not type(value):
            raise TypeError(f"{op}: attribute {name}={given[name]!r} is not in canonical form "
                            f"({value!r}); bind it through amber.ops.{op}")


def _check_pool_padding(op: str, kernel_size: tuple[int, int], padding: tuple[int, ...]) -> None:
    # NOTE: a window made only of padding would give -inf (max) or divide by zero (avg).
    if any(p > k // 2 for p, k in zip(padding, np.repeat(kernel_size, 2))):
        raise ValueError(f"{op}: padding {padding} must be at most half the kernel {kernel_size}")


def _check_probability(p: Any) -> None:
    if not isinstance(p, int | float) or not 0 <= p < 1:
        raise ValueError(f"dropout: p (the drop probability) must be in [0, 1), got {p!r}")


def _call(helper: Callable[..., Any], args: str,
          defaults: Mapping[str, Any]) -> Callable[[Mapping[str, Any]], str]:
    """An emit rule `helper(args, name=name, ...)` that leaves out attributes at their default."""
    def emit(attrs: Mapping[str, Any]) -> str:
        kws = [f"{k}={k}" for k, d in defaults.items() if d is REQUIRED or attrs.get(k, d) != d]
        return f"{helper.__name__}({', '.join([args, *kws])})"
    return emit


def _matmul_kernel(x: np.ndarray, y: np.ndarray, *, transpose_a: bool = False,
                   transpose_b: bool = False) -> np.ndarray:
    return np.matmul(np.swapaxes(x, -1, -2) if transpose_a else x,
                     np.swapaxes(y, -1, -2) if transpose_b else y)


def _matmul_emit(attrs: Mapping[str, Any]) -> str:
    a = "np.swapaxes(x, -1, -2)" if attrs.get("transpose_a") else "x"
    b = "np.swapaxes(y, -1, -2)" if attrs.get("transpose_b") else "y"
    return f"{a} @ {b}"


def _dense_kernel(x: np.ndarray, weight: np.ndarray, *bias: np.ndarray,
                  has_bias: bool = False) -> np.ndarray:
    return x @ weight.T + bias[0] if bias else x @ weight.T


def _mse_loss_kernel(x: np.ndarray, y: np.ndarray, *, reduction: str = "mean") -> np.ndarray:
    d = np.square(x - y)
    return d if reduction == "none" else np.sum(d) if reduction == "sum" else np.mean(d)


def _take(params: np.ndarray, indices: np.ndarray, *, axis: int) -> np.ndarray:
    return np.take(params, indices, axis=axis)


def _static_dims(*types: Type) -> bool:
    return all(isinstance(t, Tensor) and t.is_static and all(t.shape) for t in types)


def _window_geometry(x: Tensor, kernel: tuple[int, int], attrs: Mapping[str, Any]
                     ) -> tuple[tuple[int, int, int, int], tuple[int, int]]:
    """(pads, (OH, OW)) of a window op over static `x`."""
    stride, dilation = attrs["stride"], attrs.get("dilation", (1, 1))
    pads = window_pads(x.shape[2:], kernel, stride, dilation, attrs["pad_mode"],
                       attrs["padding"])
    size = [(n + pads[2 * i] + pads[2 * i + 1] - (k - 1) * d - 1) // s + 1
            for i, (n, k, s, d) in enumerate(zip(x.shape[2:], kernel, stride, dilation))]
    return pads, (size[0], size[1])


IM2COL_BYTES = 1 << 20
"""A convolution's im2col columns are made this many bytes at a time (whole images, at least
one): small enough to stay in cache until the GEMM reads them, and a bound on the memory."""

_WINDOW_DEFAULTS = {"stride": (1, 1), "dilation": (1, 1), "pads": (0, 0, 0, 0)}
_IM2COL = _call(im2col, "x, kernel, out_size", _WINDOW_DEFAULTS)
_CONV2D_GEMM = _call(conv2d_gemm, "x, weight, *bias, kernel=kernel, out_size=out_size, step=step",
                     _WINDOW_DEFAULTS)


def _conv2d_static(types: tuple[Type, ...], attrs: Mapping[str, Any]) -> Spelling | None:
    """Static shapes: the im2col geometry is fixed, so the GEMM is spelled out in the code."""
    x, weight, *bias = types
    if not _static_dims(x, weight, *bias):
        return None
    (n, c, _, _), (o, cg, kh, kw), groups = x.shape, weight.shape, attrs["groups"]
    pads, (oh, ow) = _window_geometry(x, (kh, kw), attrs)
    values = {"kernel": (kh, kw), "out_size": (oh, ow), "stride": attrs["stride"],
              "dilation": attrs["dilation"], "pads": pads, "n": n, "c": c, "o": o,
              "k": cg * kh * kw, "g": groups, "og": o // groups, "oh": oh, "ow": ow,
              "l": oh * ow}
    pixels = (kh, kw) == (1, 1) and not any(pads)  # NOTE: the columns are the pixels
    step = max(1, IM2COL_BYTES // (values["k"] * values["l"] * x.dtype.itemsize))
    if groups == 1 and step < n and not pixels:
        return Spelling(_CONV2D_GEMM(values), {**values, "step": step},
                        (pad_hw, im2col, conv2d_gemm))
    if pixels:
        sh, sw = attrs["stride"]
        cols = "x.reshape(n, c, l)" if (sh, sw) == (1, 1) else \
            f"x[:, :, ::{sh}, ::{sw}].reshape(n, c, l)"
    else:
        cols = _IM2COL(values)
    if groups == 1:
        product = f"weight.reshape(o, k) @ {cols}" + (" + bias_0.reshape(o, 1)" if bias else "")
    else:  # NOTE: the columns of group g are rows g*k.. of the ungrouped ones
        product = f"weight.reshape(g, og, k) @ {cols}.reshape(n, g, k, l)" + (
            " + bias_0.reshape(g, og, 1)" if bias else "")
    return Spelling(f"({product}).reshape(n, o, oh, ow)", values, (pad_hw, im2col))


def _max_pool2d_static(types: tuple[Type, ...], attrs: Mapping[str, Any]) -> Spelling | None:
    """Non-overlapping windows without padding: pooling by reshape (see `max_pool_blocks`)."""
    (x,) = types
    kernel = attrs["kernel_size"]
    if not _static_dims(x) or attrs["stride"] != kernel or attrs["dilation"] != (1, 1):
        return None
    pads, _ = _window_geometry(x, kernel, attrs)
    if any(pads):
        return None
    return Spelling("max_pool_blocks(x, kernel_size)", {"kernel_size": kernel},
                    (fold_planes, max_pool_blocks))


_MSE_EMIT = {"none": "np.square(x - y)", "sum": "np.sum(np.square(x - y))",
             "mean": "np.mean(np.square(x - y))"}


# ---------------------------------------------------------------------------------------------
# Gradient rules (vector-Jacobian products), in terms of other ops.

def _matmul_grad(ad: GradContext) -> tuple[Any, ...]:
    """out = A @ B with A, B the (transposed) operands; 1-d operands get a unit axis so the
    2-d formulas dA = g @ B^T, dB = A^T @ g apply, and lose it again."""
    x, y, g = ad.input(0), ad.input(1), ad.g
    ta, tb = ad.attrs.get("transpose_a", False), ad.attrs.get("transpose_b", False)
    xr, yr = ad.types[0].rank, ad.types[1].rank
    if xr == 1 and yr == 1:
        return g * y, g * x
    if xr == 1:
        x, g = ad.op("expand_dims", x, axis=0), ad.op("expand_dims", g, axis=-2)
    if yr == 1:
        y, g = ad.op("expand_dims", y, axis=-1), ad.op("expand_dims", g, axis=-1)
    mm = lambda a, b, t1, t2: ad.op("matmul", a, b, transpose_a=t1, transpose_b=t2)
    if not ta:
        dx = mm(g, y, False, not tb)
    else:
        dx = mm(y, g, tb, True)
    if not tb:
        dy = mm(x, g, not ta, False)
    else:
        dy = mm(g, x, True, ta)
    if xr == 1:
        dx = ad.op("squeeze", dx, axis=-2)
    if yr == 1:
        dy = ad.op("squeeze", dy, axis=-1)
    return dx, dy


def _dot_grad(ad: GradContext) -> tuple[Any, ...]:
    if not all(1 <= t.rank <= 2 for t in ad.types if isinstance(t, Tensor)) or \
            not all(isinstance(t, Tensor) for t in ad.types):
        raise NotImplementedError("the gradient of np.dot beyond 1-d and 2-d arrays (use @)")
    return _matmul_grad(ad)


def _dense_grad(ad: GradContext) -> tuple[Any, ...]:
    """out = x @ W.T + b: dx = g @ W, dW = g^T @ x over every leading axis, db = g."""
    x, w, g = ad.input(0), ad.input(1), ad.g
    out_dim, in_dim = ad.types[1].shape
    dw = None
    if ad.wants(1):
        if ad.types[0].rank == 2:
            dw = ad.op("matmul", g, x, transpose_a=True)
        else:
            flat_g = ad.op("reshape", g, shape=(-1, out_dim))
            flat_x = ad.op("reshape", x, shape=(-1, in_dim))
            dw = ad.op("matmul", flat_g, flat_x, transpose_a=True)
    return (g @ w, dw, *((g,) if len(ad.types) > 2 else ()))


def _softmax_grad(ad: GradContext) -> tuple[Any, ...]:
    y, g = ad.out, ad.g
    return y * (g - ad.op("sum", g * y, axis=ad.attrs["axis"], keepdims=True)),


def _log_softmax_grad(ad: GradContext) -> tuple[Any, ...]:
    g = ad.g
    total = ad.op("sum", g, axis=ad.attrs["axis"], keepdims=True)
    return g - ad.op("exp", ad.out) * total,


def _per_sample(ad: GradContext, g: Any, batch: tuple[Dim, ...]) -> Any:
    """The adjoint of each sample's loss (before a 'mean' or 'sum' reduction)."""
    reduction = ad.attrs["reduction"]
    if reduction == "none":
        return g
    if reduction == "sum":
        return g
    if not _known(*batch):
        raise NotImplementedError("the gradient of a mean loss over a run-time batch size")
    return g / max(int(np.prod(batch, dtype=np.int64)), 1)


def _softmax_cross_entropy_grad(ad: GradContext) -> tuple[Any, ...]:
    """d logits = (softmax(logits) * sum(labels) - labels) * g per sample (one-hot labels when
    sparse); d labels = -log_softmax(logits) * g."""
    logits = ad.input(0)
    t = ad.types[0]
    per = ad.op("expand_dims", _per_sample(ad, ad.g, t.shape[:-1]), axis=-1)
    probs = ad.op("softmax", logits, axis=-1)
    if ad.attrs["sparse"]:
        hot = ad.op("one_hot", ad.input(1), 1.0, 0.0, depth=t.shape[-1], axis=-1)
        return (probs - hot) * per, None
    labels = ad.input(1)
    mass = ad.op("sum", labels, axis=-1, keepdims=True)
    dlabels = -ad.op("log_softmax", logits, axis=-1) * per if ad.wants(1) else None
    return (probs * mass - labels) * per, dlabels


def _nll_loss_grad(ad: GradContext) -> tuple[Any, ...]:
    """d log_probs = -weight[target] * g at each target class (nothing at `ignore_index`)."""
    target = ad.input(1)
    kept = target != ad.attrs["ignore_index"]
    safe = ad.op("select", kept, target, 0)
    scale = ad.op("cast", kept, dtype=ad.out_type.dtype)
    if len(ad.types) > 2:
        scale = ad.op("getitem", ad.input(2), safe, index=(Dyn(0),)) * scale
    g, mean = ad.g, ad.attrs["reduction"] == "mean"
    if mean:
        g = g / ad.op("sum", scale)
    classes = ad.types[0].shape[1]
    hot = ad.op("one_hot", safe, 1.0, 0.0, depth=classes, axis=1)
    dlog_probs = -hot * ad.op("expand_dims", scale * g, axis=1)
    if len(ad.types) < 3 or not ad.wants(2):
        return dlog_probs, None
    # d loss / d weight[c]: each kept sample of class c adds its -log_prob (and, for the mean,
    # the divisor's share)
    kept_f = ad.op("cast", kept, dtype=ad.out_type.dtype)
    picked = ad.op("sum", ad.input(0) * hot, axis=1)
    per = -picked * kept_f * g
    if mean:
        per = per - ad.out * kept_f * g
    return dlog_probs, None, ad.op("index_add", ad.input(2), per, safe, index=(Dyn(0),))


def _mse_loss_grad(ad: GradContext) -> tuple[Any, ...]:
    x, y = ad.input(0), ad.input(1)
    shape = broadcast_shapes(ad.types[0].shape, getattr(ad.types[1], "shape", ()))
    d = (x - y) * 2 * _per_sample(ad, ad.g, shape)
    return d, -d


def _channels(rank: int) -> tuple[int, ...]:
    """The shape a per-channel vector takes to broadcast over NC... data."""
    return (-1,) + (1,) * (rank - 2)


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


def _normalized_grad(ad: GradContext, x: Any, dxhat: Any, axes: tuple[int, ...], count: int,
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


def _batch_norm_train_grad(ad: GradContext) -> tuple[Any, ...]:
    """Through y (normalized by batch statistics), the batch mean and the unbiased variance."""
    x, gamma = ad.input(0), ad.input(1)
    t = ad.types[0]
    axes = (0, *range(2, t.rank))
    dims = [t.shape[a] for a in axes]
    if not _known(*dims):
        raise NotImplementedError("the gradient of batch norm over a run-time batch size")
    count = int(np.prod(dims, dtype=np.int64))
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
    if gvar is not None and count > 1:
        centered = x - ad.op("mean", x, axis=axes, keepdims=True)
        part = per(gvar) * centered * (2 / (count - 1))
        dx = part if dx is None else dx + part
    return dx, dgamma, dbeta


def _layer_norm_grad(ad: GradContext) -> tuple[Any, ...]:
    x, gamma, g = ad.input(0), ad.input(1), ad.g
    t = ad.types[0]
    axes = tuple(range(ad.attrs["begin_norm_axis"] % t.rank, t.rank))
    dims = [t.shape[a] for a in axes]
    if not _known(*dims):
        raise NotImplementedError("the gradient of layer norm over run-time sizes")
    count = int(np.prod(dims, dtype=np.int64))
    dx, xhat = _normalized_grad(ad, x, g * gamma, axes, count, ad.attrs["epsilon"])
    return dx, g * xhat, g


def _embedding_grad(ad: GradContext) -> tuple[Any, ...]:
    """Each looked-up row's adjoint goes back to its row (repeated ids add up)."""
    return None, ad.op("index_add", ad.input(1), ad.g, ad.input(0), index=(Dyn(0),))


def _gather_grad(ad: GradContext) -> tuple[Any, ...]:
    axis = ad.attrs["axis"] % ad.types[0].rank
    index = (slice(None),) * axis + (Dyn(0),)
    return ad.op("index_add", ad.input(0), ad.g, ad.input(1), index=index), None



def _conv2d_grad(ad: GradContext) -> tuple[Any, ...]:
    x, w, g = ad.input(0), ad.input(1), ad.g
    dx = ad.op("conv2d_grad_input", g, w, x_shape=_static("conv2d", ad.types[0]), **ad.attrs)
    dw = ad.op("conv2d_grad_weight", x, g, w_shape=_static("conv2d", ad.types[1]), **ad.attrs)
    return (dx, dw, *((ad.op("sum", g, axis=(0, 2, 3)),) if len(ad.types) > 2 else ()))


def _static(op: str, t: Type) -> tuple[int, ...]:
    if not (isinstance(t, Tensor) and t.is_static):
        raise NotImplementedError(f"the gradient of {op} on arrays of run-time shape")
    return t.shape


def _conv2d_grad_input_grad(ad: GradContext) -> tuple[Any, ...]:
    """conv2d_grad_input(g, w) is the transpose of conv2d(., w): linear in g and in w."""
    attrs = {k: v for k, v in ad.attrs.items() if k != "x_shape"}
    u = ad.g
    return (ad.op("conv2d", u, ad.input(1), **attrs),
            ad.op("conv2d_grad_weight", u, ad.input(0), w_shape=ad.types[1].shape, **attrs))


def _conv2d_grad_weight_grad(ad: GradContext) -> tuple[Any, ...]:
    """conv2d_grad_weight(x, g) pairs g with conv2d(x, .): linear in x and in g."""
    attrs = {k: v for k, v in ad.attrs.items() if k != "w_shape"}
    u = ad.g
    return (ad.op("conv2d_grad_input", ad.input(1), u, x_shape=ad.types[0].shape, **attrs),
            ad.op("conv2d", ad.input(0), u, **attrs))


def _window_grad_infer(shape_attr: str):
    def infer(*inputs: Type, **attrs: Any) -> Tensor:
        return Tensor(tuple(attrs[shape_attr]), result_dtype(*inputs))
    return infer


def _like_input_infer(k: int):
    def infer(*inputs: Type, **attrs: Any) -> Type:
        return inputs[k]
    return infer

def _dropout_expand(ad: GradContext) -> Any:
    """Dropout as the mask it draws times the input: autodiff needs the mask. The same draw
    and the same arithmetic as the kernel, so the result is bit-identical."""
    p, training = ad.attrs["p"], ad.attrs["training"]
    if not training or p == 0:
        return ad.input(0)
    mask = ad.op("dropout_mask", ad.input(0), ad.input(1), p=p)
    return ad.input(0) * mask * (1.0 / (1.0 - p))


def _dropout_mask_infer(x: Type, generator: Type, *, p: float) -> Tensor:
    _dropout_infer(x, generator, p=p, training=True)
    return Tensor(x.shape, np.dtype(np.bool_))

# ---------------------------------------------------------------------------------------------
# The ops.

_CONV2D = {"stride": (1, 1), "padding": (0, 0, 0, 0), "pad_mode": "valid", "dilation": (1, 1),
           "groups": 1}
_MAX_POOL = {"kernel_size": REQUIRED, "stride": REQUIRED, "padding": (0, 0, 0, 0),
             "pad_mode": "valid", "dilation": (1, 1)}
_AVG_POOL = {"kernel_size": REQUIRED, "stride": REQUIRED, "padding": (0, 0, 0, 0),
             "pad_mode": "valid", "count_include_pad": True, "divisor_override": 0}
_LAYER_NORM = {"begin_norm_axis": -1, "begin_params_axis": -1, "epsilon": 1e-7}
_NLL = {"reduction": "mean", "ignore_index": -100}
_XENT = {"sparse": False, "reduction": "none"}
_DROPOUT = {"p": 0.5, "training": True}

matmul = OpDef(
    "matmul", ("x", "y"), kernel=_matmul_kernel, infer=_matmul_infer, emit=_matmul_emit,
    attrs={"transpose_a": False, "transpose_b": False}, operator="MatMult", fresh=True,
    grad=_matmul_grad)
"""`x @ y` with NumPy semantics (1-d operands, broadcast batches); the transposes swap the last
two axes of an operand first (MindSpore MatMul/BatchMatMul)."""
dot = OpDef("dot", ("x", "y"), kernel=np.dot, infer=_dot_infer, emit="np.dot(x, y)",
            fresh=True, grad=_dot_grad)
"""`np.dot`: differs from matmul for operands above 2-d and for scalars."""
dense = OpDef(
    "dense", ("x", "weight", "*bias"), kernel=_dense_kernel, infer=_dense_infer,
    emit=lambda attrs: "x @ weight.T + bias_0" if attrs.get("has_bias") else "x @ weight.T",
    attrs={"has_bias": False}, fresh=True, grad=_dense_grad)
"""`x @ weight.T (+ bias)` with weight [out, in]; the optional bias is the variadic input and
`has_bias` (set by the binder) says whether it is there, so the emitted code is one expression."""
conv2d = OpDef(
    "conv2d", ("x", "weight", "*bias"), kernel=conv2d_kernel, infer=_conv2d_infer,
    emit=_call(conv2d_kernel, "x, weight, *bias", _CONV2D), attrs=_CONV2D,
    helpers=(window_pads, window_view, conv2d_kernel), fresh=True, specialize=_conv2d_static,
    grad=_conv2d_grad)
"""NCHW x OIHW convolution (optional bias [O]); attributes are canonical: stride/dilation pairs,
padding (top, bottom, left, right), pad_mode 'valid' | 'same' | 'pad'."""
max_pool2d = OpDef(
    "max_pool2d", ("x",), kernel=max_pool2d_kernel, infer=_max_pool2d_infer,
    emit=_call(max_pool2d_kernel, "x", _MAX_POOL), attrs=_MAX_POOL,
    helpers=(window_pads, window_view, window_reduce, max_pool2d_kernel), fresh=True,
    specialize=_max_pool2d_static,
    grad=lambda ad: (ad.op("max_pool2d_grad", ad.input(0), ad.out, ad.g, **ad.attrs),))
"""NCHW max pooling; kernel_size/stride/dilation pairs, padding a 4-tuple."""
avg_pool2d = OpDef(
    "avg_pool2d", ("x",), kernel=avg_pool2d_kernel, infer=_avg_pool2d_infer,
    emit=_call(avg_pool2d_kernel, "x", _AVG_POOL), attrs=_AVG_POOL,
    helpers=(window_pads, window_view, window_reduce, pool_divisor, avg_pool2d_kernel), fresh=True,
    grad=lambda ad: (ad.op("avg_pool2d_grad", ad.g, x_shape=ad.types[0].shape, **ad.attrs),))
"""NCHW average pooling; `count_include_pad=False` divides by the unpadded pixels and
`divisor_override` (0 = none) replaces the divisor."""
conv2d_grad_input = OpDef(
    "conv2d_grad_input", ("g", "weight"), kernel=conv2d_grad_input,
    infer=_window_grad_infer("x_shape"), attrs={"x_shape": REQUIRED, **_CONV2D},
    emit=_call(conv2d_grad_input, "g, weight", {"x_shape": REQUIRED, **_CONV2D}),
    helpers=(window_pads, scatter_windows, conv2d_grad_input), fresh=True,
    grad=_conv2d_grad_input_grad)
"""conv2d's gradient with respect to its input (a transposed convolution)."""
conv2d_grad_weight = OpDef(
    "conv2d_grad_weight", ("x", "g"), kernel=conv2d_grad_weight,
    infer=_window_grad_infer("w_shape"), attrs={"w_shape": REQUIRED, **_CONV2D},
    emit=_call(conv2d_grad_weight, "x, g", {"w_shape": REQUIRED, **_CONV2D}),
    helpers=(window_pads, window_view, conv2d_grad_weight), fresh=True,
    grad=_conv2d_grad_weight_grad)
"""conv2d's gradient with respect to its weight."""
max_pool2d_grad = OpDef(
    "max_pool2d_grad", ("x", "out", "g"), kernel=max_pool2d_grad, infer=_like_input_infer(0),
    attrs=_MAX_POOL, emit=_call(max_pool2d_grad, "x, out, g", _MAX_POOL),
    helpers=(window_pads, window_view, scatter_windows, first_maxima, max_pool2d_grad),
    fresh=True, grad=lambda ad: (None, None, ad.op("max_pool2d_pick", ad.input(0), ad.input(1),
                                                    ad.g, **ad.attrs)))
"""max_pool2d's gradient: each window's adjoint at the element it chose."""
max_pool2d_pick = OpDef(
    "max_pool2d_pick", ("x", "out", "u"), kernel=max_pool2d_pick, infer=_like_input_infer(1),
    attrs=_MAX_POOL, emit=_call(max_pool2d_pick, "x, out, u", _MAX_POOL),
    helpers=(window_pads, window_view, first_maxima, max_pool2d_pick), fresh=True,
    grad=lambda ad: (None, None, ad.op("max_pool2d_grad", ad.input(0), ad.input(1), ad.g,
                                       **ad.attrs)))
"""`u` read at the elements max pooling chose (the adjoint of max_pool2d_grad)."""
avg_pool2d_grad = OpDef(
    "avg_pool2d_grad", ("g",), kernel=avg_pool2d_grad, infer=_window_grad_infer("x_shape"),
    attrs={"x_shape": REQUIRED, **_AVG_POOL},
    emit=_call(avg_pool2d_grad, "g", {"x_shape": REQUIRED, **_AVG_POOL}),
    helpers=(window_pads, pool_divisor, scatter_windows, avg_pool2d_grad), fresh=True,
    grad=lambda ad: (ad.op("avg_pool2d", ad.g, **{k: v for k, v in ad.attrs.items()
                                                  if k != "x_shape"}),))
"""avg_pool2d's gradient: each window's adjoint, divided as the forward divided, spread back."""
batch_norm = OpDef(
    "batch_norm", ("x", "mean", "variance", "gamma", "beta"), kernel=batch_norm_kernel,
    infer=_batch_norm_infer, attrs={"epsilon": 1e-5}, helpers=(batch_norm_kernel,), fresh=True,
    emit=_call(batch_norm_kernel, "x, mean, variance, gamma, beta", {"epsilon": 1e-5}),
    grad=_batch_norm_grad)
"""Inference batch norm over axis 1 with given (moving) statistics."""
batch_norm_train = OpDef(
    "batch_norm_train", ("x", "gamma", "beta"), kernel=batch_norm_train_kernel,
    infer=_batch_norm_train_infer, attrs={"epsilon": 1e-5}, helpers=(batch_norm_train_kernel,),
    fresh=True, grad=_batch_norm_train_grad,
    emit=_call(batch_norm_train_kernel, "x, gamma, beta", {"epsilon": 1e-5}))
"""Returns (y, batch_mean, unbiased batch_variance): MindSpore on Ascend and GPU updates
moving_variance with the unbiased estimate (n / (n - 1), or 0 when n == 1)."""
layer_norm = OpDef(
    "layer_norm", ("x", "gamma", "beta"), kernel=layer_norm_kernel, infer=_layer_norm_infer,
    emit=_call(layer_norm_kernel, "x, gamma, beta", _LAYER_NORM), attrs=_LAYER_NORM,
    helpers=(layer_norm_kernel,), fresh=True, grad=_layer_norm_grad)
"""Layer norm over axes begin_norm_axis.. with gamma/beta of shape x.shape[begin_params_axis:]."""
softmax = OpDef(
    "softmax", ("x",), kernel=softmax_kernel, infer=_softmax_infer("softmax"),
    emit=_call(softmax_kernel, "x", {"axis": -1}), attrs={"axis": -1},
    helpers=(softmax_kernel,), fresh=True, grad=_softmax_grad)
"""Softmax along `axis` (an int or a tuple)."""
log_softmax = OpDef(
    "log_softmax", ("x",), kernel=log_softmax_kernel, infer=_softmax_infer("log_softmax"),
    emit=_call(log_softmax_kernel, "x", {"axis": -1}), attrs={"axis": -1},
    helpers=(log_softmax_kernel,), fresh=True, grad=_log_softmax_grad)
"""Log-softmax along `axis` (an int or a tuple)."""
softmax_cross_entropy = OpDef(
    "softmax_cross_entropy", ("logits", "labels"), kernel=softmax_cross_entropy_kernel,
    infer=_softmax_cross_entropy_infer, attrs=_XENT, can_raise=True, fresh=True,
    emit=_call(softmax_cross_entropy_kernel, "logits, labels", _XENT),
    helpers=(log_softmax_kernel, softmax_cross_entropy_kernel), grad=_softmax_cross_entropy_grad)
"""MindSpore SoftmaxCrossEntropyWithLogits(sparse, reduction) on logits [..., C]."""
nll_loss = OpDef(
    "nll_loss", ("log_probs", "target", "*weight"), kernel=nll_loss_kernel,
    infer=_nll_loss_infer, emit=_call(nll_loss_kernel, "log_probs, target, *weight", _NLL),
    attrs=_NLL, helpers=(nll_loss_kernel,), can_raise=True, fresh=True, grad=_nll_loss_grad)
"""Negative log likelihood of log-probabilities [N, C, ...], optional class weight [C]."""
mse_loss = OpDef(
    "mse_loss", ("x", "y"), kernel=_mse_loss_kernel, infer=_mse_loss_infer,
    emit=lambda attrs: _MSE_EMIT[attrs.get("reduction", "mean")], attrs={"reduction": "mean"},
    fresh=True, grad=_mse_loss_grad)
"""Mean squared error with reduction 'none' | 'mean' | 'sum'."""
# NOTE: `fresh` (the result shares memory with no input) lets memory planning reuse an output
# buffer in place; dropout, embedding and assign may hand back an input and are not fresh.
dropout = OpDef(
    "dropout", ("x", "generator"), kernel=dropout_kernel, infer=_dropout_infer,
    emit=_call(dropout_kernel, "x, generator", _DROPOUT), attrs=_DROPOUT,
    helpers=(dropout_kernel,), effects=True, expand=_dropout_expand)
"""Draws from the run-time `generator` (IR type any); effectful, so never folded or merged.
Differentiated through its expansion (the mask times the input)."""
dropout_mask = OpDef(
    "dropout_mask", ("x", "generator"), kernel=lambda x, generator, p: generator.random(
        x.shape) >= p, infer=_dropout_mask_infer, emit="generator.random(x.shape) >= p",
    attrs={"p": 0.5}, effects=True, grad=NO_GRAD)
"""The keep mask dropout draws for `x` (one `generator.random(x.shape)` draw, as dropout's)."""
embedding = OpDef(
    "embedding", ("ids", "table"), kernel=embedding_kernel, infer=_embedding_infer,
    emit="embedding_kernel(ids, table)", helpers=(embedding_kernel,), can_raise=True,
    grad=_embedding_grad)
"""`table[ids]`; not `fresh`: a Python int id gives a view of one row."""
gather = OpDef(
    "gather", ("params", "indices"), kernel=_take, infer=_gather_infer,
    emit="np.take(params, indices, axis=axis)", attrs={"axis": REQUIRED}, can_raise=True,
    fresh=True, grad=_gather_grad)
"""`np.take(params, indices, axis=axis)` (MindSpore Gather)."""
assign = OpDef(
    "assign", ("param", "value"), kernel=assign_kernel, infer=_assign_infer,
    emit="assign_kernel(param, value)", helpers=(assign_kernel,), effects=True, writes=0,
    same_object=True, grad=NO_GRAD)
"""Writes `value` into the array `param` in place (moving statistics) and returns `param`."""

# ---------------------------------------------------------------------------------------------
# Spellings: MindSpore functional names, np.*, ndarray methods and primitive classes.


def _optional(*inputs: Any) -> tuple[Any, ...]:
    return tuple(v for v in inputs if v is not None)


def _conv2d_attrs(stride: Any, pad_mode: str, padding: Any, dilation: Any,
                  groups: int) -> dict[str, Any]:
    return {"stride": _as_pair("conv2d", "stride", stride), "groups": groups,
            "dilation": _as_pair("conv2d", "dilation", dilation),
            **_window_attrs("conv2d", pad_mode, padding)}


def _pool_attrs(op: str, kernel_size: Any, stride: Any, pad_mode: str,
                padding: Any) -> dict[str, Any]:
    kernel = _as_pair(op, "kernel_size", kernel_size)
    attrs = {"kernel_size": kernel, "stride": kernel if stride is None else
             _as_pair(op, "stride", stride), **_window_attrs(op, pad_mode, padding)}
    _check_pool_padding(op, kernel, attrs["padding"])
    return attrs


def _pool_primitive_attrs(name: str, kernel_size: Any, strides: Any, pad_mode: str,
                          data_format: str) -> dict[str, Any]:
    if data_format != "NCHW":
        raise NotImplementedError(f"{name}: only data_format='NCHW' is supported")
    if isinstance(pad_mode, str) and pad_mode.lower() == "pad":
        raise ValueError(f"{name}: pad_mode must be 'valid' or 'same', got {pad_mode!r}")
    return _pool_attrs(name, kernel_size, strides, pad_mode, 0)


def _unsupported(op: str, **flags: Any) -> None:
    for name, value in flags.items():
        if value:
            raise NotImplementedError(f"{op}: {name}={value!r} is not supported")


def _bind_dense(input: Any, weight: Any, bias: Any = None):
    return (input, weight, *_optional(bias)), {"has_bias": bias is not None}


def _bind_conv2d(input: Any, weight: Any, bias: Any = None, stride: Any = 1,
                 pad_mode: str = "valid", padding: Any = 0, dilation: Any = 1, groups: int = 1):
    return (input, weight, *_optional(bias)), _conv2d_attrs(stride, pad_mode, padding, dilation,
                                                            groups)


def _bind_max_pool2d(x: Any, kernel_size: Any, stride: Any = None, padding: Any = 0,
                     dilation: Any = 1, return_indices: bool = False, ceil_mode: bool = False):
    _unsupported("max_pool2d", return_indices=return_indices, ceil_mode=ceil_mode)
    attrs = _pool_attrs("max_pool2d", kernel_size, stride, "pad", padding)
    return (x,), {**attrs, "dilation": _as_pair("max_pool2d", "dilation", dilation)}


def _bind_avg_pool2d(input_x: Any, kernel_size: Any = 1, stride: Any = 1, padding: Any = 0,
                     ceil_mode: bool = False, count_include_pad: bool = True,
                     divisor_override: int | None = 0):
    _unsupported("avg_pool2d", ceil_mode=ceil_mode)
    attrs = _pool_attrs("avg_pool2d", kernel_size, stride, "pad", padding)
    return (input_x,), {**attrs, "count_include_pad": count_include_pad,
                        "divisor_override": divisor_override or 0}


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


def _as_axis(axis: Any) -> int | tuple[int, ...]:
    return tuple(axis) if isinstance(axis, list | tuple) else axis


def _bind_softmax(input: Any, axis: Any = -1):
    return (input,), {"axis": _as_axis(axis)}


def _bind_log_softmax(logits: Any, axis: Any = -1):
    return (logits,), {"axis": _as_axis(axis)}


def _bind_softmax_cross_entropy(logits: Any, labels: Any, sparse: bool = False,
                                reduction: str = "none"):
    _check_reduction("softmax_cross_entropy", reduction)
    return (logits, labels), {"sparse": sparse, "reduction": reduction}


def _bind_nll_loss(inputs: Any, target: Any, weight: Any = None, ignore_index: int = -100,
                   reduction: str = "mean", label_smoothing: float = 0.0):
    _unsupported("nll_loss", label_smoothing=label_smoothing)
    _check_reduction("nll_loss", reduction)
    return (inputs, target, *_optional(weight)), {"reduction": reduction,
                                                 "ignore_index": ignore_index}


def _bind_mse_loss(input: Any, target: Any, reduction: str = "mean"):
    _check_reduction("mse_loss", reduction)
    return (input, target), {"reduction": reduction}


def _bind_dropout(input: Any, generator: Any, p: float = 0.5, training: bool = True, *,
                  keep_prob: float | None = None):
    p = 1.0 - keep_prob if keep_prob is not None else p
    _check_probability(p)
    return (input, generator), {"p": p, "training": training}


def _bind_gather(input_params: Any, input_indices: Any, axis: int, batch_dims: int = 0):
    _unsupported("gather", batch_dims=batch_dims)
    return (input_params, input_indices), {"axis": axis}


def _pair_binder(x: Any, y: Any):
    return (x, y), {}


class MatMul(Primitive):
    """`ops.MatMul(transpose_a=False, transpose_b=False)(a, b)`."""
    op = matmul

    def __init__(self, transpose_a: bool = False, transpose_b: bool = False) -> None:
        self.transpose_a, self.transpose_b = transpose_a, transpose_b

    def binder(self, x: Any, y: Any):
        return (x, y), {"transpose_a": self.transpose_a, "transpose_b": self.transpose_b}


class BatchMatMul(Primitive):
    """`ops.BatchMatMul(transpose_a=False, transpose_b=False)(x, y)`: matmul over a batch."""
    op = matmul
    __init__ = MatMul.__init__
    binder = MatMul.binder


class Conv2D(Primitive):
    """`ops.Conv2D(out_channel, kernel_size, mode=1, pad_mode="valid", pad=0, stride=1,
    dilation=1, group=1)(x, weight)`."""
    op = conv2d

    def __init__(self, out_channel: int, kernel_size: Any, mode: int = 1, pad_mode: str = "valid",
                 pad: Any = 0, stride: Any = 1, dilation: Any = 1, group: int = 1,
                 data_format: str = "NCHW") -> None:
        if mode != 1 or data_format != "NCHW":
            raise NotImplementedError(f"Conv2D: only mode=1 and NCHW are supported, got "
                                      f"mode={mode!r}, data_format={data_format!r}")
        self.out_channel = out_channel
        self.kernel_size = _as_pair("Conv2D", "kernel_size", kernel_size)
        self.attrs = _conv2d_attrs(stride, pad_mode, pad, dilation, group)

    def binder(self, x: Any, weight: Any):
        return (x, weight), dict(self.attrs)


class MaxPool(Primitive):
    """`ops.MaxPool(kernel_size=1, strides=1, pad_mode="valid")(x)`."""
    op = max_pool2d

    def __init__(self, kernel_size: Any = 1, strides: Any = 1, pad_mode: str = "valid",
                 data_format: str = "NCHW") -> None:
        self.attrs = _pool_primitive_attrs(type(self).__name__, kernel_size, strides, pad_mode,
                                           data_format)

    def binder(self, x: Any):
        return (x,), dict(self.attrs)


class AvgPool(Primitive):
    """`ops.AvgPool(kernel_size=1, strides=1, pad_mode="valid")(x)`; 'same' padding is left out
    of each window's divisor, as MindSpore does."""
    op = avg_pool2d
    __init__ = MaxPool.__init__

    def binder(self, x: Any):
        return (x,), {**self.attrs, "count_include_pad": False}


class Softmax(Primitive):
    """`ops.Softmax(axis=-1)(x)`."""
    op = softmax

    def __init__(self, axis: Any = -1) -> None:
        self.axis = _as_axis(axis)

    def binder(self, x: Any):
        return (x,), {"axis": self.axis}


class LogSoftmax(Primitive):
    """`ops.LogSoftmax(axis=-1)(logits)`."""
    op = log_softmax
    __init__ = Softmax.__init__
    binder = Softmax.binder


class Gather(Primitive):
    """`ops.Gather(batch_dims=0)(params, indices, axis)`; `axis` must be a constant int."""
    op = gather

    def __init__(self, batch_dims: int = 0) -> None:
        _unsupported("Gather", batch_dims=batch_dims)

    def binder(self, params: Any, indices: Any, axis: int):
        return (params, indices), {"axis": axis}


class Assign(Primitive):
    """`ops.Assign()(variable, value)`."""
    op = assign

    def binder(self, variable: Any, value: Any):
        return (variable, value), {}


OPS = (matmul, dot, dense, conv2d, max_pool2d, avg_pool2d, conv2d_grad_input, conv2d_grad_weight,
       max_pool2d_grad, max_pool2d_pick, avg_pool2d_grad, batch_norm, batch_norm_train,
       layer_norm, softmax, log_softmax, softmax_cross_entropy, nll_loss, mse_loss, dropout,
       dropout_mask, embedding, gather, assign)
FUNCTIONS = (
    OpFunction("matmul", matmul, _pair_binder),
    OpFunction("bmm", matmul, lambda input_x, mat2: ((input_x, mat2), {})),
    OpFunction("dense", dense, _bind_dense),
    OpFunction("conv2d", conv2d, _bind_conv2d),
    OpFunction("max_pool2d", max_pool2d, _bind_max_pool2d),
    OpFunction("avg_pool2d", avg_pool2d, _bind_avg_pool2d),
    OpFunction("batch_norm", batch_norm, _bind_batch_norm),
    OpFunction("batch_norm_train", batch_norm_train, _bind_batch_norm_train),
    OpFunction("layer_norm", layer_norm, _bind_layer_norm),
    OpFunction("softmax", softmax, _bind_softmax),
    OpFunction("log_softmax", log_softmax, _bind_log_softmax),
    OpFunction("softmax_cross_entropy", softmax_cross_entropy, _bind_softmax_cross_entropy),
    OpFunction("nll_loss", nll_loss, _bind_nll_loss),
    OpFunction("mse_loss", mse_loss, _bind_mse_loss),
    OpFunction("dropout", dropout, _bind_dropout),
    OpFunction("embedding", embedding, lambda input, weight: ((input, weight), {})),
    OpFunction("gather", gather, _bind_gather),
    OpFunction("assign", assign, lambda variable, value: ((variable, value), {})),
)
NUMPY = (OpFunction("matmul", matmul, _pair_binder), OpFunction("dot", dot, _pair_binder))
METHODS = (OpFunction("dot", dot, _pair_binder),)
PRIMITIVES = (MatMul, BatchMatMul, Conv2D, MaxPool, AvgPool, Softmax, LogSoftmax, Gather, Assign)

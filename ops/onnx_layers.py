"""The ONNX rules of layers (matmul, dense, convolution, pooling, normalization, softmax),
of indexing and of padding and tiling: the `OpDef.onnx` spellings too long for ops/onnx.py,
written over the same `OnnxEmitter`."""
from __future__ import annotations

from typing import Any

import numpy as np

from .onnx import ORT_ARITHMETIC, OnnxEmitter, Rule, arithmetic, dtype_of
from .types import Scalar, Tensor


def matmul(e: OnnxEmitter, x: str, y: str) -> str:
    """x @ y (NumPy's matmul semantics are ONNX MatMul's), the transposes first."""
    dtype = dtype_of(e.out_type)
    if dtype not in ORT_ARITHMETIC:
        return e.refuse(f"onnxruntime has no MatMul for {dtype}")
    x, y = e.cast(x, dtype), e.cast(y, dtype)
    for flag, k in (("transpose_a", 0), ("transpose_b", 1)):
        if e.attrs.get(flag):
            rank = e.types[k].rank
            perm = list(range(rank - 2)) + [rank - 1, rank - 2]
            if k == 0:
                x = e.node("Transpose", x, perm=perm)
            else:
                y = e.node("Transpose", y, perm=perm)
    return e.node("MatMul", x, y)


def dot(e: OnnxEmitter, x: str, y: str) -> str:
    """np.dot: matmul for operands of rank 1 or 2, a product with a 0-d operand."""
    ranks = [t.rank if isinstance(t, Tensor) else 0 for t in e.types]
    if 0 in ranks:
        return arithmetic("Mul")(e, x, y)
    if max(ranks) > 2:
        return e.refuse("np.dot of arrays above 2-d (use @)")
    return matmul(e, x, y)


def dense(e: OnnxEmitter, x: str, w: str, *bias: str) -> str:
    """x @ weight.T (+ bias)."""
    dtype = dtype_of(e.out_type)
    y = e.node("MatMul", e.cast(x, dtype), e.node("Transpose", e.cast(w, dtype), perm=[1, 0]))
    return e.node("Add", y, e.cast(bias[0], dtype)) if bias else y


def gather(e: OnnxEmitter, params: str, indices: str) -> str:
    return e.node("Gather", params, e.cast(indices, np.int64), axis=int(e.attrs["axis"]))


def embedding(e: OnnxEmitter, ids: str, table: str) -> str:
    return e.node("Gather", table, e.cast(ids, np.int64), axis=0)


def dropout(e: OnnxEmitter, x: str, generator: Any) -> str:
    """Dropout outside training is the identity; in training it draws random numbers."""
    if e.attrs.get("training", True) and e.attrs.get("p", 0) > 0:
        return e.refuse("dropout in training mode draws random numbers (call set_train(False) "
                        "before exporting)")
    return x


def _window_pads(e: OnnxEmitter, kernel: Any, dilation: Any) -> list[int]:
    """ONNX pads (top, left, bottom, right) of a window op with amber's canonical attrs."""
    from .nn_kernels import window_pads
    x = e.types[0]
    size = x.shape[2:]
    if e.attrs["pad_mode"] == "same" and not all(isinstance(d, int) for d in size):
        return e.refuse("pad_mode='same' over a symbolic image size")
    top, bottom, left, right = window_pads(tuple(size), tuple(kernel), tuple(e.attrs["stride"]),
                                           tuple(dilation), e.attrs["pad_mode"],
                                           tuple(e.attrs["padding"]))
    return [top, left, bottom, right]


def conv2d(e: OnnxEmitter, x: str, w: str, *bias: str) -> str:
    dtype = dtype_of(e.out_type)
    if dtype not in (np.float32, np.float64):
        return e.refuse(f"ONNX's Conv takes floats, not {dtype}")
    kernel = e.types[1].shape[2:]
    if not all(isinstance(k, int) for k in kernel):
        return e.refuse("a convolution kernel of symbolic size")
    pads = _window_pads(e, kernel, e.attrs["dilation"])
    inputs = [e.cast(x, dtype), e.cast(w, dtype), *(e.cast(b, dtype) for b in bias)]
    return e.node("Conv", *inputs, kernel_shape=list(kernel), strides=list(e.attrs["stride"]),
                  dilations=list(e.attrs["dilation"]), pads=pads, group=int(e.attrs["groups"]))


def max_pool2d(e: OnnxEmitter, x: str) -> str:
    dtype = dtype_of(e.out_type)
    if dtype not in (np.float32, np.float64):
        return e.refuse(f"onnxruntime's MaxPool takes floats here, not {dtype}")
    kernel = e.attrs["kernel_size"]
    pads = _window_pads(e, kernel, e.attrs["dilation"])
    return e.node("MaxPool", x, kernel_shape=list(kernel), strides=list(e.attrs["stride"]),
                  dilations=list(e.attrs["dilation"]), pads=pads)


def avg_pool2d(e: OnnxEmitter, x: str) -> str:
    dtype = dtype_of(e.out_type)
    if dtype not in (np.float32, np.float64) or e.attrs["divisor_override"]:
        return e.refuse("ONNX's AveragePool takes floats and has no divisor_override")
    kernel = e.attrs["kernel_size"]
    pads = _window_pads(e, kernel, (1, 1))
    return e.node("AveragePool", e.cast(x, dtype), kernel_shape=list(kernel),
                  strides=list(e.attrs["stride"]), pads=pads,
                  count_include_pad=int(bool(e.attrs["count_include_pad"])))


def batch_norm(e: OnnxEmitter, x: str, mean: str, var: str, gamma: str, beta: str) -> str:
    """Batch norm with given statistics (inference): ONNX's BatchNormalization."""
    dtype = dtype_of(e.out_type)
    if dtype not in (np.float32, np.float64) or e.types[0].shape[1:2] != e.out_type.shape[1:2]:
        return e.refuse("batch norm in float32/float64 with one statistic per channel")
    x, mean, var, gamma, beta = (e.cast(v, dtype) for v in (x, mean, var, gamma, beta))
    return e.node("BatchNormalization", x, gamma, beta, mean, var,
                  epsilon=float(e.attrs["epsilon"]))


def layer_norm(e: OnnxEmitter, x: str, gamma: str, beta: str) -> str:
    dtype = dtype_of(e.out_type)
    rank = e.types[0].rank
    axis = e.attrs["begin_norm_axis"] % rank
    if dtype not in (np.float32, np.float64) or axis != e.attrs["begin_params_axis"] % rank:
        return e.refuse("layer norm in float32/float64 with begin_params_axis == "
                        "begin_norm_axis")
    return e.node("LayerNormalization", e.cast(x, dtype), e.cast(gamma, dtype),
                  e.cast(beta, dtype), axis=axis, epsilon=float(e.attrs["epsilon"]))


def softmax(op_type: str) -> Rule:
    def rule(e: OnnxEmitter, x: str) -> str:
        axis = e.attrs.get("axis", -1)
        dtype = dtype_of(e.out_type)
        if not isinstance(axis, int) or dtype not in (np.float32, np.float64):
            return e.refuse(f"{op_type} over one axis of a float32/float64 array")
        return e.node(op_type, e.cast(x, dtype), axis=axis)
    return rule


INT64_MAX = int(np.iinfo(np.int64).max)


def getitem(e: OnnxEmitter, x: str, *idx: Any) -> str:
    """Basic indexing (ints, slices, None, Ellipsis; run-time ints and slice bounds): one Slice
    over the sliced axes, a Gather per int index, a Reshape where None adds axes. Integer-array
    and mask indices are refused."""
    from .opdef import Dyn
    t = e.types[0]
    if not isinstance(t, Tensor):
        return e.refuse(f"indexing a {t} by a run-time value")
    index = e.attrs["index"]
    consuming = sum(1 for i in index if i is not None and i is not Ellipsis)
    items: list[Any] = []
    for item in index:
        items.extend([slice(None)] * (t.rank - consuming) if item is Ellipsis else [item])

    def bound(v: Any, default: int) -> str:
        if v is None:
            return e.const(np.array([default], np.int64))
        if isinstance(v, Dyn):
            kind = e.types[1 + v.k]
            if not (kind == Scalar(int) or isinstance(kind, Tensor) and kind.rank == 0
                    and kind.dtype.kind in "iu"):
                return e.refuse(f"an index of type {kind} (only ints and slices)")
            return e.node("Reshape", e.cast(idx[v.k], np.int64),
                          e.const(np.array([1], np.int64)))
        return e.const(np.array([v], np.int64))

    axis, parts, gathers, new_axes = 0, [], [], False
    for item in items:
        if item is None:
            new_axes = True
            continue
        if isinstance(item, slice):
            if item != slice(None):
                step = 1 if item.step is None else item.step
                if isinstance(step, Dyn) and (item.start is None or item.stop is None):
                    return e.refuse("a run-time slice step with an open bound")
                back = not isinstance(step, Dyn) and step < 0
                parts.append((bound(item.start, INT64_MAX if back else 0),
                              bound(item.stop, -INT64_MAX if back else INT64_MAX),
                              e.const(np.array([axis], np.int64)), bound(step, 1)))
            axis += 1
            continue
        gathers.append((axis, bound(item, 0)))
        axis += 1
    if parts:
        starts, stops, axes, steps = ([p[k] for p in parts] for k in range(4))
        x = e.node("Slice", x, *(v[0] if len(v) == 1 else e.node("Concat", *v, axis=0)
                                 for v in (starts, stops, axes, steps)))
    for ax, where in reversed(gathers):
        x = e.node("Gather", x, e.node("Reshape", where, e.const(np.array([], np.int64))),
                   axis=ax)
    if new_axes:
        x = e.node("Reshape", x, e.shape(e.out_type.shape), allowzero=1)
    return x


def pad(e: OnnxEmitter, x: str) -> str:
    """np.pad in constant, reflect or edge mode (ONNX's Pad modes of the same names)."""
    mode, t = e.attrs["mode"], e.types[0]
    if mode not in ("constant", "reflect", "edge"):
        return e.refuse(f"np.pad mode {mode!r} (ONNX pads constant, reflect and edge)")
    widths = np.broadcast_to(np.asarray(e.attrs["paddings"], dtype=np.int64), (t.rank, 2))
    pads = e.const(np.concatenate([widths[:, 0], widths[:, 1]]).astype(np.int64))
    if mode != "constant":
        return e.node("Pad", x, pads, mode=mode)
    return e.node("Pad", x, pads, e.const(e.attrs["value"], t.dtype), mode="constant")


def conv2d_grad_input(e: OnnxEmitter, g: str, w: str) -> str:
    """conv2d's input adjoint (a transposed convolution, as Conv2dTranspose computes it):
    ONNX's ConvTranspose, its output padding making the size x_shape says."""
    dtype = dtype_of(e.out_type)
    x_shape, kernel = e.attrs["x_shape"], e.types[1].shape[2:]
    sizes = (*x_shape[2:], *e.types[0].shape[2:], *kernel)
    if dtype not in (np.float32, np.float64) or not all(isinstance(d, int) for d in sizes):
        return e.refuse("a transposed convolution of float32/float64 images of static size")
    from .nn_kernels import window_pads
    stride, dilation = e.attrs["stride"], e.attrs["dilation"]
    top, bottom, left, right = window_pads(tuple(x_shape[2:]), tuple(kernel), tuple(stride),
                                           tuple(dilation), e.attrs["pad_mode"],
                                           tuple(e.attrs["padding"]))
    extra = [x_shape[2 + k] - ((e.types[0].shape[2 + k] - 1) * stride[k]
                               + (kernel[k] - 1) * dilation[k] + 1 - pads)
             for k, pads in enumerate((top + bottom, left + right))]
    if min(extra) < 0 or any(x >= max(s, d) for x, s, d in zip(extra, stride, dilation)):
        return e.refuse("a transposed convolution whose output size ONNX cannot pad to")
    return e.node("ConvTranspose", e.cast(g, dtype), e.cast(w, dtype), kernel_shape=list(kernel),
                  strides=list(stride), dilations=list(dilation), pads=[top, left, bottom, right],
                  output_padding=extra, group=int(e.attrs["groups"]))


def tile(e: OnnxEmitter, x: str) -> str:
    """np.tile: the shorter of x's shape and reps padded with leading 1s, then ONNX's Tile."""
    t, reps = e.types[0], tuple(e.attrs["reps"]) if isinstance(e.attrs["reps"], tuple | list) \
        else (e.attrs["reps"],)
    rank = t.rank if isinstance(t, Tensor) else 0
    extra = len(reps) - rank
    if extra > 0:
        x = e.node("Unsqueeze", x, e.const(np.arange(extra, dtype=np.int64)))
    reps = (1,) * max(0, -extra) + reps
    return e.node("Tile", e.cast(x, dtype_of(e.out_type)), e.const(np.array(reps, np.int64)))

"""Window ops over NCHW images: conv2d, max and average pooling, and the ops their gradients
use. Each op's facts sit together: attribute canonicalization (binders), shape rule, the
static-shape specialization generated code uses (conv as im2col + one GEMM, pooling by
reshape), gradient rule, declaration, spellings.
"""
from __future__ import annotations

from typing import Any, Mapping

import numpy as np

from . import onnx as ox
from .batch_rules import LOOP_ACROSS, folded
from .elementwise import helper_call, optional, unsupported
from .parallel import HELPERS as PARALLEL_HELPERS
from .conv_kernels import (conv2d_gemm, conv2d_grad_input, conv2d_grad_weight,
                           conv2d_grad_weight_rows, conv2d_kernel, conv2d_rows,
                           conv_transpose_stride1, im2col, image_block, pad_hw, pixel_windows,
                           row_band)
from .nn_kernels import (add_windows, avg_pool2d_grad, avg_pool2d_kernel, first_maxima,
                         fold_planes, max_pool2d_grad, max_pool2d_kernel, max_pool2d_pick,
                         max_pool_blocks, max_pool_blocks_grad, pool_divisor, scatter_windows,
                         window_pads, window_reduce, window_view)
from .opdef import REQUIRED, GradContext, OpDef, OpFunction, Primitive, Spelling
from .symbolic import Sym
from .types import (UNKNOWN, Dim, Tensor, Type, dim_add, dim_floordiv, expect_tensor, known,
                    may_equal, mean_dtype, result_dtype)


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


def _window_out(op: str, size: Dim, k: Dim, s: int, d: int, pad_mode: str,
                pads: tuple[int, int]) -> Dim:
    """Output length of a window op along one spatial axis (an expression of a symbolic size,
    e.g. `(H-4)//2+1`; the run-time kernel checks that a symbolic input is large enough)."""
    if not known(k):
        return UNKNOWN  # NOTE: a kernel's size is a weight's shape, static in practice
    if pad_mode == "same":
        return dim_floordiv(dim_add(size, s - 1), s)
    span = (k - 1) * d + 1
    if known(size) and size + sum(pads) < span:
        raise ValueError(f"{op}: a window spanning {span} does not fit the padded input size "
                         f"{size + sum(pads)} ({size} + padding {pads})")
    return dim_add(dim_floordiv(dim_add(size, sum(pads) - span), s), 1)


def _static_dims(*types: Type) -> bool:
    return all(isinstance(t, Tensor) and t.is_static and all(t.shape) for t in types)


def _static_images(t: Type) -> bool:
    """NCHW with static, non-empty C, H, W; the batch N may be symbolic (code for every N)."""
    return isinstance(t, Tensor) and t.rank == 4 and _static_dims(Tensor(t.shape[1:], t.dtype)) \
        and (isinstance(t.shape[0], Sym) or isinstance(t.shape[0], int) and t.shape[0] > 0)


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


_IM2COL = helper_call(im2col, "x, kernel, out_size", _WINDOW_DEFAULTS)


_CONV2D_GEMM = helper_call(conv2d_gemm,
                           "x, weight, *bias, kernel=kernel, out_size=out_size, step=step",
                           {**_WINDOW_DEFAULTS, "threads": 1})


_CONV2D_ROWS = helper_call(conv2d_rows,
                           "x, weight, *bias, kernel=kernel, out_size=out_size, step=step",
                           _WINDOW_DEFAULTS)


ROWS_MIN_CHANNELS = 16
"""From this many input channels a convolution takes window rows (pixel-major, `conv2d_rows`):
BLAS ran [pixels, K] @ [K, O] 1.1-1.5x faster than [O, K] @ [K, pixels] on the ResNet's layers
(16-64 channels, 8-32 pixels square); at 3 channels the column form won 2x, and at 8 it won
the weight gradient."""


_CONV2D = {"stride": (1, 1), "padding": (0, 0, 0, 0), "pad_mode": "valid", "dilation": (1, 1),
           "groups": 1, "threads": 1}
"""conv2d's attributes; `threads` (how the kernel runs, set by the layout pass) changes no
value."""


def _conv2d_infer(x: Type, weight: Type, *bias: Type, stride: tuple[int, int],
                  padding: tuple[int, int, int, int], pad_mode: str, dilation: tuple[int, int],
                  groups: int, threads: int = 1) -> Tensor:
    _check_window_attrs("conv2d", stride=stride, dilation=dilation, pad_mode=pad_mode,
                        padding=padding)
    if type(threads) is not int or threads < 1:
        raise ValueError(f"conv2d: threads must be an int >= 1, got {threads!r}")
    (n, c, h, w) = expect_tensor("conv2d", "input (NCHW)", x, rank=4).shape
    (o, cg, kh, kw) = expect_tensor("conv2d", "weight (OIHW)", weight, rank=4).shape
    if not isinstance(groups, int) or groups < 1:
        raise ValueError(f"conv2d: groups must be a positive int, got {groups!r}")
    if known(c, cg) and c != cg * groups:
        raise ValueError(f"conv2d: input {x} has {c} channels but weight {weight} with "
                         f"groups={groups} expects {cg * groups}")
    if known(o) and o % groups:
        raise ValueError(f"conv2d: weight {weight} has {o} output channels, not divisible by "
                         f"groups={groups}")
    if len(bias) > 1:
        raise TypeError(f"conv2d: expected at most one bias, got {len(bias)}")
    for b in bias:
        if not may_equal(expect_tensor("conv2d", "bias", b, rank=1).shape[0], o):
            raise ValueError(f"conv2d: bias {b} does not match {o} output channels")
    oh = _window_out("conv2d", h, kh, stride[0], dilation[0], pad_mode, padding[:2])
    ow = _window_out("conv2d", w, kw, stride[1], dilation[1], pad_mode, padding[2:])
    return Tensor((n, o, oh, ow), result_dtype(x, weight, *bias))


def _conv2d_static(types: tuple[Type, ...], attrs: Mapping[str, Any]) -> Spelling | None:
    """Static shapes (but for a symbolic batch): the im2col geometry is fixed, so the GEMM is
    spelled out in the code."""
    x, weight, *bias = types
    if not (_static_images(x) and _static_dims(weight, *bias)):
        return None
    (n, c, _, _), (o, cg, kh, kw), groups = x.shape, weight.shape, attrs["groups"]
    pads, (oh, ow) = _window_geometry(x, (kh, kw), attrs)
    values = {"kernel": (kh, kw), "out_size": (oh, ow), "stride": attrs["stride"],
              "dilation": attrs["dilation"], "pads": pads, "n": n, "c": c, "o": o,
              "k": cg * kh * kw, "g": groups, "og": o // groups, "oh": oh, "ow": ow,
              "l": oh * ow}
    pixels = (kh, kw) == (1, 1) and not any(pads)  # NOTE: the columns are the pixels
    step = max(1, IM2COL_BYTES // (values["k"] * values["l"] * x.dtype.itemsize))
    if groups == 1 and c >= ROWS_MIN_CHANNELS and not pixels:
        return Spelling(_CONV2D_ROWS(values), {**values, "step": step},
                        (pixel_windows, row_band, conv2d_rows))
    if groups == 1 and (isinstance(n, Sym) or step < n) and not pixels:
        gemm = {**values, "step": step, "threads": attrs.get("threads", 1)}
        return Spelling(_CONV2D_GEMM(gemm), gemm, (pad_hw, im2col, conv2d_gemm))
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


def _static(op: str, t: Type) -> tuple[Dim, ...]:
    """A shape for a gradient op's attribute: static or symbolic (generated code computes a
    symbolic one from the entry sizes), never unknown."""
    if not (isinstance(t, Tensor) and t.is_symbolic):
        raise NotImplementedError(f"the gradient of {op} on arrays of run-time shape")
    return t.shape


def _conv2d_grad(ad: GradContext) -> tuple[Any, ...]:
    x, w, g = ad.input(0), ad.input(1), ad.g
    dx = ad.op("conv2d_grad_input", g, w, x_shape=_static("conv2d", ad.types[0]), **ad.attrs)
    dw = ad.op("conv2d_grad_weight", x, g, w_shape=_static("conv2d", ad.types[1]), **ad.attrs)
    return (dx, dw, *((ad.op("sum", g, axis=(0, 2, 3)),) if len(ad.types) > 2 else ()))


conv2d = OpDef(
    "conv2d", ("x", "weight", "*bias"), kernel=conv2d_kernel, infer=_conv2d_infer,
    emit=helper_call(conv2d_kernel, "x, weight, *bias", _CONV2D), attrs=_CONV2D,
    helpers=(window_pads, window_view, conv2d_kernel), fresh=True, specialize=_conv2d_static,
    grad=_conv2d_grad, onnx=ox.conv2d, batch=folded())
"""NCHW x OIHW convolution (optional bias [O]); attributes are canonical: stride/dilation pairs,
padding (top, bottom, left, right), pad_mode 'valid' | 'same' | 'pad'."""


def _window_grad_infer(shape_attr: str, batch_of_adjoint: bool = False):
    """The shape in attribute `shape_attr`; with `batch_of_adjoint`, the batch is the adjoint's
    (input 0), as the kernel makes it."""
    def infer(*inputs: Type, **attrs: Any) -> Tensor:
        shape = tuple(attrs[shape_attr])
        if batch_of_adjoint:
            batch = expect_tensor("window gradient", "adjoint", inputs[0], rank=4).shape[0]
            shape = (batch, *shape[1:])
        return Tensor(shape, result_dtype(*inputs))
    return infer


def _like_input_infer(k: int):
    def infer(*inputs: Type, **attrs: Any) -> Type:
        return inputs[k]
    return infer


def _conv2d_grad_input_grad(ad: GradContext) -> tuple[Any, ...]:
    """conv2d_grad_input(g, w) is the transpose of conv2d(., w): linear in g and in w."""
    attrs = {k: v for k, v in ad.attrs.items() if k != "x_shape"}
    u = ad.g
    return (ad.op("conv2d", u, ad.input(1), **attrs),
            ad.op("conv2d_grad_weight", u, ad.input(0), w_shape=ad.types[1].shape, **attrs))


conv2d_grad_input = OpDef(
    "conv2d_grad_input", ("g", "weight"), kernel=conv2d_grad_input,
    infer=_window_grad_infer("x_shape", batch_of_adjoint=True),
    attrs={"x_shape": REQUIRED, **_CONV2D},
    emit=helper_call(conv2d_grad_input, "g, weight", {"x_shape": REQUIRED, **_CONV2D}),
    helpers=(window_pads, add_windows, image_block, pad_hw, im2col, *PARALLEL_HELPERS,
             conv2d_gemm, pixel_windows, row_band, conv2d_rows, conv_transpose_stride1,
             conv2d_grad_input), fresh=True,
    grad=_conv2d_grad_input_grad, onnx=ox.conv2d_grad_input, batch=folded((0,), "x_shape"))
"""conv2d's gradient with respect to its input (a transposed convolution)."""


def _conv2d_grad_weight_grad(ad: GradContext) -> tuple[Any, ...]:
    """conv2d_grad_weight(x, g) pairs g with conv2d(x, .): linear in x and in g."""
    attrs = {k: v for k, v in ad.attrs.items() if k != "w_shape"}
    u = ad.g
    return (ad.op("conv2d_grad_input", ad.input(1), u, x_shape=ad.types[0].shape, **attrs),
            ad.op("conv2d", ad.input(0), u, **attrs))


conv2d_grad_weight = OpDef(
    "conv2d_grad_weight", ("x", "g"), kernel=conv2d_grad_weight,
    infer=_window_grad_infer("w_shape"), attrs={"w_shape": REQUIRED, **_CONV2D},
    emit=helper_call(conv2d_grad_weight, "x, g", {"w_shape": REQUIRED, **_CONV2D}),
    helpers=(window_pads, pad_hw, im2col, image_block, pixel_windows, row_band,
             *PARALLEL_HELPERS, conv2d_grad_weight_rows, conv2d_grad_weight), fresh=True,
    grad=_conv2d_grad_weight_grad, batch=LOOP_ACROSS)
"""conv2d's gradient with respect to its weight."""


def _pool_out(op: str, x: Type, kernel_size: tuple[int, int], stride: tuple[int, int],
              padding: tuple[int, int, int, int], pad_mode: str,
              dilation: tuple[int, int]) -> tuple[Dim, ...]:
    _check_window_attrs(op, kernel_size=kernel_size, stride=stride, dilation=dilation,
                        pad_mode=pad_mode, padding=padding)
    _check_pool_padding(op, kernel_size, padding)
    n, c, h, w = expect_tensor(op, "input (NCHW)", x, rank=4).shape
    if x.dtype.kind not in "fiub":
        raise TypeError(f"{op}: expected a real tensor, got {x}")
    return (n, c, _window_out(op, h, kernel_size[0], stride[0], dilation[0], pad_mode, padding[:2]),
            _window_out(op, w, kernel_size[1], stride[1], dilation[1], pad_mode, padding[2:]))


_MAX_POOL = {"kernel_size": REQUIRED, "stride": REQUIRED, "padding": (0, 0, 0, 0),
             "pad_mode": "valid", "dilation": (1, 1)}


def _max_pool2d_infer(x: Type, *, kernel_size: tuple[int, int], stride: tuple[int, int],
                      padding: tuple[int, int, int, int], pad_mode: str,
                      dilation: tuple[int, int]) -> Tensor:
    return Tensor(_pool_out("max_pool2d", x, kernel_size, stride, padding, pad_mode, dilation),
                  x.dtype)


def _max_pool2d_static(types: tuple[Type, ...], attrs: Mapping[str, Any]) -> Spelling | None:
    """Non-overlapping windows without padding: pooling by reshape (see `max_pool_blocks`)."""
    (x,) = types
    kernel = attrs["kernel_size"]
    if not _static_images(x) or attrs["stride"] != kernel or attrs["dilation"] != (1, 1):
        return None
    pads, _ = _window_geometry(x, kernel, attrs)
    if any(pads):
        return None
    return Spelling("max_pool_blocks(x, kernel_size)", {"kernel_size": kernel},
                    (fold_planes, max_pool_blocks))


max_pool2d = OpDef(
    "max_pool2d", ("x",), kernel=max_pool2d_kernel, infer=_max_pool2d_infer,
    emit=helper_call(max_pool2d_kernel, "x", _MAX_POOL), attrs=_MAX_POOL,
    helpers=(window_pads, window_view, window_reduce, max_pool2d_kernel), fresh=True,
    specialize=_max_pool2d_static,
    grad=lambda ad: (ad.op("max_pool2d_grad", ad.input(0), ad.out, ad.g, **ad.attrs),),
    onnx=ox.max_pool2d, batch=folded())
"""NCHW max pooling; kernel_size/stride/dilation pairs, padding a 4-tuple."""


max_pool2d_grad = OpDef(
    "max_pool2d_grad", ("x", "out", "g"), kernel=max_pool2d_grad, infer=_like_input_infer(0),
    attrs=_MAX_POOL, emit=helper_call(max_pool2d_grad, "x, out, g", _MAX_POOL),
    helpers=(window_pads, window_view, add_windows, scatter_windows, first_maxima,
             max_pool_blocks_grad, max_pool2d_grad),
    fresh=True, grad=lambda ad: (None, None, ad.op("max_pool2d_pick", ad.input(0), ad.input(1),
                                                    ad.g, **ad.attrs)), batch=folded((0, 1, 2)))
"""max_pool2d's gradient: each window's adjoint at the element it chose."""


max_pool2d_pick = OpDef(
    "max_pool2d_pick", ("x", "out", "u"), kernel=max_pool2d_pick, infer=_like_input_infer(1),
    attrs=_MAX_POOL, emit=helper_call(max_pool2d_pick, "x, out, u", _MAX_POOL),
    helpers=(window_pads, window_view, first_maxima, max_pool2d_pick), fresh=True,
    grad=lambda ad: (None, None, ad.op("max_pool2d_grad", ad.input(0), ad.input(1), ad.g,
                                       **ad.attrs)), batch=folded((0, 1, 2)))
"""`u` read at the elements max pooling chose (the adjoint of max_pool2d_grad)."""


_AVG_POOL = {"kernel_size": REQUIRED, "stride": REQUIRED, "padding": (0, 0, 0, 0),
             "pad_mode": "valid", "count_include_pad": True, "divisor_override": 0}


def _avg_pool2d_infer(x: Type, *, kernel_size: tuple[int, int], stride: tuple[int, int],
                      padding: tuple[int, int, int, int], pad_mode: str, count_include_pad: bool,
                      divisor_override: int) -> Tensor:
    shape = _pool_out("avg_pool2d", x, kernel_size, stride, padding, pad_mode, (1, 1))
    if not isinstance(divisor_override, int) or divisor_override < 0:
        raise ValueError(f"avg_pool2d: divisor_override must be an int >= 0 (0 = none), "
                         f"got {divisor_override!r}")
    return Tensor(shape, mean_dtype(x.dtype) if x.dtype.kind != "c" else x.dtype)


avg_pool2d = OpDef(
    "avg_pool2d", ("x",), kernel=avg_pool2d_kernel, infer=_avg_pool2d_infer,
    emit=helper_call(avg_pool2d_kernel, "x", _AVG_POOL), attrs=_AVG_POOL,
    helpers=(window_pads, window_view, window_reduce, pool_divisor, avg_pool2d_kernel), fresh=True,
    grad=lambda ad: (ad.op("avg_pool2d_grad", ad.g, x_shape=_static("avg_pool2d", ad.types[0]),
                           **ad.attrs),), onnx=ox.avg_pool2d, batch=folded())
"""NCHW average pooling; `count_include_pad=False` divides by the unpadded pixels and
`divisor_override` (0 = none) replaces the divisor."""


avg_pool2d_grad = OpDef(
    "avg_pool2d_grad", ("g",), kernel=avg_pool2d_grad, infer=_window_grad_infer("x_shape"),
    attrs={"x_shape": REQUIRED, **_AVG_POOL},
    emit=helper_call(avg_pool2d_grad, "g", {"x_shape": REQUIRED, **_AVG_POOL}),
    helpers=(window_pads, pool_divisor, add_windows, scatter_windows, avg_pool2d_grad),
    fresh=True,
    grad=lambda ad: (ad.op("avg_pool2d", ad.g, **{k: v for k, v in ad.attrs.items()
                                                  if k != "x_shape"}),),
                                                  batch=folded((0,), "x_shape"))
"""avg_pool2d's gradient: each window's adjoint, divided as the forward divided, spread back."""


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


def _bind_conv2d(input: Any, weight: Any, bias: Any = None, stride: Any = 1,
                 pad_mode: str = "valid", padding: Any = 0, dilation: Any = 1, groups: int = 1):
    return (input, weight, *optional(bias)), _conv2d_attrs(stride, pad_mode, padding, dilation,
                                                            groups)


def _bind_max_pool2d(x: Any, kernel_size: Any, stride: Any = None, padding: Any = 0,
                     dilation: Any = 1, return_indices: bool = False, ceil_mode: bool = False):
    unsupported("max_pool2d", return_indices=return_indices, ceil_mode=ceil_mode)
    attrs = _pool_attrs("max_pool2d", kernel_size, stride, "pad", padding)
    return (x,), {**attrs, "dilation": _as_pair("max_pool2d", "dilation", dilation)}


def _bind_avg_pool2d(input_x: Any, kernel_size: Any = 1, stride: Any = 1, padding: Any = 0,
                     ceil_mode: bool = False, count_include_pad: bool = True,
                     divisor_override: int | None = 0):
    unsupported("avg_pool2d", ceil_mode=ceil_mode)
    attrs = _pool_attrs("avg_pool2d", kernel_size, stride, "pad", padding)
    return (input_x,), {**attrs, "count_include_pad": count_include_pad,
                        "divisor_override": divisor_override or 0}


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


class Conv2DTranspose(Primitive):
    """`ops.Conv2DTranspose(out_channel, kernel_size, pad_mode="valid", pad=0, pad_list=None,
    mode=1, stride=1, dilation=1, group=1)(dout, weight, input_size)` (also spelled
    Conv2DBackpropInput): the gradient of a convolution with `weight` with respect to its input
    of shape `input_size`, i.e. a transposed convolution of `dout`."""
    op = conv2d_grad_input

    def __init__(self, out_channel: int, kernel_size: Any, pad_mode: str = "valid",
                 pad: Any = 0, pad_list: Any = None, mode: int = 1, stride: Any = 1,
                 dilation: Any = 1, group: int = 1, data_format: str = "NCHW") -> None:
        if mode != 1 or data_format != "NCHW":
            raise NotImplementedError(f"{type(self).__name__}: only mode=1 and NCHW are "
                                      f"supported, got mode={mode!r}, data_format={data_format!r}")
        self.out_channel = out_channel
        self.kernel_size = _as_pair(type(self).__name__, "kernel_size", kernel_size)
        pads = pad_list if pad_list is not None and str(pad_mode).lower() == "pad" else pad
        self.attrs = _conv2d_attrs(stride, pad_mode, pads, dilation, group)

    def binder(self, dout: Any, weight: Any, input_size: Any):
        if not isinstance(input_size, tuple | list) or not all(
                type(d) is int for d in input_size) or len(input_size) != 4:
            raise TypeError(f"{type(self).__name__}: input_size must be a tuple of 4 ints known "
                            f"while compiling, got {input_size!r}")
        return (dout, weight), {"x_shape": tuple(input_size), **self.attrs}


class Conv2DBackpropInput(Primitive):
    """MindSpore's other name of `Conv2DTranspose`."""
    op = conv2d_grad_input
    __init__ = Conv2DTranspose.__init__
    binder = Conv2DTranspose.binder


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


OPS = (conv2d, max_pool2d, avg_pool2d, conv2d_grad_input, conv2d_grad_weight, max_pool2d_grad,
       max_pool2d_pick, avg_pool2d_grad)
FUNCTIONS = (
    OpFunction("conv2d", conv2d, _bind_conv2d),
    OpFunction("max_pool2d", max_pool2d, _bind_max_pool2d),
    OpFunction("avg_pool2d", avg_pool2d, _bind_avg_pool2d),
)
PRIMITIVES = (Conv2D, Conv2DTranspose, Conv2DBackpropInput, MaxPool, AvgPool)

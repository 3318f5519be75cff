"""NumPy kernels of the neural-network ops (windows shared with conv_kernels.py, pooling over
strided windows, normalization, losses, dropout). Codegen copies them into generated modules
by source, so each uses only `np` and the others here.
"""
from __future__ import annotations

import numpy as np

def window_pads(size: tuple[int, int], kernel: tuple[int, int], stride: tuple[int, int],
                dilation: tuple[int, int], pad_mode: str,
                padding: tuple[int, int, int, int]) -> tuple[int, int, int, int]:
    """(top, bottom, left, right) padding of a 2-D window op; 'same' gives out = ceil(in / stride)
    with the odd pixel at the bottom/right, as MindSpore does."""
    if pad_mode == "pad":
        return padding
    if pad_mode == "valid":
        return (0, 0, 0, 0)
    pads = []
    for n, k, s, d in zip(size, kernel, stride, dilation):
        total = max((-(-n // s) - 1) * s + (k - 1) * d + 1 - n, 0)
        pads += [total // 2, total - total // 2]
    return tuple(pads)


def window_view(x: np.ndarray, kernel: tuple[int, int], stride: tuple[int, int],
                dilation: tuple[int, int], pads: tuple[int, int, int, int], fill: int | float,
                op: str) -> np.ndarray:
    """The (N, C, OH, OW, KH, KW) windows of NCHW `x` padded with `fill`: a strided view."""
    top, bottom, left, right = pads
    if top or bottom or left or right:
        x = np.pad(x, ((0, 0), (0, 0), (top, bottom), (left, right)), constant_values=fill)
    span = ((kernel[0] - 1) * dilation[0] + 1, (kernel[1] - 1) * dilation[1] + 1)
    if x.shape[2] < span[0] or x.shape[3] < span[1]:
        raise ValueError(f"{op}: a {span[0]}x{span[1]} window does not fit the padded input "
                         f"{x.shape[2]}x{x.shape[3]}")
    windows = np.lib.stride_tricks.sliding_window_view(x, span, axis=(2, 3))
    return windows[:, :, ::stride[0], ::stride[1], ::dilation[0], ::dilation[1]]


def window_reduce(windows: np.ndarray, combine: np.ufunc, dtype: np.dtype) -> np.ndarray:
    """Fold the KH*KW strided planes of `windows` with `combine` (a loop over kernel offsets,
    never pixels: 20-40x faster than reducing over the two window axes)."""
    kh, kw = windows.shape[4:]
    out = windows[:, :, :, :, 0, 0].astype(dtype)
    for i in range(kh):
        for j in range(kw):
            if i or j:
                combine(out, windows[:, :, :, :, i, j], out=out)
    return out


def max_pool2d_kernel(x: np.ndarray, *, kernel_size: tuple[int, int], stride: tuple[int, int],
                      padding: tuple[int, int, int, int] = (0, 0, 0, 0), pad_mode: str = "valid",
                      dilation: tuple[int, int] = (1, 1)) -> np.ndarray:
    """Max pooling over NCHW windows; padding never wins (it is -inf or the dtype's minimum)."""
    pads = window_pads(x.shape[2:], kernel_size, stride, dilation, pad_mode, padding)
    kind = x.dtype.kind
    fill = -np.inf if kind == "f" else np.iinfo(x.dtype).min if kind in "iu" else False
    windows = window_view(x, kernel_size, stride, dilation, pads, fill, "max_pool2d")
    return window_reduce(windows, np.maximum, x.dtype)


def fold_planes(combine: np.ufunc, planes: list[np.ndarray]) -> np.ndarray:
    """`combine` over `planes` (same shape) from the left, into one new array."""
    if len(planes) == 1:
        return planes[0].copy()
    out = combine(planes[0], planes[1])
    for plane in planes[2:]:
        combine(out, plane, out=out)
    return out


def max_pool_blocks(x: np.ndarray, kernel: tuple[int, int]) -> np.ndarray:
    """Max pooling of NCHW `x` with stride == kernel and no padding: a reshaped view folded
    over each block's rows (whole contiguous rows at once), then over its columns. A partial
    block at the bottom or right edge is dropped, as 'valid' pooling does."""
    (kh, kw), (n, c, h, w) = kernel, x.shape
    oh, ow = h // kh, w // kw
    rows = x[:, :, :oh * kh, :ow * kw].reshape(n, c, oh, kh, ow * kw)
    tall = fold_planes(np.maximum, [rows[:, :, :, i] for i in range(kh)])
    cols = tall.reshape(n, c, oh, ow, kw)
    return fold_planes(np.maximum, [cols[..., j] for j in range(kw)])


def avg_pool2d_kernel(x: np.ndarray, *, kernel_size: tuple[int, int], stride: tuple[int, int],
                      padding: tuple[int, int, int, int] = (0, 0, 0, 0), pad_mode: str = "valid",
                      count_include_pad: bool = True, divisor_override: int = 0) -> np.ndarray:
    """Average pooling over NCHW windows (float inputs keep their dtype, others give float64)."""
    pads = window_pads(x.shape[2:], kernel_size, stride, (1, 1), pad_mode, padding)
    windows = window_view(x, kernel_size, stride, (1, 1), pads, 0, "avg_pool2d")
    total = window_reduce(windows, np.add, x.dtype if x.dtype.kind == "f" else np.float64)
    total /= pool_divisor(x.shape[2:], total.shape[2:], kernel_size, stride, pads,
                          count_include_pad, divisor_override)
    return total


def pool_divisor(size: tuple[int, int], out_size: tuple[int, int], kernel_size: tuple[int, int],
                 stride: tuple[int, int], pads: tuple[int, int, int, int],
                 count_include_pad: bool, divisor_override: int) -> int | np.ndarray:
    """What average pooling divides each window's sum by: the override, the window size, or
    (count_include_pad=False) the number of real, unpadded pixels under each window."""
    (h, w), (kh, kw), (sh, sw) = size, kernel_size, stride
    if divisor_override:
        return divisor_override
    if count_include_pad or not any(pads):
        return kh * kw
    top = np.arange(out_size[0]) * sh - pads[0]
    left = np.arange(out_size[1]) * sw - pads[2]
    rows = np.minimum(top + kh, h) - np.maximum(top, 0)
    cols = np.minimum(left + kw, w) - np.maximum(left, 0)
    return np.multiply.outer(rows, cols)


def batch_norm_kernel(x: np.ndarray, mean: np.ndarray, variance: np.ndarray, gamma: np.ndarray,
                      beta: np.ndarray, *, epsilon: float = 1e-5) -> np.ndarray:
    """Inference batch norm over channel axis 1, folded into one scale and one shift."""
    shape = (-1,) + (1,) * (x.ndim - 2)
    scale = gamma / np.sqrt(variance + epsilon)
    shift = (beta - mean * scale).reshape(shape)
    y = x * scale.reshape(shape)
    return np.add(y, shift, out=y if y.dtype == np.result_type(y, shift) else None)


def batch_norm_train_kernel(x: np.ndarray, gamma: np.ndarray, beta: np.ndarray, *,
                            epsilon: float = 1e-5) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Training batch norm: (y normalized by batch statistics, batch mean, unbiased batch
    variance); the unbiased variance (0 when one value per channel) is what updates moving_var."""
    axes = (0,) + tuple(range(2, x.ndim))
    shape = (-1,) + (1,) * (x.ndim - 2)
    mean = x.mean(axis=axes)
    centered = x - mean.reshape(shape)
    variance = np.square(centered).mean(axis=axes)
    y = centered * (gamma / np.sqrt(variance + epsilon)).reshape(shape)
    b = beta.reshape(shape)
    y = np.add(y, b, out=y if y.dtype == np.result_type(y, b) else None)
    count = x.size // x.shape[1] if x.size else 0
    unbiased = variance * (count / (count - 1)) if count > 1 else np.zeros_like(variance)
    return y, mean, unbiased


def layer_norm_kernel(x: np.ndarray, gamma: np.ndarray, beta: np.ndarray, *,
                      begin_norm_axis: int = -1, begin_params_axis: int = -1,
                      epsilon: float = 1e-7) -> np.ndarray:
    """Layer norm over axes begin_norm_axis.. (biased variance); gamma and beta have the shape
    x.shape[begin_params_axis:]."""
    axes = tuple(range(begin_norm_axis % x.ndim, x.ndim))
    centered = x - x.mean(axis=axes, keepdims=True)
    centered /= np.sqrt(np.square(centered).mean(axis=axes, keepdims=True) + epsilon)
    y = centered * gamma
    return np.add(y, beta, out=y if y.dtype == np.result_type(y, beta) else None)


def softmax_kernel(x: np.ndarray, *, axis: int | tuple[int, ...] = -1) -> np.ndarray:
    """exp(x) / sum(exp(x)) along `axis`, shifted by the max so exp never overflows."""
    e = np.exp(x - x.max(axis=axis, keepdims=True))
    e /= e.sum(axis=axis, keepdims=True)
    return e


def log_softmax_kernel(x: np.ndarray, *, axis: int | tuple[int, ...] = -1) -> np.ndarray:
    """x - logsumexp(x) along `axis`, computed from the max-shifted values."""
    shifted = x - x.max(axis=axis, keepdims=True)
    lse = np.log(np.exp(shifted).sum(axis=axis, keepdims=True))
    return np.subtract(shifted, lse, out=shifted if shifted.dtype == lse.dtype else None)


def check_class_ids(labels: np.ndarray, classes: int) -> None:
    """Raise unless every label is a class id in [0, classes) (NumPy would wrap a negative one
    around). One reduction: viewed as unsigned, a negative id is larger than any class."""
    if labels.size and labels.view(labels.dtype.str.replace("i", "u")).max() >= classes:
        raise ValueError(f"softmax_cross_entropy: sparse labels must be class ids in "
                         f"[0, {classes}), got values in [{labels.min()}, {labels.max()}]")


def label_index(labels: np.ndarray, classes: int) -> tuple[np.ndarray, np.ndarray]:
    """(row numbers, class ids) picking each label's class from logits viewed as [rows,
    classes], checked as `check_class_ids` checks them. Below 64 bits the ids are viewed as
    unsigned, where a negative id is larger than any class: the gather itself then raises
    IndexError for every bad label (`pick_labels` turns it into the check's error), and no
    reduction is spent on good ones. 64-bit ids (which the index cast would wrap) are checked
    first."""
    ids = labels.reshape(-1)
    if ids.dtype.itemsize < 8:
        ids = ids.view({1: np.uint8, 2: np.uint16, 4: np.uint32}[ids.dtype.itemsize])
    else:
        check_class_ids(labels, classes)
    return np.arange(ids.size), ids


def pick_labels(rows: np.ndarray, at: tuple[np.ndarray, np.ndarray],
                labels: np.ndarray) -> np.ndarray:
    """`rows[at]` (see `label_index`), raising the class-id error for a label out of range."""
    try:
        return rows[at]
    except IndexError:
        check_class_ids(labels, rows.shape[-1])
        raise


def mean_all(values: np.ndarray) -> np.ndarray:
    """`values.mean()`, bit for bit: for float32 and float64 the very steps of NumPy's own
    (one sum, then its type of the sum over the count as an intp), without the Python layers
    around them, which cost a train step more than the sum of a batch's losses."""
    if values.dtype.char not in "fd" or not values.size:
        return values.mean()
    total = np.add.reduce(values, axis=None)
    return total.dtype.type(total / np.intp(values.size))


def softmax_cross_entropy_kernel(logits: np.ndarray, labels: np.ndarray, *, sparse: bool = False,
                                 reduction: str = "none") -> np.ndarray:
    """Cross entropy of softmax(logits) against one-hot/probability labels, or class ids when
    `sparse`; classes on the last axis."""
    if sparse:
        classes = logits.shape[-1]
        at = label_index(labels, classes)
        # NOTE: -log_softmax at the label is lse - shifted[label]: no whole log-softmax needed
        shifted = logits - logits.max(axis=-1, keepdims=True)
        label_logit = pick_labels(shifted.reshape(-1, classes), at, labels).reshape(labels.shape)
        loss = np.log(np.exp(shifted, out=shifted).sum(axis=-1)) - label_logit
    else:
        loss = -(labels * log_softmax_kernel(logits, axis=-1)).sum(axis=-1)
    return loss if reduction == "none" else loss.sum() if reduction == "sum" else mean_all(loss)


def softmax_cross_entropy_grad_kernel(logits: np.ndarray, labels: np.ndarray, g: np.ndarray, *,
                                      reduction: str = "none") -> np.ndarray:
    """d softmax_cross_entropy(sparse=True) / d logits for the loss's adjoint `g`: the softmax
    with one taken off at each label, times each sample's adjoint (divided by the number of
    samples for 'mean'); class ids checked as the loss checks them."""
    classes = logits.shape[-1]
    at = label_index(labels, classes)
    # NOTE: C order, so that `rows` is a view: NumPy's default ("K") follows the logits' layout,
    # and a [B, T, C] transpose of [B, C, T] logits would reshape into a copy, losing the -1
    probs = np.exp(np.subtract(logits, logits.max(axis=-1, keepdims=True), order="C"))
    probs = probs.astype(np.result_type(probs, g), copy=False)
    probs /= probs.sum(axis=-1, keepdims=True)
    rows = probs.reshape(-1, classes)
    rows[at] = pick_labels(rows, at, labels) - 1
    if reduction == "none":
        probs *= np.expand_dims(g, -1)
    else:
        probs *= g / max(labels.size, 1) if reduction == "mean" else g
    return probs


def softmax_cross_entropy_with_grad_kernel(logits: np.ndarray, labels: np.ndarray,
                                           g: np.ndarray, *, reduction: str = "none"
                                           ) -> tuple[np.ndarray, np.ndarray]:
    """(softmax_cross_entropy(sparse=True), its gradient for the adjoint `g`) from one softmax:
    the same numbers the two kernels give apart."""
    classes = logits.shape[-1]
    at = label_index(labels, classes)
    # NOTE: ufunc reductions are what .max() and .sum() call, less their Python frames; C order
    # for the in-place -1 through a reshaped view below (see softmax_cross_entropy_grad_kernel)
    shifted = np.subtract(logits, np.maximum.reduce(logits, axis=-1, keepdims=True), order="C")
    label_logit = pick_labels(shifted.reshape(-1, classes), at, labels).reshape(labels.shape)
    probs = np.exp(shifted, out=shifted)  # NOTE: the shifted logits are not read again
    total = np.add.reduce(probs, axis=-1, keepdims=True)
    loss = np.log(total[..., 0]) - label_logit
    loss = loss if reduction == "none" else loss.sum() if reduction == "sum" else mean_all(loss)
    probs = probs.astype(np.result_type(probs, g), copy=False)
    probs /= total
    probs.reshape(-1, classes)[at] -= 1
    if reduction == "none":
        probs *= np.expand_dims(g, -1)
    else:
        probs *= g / max(labels.size, 1) if reduction == "mean" else g
    return loss, probs


def nll_loss_kernel(log_probs: np.ndarray, target: np.ndarray, *weight: np.ndarray,
                    reduction: str = "mean", ignore_index: int = -100) -> np.ndarray:
    """Negative log likelihood: classes on axis 1; `mean` divides by the total weight of the
    targets that are not `ignore_index`."""
    kept = target != ignore_index
    safe = np.where(kept, target, 0)
    picked = np.take_along_axis(log_probs, np.expand_dims(safe, 1), axis=1).squeeze(1)
    scale = weight[0][safe] * kept if weight else kept.astype(picked.dtype)
    loss = -picked * scale
    if reduction == "none":
        return loss
    return loss.sum() if reduction == "sum" else loss.sum() / scale.sum()


def dropout_kernel(x: np.ndarray, generator: np.random.Generator, *, p: float = 0.5,
                   training: bool = True) -> np.ndarray:
    """Inverted dropout: zero each element with probability p (one `generator.random(x.shape)`
    draw) and scale the rest by 1 / (1 - p)."""
    if x.dtype.kind != "f":
        raise TypeError(f"dropout: expected a float tensor, got {x.dtype}")
    if not training or p == 0:
        return x
    y = x * (generator.random(x.shape) >= p)
    y *= 1.0 / (1.0 - p)
    return y


def assign_kernel(param: np.ndarray, value: np.ndarray) -> np.ndarray:
    """Write `value` into the existing array `param` and hand `param` on. Leading sizes of 1
    beyond param's rank are dropped, as `param[...] = value` does (a shape-(1,) value fits a
    0-d param)."""
    extra = np.ndim(value) - param.ndim
    if extra > 0 and np.shape(value)[:extra] == (1,) * extra:
        value = np.reshape(value, np.shape(value)[extra:])
    np.copyto(param, value)
    return param


def assign_add_kernel(param: np.ndarray, value: np.ndarray) -> np.ndarray:
    """`param += value` in place; hands `param` on."""
    return np.add(param, value, out=param)


def assign_sub_kernel(param: np.ndarray, value: np.ndarray) -> np.ndarray:
    """`param -= value` in place; hands `param` on."""
    return np.subtract(param, value, out=param)


def embedding_kernel(ids: np.ndarray, table: np.ndarray) -> np.ndarray:
    """Rows `table[ids]`; ids outside [0, len(table)) are an error, not NumPy's wrap-around."""
    ids = np.asarray(ids)
    if ids.size and (ids.min() < 0 or ids.max() >= table.shape[0]):
        raise ValueError(f"embedding: ids must be in [0, {table.shape[0]}), got values in "
                         f"[{ids.min()}, {ids.max()}]")
    return table[ids]


def add_windows(cols: np.ndarray, out: np.ndarray, stride: tuple[int, int],
                dilation: tuple[int, int]) -> np.ndarray:
    """Add each window value of `cols` [N, C, KH, KW, OH, OW] back into `out` [N, C, H, W]
    (padded) where the window read it (col2im); returns `out`."""
    kh, kw, oh, ow = cols.shape[2:]
    for i in range(kh):
        for j in range(kw):
            r, q = i * dilation[0], j * dilation[1]
            out[:, :, r:r + stride[0] * oh:stride[0], q:q + stride[1] * ow:stride[1]] += \
                cols[:, :, i, j]
    return out


def scatter_windows(cols: np.ndarray, shape: tuple[int, ...], kernel: tuple[int, int],
                    stride: tuple[int, int], dilation: tuple[int, int],
                    pads: tuple[int, int, int, int]) -> np.ndarray:
    """The inverse of taking windows (col2im): NCHW zeros of `shape` with each window value of
    `cols` [N, C, KH, KW, OH, OW] added back where it was read; padding is dropped."""
    n, c, h, w = shape
    top, bottom, left, right = pads
    out = np.zeros((n, c, h + top + bottom, w + left + right), cols.dtype)
    add_windows(cols, out, stride, dilation)
    return out[:, :, top:top + h, left:left + w]


def first_maxima(x: np.ndarray, out: np.ndarray, kernel_size: tuple[int, int],
                  stride: tuple[int, int], dilation: tuple[int, int],
                  pads: tuple[int, int, int, int]) -> np.ndarray:
    """[N, C, KH, KW, OH, OW] masks of the element each max-pooling window chose (the first of
    equal maxima, as MindSpore picks one)."""
    kind = x.dtype.kind
    fill = -np.inf if kind == "f" else np.iinfo(x.dtype).min if kind in "iu" else False
    windows = window_view(x, kernel_size, stride, dilation, pads, fill, "max_pool2d")
    kh, kw = kernel_size
    masks = np.zeros(x.shape[:2] + (kh, kw) + out.shape[2:], bool)
    taken = np.zeros(out.shape, bool)
    for i in range(kh):
        for j in range(kw):
            hit = (windows[:, :, :, :, i, j] == out) & ~taken
            masks[:, :, i, j] = hit
            taken |= hit
    return masks


def max_pool2d_grad(x: np.ndarray, out: np.ndarray, g: np.ndarray, *,
                    kernel_size: tuple[int, int], stride: tuple[int, int],
                    padding: tuple[int, int, int, int] = (0, 0, 0, 0), pad_mode: str = "valid",
                    dilation: tuple[int, int] = (1, 1)) -> np.ndarray:
    """d max_pool2d / d x: each window's adjoint goes to the element it chose."""
    pads = window_pads(x.shape[2:], kernel_size, stride, dilation, pad_mode, padding)
    if tuple(stride) == tuple(kernel_size) and tuple(dilation) == (1, 1) and not any(pads):
        return max_pool_blocks_grad(x, out, g, kernel_size)
    masks = first_maxima(x, out, kernel_size, stride, dilation, pads)
    cols = masks * g[:, :, None, None]
    return scatter_windows(cols.astype(g.dtype, copy=False), x.shape, kernel_size, stride,
                           dilation, pads)


def max_pool_blocks_grad(x: np.ndarray, out: np.ndarray, g: np.ndarray,
                         kernel: tuple[int, int]) -> np.ndarray:
    """`max_pool2d_grad` for non-overlapping windows (stride == kernel, no padding): one
    strided plane per window position, each taking the adjoint where it holds its window's
    first maximum (rows and columns a partial window would cover get nothing)."""
    (kh, kw), (oh, ow) = kernel, out.shape[2:]
    covered = x.shape[2] == oh * kh and x.shape[3] == ow * kw
    dx = np.empty(x.shape, g.dtype) if covered else np.zeros(x.shape, g.dtype)
    taken = None
    for i in range(kh):
        for j in range(kw):
            hit = x[:, :, i:oh * kh:kh, j:ow * kw:kw] == out
            if taken is None:
                taken = hit
            else:
                np.greater(hit, taken, out=hit)  # NOTE: a maximum no earlier position took
                taken |= hit
            np.multiply(hit, g, out=dx[:, :, i:oh * kh:kh, j:ow * kw:kw])
    return dx


def max_pool2d_pick(x: np.ndarray, out: np.ndarray, u: np.ndarray, *,
                    kernel_size: tuple[int, int], stride: tuple[int, int],
                    padding: tuple[int, int, int, int] = (0, 0, 0, 0), pad_mode: str = "valid",
                    dilation: tuple[int, int] = (1, 1)) -> np.ndarray:
    """The values of `u` (shaped like x) at the elements max pooling of `x` chose: the adjoint
    of `max_pool2d_grad` with respect to its incoming gradient."""
    pads = window_pads(x.shape[2:], kernel_size, stride, dilation, pad_mode, padding)
    masks = first_maxima(x, out, kernel_size, stride, dilation, pads)
    windows = window_view(u, kernel_size, stride, dilation, pads, 0, "max_pool2d")
    picked = np.zeros(out.shape, u.dtype)
    for i in range(kernel_size[0]):
        for j in range(kernel_size[1]):
            picked += np.where(masks[:, :, i, j], windows[:, :, :, :, i, j], 0)
    return picked


def avg_pool2d_grad(g: np.ndarray, *, x_shape: tuple[int, ...], kernel_size: tuple[int, int],
                    stride: tuple[int, int], padding: tuple[int, int, int, int] = (0, 0, 0, 0),
                    pad_mode: str = "valid", count_include_pad: bool = True,
                    divisor_override: int = 0) -> np.ndarray:
    """d avg_pool2d / d x: each window's adjoint, divided as the forward divided, spread over
    the window."""
    pads = window_pads(x_shape[2:], kernel_size, stride, (1, 1), pad_mode, padding)
    divisor = pool_divisor(x_shape[2:], g.shape[2:], kernel_size, stride, pads,
                           count_include_pad, divisor_override)
    scaled = g / (divisor if isinstance(divisor, int) else divisor.astype(g.dtype))
    kh, kw = kernel_size
    cols = np.broadcast_to(scaled[:, :, None, None], g.shape[:2] + (kh, kw) + g.shape[2:])
    return scatter_windows(np.ascontiguousarray(cols), x_shape, kernel_size, stride, (1, 1),
                           pads)

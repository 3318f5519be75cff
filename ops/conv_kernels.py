"""NumPy kernels of conv2d and its gradients: im2col columns (a block of images at a time) and
GEMMs, the input gradient as a flipped-kernel convolution at stride 1. Codegen copies them into
generated modules by source, so each uses only `np` and the others here (or in nn_kernels).
"""
from __future__ import annotations

import numpy as np

from .nn_kernels import add_windows, window_pads, window_view
from .parallel import run_parts, thread_ranges


def conv2d_kernel(x: np.ndarray, weight: np.ndarray, *bias: np.ndarray,
                  stride: tuple[int, int] = (1, 1),
                  padding: tuple[int, int, int, int] = (0, 0, 0, 0), pad_mode: str = "valid",
                  dilation: tuple[int, int] = (1, 1), groups: int = 1,
                  threads: int = 1) -> np.ndarray:
    """2-D convolution of NCHW `x` with OIHW `weight`: im2col windows, then one batched GEMM
    (`threads` is for the specialized spellings; this one runs on the caller)."""
    n, c, h, w = x.shape
    o, cg, kh, kw = weight.shape
    if c != cg * groups or o % groups:
        raise ValueError(f"conv2d: input {x.shape} and weight {weight.shape} do not fit "
                         f"groups={groups} (need C == weight C * groups, O % groups == 0)")
    pads = window_pads((h, w), (kh, kw), stride, dilation, pad_mode, padding)
    windows = window_view(x, (kh, kw), stride, dilation, pads, 0, "conv2d")
    oh, ow = windows.shape[2:4]
    # NOTE: (N, G, Cg*KH*KW, OH*OW) columns make the GEMM output NCHW without a transpose.
    cols = windows.transpose(0, 1, 4, 5, 2, 3).reshape(n, groups, cg * kh * kw, oh * ow)
    out = np.matmul(weight.reshape(groups, o // groups, cg * kh * kw), cols).reshape(n, o, oh, ow)
    for b in bias:
        b = b.reshape(-1, 1, 1)
        out = np.add(out, b, out=out if out.dtype == np.result_type(out, b) else None)
    return out


def pad_hw(x: np.ndarray, pads: tuple[int, int, int, int], fill: int | float) -> np.ndarray:
    """NCHW `x` inside (top, bottom, left, right) borders of `fill` (a fraction of np.pad's
    per-call cost)."""
    top, bottom, left, right = pads
    n, c, h, w = x.shape
    out = np.full((n, c, h + top + bottom, w + left + right), fill, x.dtype)
    out[:, :, top:top + h, left:left + w] = x
    return out


def im2col(x: np.ndarray, kernel: tuple[int, int], out_size: tuple[int, int],
           stride: tuple[int, int] = (1, 1), dilation: tuple[int, int] = (1, 1),
           pads: tuple[int, int, int, int] = (0, 0, 0, 0)) -> np.ndarray:
    """The [N, C*KH*KW, OH*OW] columns of NCHW `x` for a KHxKW window at OHxOW positions (zero
    padding `pads`): one copy out of a strided view of the contiguous input."""
    if any(pads):
        x = pad_hw(x, pads, 0)
    x = np.ascontiguousarray(x)
    (n, c), (kh, kw), (oh, ow) = x.shape[:2], kernel, out_size
    sn, sc, sh, sw = x.strides
    windows = np.ndarray((n, c, kh, kw, oh, ow), x.dtype, x, 0, (
        sn, sc, sh * dilation[0], sw * dilation[1], sh * stride[0], sw * stride[1]))
    return windows.reshape(n, c * kh * kw, oh * ow)


def conv2d_gemm(x: np.ndarray, weight: np.ndarray, *bias: np.ndarray, kernel: tuple[int, int],
                out_size: tuple[int, int], step: int, stride: tuple[int, int] = (1, 1),
                dilation: tuple[int, int] = (1, 1),
                pads: tuple[int, int, int, int] = (0, 0, 0, 0), threads: int = 1) -> np.ndarray:
    """Convolution (one group) as im2col + GEMM, `step` images at a time so that the columns
    of a step are still in cache when the GEMM reads them. With `threads`, ranges of whole
    steps go to the threads (ops/parallel.py): the same GEMMs, the same result."""
    n, o, (oh, ow) = x.shape[0], weight.shape[0], out_size
    matrix = weight.reshape(o, -1)
    out = np.empty((n, o, oh * ow), np.result_type(x, weight))

    def steps(start: int, stop: int) -> None:
        for i in range(start, stop, step):
            cols = im2col(x[i:min(i + step, stop)], kernel, out_size, stride, dilation, pads)
            np.matmul(matrix, cols, out=out[i:min(i + step, stop)])
    if threads == 1:
        steps(0, n)
    else:
        run_parts(steps, thread_ranges(n, threads, out.size * matrix.shape[1], step), threads)
    for b in bias:
        b = b.reshape(-1, 1)
        out = np.add(out, b, out=out if out.dtype == np.result_type(out, b) else None)
    return out.reshape(n, o, oh, ow)


def pixel_windows(images: np.ndarray, block: np.ndarray, kernel: tuple[int, int],
                  out_size: tuple[int, int], stride: tuple[int, int],
                  dilation: tuple[int, int], pads: tuple[int, int, int, int]) -> np.ndarray:
    """The [B, OH, OW, KH, KW, C] windows of NCHW `images`, copied channels-last into the
    interior of `block` [B, H+pads, W+pads, C] (whose border stays zero: the padding): a
    strided view, so reshaping a band of it to [pixels, KH*KW*C] rows is the one copy."""
    (kh, kw), (oh, ow), c = kernel, out_size, images.shape[1]
    top, left = pads[0], pads[2]
    np.copyto(block[:, top:top + images.shape[2], left:left + images.shape[3]],
              images.transpose(0, 2, 3, 1))
    sn, sh, sw, sc = block.strides
    return np.ndarray((block.shape[0], oh, ow, kh, kw, c), block.dtype, block, 0, (
        sn, sh * stride[0], sw * stride[1], sh * dilation[0], sw * dilation[1], sc))


def row_band(n: int, windows: np.ndarray) -> int:
    """Output rows per GEMM: all rows of each block when the batch has several images; a
    single image in bands of at most 128 KiB of rows, a fifth of the peak memory of one 32x32
    image at 16 channels (at batch 32 the bands measured 6-10% slower in the forward)."""
    oh, ow, kh, kw, c = windows.shape[1:]
    return oh if n > 1 else max(1, (1 << 17) // (ow * kh * kw * c * windows.itemsize))


def conv2d_rows(x: np.ndarray, weight: np.ndarray, *bias: np.ndarray, kernel: tuple[int, int],
                out_size: tuple[int, int], step: int, stride: tuple[int, int] = (1, 1),
                dilation: tuple[int, int] = (1, 1),
                pads: tuple[int, int, int, int] = (0, 0, 0, 0)) -> np.ndarray:
    """Convolution (one group) as `conv2d_gemm`, with the GEMM turned around: window rows of
    `step` images at a time (a band of output rows of one large image) against the
    [KH*KW*C, O] weights, giving channels-last pixels; the bias is added while they are in
    cache, then they are transposed into the NCHW result. With 16 or more input channels BLAS
    runs this orientation 1.1-1.5x faster."""
    n, c, h, w = x.shape
    o, (oh, ow), (top, bottom, left, right) = weight.shape[0], out_size, pads
    matrix = weight.transpose(2, 3, 1, 0).reshape(-1, o)
    out = np.empty((n, o, oh * ow), np.result_type(x, weight, *bias))
    block = np.zeros((min(step, n), h + top + bottom, w + left + right, c), x.dtype)
    for i in range(0, n, step):
        images = x[i:i + step]
        windows = pixel_windows(images, block[:len(images)], kernel, out_size, stride,
                                dilation, pads)
        band = row_band(n, windows)
        for r in range(0, oh, band):
            y = windows[:, r:r + band].reshape(-1, matrix.shape[0]) @ matrix
            for b in bias:
                y = np.add(y, b, out=y if y.dtype == np.result_type(y, b) else None)
            np.copyto(out[i:i + step, :, r * ow:(r + band) * ow],
                      y.reshape(len(images), -1, o).transpose(0, 2, 1))
    return out.reshape(n, o, oh, ow)


def conv2d_grad_weight_rows(x: np.ndarray, g: np.ndarray, w_shape: tuple[int, ...], step: int,
                            stride: tuple[int, int], dilation: tuple[int, int],
                            pads: tuple[int, int, int, int]) -> np.ndarray:
    """`conv2d_grad_weight` (one group) from window rows: [KH*KW*C, rows] @ [rows, O] per block
    of images (or band of output rows), summed, then reordered to OIHW (1.3-1.8x faster than
    the column form at 16 or more input channels)."""
    n, c, h, w = x.shape
    o, _, kh, kw = w_shape
    oh, ow = g.shape[2:]
    top, bottom, left, right = pads
    out = np.zeros((kh * kw * c, o), np.result_type(x, g))
    block = np.zeros((min(step, n), h + top + bottom, w + left + right, c), x.dtype)
    for i in range(0, n, step):
        images = x[i:i + step]
        windows = pixel_windows(images, block[:len(images)], (kh, kw), (oh, ow), stride,
                                dilation, pads)
        band = row_band(n, windows)
        for r in range(0, oh, band):
            rows = windows[:, r:r + band].reshape(-1, out.shape[0])
            out += rows.T @ g[i:i + step, :, r:r + band].transpose(0, 2, 3, 1).reshape(-1, o)
    return np.ascontiguousarray(out.reshape(kh, kw, c, o).transpose(3, 2, 0, 1))


def image_block(per_image: int, budget: int = 1 << 20) -> int:
    """How many images a convolution gradient takes at a time for about `budget` bytes of
    columns: a block stays in cache, and no whole-batch temporary is allocated (and
    page-faulted in) on every call."""
    return max(1, budget // max(per_image, 1))


def wide_bias(bias: tuple[np.ndarray, ...], unit: int, size: int) -> tuple[np.ndarray, ...]:
    """Each channels-last bias [O] repeated `copies` times (a power of two dividing `unit`, the
    pixels every block of the kernel's result is a multiple of, up to 1024 elements), for
    adding over `rows.reshape(-1, wide.size)`: NumPy's loop over 16 channels at a time took
    2x the time of 1024 (0.28 against 0.14 ms on a 2 MB result), 1.3x over 32 or 64. Each
    element gets the same single add. Below 64 Ki elements of result (`size`) the bias stays
    as it is: one np.tile a call cost more than it saved at batch 1."""
    if size < 1 << 16:
        return bias
    found = []
    for b in bias:
        copies = 1
        while b.ndim == 1 and copies * 2 * b.size <= 1024 and unit % (copies * 2) == 0:
            copies *= 2
        found.append(np.tile(b, copies) if copies > 1 else b)
    return tuple(found)


def add_bias(rows: np.ndarray, bias: np.ndarray) -> None:
    """`rows` [..., O] += `bias` in place, `bias` [O] or repeated by `wide_bias` (whose first O
    are the bias)."""
    if bias.size == rows.shape[-1]:  # NOTE: as it was (small results: no reshape a band)
        rows += bias
    elif rows.flags.c_contiguous:
        wide = rows.reshape(-1, bias.size)  # NOTE: a view of contiguous rows
        wide += bias
    else:
        rows += bias[:rows.shape[-1]]


def conv2d_grad_input(g: np.ndarray, weight: np.ndarray, *, x_shape: tuple[int, ...],
                      stride: tuple[int, int] = (1, 1),
                      padding: tuple[int, int, int, int] = (0, 0, 0, 0),
                      pad_mode: str = "valid", dilation: tuple[int, int] = (1, 1),
                      groups: int = 1, threads: int = 1) -> np.ndarray:
    """d conv2d / d x (`threads` accepted; this one runs on the caller): each output's
    adjoint times the weights, added back over its window (a
    block of images at a time). At stride 1 (one group) it is instead the convolution of the
    output adjoint with the flipped, transposed kernels: no scatter-add over the columns
    (1.6-1.9x faster measured at 8-32 pixels square, 16-64 channels; at stride 2 the zeros a
    dilated adjoint would carry make that 2x slower, so strided convolutions scatter)."""
    n, o, oh, ow = g.shape
    _, cg, kh, kw = weight.shape
    _, c, h, w = x_shape
    top, bottom, left, right = window_pads(x_shape[2:], (kh, kw), stride, dilation, pad_mode,
                                           padding)
    if tuple(stride) == (1, 1) and groups == 1:
        return conv_transpose_stride1(g, weight, (h, w), (top, left), dilation)
    matrix = weight.reshape(groups, o // groups, cg * kh * kw).transpose(0, 2, 1)
    dtype = np.result_type(g, weight)
    out = np.zeros((n, c, h + top + bottom, w + left + right), dtype)
    grads = g.reshape(n, groups, o // groups, oh * ow)
    step = image_block(c * kh * kw * oh * ow * dtype.itemsize)
    for i in range(0, n, step):
        cols = np.matmul(matrix, grads[i:i + step])
        add_windows(cols.reshape(-1, c, kh, kw, oh, ow), out[i:i + step], stride, dilation)
    return out[:, :, top:top + h, left:left + w]


def conv_transpose_stride1(g: np.ndarray, weight: np.ndarray, size: tuple[int, int],
                           pads: tuple[int, int], dilation: tuple[int, int]) -> np.ndarray:
    """The [N, C, H, W] input adjoint of a stride-1 convolution whose input was padded by
    `pads` (top, left): a correlation of `g`, padded (or cropped) so that each input pixel sees
    every output its windows fed, with the kernels flipped and their in/out axes swapped."""
    n, o, oh, ow = g.shape
    _, c, kh, kw = weight.shape
    reach = ((kh - 1) * dilation[0], (kw - 1) * dilation[1])
    before = (reach[0] - pads[0], reach[1] - pads[1])
    after = (size[0] + reach[0] - oh - before[0], size[1] + reach[1] - ow - before[1])
    if min(*before, *after) < 0:  # NOTE: padding wider than the kernel reaches: crop instead
        g = g[:, :, max(0, -before[0]):oh - max(0, -after[0]),
              max(0, -before[1]):ow - max(0, -after[1])]
        before = (max(0, before[0]), max(0, before[1]))
        after = (max(0, after[0]), max(0, after[1]))
    flipped = np.ascontiguousarray(weight[:, :, ::-1, ::-1].transpose(1, 0, 2, 3))
    step = image_block(o * kh * kw * size[0] * size[1] * g.dtype.itemsize)
    conv = conv2d_rows if o >= 16 else conv2d_gemm  # NOTE: o is this convolution's input C
    return conv(g, flipped, kernel=(kh, kw), out_size=size, step=step, dilation=dilation,
                pads=(before[0], after[0], before[1], after[1]))


def conv2d_grad_weight(x: np.ndarray, g: np.ndarray, *, w_shape: tuple[int, ...],
                       stride: tuple[int, int] = (1, 1),
                       padding: tuple[int, int, int, int] = (0, 0, 0, 0),
                       pad_mode: str = "valid", dilation: tuple[int, int] = (1, 1),
                       groups: int = 1, threads: int = 1) -> np.ndarray:
    """d conv2d / d weight: the output adjoints against the input windows (im2col columns, a
    block of images at a time), summed over the batch and the output positions. With
    `threads` (im2col columns only), ranges of whole blocks go to the threads and the
    blocks' products are added in one thread's order: the same result, bit for bit."""
    n, c = x.shape[:2]
    o, cg, kh, kw = w_shape
    oh, ow = g.shape[2:]
    pads = window_pads(x.shape[2:], (kh, kw), stride, dilation, pad_mode, padding)
    if groups == 1 and c >= 16:  # NOTE: where window rows measured faster (conv2d_rows)
        step = image_block(c * kh * kw * oh * ow * x.dtype.itemsize)
        return conv2d_grad_weight_rows(x, g, w_shape, step, stride, dilation, pads)
    k, length = cg * kh * kw, oh * ow
    dtype = np.result_type(x, g)
    out = np.zeros((groups, o // groups, k), dtype)
    grads = g.reshape(n, groups, o // groups, length)
    step = image_block(c * kh * kw * length * x.dtype.itemsize)

    def blocks(start: int, stop: int) -> list[np.ndarray]:
        """The first range adds its blocks' products as it goes; later ones keep theirs."""
        found = []
        for i in range(start, stop, step):
            cols = im2col(x[i:min(i + step, stop)], (kh, kw), (oh, ow), stride, dilation, pads)
            cols = cols.reshape(-1, groups, k, length).transpose(0, 1, 3, 2)
            product = np.matmul(grads[i:min(i + step, stop)], cols).sum(axis=0)
            if start == 0:
                np.add(out, product, out=out)
            else:
                found.append(product)
        return found
    if threads == 1:
        blocks(0, n)
        return out.reshape(w_shape)
    for part in run_parts(blocks, thread_ranges(n, threads, n * o * k * length, step), threads):
        for product in part:
            out += product
    return out.reshape(w_shape)

"""Channels-last convolutions of few input channels (a network's stem, usually over a view of
the user's NCHW images): im2col columns of the channels-first order and the GEMM turned around,
so that the pixels come out channels-last; and the weight gradient of the same columns. Part of
the kernels of ops/conv_nhwc.py, which picks them at up to `COLUMNS_MAX_CHANNELS` channels.
"""
from __future__ import annotations

import numpy as np

from .conv_kernels import add_bias, im2col, image_block, wide_bias
from .conv_native import native_parts
from .parallel import even_step, run_parts, thread_ranges


COLUMNS_MAX_CHANNELS = 15
"""Up to this many input channels (window.ROWS_MIN_CHANNELS - 1) the NHWC kernels take im2col
columns of the channels-first input: a window row of a 3-channel image is 3 floats long, and
copying such short runs made the row form 1.5-2x slower on the ResNet's stem."""


def nhwc_columns(x: np.ndarray, weight: np.ndarray, *bias: np.ndarray, kernel: tuple[int, int],
                 out_size: tuple[int, int], stride: tuple[int, int], dilation: tuple[int, int],
                 pads: tuple[int, int, int, int], threads: int = 1,
                 native: bool = False) -> np.ndarray:
    """NHWC convolution of a few-channel NHWC `x` (usually a view of a user's NCHW input):
    im2col columns of its channels-first order, a block of images at a time, and the GEMM
    turned around (columns.T @ [K, O]) so that the pixels come out channels-last, bias added
    in cache. With `threads`, ranges of whole blocks go to the threads: the same GEMMs."""
    n, o, (oh, ow) = x.shape[0], weight.shape[0], out_size
    matrix = np.ascontiguousarray(weight.reshape(o, -1).T)  # NOTE: 0.89x the transposed
    # view's time in the stack of GEMMs below (the ResNet's stem)
    out = np.empty((n, oh * ow, o), np.result_type(x, weight, *bias))
    step = even_step(n, image_block(matrix.shape[0] * oh * ow * x.itemsize))
    images, bias = x.transpose(0, 3, 1, 2), wide_bias(bias, oh * ow, out.size)
    parts = native_parts() if native and native_columns(images, matrix, bias, out) and \
        columns_copied(images, kernel, out_size, stride, dilation, pads) else None
    if parts is not None:  # NOTE: the same numbers, without the interpreter lock
        geometry = columns_geometry(images, kernel, out_size, stride, dilation, pads)
        given = np.ascontiguousarray(bias[0]) if bias else matrix[0]
        run_parts(lambda start, stop: parts.columns_forward(images, matrix, given, bool(bias), out,
                                                            start, stop, step, geometry),
                  thread_ranges(n, threads, out.size * matrix.shape[0], step), threads)
        return out.reshape(n, oh, ow, o)

    def blocks(start: int, stop: int) -> None:
        for i in range(start, stop, step):
            j = min(i + step, stop)
            cols = im2col(images[i:j], kernel, out_size, stride, dilation, pads)
            np.matmul(cols.transpose(0, 2, 1), matrix, out=out[i:j])
            for b in bias:
                add_bias(out[i:j], b)
    run_parts(blocks, thread_ranges(n, threads, out.size * matrix.shape[0], step), threads)
    return out.reshape(n, oh, ow, o)


def nhwc_columns_grad_weight(x: np.ndarray, g: np.ndarray, w_shape: tuple[int, ...],
                             stride: tuple[int, int], dilation: tuple[int, int],
                             pads: tuple[int, int, int, int], threads: int = 1,
                             native: bool = False) -> np.ndarray:
    """The OIHW weight gradient of `nhwc_columns`: columns [K, pixels] @ the NHWC adjoint's
    pixel rows [pixels, O], summed over blocks of images. With `threads`, workers compute the
    blocks' products one thread would, added in one thread's order: the same result."""
    n, (oh, ow), o = x.shape[0], g.shape[1:3], w_shape[0]
    k = w_shape[1] * w_shape[2] * w_shape[3]
    out = np.zeros((k, o), np.result_type(x, g))
    step = even_step(n, image_block(k * oh * ow * x.itemsize))
    images, rows = x.transpose(0, 3, 1, 2), g.reshape(n, oh * ow, o)
    parts = native_parts() if native and native_columns(images, out, (), rows) and \
        columns_copied(images, w_shape[2:], (oh, ow), stride, dilation, pads) else None
    if parts is not None:
        geometry = columns_geometry(images, w_shape[2:], (oh, ow), stride, dilation, pads)

    def blocks(start: int, stop: int) -> list[np.ndarray]:
        found = []
        if parts is not None:  # NOTE: the same numbers, without the interpreter lock
            kept = np.empty((-(-(stop - start) // step) if start else 0, k, o), np.float32)
            parts.columns_grad_weight(images, rows, out, kept, start > 0, start, stop, step,
                                      geometry)
            return list(kept)
        for i in range(start, stop, step):
            j = min(i + step, stop)
            cols = im2col(images[i:j], w_shape[2:], (oh, ow), stride, dilation, pads)
            product = np.matmul(cols, rows[i:j]).sum(axis=0)
            if start == 0:  # NOTE: the first part adds as it goes, as one thread does
                np.add(out, product, out=out)
            else:
                found.append(product)
        return found
    for part in run_parts(blocks, thread_ranges(n, threads, n * oh * ow * k * o, step),
                          threads):
        for product in part:
            out += product
    return np.ascontiguousarray(out.T).reshape(w_shape)


def native_columns(images: np.ndarray, matrix: np.ndarray, bias: tuple[np.ndarray, ...],
                   target: np.ndarray) -> bool:
    """Whether `conv_native`'s column parts compute this few-channel convolution (or weight
    gradient: `matrix` its result, `target` the adjoint's rows) as the NumPy parts do: float32
    throughout, at most one bias, NCHW image rows contiguous across, C-ordered matrix and
    result, and GEMMs np.matmul hands to `cblas_sgemm` (no side of 1: gemv or dot)."""
    return (len(bias) <= 1 and images.dtype == matrix.dtype == target.dtype == np.float32 and
            all(b.dtype == np.float32 for b in bias) and images.strides[3] == 4 and
            matrix.flags.c_contiguous and target.flags.c_contiguous and
            min(*target.shape[1:], *matrix.shape) > 1)


def columns_copied(images: np.ndarray, kernel: tuple[int, int], out_size: tuple[int, int],
                   stride: tuple[int, int], dilation: tuple[int, int],
                   pads: tuple[int, int, int, int]) -> bool:
    """Whether `im2col` copies its windows into contiguous columns (the GEMMs then read a
    contiguous matrix, as `conv_native`'s do). Some geometries (a 1x1 kernel at a stride)
    reshape to a strided view, which NumPy 1 multiplies without BLAS: the native parts would
    round differently. Asked of a view over a one-float buffer: setting its shape only
    succeeds without a copy, and reads nothing."""
    n, c, h, w = images.shape
    height, width = h + pads[0] + pads[1], w + pads[2] + pads[3]
    shape = (n, c, *kernel, *out_size)
    windows = np.lib.stride_tricks.as_strided(
        np.zeros(1, np.float32), shape, (4 * c * height * width, 4 * height * width,
                                         4 * width * dilation[0], 4 * dilation[1],
                                         4 * width * stride[0], 4 * stride[1]))
    try:
        windows.shape = (n, c * kernel[0] * kernel[1], out_size[0] * out_size[1])
    except AttributeError:  # NOTE: "incompatible shape for in-place modification": a copy
        return True
    return False


def columns_geometry(images: np.ndarray, kernel: tuple[int, int], out_size: tuple[int, int],
                     stride: tuple[int, int], dilation: tuple[int, int],
                     pads: tuple[int, int, int, int]) -> np.ndarray:
    """`conv_native`'s columns geometry: (kh, kw, sy, sx, dy, dx, top, left, oh, ow, height,
    width), the last two the zero-bordered block's."""
    top, bottom, left, right = pads
    return np.array([*kernel, *stride, *dilation, top, left, *out_size,
                     images.shape[2] + top + bottom, images.shape[3] + left + right], np.int64)

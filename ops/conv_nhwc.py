"""conv2d and its two gradients over channels-last (NHWC) images, for the layout pass
(graph/passes/layout.py): a chain of convolutions keeps its activations NHWC, so a window-row
GEMM reads its input and writes its output in place, with no NCHW<->NHWC copy per convolution.
Weights stay OIHW and the attributes are conv2d's (`x_shape` of the input gradient stays NCHW);
only the image arrays are channels-last. Users never see these ops: the pass makes them, with
transposes at the chain's boundaries.
"""
from __future__ import annotations

import copy
from typing import Any

import numpy as np

from .batch_rules import LOOP_ACROSS, folded
from .conv_columns import (columns_copied, columns_geometry, native_columns, nhwc_columns,
                           nhwc_columns_grad_weight)
from .conv_kernels import add_bias, im2col, image_block, pad_hw, wide_bias
from .conv_native import native_parts
from .conv_row_taps import native_row_taps, nhwc_row_taps, nhwc_row_taps_grad_weight
from .elementwise import helper_call
from .nn_kernels import add_windows, window_pads
from .parallel import (HELPERS as PARALLEL_HELPERS, band_rows, even_step, run_parts, run_team,
                       team_bounds, thread_ranges)
from .opdef import REQUIRED, GradContext, OpDef
from .types import Tensor, Type, expect_tensor
from .window import _CONV2D, _conv2d_infer, _window_grad_infer

TO_NHWC = (0, 2, 3, 1)
TO_NCHW = (0, 3, 1, 2)


def nhwc_out_size(size: tuple[int, int], kernel: tuple[int, int], stride: tuple[int, int],
                  dilation: tuple[int, int], pads: tuple[int, int, int, int]) -> tuple[int, int]:
    """(OH, OW) of a window over `size` padded by `pads` (top, bottom, left, right)."""
    return ((size[0] + pads[0] + pads[1] - (kernel[0] - 1) * dilation[0] - 1) // stride[0] + 1,
            (size[1] + pads[2] + pads[3] - (kernel[1] - 1) * dilation[1] - 1) // stride[1] + 1)


def nhwc_windows(images: np.ndarray, block: np.ndarray, kernel: tuple[int, int],
                 out_size: tuple[int, int], stride: tuple[int, int],
                 dilation: tuple[int, int], pads: tuple[int, int, int, int]) -> np.ndarray:
    """The [B, OH, OW, KH, KW, C] windows of NHWC `images` copied into the interior of `block`
    (whose zero border is the padding): a contiguous copy, then a strided view."""
    (kh, kw), (oh, ow), c = kernel, out_size, images.shape[3]
    top, left = pads[0], pads[2]
    np.copyto(block[:, top:top + images.shape[1], left:left + images.shape[2]], images)
    sn, sh, sw, sc = block.strides
    return np.ndarray((block.shape[0], oh, ow, kh, kw, c), block.dtype, block, 0, (
        sn, sh * stride[0], sw * stride[1], sh * dilation[0], sw * dilation[1], sc))


def nhwc_rows(x: np.ndarray, weight: np.ndarray, *bias: np.ndarray, kernel: tuple[int, int],
              out_size: tuple[int, int], stride: tuple[int, int], dilation: tuple[int, int],
              pads: tuple[int, int, int, int], threads: int = 1,
              native: bool = False) -> np.ndarray:
    """NHWC convolution (one group): window rows of a block of images (a band of output rows of
    one image) @ [KH*KW*C, O], written straight into the NHWC result, bias added in cache. With
    `threads`, each worker takes a range of images (of output rows, for one image) with its
    own padded block, cut where one thread's blocks (bands) are cut: every
    GEMM is one thread's, so the result is the same bit for bit. At most 16 output channels
    (stride 1 across, an even output width) a row holds the window of two neighbouring pixels
    and the GEMM gives both (`paired_weights`): 4/3 of the multiply-adds, but BLAS ran
    [pixels/2, 192] @ [192, 32] 1.25x faster than [pixels, 144] @ [144, 16], and the window
    rows to copy are 2/3 as many floats. Several images take row taps instead where they copy
    fewer rows, at most 32 input channels or at least 16 output pixels across (`nhwc_row_taps`:
    0.74-0.87x the time at 16-32 channels; 0.66-0.81x at 64-128 channels 16-32 pixels across;
    at 8 across 0.85-1.01x at 64 channels, 1.05-1.10x at 128, at 4 across 1.0-1.33x)."""
    n, h, w, c = x.shape
    o, (oh, ow), (top, bottom, left, right) = weight.shape[0], out_size, pads
    out = np.empty((n, oh, ow, o), np.result_type(x, weight, *bias))
    work = n * oh * ow * weight.size
    if kernel == (1, 1) and not any(pads):  # NOTE: the pixels are the rows: a GEMM an image
        matrix = np.ascontiguousarray(weight.transpose(2, 3, 1, 0).reshape(-1, o))  # NOTE:
        # a stack of GEMMs ran 1.9-2.5x slower on the weight's transposed view
        wide = wide_bias(bias, oh * ow, out.size)

        def pixels(start: int, stop: int) -> None:
            """One GEMM per image (a stack): [8192, 16] @ [16, 32] in one call took 1.7-1.9x
            the time of 32 calls of [256, 16] (OpenBLAS, batch 32), and parts cut at images
            run the same GEMMs."""
            rows = out[start:stop].reshape(stop - start, -1, o)
            np.matmul(x[start:stop, ::stride[0], ::stride[1]].reshape(stop - start, -1, c),
                      matrix, out=rows)
            for b in wide:
                add_bias(rows, b)
        run_parts(pixels, thread_ranges(n, threads, work), threads)
        return out
    copied = stride[0] * (oh + (kernel[0] - 1) * dilation[0] // stride[0])  # NOTE: row taps
    if n > 1 and kernel[0] > 1 and copied <= kernel[0] * oh and (c <= 32 or ow >= 16):  # NOTE:
        # past 32 channels 0.66-0.81x the time from 16 pixels across; 0.85-1.10x at 8 (batch 32)
        return nhwc_row_taps(x, weight, *bias, out=out, stride=stride, dilation=dilation,
                             pads=pads, threads=threads, native=native)
    target = out
    if not pixel_pairs(o, stride[1], ow, kernel[1]):
        matrix = weight.transpose(2, 3, 1, 0).reshape(-1, o)
    else:  # NOTE: a row is a pixel pair's window and gives both pixels' channels (NHWC order)
        matrix, bias = paired_weights(weight, dilation[1]), tuple(np.concatenate((b, b))
                                                                  for b in bias)
        kernel, ow = (kernel[0], (kernel[1] - 1) * dilation[1] + 2), ow // 2
        out_size, stride, dilation = (oh, ow), (stride[0], 2), (dilation[0], 1)
        target = out.reshape(n, oh, ow, 2 * o)
    bias = wide_bias(bias, ow if n == 1 else oh * ow, out.size)  # NOTE: bands: rows of ow
    step = even_step(n, image_block(matrix.shape[0] * oh * ow * x.itemsize))
    band = band_rows(oh, ow * matrix.shape[0] * x.itemsize, work)  # NOTE: one image's
    parts = native_parts() if native and native_rows(x, matrix, bias, target, step) else None
    if parts is not None:  # NOTE: the same numbers, without the interpreter lock
        geometry = np.array([*kernel, *stride, *dilation, top, left, h + top + bottom,
                             w + left + right], np.int64)
        given = np.ascontiguousarray(bias[0]) if bias else matrix[0]
        size, unit = (oh, band) if n == 1 else (n, step)
        ranges = thread_ranges(size, threads, work, unit)
        bounds = team_bounds(parts, ranges, size, threads, work, unit, matrix.nbytes)
        if bounds is not None:  # NOTE: too little work for the pool: Numba's team
            run_team(parts.rows_forward_split, x, matrix, given, bool(bias), target, bounds,
                     unit, geometry, len(bounds) - 1)
            return out
        run_parts(lambda start, stop: parts.rows_forward(x, matrix, given, bool(bias), target,
                                                         start, stop, unit, geometry),
                  ranges, threads)
        return out
    if n == 1:  # NOTE: one image: its bands of output rows split over the threads
        block = np.zeros((1, h + top + bottom, w + left + right, c), x.dtype)
        windows = nhwc_windows(x, block, kernel, out_size, stride, dilation, pads)
        run_parts(lambda start, stop: nhwc_band_rows(windows, matrix, bias, target, start, stop,
                                                     band),
                  thread_ranges(oh, threads, work, band), threads)
        return out

    def images(start: int, stop: int) -> None:
        block = np.zeros((min(step, stop - start), h + top + bottom, w + left + right, c),
                         x.dtype)
        for i in range(start, stop, step):
            part = x[i:min(i + step, stop)]
            windows = nhwc_windows(part, block[:len(part)], kernel, out_size, stride, dilation,
                                   pads)
            nhwc_band_rows(windows, matrix, bias, target[i:i + len(part)], 0, oh, band)
    if threads == 1:
        images(0, n)
        return out

    def long_calls(start: int, stop: int) -> None:
        """A part's images, a block's window rows copied into one buffer and multiplied at
        once: every NumPy call releases the interpreter lock and takes it back, and with one
        image in 128 KiB bands (about 15 calls an image) the two threads waited for each
        other's lock ~140 times a 16-channel convolution, no faster than one thread."""
        block = np.zeros((min(step, stop - start), h + top + bottom, w + left + right, c),
                         x.dtype)
        rows = np.empty((len(block) * oh * ow, matrix.shape[0]), x.dtype)
        for i in range(start, stop, step):
            part = x[i:min(i + step, stop)]
            windows = nhwc_windows(part, block[:len(part)], kernel, out_size, stride, dilation,
                                   pads)
            if len(part) == 1:  # NOTE: a lone image is banded at one thread: the same GEMMs
                nhwc_band_rows(windows, matrix, bias, target[i:i + 1], 0, oh, band)
                continue
            np.copyto(rows[:windows.size // matrix.shape[0]].reshape(windows.shape), windows)
            done = target[i:i + len(part)].reshape(-1, matrix.shape[1])
            np.matmul(rows[:len(done)], matrix, out=done)
            for b in bias:
                add_bias(done, b)
    run_parts(long_calls, thread_ranges(n, threads, work, step), threads)  # NOTE: at one
    # thread's block bounds: a GEMM of other rows may round its last rows differently
    return out


def native_rows(x: np.ndarray, matrix: np.ndarray, bias: tuple[np.ndarray, ...],
                target: np.ndarray, step: int = 0) -> bool:
    """Whether `conv_native`'s window-rows parts compute this convolution (or weight gradient:
    `matrix` its result, `target` its adjoint) as the NumPy parts do: one image in bands of
    output rows (each at least 2 pixels: no GEMM of one row) or several in blocks of `step`
    (the forward cuts a block of one image in bands: then not), float32
    throughout, at most one bias, input rows contiguous across, C-ordered matrix and result,
    and GEMMs np.matmul hands to `cblas_sgemm` (no side of 1: gemv or dot)."""
    n, c = x.shape[0], x.shape[3]
    return ((n > 1 and (step == 0 or step > 1 and n % step != 1) or n == 1 and
             target.shape[2] > 1) and len(bias) <= 1 and
            x.dtype == matrix.dtype == target.dtype == np.float32 and
            all(b.dtype == np.float32 for b in bias) and x.strides[2:] == (4 * c, 4) and
            matrix.flags.c_contiguous and target.flags.c_contiguous and
            min(target.shape[1] * target.shape[2], *matrix.shape, target.shape[3]) > 1)


def pixel_pairs(out_channels: int, stride_across: int, out_width: int, kernel_width: int) -> bool:
    """Whether a window row holds two neighbouring pixels' windows (`paired_weights`): at most
    16 output channels, stride 1 across, an even output width, a kernel wider than one pixel.
    The forward, the weight gradient and the balance of a gradient pair read this one rule."""
    return out_channels <= 16 and stride_across == 1 and out_width % 2 == 0 and kernel_width > 1


def paired_weights(weight: np.ndarray, dilation: int) -> np.ndarray:
    """OIHW `weight` as the [KH * span * C, 2 * O] matrix of a pixel pair: its window is
    span = (KW - 1) * dilation + 2 columns wide, pixel p of the pair reads columns p,
    p + dilation, ...; the other entries are zero."""
    o, c, kh, kw = weight.shape
    width = (kw - 1) * dilation + 2
    matrix = np.zeros((kh, width, c, 2, o), weight.dtype)
    taps = weight.transpose(2, 3, 1, 0)
    for p in range(2):
        matrix[:, p:p + (kw - 1) * dilation + 1:dilation, :, p] = taps
    return matrix.reshape(kh * width * c, 2 * o)


def nhwc_band_rows(windows: np.ndarray, matrix: np.ndarray, bias: tuple[np.ndarray, ...],
                   out: np.ndarray, start: int, stop: int, band: int) -> None:
    """Output rows start..stop of `out` [B, OH, OW, O] from `windows`: all at once for several
    images, in bands of `band` rows for one (`band_rows`)."""
    o = matrix.shape[1]
    band = stop - start if windows.shape[0] > 1 else band
    for r in range(start, stop, band):
        rows = out[:, r:min(r + band, stop)].reshape(-1, o)
        np.matmul(windows[:, r:min(r + band, stop)].reshape(-1, matrix.shape[0]), matrix,
                  out=rows)
        for b in bias:  # NOTE: a bias repeated over rows (`wide_bias`) or not
            add_bias(rows, b)


def conv2d_nhwc_kernel(x: np.ndarray, weight: np.ndarray, *bias: np.ndarray,
                       stride: tuple[int, int] = (1, 1),
                       padding: tuple[int, int, int, int] = (0, 0, 0, 0),
                       pad_mode: str = "valid", dilation: tuple[int, int] = (1, 1),
                       groups: int = 1, threads: int = 1, native: bool = False) -> np.ndarray:
    """conv2d of NHWC `x` with OIHW `weight`, NHWC result (`threads`: see `nhwc_rows`;
    `native`: parts may run as `conv_native`'s, the same numbers)."""
    if groups != 1:
        raise ValueError(f"conv2d_nhwc: groups={groups} (only 1 is implemented)")
    kernel = weight.shape[2:]
    pads = window_pads(x.shape[1:3], kernel, stride, dilation, pad_mode, padding)
    size = nhwc_out_size(x.shape[1:3], kernel, stride, dilation, pads)
    if x.shape[3] <= 15:  # NOTE: COLUMNS_MAX_CHANNELS (generated code has no module constants)
        return nhwc_columns(x, weight, *bias, kernel=kernel, out_size=size, stride=stride,
                            dilation=dilation, pads=pads, threads=threads, native=native)
    return nhwc_rows(x, weight, *bias, kernel=kernel, out_size=size, stride=stride,
                     dilation=dilation, pads=pads, threads=threads, native=native)


def conv2d_nhwc_grad_weight_kernel(x: np.ndarray, g: np.ndarray, *, w_shape: tuple[int, ...],
                            stride: tuple[int, int] = (1, 1),
                            padding: tuple[int, int, int, int] = (0, 0, 0, 0),
                            pad_mode: str = "valid", dilation: tuple[int, int] = (1, 1),
                            groups: int = 1, threads: int = 1,
                            native: bool = False) -> np.ndarray:
    """d conv2d_nhwc / d weight (OIHW): window rows.T @ the NHWC adjoint's pixel rows (pixel
    pairs where `nhwc_rows` takes them: 1.1x faster on the ResNet's 16-channel stage; row taps,
    `nhwc_row_taps_grad_weight`, at stride 1 down, 17-32 output and at most 32 input
    channels: 0.84x the time on the 32-channel stage, 1.03x at 16 and 1.15x at 64). With
    `threads`, workers compute the products of the blocks (or bands) one thread would, and
    they are summed in the same order: the same result, bit for bit (the caller's first
    part sums as it goes; the other parts' products wait, their memory on top)."""
    o, _, kh, kw = w_shape
    if groups != 1:
        raise ValueError(f"conv2d_nhwc_grad_weight: groups={groups} (only 1 is implemented)")
    n, h, w, c = x.shape
    oh, ow = g.shape[1:3]
    top, bottom, left, right = pads = window_pads((h, w), (kh, kw), stride, dilation, pad_mode,
                                                  padding)
    if c <= 15:  # NOTE: COLUMNS_MAX_CHANNELS
        return nhwc_columns_grad_weight(x, g, w_shape, stride, dilation, pads, threads,
                                        native)
    k, work = kh * kw * c, n * oh * ow * kh * kw * c * o
    if (kh, kw) == (1, 1) and not any(pads):  # NOTE: one GEMM over the pixels
        (out,) = run_parts(lambda start, stop: x[:, ::stride[0], ::stride[1]].reshape(-1, c).T @
                           g.reshape(-1, o), [(0, n)], threads)
        return np.ascontiguousarray(out.reshape(kh, kw, c, o).transpose(3, 2, 0, 1))
    paired = pixel_pairs(o, stride[1], ow, kw)
    if not paired and n > 1 and stride[0] == 1 and kh > 1 and dilation[0] <= oh and c <= 32:
        return nhwc_row_taps_grad_weight(x, g, w_shape, stride, dilation, pads, threads,
                                         native)
    geometry = ((kh, kw), (oh, ow), stride, dilation)
    if paired:  # NOTE: pixel pairs' windows @ the adjoint's pairs of pixels, folded after
        geometry = ((kh, (kw - 1) * dilation[1] + 2), (oh, ow // 2), (stride[0], 2),
                    (dilation[0], 1))
        g = g.reshape(n, oh, ow // 2, 2 * o)
    k, cols, row = kh * geometry[0][1] * c, g.shape[3], geometry[1][1]
    step = even_step(n, image_block(k * oh * row * x.itemsize))
    band = oh if n > 1 else band_rows(oh, row * k * x.itemsize, work)
    out = np.zeros((k, cols), np.result_type(x, g))

    def add(found: list[np.ndarray], start: int, product: np.ndarray) -> None:
        """The first part adds its products at once, as one thread does; later parts keep
        theirs for the caller to add after it, in order."""
        if start == 0:
            np.add(out, product, out=out)
        else:
            found.append(product)
    if native and native_rows(x, out, (), g) and (parts := native_parts()) is not None:
        geometry = np.array(  # NOTE: the same numbers, without the interpreter lock
            [*geometry[0], *geometry[2], *geometry[3], top, left, h + top + bottom,
             w + left + right], np.int64)
        size, unit = (oh, band) if n == 1 else (n, step)
        ranges = thread_ranges(size, threads, work, unit)
        bounds = team_bounds(parts, ranges, size, threads, work, unit, out.nbytes)

        def blocks(start: int, stop: int) -> list[np.ndarray]:
            kept = np.empty((-(-(stop - start) // unit) if start else 0, k, cols), np.float32)
            parts.rows_grad_weight(x, g, out, kept, start > 0, start, stop, unit, geometry)
            return list(kept)
        if bounds is not None:  # NOTE: Numba's team; part p > 0 keeps its blocks' products
            offsets = np.cumsum([0, 0] + [-(-(b - a) // unit) for a, b in zip(bounds[1:-1],
                                                                              bounds[2:])],
                                dtype=np.int64)
            kept = np.empty((offsets[-1], k, cols), np.float32)
            run_team(parts.rows_grad_weight_split, x, g, out, kept, offsets, bounds, unit,
                     geometry, len(bounds) - 1)
            products = [list(kept)]
        else:
            products = run_parts(blocks, ranges, threads)
    elif n == 1:  # NOTE: one image, its bands of output rows split over the threads
        block = np.zeros((1, h + top + bottom, w + left + right, c), x.dtype)
        windows = nhwc_windows(x, block, *geometry, pads)

        def bands(start: int, stop: int) -> list[np.ndarray]:
            found: list[np.ndarray] = []
            for r in range(start, stop, band):
                add(found, start, windows[:, r:r + band].reshape(-1, k).T @
                    g[:, r:r + band].reshape(-1, cols))
            return found
        products = run_parts(bands, thread_ranges(oh, threads, work, band), threads)
    else:
        def images(start: int, stop: int) -> list[np.ndarray]:
            block = np.zeros((min(step, stop - start), h + top + bottom, w + left + right, c),
                             x.dtype)
            found: list[np.ndarray] = []
            for i in range(start, stop, step):
                part = x[i:i + step]
                windows = nhwc_windows(part, block[:len(part)], *geometry, pads)
                add(found, start, windows.reshape(-1, k).T @ g[i:i + step].reshape(-1, cols))
            return found
        products = run_parts(images, thread_ranges(n, threads, work, step), threads)
    for part in products:
        for product in part:
            out += product
    if paired:  # NOTE: pixel p of a pair read its taps at columns p, p + dilation, ...
        pairs, last = out.reshape(kh, -1, c, 2, o), (kw - 1) * dilation[1]
        taps = pairs[:, 0:last + 1:dilation[1], :, 0] + pairs[:, 1:last + 2:dilation[1], :, 1]
        return np.ascontiguousarray(taps.transpose(3, 2, 0, 1))
    return np.ascontiguousarray(out.reshape(kh, kw, c, o).transpose(3, 2, 0, 1))


def conv2d_nhwc_grad_input_kernel(g: np.ndarray, weight: np.ndarray, *, x_shape: tuple[int, ...],
                           stride: tuple[int, int] = (1, 1),
                           padding: tuple[int, int, int, int] = (0, 0, 0, 0),
                           pad_mode: str = "valid", dilation: tuple[int, int] = (1, 1),
                           groups: int = 1, threads: int = 1,
                           native: bool = False) -> np.ndarray:
    """d conv2d_nhwc / d x, NHWC (`x_shape` is the NCHW shape). Stride 1: the NHWC convolution
    of the adjoint with the flipped, transposed kernels. Strided across (stride up to the
    kernel's width, dilation 1 across): `nhwc_phase_rows`. Otherwise pixel rows of the adjoint
    @ [O, KH*KW*C], each window added back where it was read (KH*KW strided adds). Workers
    take ranges of images."""
    n, oh, ow, o = g.shape
    _, c, kh, kw = weight.shape
    h, w = x_shape[2:]
    if groups != 1:
        raise ValueError(f"conv2d_nhwc_grad_input: groups={groups} (only 1 is implemented)")
    top, bottom, left, right = window_pads((h, w), (kh, kw), stride, dilation, pad_mode, padding)
    if tuple(stride) == (1, 1):
        reach = ((kh - 1) * dilation[0], (kw - 1) * dilation[1])
        before = [reach[0] - top, reach[1] - left]
        after = [h + reach[0] - oh - before[0], w + reach[1] - ow - before[1]]
        if min(*before, *after) < 0:  # NOTE: padding wider than the kernel reaches: crop
            g = g[:, max(0, -before[0]):oh - max(0, -after[0]),
                  max(0, -before[1]):ow - max(0, -after[1])]
            before, after = [max(0, v) for v in before], [max(0, v) for v in after]
        flipped = weight[:, :, ::-1, ::-1].transpose(1, 0, 2, 3)
        return nhwc_rows(g, flipped, kernel=(kh, kw), out_size=(h, w), stride=(1, 1),
                         dilation=dilation, pads=(before[0], after[0], before[1], after[1]),
                         threads=threads, native=native)
    if dilation[1] == 1 and 2 <= stride[1] <= kw:  # NOTE: runs of stride[1] pixels
        return nhwc_phase_rows(g, weight, (h, w), stride, dilation[0],
                               (top, bottom, left, right), threads, native)
    matrix = weight.transpose(0, 2, 3, 1).reshape(o, -1)
    out = np.zeros((n, h + top + bottom, w + left + right, c), np.result_type(g, weight))
    step = even_step(n, image_block(kh * kw * c * oh * ow * out.itemsize))

    def images(start: int, stop: int) -> None:
        for i in range(start, stop, step):
            j = min(i + step, stop)
            cols = (g[i:j].reshape(-1, o) @ matrix).reshape(-1, oh, ow, kh, kw, c)
            add_windows(cols.transpose(0, 5, 3, 4, 1, 2), out[i:j].transpose(0, 3, 1, 2),
                        stride, dilation)
    run_parts(images, thread_ranges(n, threads, n * oh * ow * matrix.size, step), threads)
    return out[:, top:top + h, left:left + w]


def nhwc_phase_rows(g: np.ndarray, weight: np.ndarray, size: tuple[int, int],
                    stride: tuple[int, int], dilation: int, pads: tuple[int, int, int, int],
                    threads: int = 1, native: bool = False) -> np.ndarray:
    """The strided input gradient (dilation 1 across, stride up to the kernel's width) as one
    stride-1 product per row phase, written straight into its rows of the result. Padded
    input row sy * Y + py only reads kernel rows ky with ky * dilation % sy == py, at adjoint
    rows Y - ky * dilation // sy; across, taps kx = q * sx .. q * sx + sx - 1 (zero weights
    past the kernel) land on the sx neighbouring pixels sx * X + px from adjoint pixel X - q.
    So a phase's window rows (its kernel rows x ceil(KW / sx) adjoint pixels x O) @ a
    [taps * O, sx * C] matrix give whole padded rows of the result, channels-last. Against
    one GEMM of K = O per (ky, q) added onto the result (`out[...] +=` of every product):
    0.64-0.69x the time on the ResNet's 16 -> 32 stride-2 layer, 0.81-0.84x on 32 -> 64
    (1.5-1.6x the forward); the zero taps cost (ceil(KW / sx) * sx) / KW of the
    multiply-adds (4/3 at 3x3, stride 2). Workers take ranges of blocks of images."""
    n, oh, ow, o = g.shape
    _, c, kh, kw = weight.shape
    (sy, sx), (top, _, left, _) = stride, pads
    rows_y, runs_x = -(-(top + size[0]) // sy), -(-(left + size[1]) // sx)  # NOTE: rows
    # and runs in the bottom and right padding are cropped: not computed
    groups, reach = -(-kw // sx), (kh - 1) * dilation // sy
    wide = np.zeros((kh, groups * sx, o, c), np.result_type(g, weight))
    wide[:, :kw] = weight.transpose(2, 3, 0, 1)
    taps = np.ascontiguousarray(  # NOTE: [KH, groups (last first), O, sx, C]
        wide.reshape(kh, groups, sx, o, c)[:, ::-1].transpose(0, 1, 3, 2, 4))
    phases = []  # NOTE: per py: (its taps' slice of the window rows, matrix) or None
    for py in range(sy):
        kys = [ky for ky in range(kh) if ky * dilation % sy == py][::-1]
        if not kys:  # NOTE: a stride past the kernel: rows no window reads
            phases.append(None)
            continue
        first, last = reach - kys[0] * dilation // sy, reach - kys[-1] * dilation // sy
        gap = (kys[0] - kys[1]) * dilation // sy if len(kys) > 1 else 1
        phases.append((slice(first, last + 1, gap), taps[kys].reshape(-1, sx * c)))
    out = np.empty((n, rows_y, sy, runs_x, sx * c), wide.dtype)
    oh, ow = min(oh, rows_y), min(ow, runs_x)  # NOTE: later adjoint rows only reach the crop
    per_image = rows_y * runs_x * (reach + 1) * groups * o
    step = even_step(n, image_block(per_image * out.itemsize, 1 << 19))  # NOTE: 512 KiB of
    # window rows ran 0.93-0.97x 1 MiB's time at batch 32 and made twice the parts to share

    def images(start: int, stop: int) -> None:
        """A block of images at a time: the adjoint inside a zero border (adjoint pixels
        before the first and past the last), the window rows of all its kernel rows copied
        once, each phase's GEMM reading its taps' columns of them (without a copy where they
        are contiguous: at dilation 1 down), its product copied into the phase's rows."""
        count = min(step, stop - start)
        block = np.zeros((count, reach + rows_y, groups - 1 + runs_x, o), out.dtype)
        rows = np.empty(count * per_image, out.dtype)
        product = np.empty((count * rows_y * runs_x, sx * c), out.dtype)
        sn, sh, sw, sc = block.strides
        for i in range(start, stop, step):
            b = min(i + step, stop) - i
            block[:b, reach:reach + oh, groups - 1:groups - 1 + ow] = g[i:i + b, :oh, :ow]
            windows = np.ndarray((b, rows_y, runs_x, reach + 1, groups, o), block.dtype,
                                 block, 0, (sn, sh, sw, sh, sw, sc))  # NOTE: tap t: row Y + t
            flat = rows[:windows.size].reshape(windows.shape)
            np.copyto(flat, windows)
            done = product[:b * rows_y * runs_x]
            for py, phase in enumerate(phases):
                if phase is None:
                    out[i:i + b, :, py] = 0
                    continue
                np.matmul(flat[:, :, :, phase[0]].reshape(len(done), -1), phase[1], out=done)
                out[i:i + b, :, py] = done.reshape(windows.shape[:3] + (-1,))
    parts = native_parts() if native and native_phases(g, out, rows_y * runs_x) else None
    if parts is not None:  # NOTE: the same numbers, without the interpreter lock
        matrices, layout = phase_matrices(phases, sx * c, out.dtype)
        geometry = np.array([reach, groups, rows_y, runs_x, oh, ow], np.int64)

    def lock_free(start: int, stop: int) -> None:
        parts.phase_rows(g, matrices, layout, out, start, stop, step, geometry)
    run_parts(images if parts is None else lock_free,
              thread_ranges(n, threads, n * g.shape[1] * g.shape[2] * kh * kw * c * o, step),
              threads)
    full = out.reshape(n, rows_y * sy, runs_x * sx, c)
    return full[:, top:top + size[0], left:left + size[1]]


def native_phases(g: np.ndarray, out: np.ndarray, pixels: int) -> bool:
    """Whether `conv_native.phase_rows` computes this strided input gradient as the NumPy part
    does: float32, adjoint rows contiguous across, and GEMMs np.matmul hands to `cblas_sgemm`
    (at least 2 output channels and 2 pixels a phase: no side of 1)."""
    return (g.dtype == out.dtype == np.float32 and g.strides[2:] == (4 * g.shape[3], 4) and
            g.shape[3] > 1 and pixels > 1)


def phase_matrices(phases: list, width: int, dtype: np.dtype) -> tuple[np.ndarray, np.ndarray]:
    """`nhwc_phase_rows`' phases for `conv_native.phase_rows`: their matrices stacked (zero
    rows below the shorter ones) and (first tap, taps, gap) per phase, (0, 0, 0) for none."""
    size = max([phase[1].shape[0] for phase in phases if phase is not None] or [1])
    matrices = np.zeros((len(phases), size, width), dtype)
    layout = np.zeros((len(phases), 3), np.int64)
    for py, phase in enumerate(phases):
        if phase is not None:
            taps, matrix = phase
            matrices[py, :len(matrix)] = matrix
            layout[py] = taps.start, len(range(taps.start, taps.stop, taps.step)), taps.step
    return matrices, layout


def _permuted(t: Type, perm: tuple[int, ...]) -> Type:
    if isinstance(t, Tensor) and t.rank == 4:
        return Tensor(tuple(t.shape[k] for k in perm), t.dtype)
    return t


def _one_group(op: str, attrs: Any) -> None:
    if attrs["groups"] != 1:
        raise ValueError(f"{op}: groups={attrs['groups']} (only 1 is implemented)")
    threads = attrs.pop("threads", 1)  # NOTE: how the kernel runs, not what it computes
    if type(threads) is not int or threads < 1:
        raise ValueError(f"{op}: threads must be an int >= 1, got {threads!r}")
    if type(attrs.pop("native", False)) is not bool:
        raise ValueError(f"{op}: native must be True or False")


def _conv2d_nhwc_infer(x: Type, weight: Type, *bias: Type, **attrs: Any) -> Tensor:
    expect_tensor("conv2d_nhwc", "input (NHWC)", x, rank=4)
    _one_group("conv2d_nhwc", attrs)
    return _permuted(_conv2d_infer(_permuted(x, TO_NCHW), weight, *bias, **attrs), TO_NHWC)


def _grad_input_infer(*inputs: Type, **attrs: Any) -> Type:
    _one_group("conv2d_nhwc_grad_input", attrs)
    nchw = _window_grad_infer("x_shape", batch_of_adjoint=True)
    return _permuted(nchw(_permuted(inputs[0], TO_NCHW), *inputs[1:], **attrs), TO_NHWC)


def _grad_weight_infer(*inputs: Type, **attrs: Any) -> Type:
    _one_group("conv2d_nhwc_grad_weight", attrs)
    return _window_grad_infer("w_shape")(*inputs, **attrs)


def _conv2d_nhwc_grad(ad: GradContext) -> tuple[Any, ...]:
    x, w, g = ad.input(0), ad.input(1), ad.g
    nchw = ad.types[0].shape
    dx = ad.op("conv2d_nhwc_grad_input", g, w, x_shape=(nchw[0], nchw[3], nchw[1], nchw[2]),
               **ad.attrs)
    dw = ad.op("conv2d_nhwc_grad_weight", x, g, w_shape=ad.types[1].shape, **ad.attrs)
    return (dx, dw, *((ad.op("sum", g, axis=(0, 1, 2)),) if len(ad.types) > 2 else ()))


def _grad_input_grad(ad: GradContext) -> tuple[Any, ...]:
    attrs = {k: v for k, v in ad.attrs.items() if k != "x_shape"}
    return (ad.op("conv2d_nhwc", ad.g, ad.input(1), **attrs),
            ad.op("conv2d_nhwc_grad_weight", ad.g, ad.input(0), w_shape=ad.types[1].shape,
                  **attrs))


def _grad_weight_grad(ad: GradContext) -> tuple[Any, ...]:
    attrs = {k: v for k, v in ad.attrs.items() if k != "w_shape"}
    x = ad.types[0].shape
    return (ad.op("conv2d_nhwc_grad_input", ad.input(1), ad.g,
                  x_shape=(x[0], x[3], x[1], x[2]), **attrs),
            ad.op("conv2d_nhwc", ad.input(0), ad.g, **attrs))


def _onnx_conv2d_nhwc(e: Any, x: str, w: str, *bias: str) -> str:
    """ONNX's Conv is NCHW: transposes around it (the exported model has them at each
    convolution; ONNX runtimes pick their own layouts)."""
    from .onnx_layers import conv2d as conv_rule
    nchw = copy.copy(e)
    nchw.types = (_permuted(e.types[0], TO_NCHW), *e.types[1:])
    nchw.out_type = _permuted(e.out_type, TO_NCHW)
    out = conv_rule(nchw, e.node("Transpose", x, perm=list(TO_NCHW)), w, *bias)
    return e.node("Transpose", out, perm=list(TO_NHWC))


_NHWC = {**_CONV2D, "threads": 1, "native": False}
"""conv2d's attributes, the threads the kernel may split its blocks over, and whether its parts
may run as native code (`conv_native`: the same numbers; the layout pass sets it where the
compile's backend may use Numba)."""
_KERNEL_HELPERS = (window_pads, image_block, nhwc_out_size, nhwc_windows, nhwc_band_rows,
                   native_parts, native_rows, native_row_taps, native_columns, columns_copied,
                   columns_geometry, native_phases, phase_matrices,
                   *PARALLEL_HELPERS, pixel_pairs, paired_weights, nhwc_rows, pad_hw, im2col,
                   nhwc_columns, nhwc_columns_grad_weight, nhwc_phase_rows, nhwc_row_taps,
                   nhwc_row_taps_grad_weight, wide_bias, add_bias)

conv2d_nhwc = OpDef(
    "conv2d_nhwc", ("x", "weight", "*bias"), kernel=conv2d_nhwc_kernel, infer=_conv2d_nhwc_infer,
    emit=helper_call(conv2d_nhwc_kernel, "x, weight, *bias", _NHWC), attrs=_NHWC,
    helpers=(*_KERNEL_HELPERS, conv2d_nhwc_kernel), fresh=True, grad=_conv2d_nhwc_grad,
    onnx=_onnx_conv2d_nhwc, batch=folded())
"""conv2d of NHWC images (OIHW weight, bias [O]), NHWC result; conv2d's attributes and
`threads` (set by the layout pass from `set_context(num_threads=...)`)."""

conv2d_nhwc_grad_input = OpDef(
    "conv2d_nhwc_grad_input", ("g", "weight"), kernel=conv2d_nhwc_grad_input_kernel,
    infer=_grad_input_infer, attrs={"x_shape": REQUIRED, **_NHWC},
    emit=helper_call(conv2d_nhwc_grad_input_kernel, "g, weight", {"x_shape": REQUIRED, **_NHWC}),
    helpers=(*_KERNEL_HELPERS, add_windows, conv2d_nhwc_grad_input_kernel),
    fresh=True, grad=_grad_input_grad, batch=folded((0,), "x_shape"))
"""conv2d_nhwc's input adjoint, NHWC (`x_shape` NCHW, as conv2d_grad_input's)."""

conv2d_nhwc_grad_weight = OpDef(
    "conv2d_nhwc_grad_weight", ("x", "g"), kernel=conv2d_nhwc_grad_weight_kernel,
    infer=_grad_weight_infer, attrs={"w_shape": REQUIRED, **_NHWC},
    emit=helper_call(conv2d_nhwc_grad_weight_kernel, "x, g", {"w_shape": REQUIRED, **_NHWC}),
    helpers=(*_KERNEL_HELPERS, conv2d_nhwc_grad_weight_kernel), fresh=True,
    grad=_grad_weight_grad, batch=LOOP_ACROSS)
"""conv2d_nhwc's weight adjoint (OIHW) from NHWC input and adjoint."""

OPS = (conv2d_nhwc, conv2d_nhwc_grad_input, conv2d_nhwc_grad_weight)

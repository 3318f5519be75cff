"""Row taps: channels-last convolutions at stride 1 down whose copied windows span only the
kernel's width. Each padded input row's windows across ([OW, KW*C]) are copied once and serve
every kernel row ky, whose GEMM reads the rows shifted by ky * dilation; the window rows of
all taps (`conv_nhwc.nhwc_rows`' other forms) copy each input row KH times.
"""
from __future__ import annotations

import numpy as np

from .parallel import run_parts, thread_ranges


def nhwc_row_taps(x: np.ndarray, weight: np.ndarray, *bias: np.ndarray, out: np.ndarray,
                  stride: int, dilation: tuple[int, int], pads: tuple[int, int, int, int],
                  threads: int = 1) -> np.ndarray:
    """NHWC convolution, stride 1 down, into `out` [N, OH, OW, O]: each padded input row's
    windows across ([OW, KW*C], copied once) serve all KH kernel rows, and output rows
    oy..oy+b are the sum over ky of rows oy+ky*dilation.. @ [KW*C, O]. The window rows of
    all taps (`nhwc_rows`' other forms) copy each input row KH times: 9.4 MB a batch of 32 on
    the ResNet's 32-channel stage, where this copies 3.5 MB: 1.1-1.35x faster at 16 and 32
    input channels (batch 32; about the same at batch 1), but 1.03x slower at 64 (batch 32)
    and 1.4x at one 8x8 image (three GEMMs of K=192 instead of one of 576), so `nhwc_rows`
    takes it up to 32 input channels. Blocks of images (bands of output rows for one image) of
    about 512 KiB of rows stay in cache; with `threads`, parts cut at their bounds run the
    same GEMMs as one thread (the same bits)."""
    n, h, w, c = x.shape
    o, _, kh, kw = weight.shape
    _, oh, ow, _ = out.shape
    (top, bottom, left, right), reach = pads, (kh - 1) * dilation[0]
    matrices = np.ascontiguousarray(weight.transpose(2, 3, 1, 0)).reshape(kh, kw * c, o)
    row = ow * kw * c * x.itemsize  # NOTE: bytes of one padded row's windows
    step = max(1, (1 << 19) // ((oh + reach) * row)) if n > 1 else 1
    band = oh if n > 1 else max(1, (1 << 19) // row - reach)
    work = n * oh * ow * matrices.size

    def rows(padded: np.ndarray, target: np.ndarray, first: int, last: int,
             scratch: tuple[np.ndarray, np.ndarray]) -> None:
        """Output rows first..last of `target` [B, OH, OW, O] from `padded` [B, HP, WP, C],
        through `scratch` (flat buffers for the row windows and one kernel row's product)."""
        b, count = len(padded), last - first
        sn, sh, sw, sc = padded.strides
        windows = np.lib.stride_tricks.as_strided(
            padded[:, first:], (b, count + reach, ow, kw, c),
            (sn, sh, sw * stride, sw * dilation[1], sc), writeable=False)
        taps = scratch[0][:windows.size].reshape(b, count + reach, ow, kw * c)
        np.copyto(taps.reshape(windows.shape), windows)
        done = target[:, first:last].reshape(b, count * ow, o)
        product = scratch[1][:done.size].reshape(done.shape)
        np.matmul(taps[:, :count].reshape(b, -1, kw * c), matrices[0], out=done)
        for ky in range(1, kh):
            shift = ky * dilation[0]
            np.matmul(taps[:, shift:shift + count].reshape(b, -1, kw * c), matrices[ky],
                      out=product)
            done += product
        for add in bias:
            done += add

    def scratch(images: int, count: int) -> tuple[np.ndarray, np.ndarray]:
        return (np.empty(images * (count + reach) * ow * kw * c, out.dtype),
                np.empty(images * count * ow * o, out.dtype))
    if n == 1:  # NOTE: one image, padded once, its bands of output rows over the threads
        padded = np.zeros((1, h + top + bottom, w + left + right, c), x.dtype)
        padded[:, top:top + h, left:left + w] = x

        def bands(start: int, stop: int) -> None:
            buffers = scratch(1, min(band, stop - start))
            for r in range(start, stop, band):
                rows(padded, out, r, min(r + band, stop), buffers)
        run_parts(bands, thread_ranges(oh, threads, work, band), threads)
        return out

    def images(start: int, stop: int) -> None:
        block = np.zeros((min(step, stop - start), h + top + bottom, w + left + right, c),
                         x.dtype)
        buffers = scratch(len(block), oh)
        for i in range(start, stop, step):
            j = min(i + step, stop)
            block[:j - i, top:top + h, left:left + w] = x[i:j]
            rows(block[:j - i], out[i:j], 0, oh, buffers)
    run_parts(images, thread_ranges(n, threads, work, step), threads)
    return out


def nhwc_row_taps_grad_weight(x: np.ndarray, g: np.ndarray, w_shape: tuple[int, ...],
                              stride: int, dilation: tuple[int, int],
                              pads: tuple[int, int, int, int], threads: int = 1) -> np.ndarray:
    """The OIHW weight gradient of `nhwc_row_taps`: per image (band of output rows), its row
    windows copied once, and for each kernel row ky the shifted rows.T @ the adjoint's pixels
    ([KW*C, O]). Against all taps' window rows (or pixel pairs): 0.84x the time at 32
    channels, but 1.03x at 16 and 1.15x at 64 (ResNet, batch 32; `conv_nhwc` takes it at 32
    only). With `threads`, parts take ranges of images (bands) and the
    caller adds the products in one thread's order: the same result, bit for bit."""
    n, h, w, c = x.shape
    o, _, kh, kw = w_shape
    _, oh, ow, _ = g.shape
    (top, bottom, left, right), reach = pads, (kh - 1) * dilation[0]
    row = ow * kw * c * x.itemsize
    band = max(1, (1 << 19) // row - reach)
    out = np.zeros((kh, kw * c, o), np.result_type(x, g))
    padded = np.zeros((n if n == 1 else 0, h + top + bottom, w + left + right, c), x.dtype)
    if n == 1:  # NOTE: one image, padded once, its bands over the threads
        padded[:, top:top + h, left:left + w] = x

    def products(image: np.ndarray, i: int, first: int, last: int, found: list,
                 keep: bool) -> None:
        """Rows first..last of image i (`image` [1, HP, WP, C], padded) into `out`, or kept
        in `found` (ky, product) for the caller."""
        count = last - first
        sn, sh, sw, sc = image.strides
        windows = np.lib.stride_tricks.as_strided(
            image[:, first:], (1, count + reach, ow, kw, c),
            (sn, sh, sw * stride, sw * dilation[1], sc), writeable=False)
        taps = np.empty((count + reach, ow, kw * c), out.dtype)
        np.copyto(taps.reshape(windows.shape[1:]), windows[0])
        pixels = g[i, first:last].reshape(-1, o)
        for ky in range(kh):
            shift = ky * dilation[0]
            product = taps[shift:shift + count].reshape(-1, kw * c).T @ pixels
            if keep:
                found.append((ky, product))
            else:
                out[ky] += product

    def bands(start: int, stop: int) -> list:
        found: list = []
        for r in range(start, stop, band):
            products(padded, 0, r, min(r + band, stop), found, start > 0)
        return found

    def images(start: int, stop: int) -> list:
        found: list = []
        image = np.zeros((1, h + top + bottom, w + left + right, c), x.dtype)
        for i in range(start, stop):
            image[:, top:top + h, left:left + w] = x[i]
            for r in range(0, oh, band):
                products(image, i, r, min(r + band, oh), found, start > 0)
        return found
    work = n * oh * ow * kh * kw * c * o
    parts = (run_parts(bands, thread_ranges(oh, threads, work, band), threads) if n == 1 else
             run_parts(images, thread_ranges(n, threads, work), threads))
    for part in parts:  # NOTE: the first part added as it went, as one thread does
        for ky, product in part:
            out[ky] += product
    return np.ascontiguousarray(out.reshape(kh, kw, c, o).transpose(3, 2, 0, 1))

"""Row taps: channels-last convolutions whose copied windows span only the kernel's width.
Each padded input row's windows across ([OW, KW*C]) are copied once and serve every kernel
row ky, whose GEMM reads a contiguous run of them; the window rows of all taps
(`conv_nhwc.nhwc_rows`' other forms) copy each input row about KH / stride times.
"""
from __future__ import annotations

import numpy as np

from .conv_kernels import add_bias, wide_bias
from .conv_native import native_parts
from .parallel import even_step, run_parts, thread_ranges


def nhwc_row_taps(x: np.ndarray, weight: np.ndarray, *bias: np.ndarray, out: np.ndarray,
                  stride: tuple[int, int], dilation: tuple[int, int],
                  pads: tuple[int, int, int, int], threads: int = 1,
                  native: bool = False) -> np.ndarray:
    """NHWC convolution into `out` [N, OH, OW, O]: each padded input row's windows across
    ([OW, KW*C], copied once) serve all KH kernel rows, and output row oy is the sum over ky
    of input rows oy * sy + ky * dilation @ [KW*C, O]. The rows are copied grouped by their
    index mod sy, so that each ky reads a contiguous run of them. The window rows of all
    taps (`nhwc_rows`' other forms) copy each input row about KH / sy times: 9.4 MB a batch
    of 32 on the ResNet's 32-channel stage, where this copies 3.5 MB: 0.74-0.87x the time at
    16 and 32 input channels at stride 1, 0.77-0.78x at stride 2 (batch 32), but 1.03x at 64
    channels and 1.4x at one 8x8 image (three GEMMs of K=192 instead of one of 576), and at
    batch 1 nothing gained for more memory (bands of output rows small enough to keep one
    image's peak ran 1.1-1.5x slower), so `nhwc_rows` takes it for several images of up to
    32 channels, or more from 16 output pixels across (0.66-0.81x at 64-128 channels, 16-32
    pixels; at 8 across 0.85-1.01x at 64 channels but 1.05-1.10x at 128, batch 32). Blocks
    of images of about 512 KiB of rows stay in cache; with `threads`, parts cut at their
    bounds run one thread's GEMMs."""
    n, h, w, c = x.shape
    o, _, kh, kw = weight.shape
    _, oh, ow, _ = out.shape
    (top, bottom, left, right), (sy, sx) = pads, stride
    matrices = np.ascontiguousarray(weight.transpose(2, 3, 1, 0)).reshape(kh, kw * c, o)
    runs = oh + (kh - 1) * dilation[0] // sy  # NOTE: rows of each residue mod sy
    per_image = sy * runs * ow * kw * c  # NOTE: floats of an image's row windows
    step = even_step(n, max(1, (1 << 19) // (per_image * x.itemsize)))  # NOTE: halves
    height = max(h + top + bottom, sy * runs)  # NOTE: zero rows below: residues read past
    parts = native_parts() if native and native_row_taps(x, matrices, bias, out) else None
    if parts is not None:  # NOTE: the same numbers, without the interpreter lock (`native`:
        # the compile's backend may use Numba)
        geometry = np.array([sy, sx, *dilation, top, left, height, w + left + right], np.int64)
        given = np.ascontiguousarray(bias[0]) if bias else matrices[0, 0]
        run_parts(lambda start, stop: parts.row_taps(x, matrices, given, bool(bias), out, start,
                                                     stop, step, geometry),
                  thread_ranges(n, threads, n * oh * ow * matrices.size, step), threads)
        return out
    bias = wide_bias(bias, oh * ow, out.size)

    def images(start: int, stop: int) -> None:
        block = np.zeros((min(step, stop - start), height, w + left + right, c), x.dtype)
        buffers = (np.empty(len(block) * per_image, out.dtype),
                   np.empty(len(block) * oh * ow * o, out.dtype))
        sn, sh, sw, sc = block.strides
        for i in range(start, stop, step):
            b = min(i + step, stop) - i
            block[:b, top:top + h, left:left + w] = x[i:i + b]
            windows = np.ndarray((b, sy, runs, ow, kw, c), block.dtype, block, 0,
                                 (sn, sh, sh * sy, sw * sx, sw * dilation[1], sc))  # NOTE:
            # a view: as_strided took 5 us a call, 0.5 ms a ResNet forward
            taps = buffers[0][:b * per_image].reshape(b, sy, runs, ow, kw * c)
            np.copyto(taps.reshape(windows.shape), windows)
            done = out[i:i + b].reshape(b, oh * ow, o)
            product = buffers[1][:done.size].reshape(done.shape)
            for ky in range(kh):
                first, residue = divmod(ky * dilation[0], sy)
                rows = taps[:, residue, first:first + oh].reshape(b, -1, kw * c)
                np.matmul(rows, matrices[ky], out=product if ky else done)
                if ky:
                    done += product
            for add in bias:
                add_bias(done, add)
    run_parts(images, thread_ranges(n, threads, n * oh * ow * matrices.size, step), threads)
    return out


def native_row_taps(x: np.ndarray, matrices: np.ndarray, bias: tuple[np.ndarray, ...],
                    out: np.ndarray) -> bool:
    """Whether `conv_native`'s part can compute this row-taps convolution (or weight gradient:
    `matrices` its result, `out` the adjoint) as the NumPy part does: float32 throughout, at
    most one bias, input rows contiguous across (W, C), C-ordered results, and GEMMs that
    np.matmul hands to `cblas_sgemm` (no side of 1, which it sends to gemv or dot)."""
    c = x.shape[3]
    return (x.dtype == matrices.dtype == out.dtype == np.float32 and len(bias) <= 1 and
            all(b.dtype == np.float32 and b.shape == out.shape[3:] for b in bias) and
            x.strides[2:] == (4 * c, 4) and out.flags.c_contiguous and
            matrices.flags.c_contiguous and
            min(out.shape[2], out.shape[3], matrices.shape[1]) > 1)


def nhwc_row_taps_grad_weight(x: np.ndarray, g: np.ndarray, w_shape: tuple[int, ...],
                              stride: tuple[int, int], dilation: tuple[int, int],
                              pads: tuple[int, int, int, int], threads: int = 1,
                              native: bool = False) -> np.ndarray:
    """The OIHW weight gradient of `nhwc_row_taps` at stride 1 down: per image (band of output
    rows of a large one), its row windows copied once, and for each kernel row ky the shifted
    rows.T @ the adjoint's pixels ([KW*C, O]). Against all taps' window rows (or pixel
    pairs): 0.84x the time at 32 channels, but 1.03x at 16 and 1.15x at 64 (ResNet, batch
    32), so `conv_nhwc` takes it at 17-32 channels, for several images as the forward. With
    `threads`, parts take ranges of images and the caller adds the products in one thread's
    order: the same result, bit for bit."""
    n, h, w, c = x.shape
    o, _, kh, kw = w_shape
    _, oh, ow, _ = g.shape
    (top, bottom, left, right), reach = pads, (kh - 1) * dilation[0]
    row = ow * kw * c * x.itemsize
    band = max(1, (1 << 19) // row - reach)  # NOTE: output rows a GEMM (all, on small images)
    out = np.zeros((kh, kw * c, o), np.result_type(x, g))

    def products(image: np.ndarray, i: int, first: int, last: int, found: list,
                 keep: bool) -> None:
        """Rows first..last of image i (`image` [1, HP, WP, C], padded) into `out`, or kept
        in `found` (ky, product) for the caller."""
        count = last - first
        _, sh, sw, sc = image.strides
        windows = np.ndarray((count + reach, ow, kw, c), image.dtype, image, first * sh,
                             (sh, sw * stride[1], sw * dilation[1], sc))
        taps = np.empty((count + reach, ow, kw * c), out.dtype)
        np.copyto(taps.reshape(windows.shape), windows)
        pixels = g[i, first:last].reshape(-1, o)
        for ky in range(kh):
            shift = ky * dilation[0]
            product = taps[shift:shift + count].reshape(-1, kw * c).T @ pixels
            if keep:
                found.append((ky, product))
            else:
                out[ky] += product

    def images(start: int, stop: int) -> list:
        found: list = []
        image = np.zeros((1, h + top + bottom, w + left + right, c), x.dtype)
        for i in range(start, stop):
            image[:, top:top + h, left:left + w] = x[i]
            for r in range(0, oh, band):
                products(image, i, r, min(r + band, oh), found, start > 0)
        return found
    work = n * oh * ow * kh * kw * c * o
    parts = native_parts() if native and native_row_taps(x, out, (), g) else None
    if parts is not None:  # NOTE: the same numbers, without the interpreter lock
        geometry = np.array([stride[1], dilation[0], dilation[1], top, left, h + top + bottom,
                             w + left + right, band], np.int64)
        bands = -(-oh // band)

        def lock_free(start: int, stop: int) -> list:
            kept = np.empty(((stop - start) * bands * kh if start else 0, kw * c, o), np.float32)
            parts.row_taps_grad_weight(x, g, out, kept, start > 0, start, stop, geometry)
            return [(j % kh, product) for j, product in enumerate(kept)]
    task = images if parts is None else lock_free
    for part in run_parts(task, thread_ranges(n, threads, work), threads):  # NOTE: the
        # first part added as it went, as one thread does
        for ky, product in part:
            out[ky] += product
    return np.ascontiguousarray(out.reshape(kh, kw, c, o).transpose(3, 2, 0, 1))

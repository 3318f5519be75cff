"""A convolution kernel's parts (ops/conv_nhwc.py, conv_row_taps.py, conv_columns.py: a block
of images, or a band of one image's output rows) as native calls: Numba code that holds no
interpreter lock from its first copy to its last add, so two threads' parts run as two
processes would. In NumPy every call of a part hands the lock back and takes it again, and
when the other thread holds it meanwhile, the wait and the interpreter's state moving between
cores cost each thread 1.3-1.5x its time alone, where two processes cost 1.0-1.2x
(`benchmarks/two_threads.py --kernels`).

A native part computes what its NumPy part computes, bit for bit: the same copies, the same
GEMMs on the OpenBLAS NumPy loaded, called with the arguments `np.matmul` passes to
`cblas_sgemm` (row major, its transposes and leading dimensions, alpha 1 and beta 0), the same
adds in the same order. So whether a call finds the parts built changes no result. Numba is
imported, and the parts compiled, on a background thread once convolutions have run for 10 s
(`native_parts`); until then, and without Numba, NumPy's OpenBLAS or a C library, the kernels
run their NumPy parts. `AMBER_NATIVE_KERNELS=0` keeps them NumPy, `=now` builds at once.
Generated modules carry only `native_parts`, which asks amber for the parts it built.
"""
from __future__ import annotations

import os
import sys
import threading
import time
import types
from typing import Any

import numpy as np

from .blas import cblas_gemm
from .background import NUMBA_IMPORT_LOCK, yielding_often


PARTS = "_amber_native_parts"
"""The `sys.modules` name of the process's one state of the native parts (`parts_state`)."""


def native_parts() -> Any:
    """The process's built native parts (`.row_taps`, see `build_native_parts`), or None: not
    built yet, not buildable here, turned off (`AMBER_NATIVE_KERNELS=0`), or no amber in this
    process. Generated modules carry this lookup, not the build: until the parts are built it
    asks amber's `ask_for_parts`, kept in `sys.modules` with the state, so a module run without
    amber keeps its NumPy parts (the same numbers)."""
    import sys
    shared = sys.modules.get("_amber_native_parts")
    if shared is None:
        return None
    if shared.ready is not None:  # NOTE: built: one lookup a kernel call
        return shared.ready
    ask = getattr(shared, "ask", None)
    return None if ask is None else ask()


def parts_state() -> Any:
    """A fresh state of the native parts: none built, none asked for yet."""
    fresh = types.ModuleType(PARTS)
    # NOTE: `pid` is read by no code of this tree: ambers before this one, loaded beside it in
    # one process (`benchmarks/resnet.py --pair`), check it on each kernel call
    fresh.pid, fresh.ready, fresh.failed, fresh.asked, fresh.due = \
        os.getpid(), None, None, False, None
    fresh.lock = threading.Lock()  # NOTE: two kernels asking at once start one build
    fresh.ask = ask_for_parts
    return fresh


def ask_for_parts() -> Any:
    """`native_parts` in a process running amber, until the parts are built. The first ask
    sets the time the build may start: 10 s later (`AMBER_NATIVE_KERNELS=now`: at once), so
    that only a process that keeps running convolutions (a training loop, not a call or two)
    pays for it; the first ask after that starts it on a background thread."""
    shared = sys.modules[PARTS]
    if not shared.asked:
        with shared.lock:
            if not shared.asked:
                when = os.environ.get("AMBER_NATIVE_KERNELS", "")
                shared.due = None if when == "0" else \
                    time.perf_counter() + (0 if when == "now" else 10)
                shared.asked = True
    if shared.due is not None:
        start_build(shared)
    return shared.ready


def after_fork() -> None:
    """In a forked child: keep the parent's built parts (the compiled code came along), or
    start from a fresh state, to build them as a process of its own (the parent's build thread
    did not come along, and its lock may be held)."""
    shared = sys.modules.get(PARTS)
    if shared is None or getattr(shared, "ask", None) is not ask_for_parts:
        return
    if shared.ready is None:
        sys.modules[PARTS] = parts_state()
    else:  # NOTE: GNU OpenMP ends a child that starts a team its parent had: no splits
        shared.pid, shared.lock = os.getpid(), threading.Lock()
        shared.ready = types.SimpleNamespace(**{**vars(shared.ready), "team": 0})


def start_build(shared: Any) -> None:
    """Start building the native parts on a thread of their own once `shared.due` is past."""
    if time.perf_counter() >= (shared.due or 0.0):
        with shared.lock:
            if shared.due is None:
                return
            shared.due = None
        threading.Thread(target=build_or_warn, args=(shared,), name="amber-native-parts",
                         daemon=True).start()


def build_or_warn(shared: Any) -> None:
    """`build_native_parts`, a failure kept in `shared.failed` and said once as a warning (the
    kernels keep their NumPy parts: the same numbers, slower). Calls running meanwhile get the
    interpreter lock back every 0.5 ms, not every 5 (ops/background.py)."""
    try:
        with yielding_often():
            build_native_parts(shared)
    except Exception:  # NOTE: on a background thread: nobody else would see it
        import warnings
        failure = sys.exc_info()[1]
        shared.failed = f"{type(failure).__name__}: {failure}"
        warnings.warn(f"amber: convolutions keep their NumPy parts: the native parts could "
                      f"not be built ({shared.failed.splitlines()[0]})", RuntimeWarning)


def build_now() -> Any:
    """Build the native parts at once (for benchmarks and tests) and wait for them; the parts,
    or None where they cannot be built here."""
    ask_for_parts()
    shared = sys.modules[PARTS]
    if shared.due is not None:
        shared.due = 0.0
        ask_for_parts()
    for thread in threading.enumerate():
        if thread.name == "amber-native-parts":
            thread.join()
    return shared.ready


def build_native_parts(shared: Any) -> None:
    """Compile the native parts and publish them as `shared.ready`; leave it None where Numba,
    NumPy's OpenBLAS (its `cblas_sgemm`) or the C library's `memcpy` is not found."""
    import ctypes
    import importlib.util
    if importlib.util.find_spec("numba") is None:
        return
    sgemm = cblas_gemm("s")
    try:
        memcpy = ctypes.CDLL(None).memcpy
    except (OSError, AttributeError, TypeError):
        return
    if sgemm is None:
        return
    memcpy.restype, memcpy.argtypes = ctypes.c_int64, [ctypes.c_int64] * 3
    with NUMBA_IMPORT_LOCK:  # NOTE: the loop tier may be importing it on its own thread
        import numba

    @numba.njit(nogil=True)
    def windows_across(to, apart, line, ow, kw, c, sx, dx):
        """The windows of one padded row at `line` (an address), pixel ox's KW*C floats to
        `to + ox * apart` floats: one copy a pixel at dilation 1 across, one a tap else."""
        for ox in range(ow):
            if dx == 1:
                memcpy(to + 4 * ox * apart, line + 4 * ox * sx * c, 4 * kw * c)
            else:
                for kx in range(kw):
                    memcpy(to + 4 * (ox * apart + kx * c), line + 4 * (ox * sx + kx * dx) * c,
                           4 * c)

    @numba.njit(nogil=True)
    def fill_block(x, i, b, block, top, left):
        """Images i..i+b of `x` (rows contiguous across) into the interior of `block`."""
        h, w, c = x.shape[1], x.shape[2], x.shape[3]
        for k in range(b):
            for y in range(h):
                memcpy(block[k, top + y, left].ctypes.data, x[i + k, y].ctypes.data, 4 * w * c)

    @numba.njit(nogil=True)
    def add_into(to, values):
        """`to += values`, element by element in C order (as NumPy adds two arrays)."""
        flat, more = to.reshape(to.size), values.reshape(values.size)
        for e in range(more.size):
            flat[e] += more[e]

    @numba.njit(nogil=True)
    def add_bias(flat, at, rows, o, bias):
        """`bias[:o]` added to each of the `rows` rows of `o` floats from `flat[at]` (the
        kernel may pass its bias widened, `wide_bias`: repeats of the first `o`)."""
        for r in range(rows):
            for j in range(o):
                flat[at + r * o + j] += bias[j]

    @numba.njit("void(float32[:, :, :, :], float32[:, :, ::1], float32[::1], boolean, "
                "float32[:, :, :, ::1], int64, int64, int64, int64[::1])", nogil=True)
    def row_taps(x, matrices, bias, biased, out, start, stop, step, geometry):
        """`nhwc_row_taps`' images start..stop into `out` (see there); `geometry`: (sy, sx,
        dy, dx, top, left, height, width) of the zero-bordered block."""
        c = x.shape[3]
        kh, kwc, o = matrices.shape
        oh, ow = out.shape[1], out.shape[2]
        sy, sx, dy, dx, top, left, height, width = geometry
        kw = kwc // c
        runs = oh + (kh - 1) * dy // sy
        per_image = sy * runs * ow * kwc
        count = min(step, stop - start)
        block = np.zeros((count, height, width, c), np.float32)
        taps = np.empty(count * per_image, np.float32)
        product = np.empty(count * oh * ow * o, np.float32)
        pixels = oh * ow
        for i in range(start, stop, step):
            b = min(i + step, stop) - i
            fill_block(x, i, b, block, top, left)
            for k in range(b):  # NOTE: each padded row's windows across, grouped by residue
                for residue in range(sy):
                    for run in range(runs):
                        to = taps.ctypes.data + 4 * (((k * sy + residue) * runs + run) * ow * kwc)
                        windows_across(to, kwc, block[k, run * sy + residue].ctypes.data, ow,
                                       kw, c, sx, dx)
            done = out[i:i + b].reshape(b * pixels * o)
            for ky in range(kh):
                first, residue = divmod(ky * dy, sy)
                for k in range(b):
                    rows = taps.ctypes.data + 4 * (((k * sy + residue) * runs + first) * ow * kwc)
                    into = (done.ctypes.data if ky == 0 else product.ctypes.data) + \
                        4 * k * pixels * o
                    sgemm(101, 111, 111, pixels, o, kwc, np.float32(1.0), rows, kwc,
                          matrices[ky].ctypes.data, o, np.float32(0.0), into, o)
                if ky:
                    add_into(done, product[:b * pixels * o])
            if biased:
                add_bias(done, 0, b * pixels, o, bias)

    @numba.njit(nogil=True)
    def window_rows(block, b, first, last, rows, geometry, ow):
        """Output rows first..last of images 0..b of the zero-bordered `block` as window rows
        [b * (last - first) * ow, KH*KW*C] at `rows` (an address), in the order of
        `nhwc_windows(...)[:, first:last].reshape(-1, K)`; `geometry`: (kh, kw, sy, sx, dy,
        dx, ...)."""
        c = block.shape[3]
        kh, kw, sy, sx, dy, dx = geometry[0], geometry[1], geometry[2], geometry[3], \
            geometry[4], geometry[5]
        k, count = kh * kw * c, last - first
        for i in range(b):
            for oy in range(first, last):
                for ky in range(kh):
                    to = rows + 4 * (((i * count + oy - first) * ow) * k + ky * kw * c)
                    windows_across(to, k, block[i, oy * sy + ky * dy].ctypes.data, ow, kw, c,
                                   sx, dx)

    @numba.njit(nogil=True)
    def rows_buffers(x, start, stop, step, geometry, oh, ow, k):
        """A part's zero-bordered block (holding its one image already, for N = 1) and window
        rows buffer."""
        n, c = x.shape[0], x.shape[3]
        count = 1 if n == 1 else min(step, stop - start)
        block = np.zeros((count, geometry[8], geometry[9], c), np.float32)
        rows = np.empty(count * (step if n == 1 else oh) * ow * k, np.float32)
        if n == 1:
            fill_block(x, 0, 1, block, geometry[6], geometry[7])
        return block, rows

    @numba.njit(nogil=True)
    def block_rows(x, block, rows, i, stop, step, geometry, oh, ow):
        """The window rows of the block at `i` (for N = 1: of the image's output rows from i)
        into `rows`; (images, first output row, last)."""
        if x.shape[0] == 1:
            b, first, last = 1, i, min(i + step, stop)
        else:
            b, first, last = min(i + step, stop) - i, 0, oh
            fill_block(x, i, b, block, geometry[6], geometry[7])
        window_rows(block, b, first, last, rows.ctypes.data, geometry, ow)
        return b, first, last

    @numba.njit("void(float32[:, :, :, :], float32[:, ::1], float32[::1], boolean, "
                "float32[:, :, :, ::1], int64, int64, int64, int64[::1])", nogil=True)
    def rows_forward(x, matrix, bias, biased, out, start, stop, step, geometry):
        """`nhwc_rows`' images start..stop (`step` images a block) into `out` [N, OH, OW, O]
        (pixel pairs: OW halved, O doubled): window rows @ `matrix`, then the bias. One image
        (N = 1): its output rows start..stop, in bands of `step` rows. `geometry`: (kh, kw,
        sy, sx, dy, dx, top, left, height, width) of the zero-bordered block."""
        n = x.shape[0]
        oh, ow, o = out.shape[1], out.shape[2], out.shape[3]
        k = matrix.shape[0]
        block, rows = rows_buffers(x, start, stop, step, geometry, oh, ow, k)
        for i in range(start, stop, step):
            b, first, last = block_rows(x, block, rows, i, stop, step, geometry, oh, ow)
            m, at = b * (last - first) * ow, (first * ow * o) if n == 1 else i * oh * ow * o
            sgemm(101, 111, 111, m, o, k, np.float32(1.0), rows.ctypes.data, k,
                  matrix.ctypes.data, o, np.float32(0.0), out.ctypes.data + 4 * at, o)
            if biased:
                add_bias(out.reshape(n * oh * ow * o), at, m, o, bias)

    @numba.njit("void(float32[:, :, :, :], float32[:, :, :, ::1], float32[:, ::1], "
                "float32[:, :, ::1], boolean, int64, int64, int64, int64[::1])", nogil=True)
    def rows_grad_weight(x, g, out, kept, keep, start, stop, step, geometry):
        """`conv2d_nhwc_grad_weight`'s images start..stop (`step` a block; one image: its
        output rows in bands of `step`): each block's window rows.T @ its adjoint pixels
        [pixels, O], added to `out` [K, O] in order, or (`keep`) kept in `kept` [blocks, K, O]
        for the caller to add after the first part."""
        n = x.shape[0]
        oh, ow, o = g.shape[1], g.shape[2], g.shape[3]
        k = out.shape[0]
        block, rows = rows_buffers(x, start, stop, step, geometry, oh, ow, k)
        product = np.empty((k, o), np.float32)
        for j, i in enumerate(range(start, stop, step)):
            b, first, last = block_rows(x, block, rows, i, stop, step, geometry, oh, ow)
            into = kept[j] if keep else product
            pixels = g.ctypes.data + 4 * ((first * ow * o) if n == 1 else i * oh * ow * o)
            sgemm(101, 112, 111, k, o, b * (last - first) * ow, np.float32(1.0),
                  rows.ctypes.data, k, pixels, o, np.float32(0.0), into.ctypes.data, o)
            if not keep:
                add_into(out, product)

    @numba.njit(nogil=True)
    def columns(images, i, b, block, cols, geometry, oh, ow):
        """`im2col` of NCHW images i..i+b (rows contiguous across) into `cols` [b, C*KH*KW,
        OH*OW], through the zero-bordered `block` [b, C, height, width]; `geometry`: (kh, kw,
        sy, sx, dy, dx, top, left, ...)."""
        c, h, w = images.shape[1], images.shape[2], images.shape[3]
        kh, kw, sy, sx, dy, dx, top, left = geometry[0], geometry[1], geometry[2], \
            geometry[3], geometry[4], geometry[5], geometry[6], geometry[7]
        for k in range(b):
            for ch in range(c):
                for y in range(h):
                    memcpy(block[k, ch, top + y, left:].ctypes.data,
                           images[i + k, ch, y].ctypes.data, 4 * w)
        for k in range(b):
            for ch in range(c):
                for ky in range(kh):
                    for kx in range(kw):
                        to = cols[k, (ch * kh + ky) * kw + kx]
                        for oy in range(oh):
                            line = block[k, ch, oy * sy + ky * dy]
                            if sx == 1:
                                memcpy(to[oy * ow:].ctypes.data, line[kx * dx:].ctypes.data,
                                       4 * ow)
                            else:
                                for ox in range(ow):
                                    to[oy * ow + ox] = line[ox * sx + kx * dx]

    @numba.njit(nogil=True)
    def columns_buffers(images, k, start, stop, step, geometry):
        """A part's zero-bordered NCHW block and columns [images, K, OH*OW]."""
        count = min(step, stop - start)
        return (np.zeros((count, images.shape[1], geometry[10], geometry[11]), np.float32),
                np.empty((count, k, geometry[8] * geometry[9]), np.float32))

    @numba.njit("void(float32[:, :, :, :], float32[:, ::1], float32[::1], boolean, "
                "float32[:, :, ::1], int64, int64, int64, int64[::1])", nogil=True)
    def columns_forward(images, matrix, bias, biased, out, start, stop, step, geometry):
        """`nhwc_columns`' images start..stop of NCHW `images` into `out` [N, OH*OW, O]:
        per image, its columns.T @ `matrix` [K, O], then the bias; `geometry` as `columns`',
        then (oh, ow, height, width)."""
        o, k, oh, ow = out.shape[2], matrix.shape[0], geometry[8], geometry[9]
        pixels = oh * ow
        block, cols = columns_buffers(images, k, start, stop, step, geometry)
        for i in range(start, stop, step):
            b = min(i + step, stop) - i
            columns(images, i, b, block, cols, geometry, oh, ow)
            for n in range(b):
                sgemm(101, 112, 111, pixels, o, k, np.float32(1.0), cols[n].ctypes.data,
                      pixels, matrix.ctypes.data, o, np.float32(0.0), out[i + n].ctypes.data, o)
                if biased:
                    add_bias(out[i + n].reshape(pixels * o), 0, pixels, o, bias)

    @numba.njit("void(float32[:, :, :, :], float32[:, :, ::1], float32[:, ::1], "
                "float32[:, :, ::1], boolean, int64, int64, int64, int64[::1])", nogil=True)
    def columns_grad_weight(images, rows, out, kept, keep, start, stop, step, geometry):
        """`nhwc_columns_grad_weight`'s images start..stop: per block, the sum over its images
        (in order) of columns [K, pixels] @ adjoint rows [pixels, O], added to `out` or kept in
        `kept` as `rows_grad_weight` does; `geometry` as `columns_forward`'s."""
        o, k, oh, ow = rows.shape[2], out.shape[0], geometry[8], geometry[9]
        pixels = oh * ow
        block, cols = columns_buffers(images, k, start, stop, step, geometry)
        products = np.empty((len(block), k, o), np.float32)
        for j, i in enumerate(range(start, stop, step)):
            b = min(i + step, stop) - i
            columns(images, i, b, block, cols, geometry, oh, ow)
            for n in range(b):
                sgemm(101, 111, 111, k, o, pixels, np.float32(1.0), cols[n].ctypes.data,
                      pixels, rows[i + n].ctypes.data, o, np.float32(0.0),
                      products[n].ctypes.data, o)
            into = kept[j] if keep else products[0]
            if keep:
                into[:, :] = products[0]
            for n in range(1, b):  # NOTE: the sum over axis 0, as NumPy adds it: in order
                add_into(into, products[n])
            if not keep:
                add_into(out, into)

    @numba.njit("void(float32[:, :, :, :], float32[:, :, :, ::1], float32[:, :, ::1], "
                "float32[:, :, ::1], boolean, int64, int64, int64[::1])", nogil=True)
    def row_taps_grad_weight(x, g, out, kept, keep, start, stop, geometry):
        """`nhwc_row_taps_grad_weight`'s images start..stop (stride 1 down): per image and
        band of output rows, its row windows copied once, then for each kernel row ky the
        shifted rows.T @ the adjoint's pixels, added to `out[ky]` [KW*C, O], or (`keep`) kept
        in order in `kept`; `geometry`: (sx, dy, dx, top, left, height, width, band)."""
        h, w, c = x.shape[1], x.shape[2], x.shape[3]
        oh, ow, o = g.shape[1], g.shape[2], g.shape[3]
        kh, kwc = out.shape[0], out.shape[1]
        sx, dy, dx, top, left, height, width, band = geometry[0], geometry[1], geometry[2], \
            geometry[3], geometry[4], geometry[5], geometry[6], geometry[7]
        kw, reach = kwc // c, (kh - 1) * dy
        image = np.zeros((height, width, c), np.float32)
        taps = np.empty((min(band, oh) + reach) * ow * kwc, np.float32)
        product = np.empty((kwc, o), np.float32)
        j = 0
        for i in range(start, stop):
            for y in range(h):
                memcpy(image[top + y, left].ctypes.data, x[i, y].ctypes.data, 4 * w * c)
            for first in range(0, oh, band):
                count = min(first + band, oh) - first
                for row in range(count + reach):
                    windows_across(taps.ctypes.data + 4 * row * ow * kwc, kwc,
                                   image[first + row].ctypes.data, ow, kw, c, sx, dx)
                pixels = g.ctypes.data + 4 * ((i * oh + first) * ow * o)
                for ky in range(kh):
                    into = kept[j] if keep else product
                    sgemm(101, 112, 111, kwc, o, count * ow, np.float32(1.0),
                          taps.ctypes.data + 4 * ky * dy * ow * kwc, kwc, pixels, o,
                          np.float32(0.0), into.ctypes.data, o)
                    if keep:
                        j += 1
                    else:
                        add_into(out[ky], product)

    @numba.njit("void(float32[:, :, :, :], float32[:, :, ::1], int64[:, ::1], "
                "float32[:, :, :, :, ::1], int64, int64, int64, int64[::1])", nogil=True)
    def phase_rows(g, matrices, phases, out, start, stop, step, geometry):
        """`nhwc_phase_rows`' images start..stop into `out` [N, rows, SY, runs, SX*C]: the
        adjoint in a zero border, window rows of all kernel rows, then per row phase py its
        taps' columns (`phases[py]`: first tap, taps, gap; no taps: zero rows) @
        `matrices[py]`, copied into the phase's rows; `geometry`: (reach, groups, rows,
        runs, adjoint rows and pixels read)."""
        o, sy, width = g.shape[3], out.shape[2], out.shape[4]
        reach, groups, rows_y, runs_x, oh, ow = geometry[0], geometry[1], geometry[2], \
            geometry[3], geometry[4], geometry[5]
        line = (reach + 1) * groups * o
        count = min(step, stop - start)
        block = np.zeros((count, reach + rows_y, groups - 1 + runs_x, o), np.float32)
        rows = np.empty(count * rows_y * runs_x * line, np.float32)
        spread = 0  # NOTE: a copy of the taps only where some phase's are not adjacent
        for py in range(sy):
            if phases[py, 1] > 1 and phases[py, 2] > 1:
                spread = count * rows_y * runs_x * line
        gathered = np.empty(spread, np.float32)
        product = np.empty(count * rows_y * runs_x * width, np.float32)
        for i in range(start, stop, step):
            b = min(i + step, stop) - i
            for k in range(b):
                for y in range(oh):
                    memcpy(block[k, reach + y, groups - 1].ctypes.data, g[i + k, y].ctypes.data,
                           4 * ow * o)
            for k in range(b):
                for y in range(rows_y):
                    for x in range(runs_x):
                        at = rows.ctypes.data + 4 * ((k * rows_y + y) * runs_x + x) * line
                        for t in range(reach + 1):
                            memcpy(at + 4 * t * groups * o, block[k, y + t, x].ctypes.data,
                                   4 * groups * o)
            m = b * rows_y * runs_x
            for py in range(sy):
                first, taps, gap = phases[py, 0], phases[py, 1], phases[py, 2]
                if taps == 0:
                    for k in range(b):
                        for y in range(rows_y):
                            out[i + k, y, py] = 0
                    continue
                k_dim = taps * groups * o
                if gap == 1 or taps == 1:  # NOTE: a view of the rows, as NumPy's reshape
                    a, lda = rows.ctypes.data + 4 * first * groups * o, line
                else:  # NOTE: NumPy's reshape copies these taps out first
                    for r in range(m):
                        for t in range(taps):
                            memcpy(gathered.ctypes.data + 4 * (r * k_dim + t * groups * o),
                                   rows.ctypes.data + 4 * (r * line + (first + t * gap) *
                                                           groups * o), 4 * groups * o)
                    a, lda = gathered.ctypes.data, k_dim
                sgemm(101, 111, 111, m, width, k_dim, np.float32(1.0), a, lda,
                      matrices[py].ctypes.data, width, np.float32(0.0), product.ctypes.data,
                      width)
                for k in range(b):
                    for y in range(rows_y):
                        memcpy(out[i + k, y, py].ctypes.data,
                               product.ctypes.data + 4 * (k * rows_y + y) * runs_x * width,
                               4 * runs_x * width)

    @numba.njit("void(float32[:, :, :, :], float32[:, ::1], float32[::1], boolean, "
                "float32[:, :, :, ::1], int64[::1], int64, int64[::1], int64)", parallel=True,
                nogil=True)
    def rows_forward_split(x, matrix, bias, biased, out, bounds, step, geometry, team):
        """`rows_forward` of each range bounds[p]..bounds[p + 1], on `team` threads."""
        was = numba.get_num_threads()
        numba.set_num_threads(team)
        for p in numba.prange(len(bounds) - 1):
            rows_forward(x, matrix, bias, biased, out, bounds[p], bounds[p + 1], step, geometry)
        numba.set_num_threads(was)

    @numba.njit("void(float32[:, :, :, :], float32[:, :, :, ::1], float32[:, ::1], "
                "float32[:, :, ::1], int64[::1], int64[::1], int64, int64[::1], int64)",
                parallel=True, nogil=True)
    def rows_grad_weight_split(x, g, out, kept, offsets, bounds, step, geometry, team):
        """`rows_grad_weight` of each range on `team` threads: the first adds into `out`,
        range p > 0 keeps its blocks' products in kept[offsets[p]:offsets[p + 1]]."""
        was = numba.get_num_threads()
        numba.set_num_threads(team)
        for p in numba.prange(len(bounds) - 1):
            rows_grad_weight(x, g, out, kept[offsets[p]:offsets[p + 1]], p > 0, bounds[p],
                             bounds[p + 1], step, geometry)
        numba.set_num_threads(was)

    shared.ready = types.SimpleNamespace(team=team_size(numba),
                                         row_taps=row_taps, phase_rows=phase_rows,
                                         rows_forward_split=rows_forward_split,
                                         rows_grad_weight_split=rows_grad_weight_split,
                                         row_taps_grad_weight=row_taps_grad_weight,
                                         rows_forward=rows_forward,
                                         rows_grad_weight=rows_grad_weight,
                                         columns_forward=columns_forward,
                                         columns_grad_weight=columns_grad_weight)


def team_size(numba: Any) -> int:
    """The threads of the splits' team (`NUMBA_NUM_THREADS`), or 0 where Numba runs parallel
    code on its workqueue layer (no OpenMP or TBB found): it wakes its threads for each call
    (64-279 us a call measured, against 4 us for OpenMP's spinning team) and aborts the
    process when two threads call at once."""
    from numba.np.ufunc import parallel
    parallel._launch_threads()  # NOTE: picks the layer; the splits' compile did it already
    layer = numba.threading_layer()
    return numba.config.NUMBA_NUM_THREADS if layer in ("omp", "tbb") else 0


sys.modules.setdefault(PARTS, parts_state())  # NOTE: before any kernel asks (`native_parts`)
if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=after_fork)

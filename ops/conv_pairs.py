"""A channels-last convolution's two gradients at once, on two threads: the input gradient and
the weight gradient read the same adjoint but neither needs the other, so a pool worker runs
one while the calling thread runs the other, whose parts the worker then shares where it is
the longer (`ops/parallel.run_parts`, BLAS at one thread meanwhile).
Every GEMM is one thread's, so both results equal `num_threads=1`'s bit for bit. The
`pair_gradients` pass (graph/passes/pair_gradients.py) makes this op where both gradients are
big enough to pay for the hand-off; users never write it.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from .batch_rules import LOOP_ACROSS
from .conv_nhwc import (_KERNEL_HELPERS, _NHWC, _grad_input_infer, _grad_weight_infer,
                        conv2d_nhwc_grad_input_kernel, conv2d_nhwc_grad_weight_kernel, pixel_pairs)
from .elementwise import helper_call
from .nn_kernels import add_windows
from .opdef import NO_GRAD, REQUIRED, OpDef
from .parallel import hold_blas, kernel_threads, worker_pool
from .types import TupleType, Type


def conv2d_nhwc_grads_kernel(x: np.ndarray, g: np.ndarray, weight: np.ndarray, *,
                             x_shape: tuple[int, ...], w_shape: tuple[int, ...],
                             stride: tuple[int, int] = (1, 1),
                             padding: tuple[int, int, int, int] = (0, 0, 0, 0),
                             pad_mode: str = "valid", dilation: tuple[int, int] = (1, 1),
                             groups: int = 1, threads: int = 1,
                             native: bool = False) -> tuple[np.ndarray, np.ndarray]:
    """(conv2d_nhwc_grad_input(g, weight), conv2d_nhwc_grad_weight(x, g)), the longer on the
    calling thread at `threads` with its blocks cut into up to 4 parts a thread
    (`kernel_threads().local.fine`), the other on a pool worker at one thread: the longer's
    `run_parts` helper waits in the pool behind the other, then takes the parts the caller
    has not reached, and the two threads end together. A strided convolution's input
    gradient is the longer (`nhwc_phase_rows`: 4/3 of the multiply-adds, 1.3-1.5x the
    weight gradient on the ResNet). At stride 1 the weight gradient is, by 1.05-1.3x: shared
    where it takes pixel pairs (at most 16 output channels; one product a block for the
    caller to add after: 0.94-1.01x the pair on the 16-channel layer, six runs); row taps
    keep one an image and kernel row (sharing them ran 1.02-1.14x slower on the 32-channel
    layer) and the 64-channel layer gained nothing (0.99-1.03x): there both run at one
    thread.
    Every part starts at one thread's block bounds: the same GEMMs, the same bits. Where
    amber cannot hold BLAS at one thread (`blas_controls`), one after the other."""
    geometry = {"stride": stride, "padding": padding, "pad_mode": pad_mode,
                "dilation": dilation, "groups": groups, "native": native}
    shared = kernel_threads() if threads > 1 else None
    if shared is None or shared.blas is None:  # NOTE: two GEMMs on BLAS's own threads
        threads = 1  # would wait for each other
    if threads == 1:
        return (conv2d_nhwc_grad_input_kernel(g, weight, x_shape=x_shape, **geometry),
                conv2d_nhwc_grad_weight_kernel(x, g, w_shape=w_shape, **geometry))
    ow, o = g.shape[2:]
    by_weights = max(stride) == 1 and pixel_pairs(o, stride[1], ow, w_shape[3])  # NOTE: as
    # conv2d_nhwc_grad_weight_kernel takes them
    share = by_weights or max(stride) > 1
    local = getattr(shared, "local", None) if share else None

    def gradient(which: str, threads: int) -> np.ndarray:
        if which == "weights":
            return conv2d_nhwc_grad_weight_kernel(x, g, w_shape=w_shape, threads=threads,
                                                  **geometry)
        return conv2d_nhwc_grad_input_kernel(g, weight, x_shape=x_shape, threads=threads,
                                             **geometry)
    longer, shorter = ("weights", "input") if by_weights else ("input", "weights")
    hold_blas(shared, 1)
    try:
        other = worker_pool(shared, threads - 1).submit(gradient, shorter, 1)
        try:
            if local is not None:
                local.fine = True
            try:
                mine = gradient(longer, threads if share else 1)
            finally:
                if local is not None:
                    local.fine = False
        finally:
            other.exception()  # NOTE: waits; the caller's error, if any, wins
        return (other.result(), mine) if by_weights else (mine, other.result())
    finally:
        hold_blas(shared, -1)


def _grads_infer(x: Type, g: Type, weight: Type, **attrs: Any) -> TupleType:
    attrs = dict(attrs)
    x_shape, w_shape = attrs.pop("x_shape"), attrs.pop("w_shape")
    return TupleType((_grad_input_infer(g, weight, x_shape=x_shape, **attrs),
                      _grad_weight_infer(x, g, w_shape=w_shape, **attrs)))


_PAIR = {"x_shape": REQUIRED, "w_shape": REQUIRED, **_NHWC}

conv2d_nhwc_grads = OpDef(
    "conv2d_nhwc_grads", ("x", "g", "weight"), kernel=conv2d_nhwc_grads_kernel,
    infer=_grads_infer, attrs=_PAIR, emit=helper_call(conv2d_nhwc_grads_kernel, "x, g, weight",
                                                      _PAIR),
    helpers=(*_KERNEL_HELPERS, add_windows, conv2d_nhwc_grad_input_kernel,
             conv2d_nhwc_grad_weight_kernel, conv2d_nhwc_grads_kernel),
    fresh=True, fresh_items=True, grad=NO_GRAD, batch=LOOP_ACROSS)
"""(input gradient, weight gradient) of conv2d_nhwc at once, on two threads at `threads=2`
(in turn at 1); the attributes are both gradients' (`x_shape` NCHW, `w_shape` OIHW). No
gradient (`NO_GRAD`): only the compile passes make it, after differentiation."""

OPS = (conv2d_nhwc_grads,)

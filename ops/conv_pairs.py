"""A channels-last convolution's two gradients at once, one on each of two threads: the input
gradient and the weight gradient read the same adjoint but neither needs the other, so the
calling thread runs one while a pool worker runs the other (`ops/parallel.run_parts`, BLAS at
one thread meanwhile). Each runs exactly the one-thread kernel, so both results equal
`num_threads=1`'s bit for bit. The `pair_gradients` pass (graph/passes/pair_gradients.py) makes
this op where both gradients are big enough to pay for the hand-off; users never write it.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from .batch_rules import LOOP_ACROSS
from .conv_nhwc import (_KERNEL_HELPERS, _NHWC, _grad_input_infer, _grad_weight_infer,
                        conv2d_nhwc_grad_input_kernel, conv2d_nhwc_grad_weight_kernel)
from .elementwise import helper_call
from .nn_kernels import add_windows
from .opdef import NO_GRAD, REQUIRED, OpDef
from .parallel import kernel_threads, run_parts
from .types import TupleType, Type


def conv2d_nhwc_grads_kernel(x: np.ndarray, g: np.ndarray, weight: np.ndarray, *,
                             x_shape: tuple[int, ...], w_shape: tuple[int, ...],
                             stride: tuple[int, int] = (1, 1),
                             padding: tuple[int, int, int, int] = (0, 0, 0, 0),
                             pad_mode: str = "valid", dilation: tuple[int, int] = (1, 1),
                             groups: int = 1, threads: int = 1) -> tuple[np.ndarray, np.ndarray]:
    """(conv2d_nhwc_grad_input(g, weight), conv2d_nhwc_grad_weight(x, g)): the input gradient
    on the calling thread, the weight gradient on a pool worker, each as one thread computes
    it. Where amber cannot hold BLAS at one thread (`blas_controls`), one after the other."""
    geometry = {"stride": stride, "padding": padding, "pad_mode": pad_mode,
                "dilation": dilation, "groups": groups}

    def gradient(which: int, _: int) -> np.ndarray:
        if which == 0:
            return conv2d_nhwc_grad_input_kernel(g, weight, x_shape=x_shape, **geometry)
        return conv2d_nhwc_grad_weight_kernel(x, g, w_shape=w_shape, **geometry)
    if threads > 1 and kernel_threads().blas is None:
        threads = 1  # NOTE: two GEMMs on BLAS's own threads would wait for each other
    dx, dw = run_parts(gradient, [(0, 1), (1, 2)], threads)
    return dx, dw


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

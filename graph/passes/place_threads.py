"""Threads where they pay: a convolution keeps the `threads` the layout pass gave it only when
its static shapes give its kernel work for more than one part (`ops/parallel.splits`, the rule
`thread_ranges` and, for a `native` kernel, `team_bounds` apply at run time).

A kernel that would not split is then spelled as one thread's, and a function none of whose
kernels split is the one-thread function under one `@one_blas_thread` hold (codegen keeps it:
BLAS's own threads made the batch-1 ResNet forward 5.6 ms instead of 0.8) and no pool. At
batch 1 the ResNet's convolutions are below the pool's threshold; a `native` one of 2M
multiply-adds or more keeps its threads for Numba's team. A symbolic dimension keeps `threads` (the
kernel decides per call).
"""
from __future__ import annotations

from math import prod

from ...ops import conv_nhwc, window
from ...ops.parallel import splits
from ..ir import Graph, Node
from ..rewriter import Rewriter
from ..types import Tensor

_ADJOINT_INPUT = {window.conv2d_grad_input: 0, conv_nhwc.conv2d_nhwc_grad_input: 0,
                  window.conv2d_grad_weight: 1, conv_nhwc.conv2d_nhwc_grad_weight: 1}
"""Which input of a convolution gradient is the adjoint: shaped as the forward's output."""


def run(graph: Graph, rw: Rewriter) -> bool:
    """`threads` back to 1 on each convolution whose static work does not split."""
    for node in graph.walk():
        threads = node.attrs.get("threads", 1)
        work = conv_work(node)
        if threads > 1 and work is not None and \
                not splits(work, threads, node.attrs.get("native", False)):
            rw.set_attr(node, "threads", 1)
    return rw.changed


def conv_work(node: Node) -> int | None:
    """The multiply-adds of the forward convolution behind `node` (its output pixels times
    the weight's C*KH*KW, which each of the three kernels does once), or None when a
    dimension is symbolic or `node` is no convolution."""
    if node.op in _ADJOINT_INPUT:
        pixels = node.inputs[_ADJOINT_INPUT[node.op]].type
    elif node.op in (window.conv2d, conv_nhwc.conv2d_nhwc):
        pixels = node.output.type
    else:
        return None
    weight = node.attrs["w_shape"] if "w_shape" in node.attrs else node.inputs[1].type.shape
    shape = (*pixels.shape, *weight[1:]) if isinstance(pixels, Tensor) else (None,)
    if not all(isinstance(d, int) for d in shape):
        return None
    return prod(shape)

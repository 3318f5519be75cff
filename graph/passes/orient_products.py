"""Orient products: a 2-D matmul whose result has more columns than rows is computed turned
around, `a @ b` as the transpose of `b.T @ a.T` (`matmul(turned=True)`).

The two GEMMs do the same multiply-adds, but OpenBLAS runs the one whose result has more rows
than columns faster: a dense layer's `x @ W.T` over a batch of 64 ([64, 784] @ [784, 256])
took 0.82x the time as `W @ x.T`, 0.46-0.73x at 1024 features and batch 16-64, and nothing
lost from the other side of the rule (0.97-1.03x at square and tall results; NumPy 2.4's
OpenBLAS on AVX-512, one thread; 0.86-0.93x with NumPy 1.26's). The turned result is the
transpose of a C-ordered array, Fortran-ordered itself, so the next layer's product reads it
as a plain matrix and turns too: an MLP's whole chain of layers, forward and backward, runs
feature-major, as hand-written NumPy keeping activations [features, batch] would, while every
value keeps its shape. NumPy's elementwise ops and reductions take either order at the same
speed; a kept buffer is made Fortran-ordered (`OpDef.into_order`).

The sums are the same multiply-adds in the same order along the inner dimension, and came out
bit for bit NumPy's on the shapes measured, but BLAS promises no such thing across the two
kernels: the results agree to float precision. So, like `scale_operand`, only products of
static 2-D float operands change, at the graph's top level (loop bodies stay as batching and
Numba kernels see them), from `MIN_WORK` multiply-adds. A product the function returns as it
is keeps its C order (a model's logits); values computed from a turned one may come out
Fortran-ordered, as NumPy's own ufuncs give them (order "K"), and the layout pass's NCHW views
of NHWC results are not C-ordered either: memory order is not part of a value. A bias-free
`dense` (what `fuse` leaves of a biased one) is such a product.
"""
from __future__ import annotations

from ...ops import nn as nn_ops
from ...ops import shaping
from ..analysis import static_float_matrices
from ..builder import InsertPoint
from ..ir import Block, Graph, Node
from ..rewriter import Rewriter

MIN_WORK = 1 << 16
"""Multiply-adds from which a product turns (below it the two GEMMs take the same time)."""


def run(graph: Graph, rw: Rewriter) -> bool:
    """Turn each top-level 2-D product with more result columns than rows."""
    for node in list(graph.body.nodes):
        if node.op is nn_ops.matmul and not node.attrs["turned"] and _pays(node):
            _turn(node, [node.attrs["transpose_a"], node.attrs["transpose_b"]], rw)
        elif node.op is nn_ops.dense and not node.attrs["has_bias"] and _pays(node):
            _turn(node, [False, True], rw)
    return rw.changed


def _turn(node: Node, flags: list[bool], rw: Rewriter) -> None:
    """Replace `node` (operands transposed as `flags` say) by its turned matmul; an operand
    that is a transpose becomes its input with the flag flipped (`W.T` read as W, not W.T.T),
    and the transpose goes when nothing else reads it."""
    inputs, read = list(node.inputs), list(node.inputs)
    for k, value in enumerate(inputs):
        source = value.producer
        if source is not None and source.op is shaping.transpose and \
                source.attrs["perm"] in (None, (1, 0), [1, 0]):
            inputs[k], flags[k] = source.inputs[0], not flags[k]
    b = rw.builder(InsertPoint.before(node), node.loc)
    turned = b.op("matmul", *inputs, name=node.output.name, transpose_a=flags[0],
                  transpose_b=flags[1], turned=True)
    rw.replace(node, [turned])
    for value in read:
        if value.producer is not None and value.producer.op is shaping.transpose and \
                not value.uses:
            rw.erase(value.producer)


def _pays(node: Node) -> bool:
    """Static 2-D float operands of one dtype, a result [M, N] with N > M of at least
    `MIN_WORK` multiply-adds, that no block returns."""
    if not static_float_matrices((*node.inputs, node.output)):
        return False
    m, n = node.output.type.shape
    inner = node.inputs[0].type.shape[0 if node.attrs.get("transpose_a") else 1]
    return m < n and m * n * inner >= MIN_WORK and \
        not any(isinstance(use.user, Block) for use in node.output.uses)

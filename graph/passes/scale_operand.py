"""Scale the smaller operand: `s * (a @ b)` with a scalar `s` becomes `(s * a) @ b` (or
`a @ (s * b)`) when that operand has fewer elements than the product.

A train step is where this pays: SGD's `lr * grad` scales a weight gradient `dY.T @ X` of the
weight's size, but `lr * dY` is a batch of activations, often ten times smaller (784x256 against
64x256 for an MLP's first layer), and the product then comes out already scaled, ready for the
in-place `param -= ...`.

Reassociating the scalar changes rounding (the results agree to float precision, not bit for
bit), so, unlike `simplify`, this pass only runs where the product is used by that one multiply
and the sizes are static.
"""
from __future__ import annotations

import numpy as np

from ...ops import binary
from ...ops import nn as nn_ops
from ..analysis import defined_before
from ..builder import InsertPoint
from ..ir import Graph, Node, Value
from ..rewriter import Rewriter
from ..types import Scalar, Tensor


def run(graph: Graph, rw: Rewriter) -> bool:
    """Move scalar factors of single-use matmul products onto their smaller operand."""
    for node in list(graph.walk()):
        if node.parent is None or node.op is not binary.mul:
            continue
        for k in (0, 1):
            scalar, product = node.inputs[k], node.inputs[1 - k]
            if _rewrite(node, scalar, product, rw):
                break
    return rw.changed


def _is_scalar(value: Value, dtype: np.dtype) -> bool:
    """A Python number, or a 0-d array of `dtype` (so the product's dtype does not change)."""
    t = value.type
    if isinstance(t, Scalar):
        return t.kind in (int, float) and t.kind is not bool
    return isinstance(t, Tensor) and t.rank == 0 and t.dtype == dtype


def _size(value: Value) -> int | None:
    t = value.type
    if not isinstance(t, Tensor) or not t.is_static:
        return None
    return int(np.prod(t.shape, dtype=np.int64))


def _rewrite(node: Node, scalar: Value, product: Value, rw: Rewriter) -> bool:
    matmul = product.producer
    out = node.output.type
    if matmul is None or matmul.op is not nn_ops.matmul or matmul.parent is not node.parent \
            or len(product.uses) != 1 or not isinstance(out, Tensor) or out != product.type \
            or not _is_scalar(scalar, out.dtype):
        return False
    sizes = [_size(v) for v in matmul.inputs]
    total = _size(product)
    if total is None or None in sizes or any(v.type.dtype != out.dtype
                                             for v in matmul.inputs):
        return False
    k = int(np.argmin(sizes))
    if sizes[k] >= total or not defined_before(scalar, matmul):
        return False
    b = rw.builder(InsertPoint.before(matmul), node.loc)
    scaled = b.op("mul", scalar, matmul.inputs[k], name=matmul.inputs[k].name)
    inputs = list(matmul.inputs)
    inputs[k] = scaled
    new = b.op("matmul", *inputs, name=node.output.name, **matmul.attrs)
    rw.replace(node, [new])
    rw.erase(matmul)
    return True

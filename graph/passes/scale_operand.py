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
from ..builder import InsertPoint
from ..ir import Block, Graph, Node, Value
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
    if sizes[k] >= total or not _defined_before(scalar, matmul):
        return False
    b = rw.builder(InsertPoint.before(matmul), node.loc)
    scaled = b.op("mul", scalar, matmul.inputs[k], name=matmul.inputs[k].name)
    inputs = list(matmul.inputs)
    inputs[k] = scaled
    new = b.op("matmul", *inputs, name=node.output.name, **matmul.attrs)
    rw.replace(node, [new])
    rw.erase(matmul)
    return True


def _defined_before(value: Value, node: Node) -> bool:
    """`value` exists where `node` runs: the product is computed where it was (moving it later
    could carry a read of a parameter past an in-place update of it)."""
    producer = value.producer
    if producer is None:  # a graph input or a block parameter of an enclosing region
        return True
    block = node.parent
    return producer.parent is block and block.index(producer) < block.index(node) or \
        producer.parent is not block and _encloses(producer.parent, node)


def _encloses(block: Block, node: Node) -> bool:
    """`node` sits in `block` or in a region nested in it."""
    parent = node.parent
    while isinstance(parent, Block):
        if parent is block:
            return True
        owner = parent.parent
        parent = owner.parent if isinstance(owner, Node) else None
    return False

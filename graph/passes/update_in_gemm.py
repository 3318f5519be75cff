"""Update in the GEMM: an optimizer's `param -= a @ b` (`assign_sub` of a matmul product)
becomes `assign_sub_product(param, a, b)`, one BLAS call that adds the product into the
parameter (ops/blas.py), so the weight-sized product is never written to memory and read back.

After `scale_operand` has moved SGD's rate onto the product's smaller operand, a train step's
weight update is exactly this: `param -= (rate * dY).T @ X`. Measured on an MLP's 256x784 first
layer, one call takes 256 us where the product and the subtraction take 321 us; on a 10x128
layer the call's fixed cost loses (36 us against 29), hence `MIN_SIZE`.

Only at the graph's top level (a loop body's update stays as it is: Numba kernels have no
spelling for the call), for 2-D float operands of the parameter's dtype and shape, a product
used by nothing else, and operands nothing may write between the product and the update: the
product then runs where the update was. The numbers are NumPy's bit for bit up to BLAS's block
of the inner dimension (the batch, in a train step), to float precision beyond (ops/blas.py).
"""
from __future__ import annotations

import numpy as np

from ...ops import nn as nn_ops
from ..analysis import static_float_matrices
from ..builder import InsertPoint
from ..ir import Graph, Node, Value
from ..rewriter import Rewriter

MIN_SIZE = 1 << 14
"""Product elements from which the one call pays (between the two layers measured above)."""


def run(graph: Graph, rw: Rewriter) -> bool:
    """Fold each top-level `param -= a @ b` into one GEMM call."""
    for node in list(graph.walk()):
        if node.op is nn_ops.assign_sub and node.parent is not None and \
                isinstance(node.parent.parent, Graph):
            _rewrite(node, rw)
    return rw.changed


def _rewrite(node: Node, rw: Rewriter) -> bool:
    param, value = node.inputs
    matmul = value.producer
    if matmul is None or matmul.op is not nn_ops.matmul or matmul.parent is not node.parent \
            or len(value.uses) != 1 or not _fits(param, *matmul.inputs) \
            or value.type != param.type or not _undisturbed(matmul, node):
        return False
    b = rw.builder(InsertPoint.before(node), node.loc)
    update = b.op("assign_sub_product", param, *matmul.inputs, name=node.output.name,
                  transpose_a=matmul.attrs["transpose_a"],
                  transpose_b=matmul.attrs["transpose_b"])
    _take_order(node, update.producer)
    rw.replace(node, [update])
    rw.erase(matmul)
    return True


def _fits(param: Value, *operands: Value) -> bool:
    """2-D static float tensors of one dtype, the product at least `MIN_SIZE` elements."""
    return static_float_matrices((param, *operands)) and \
        int(np.prod(param.type.shape)) >= MIN_SIZE


def _undisturbed(matmul: Node, update: Node) -> bool:
    """Nothing between the product and the update may change what the product reads: no
    region, no effect that could write an array, except in-place writes to the graph's inputs
    (other parameters' updates) where both operands are fresh arrays (made by this call, so no
    input, nor a view of one, shares their memory)."""
    block = update.parent
    fresh = all(v.producer is not None and not v.producer.is_region and v.producer.op.fresh
                for v in matmul.inputs)
    for node in block.nodes[block.index(matmul) + 1:block.index(update)]:
        if node.is_region:
            return False
        if not node.op.effects or node.op.reads_only:
            continue
        written = node.op.writes
        if written is None or not fresh or not _graph_input(node.inputs[written]):
            return False
    return True


def _graph_input(value: Value) -> bool:
    return value.producer is None and isinstance(getattr(value.owner, "parent", None), Graph)


def _take_order(old: Node, new: Node) -> None:
    """`new` takes `old`'s place among the effects ordered by control edges."""
    new.control_inputs = list(old.control_inputs)
    for node in old.parent.nodes:
        if old in node.control_inputs:
            node.control_inputs = [new if c is old else c for c in node.control_inputs]

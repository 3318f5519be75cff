"""Fusion: arrange work so that bias adds and activations run in place on the buffer of the
matmul or pooling that produced it (`plan_memory` then marks them in place).

- `dense(x, w, b)` becomes `t = x @ w.T` then `t + b`, so the bias add, and an activation after
  it, reuse the matmul's buffer instead of allocating one array each.
- `max_pool2d(relu(x))` becomes `relu(max_pool2d(x))`: max commutes with the monotone relu (a
  padded window still holds a real element), and relu then runs on the smaller pooled tensor.
Both rewrites give bit-identical results; each applies only where the intermediate has no
other reader. Assumes max-pool padding never fills a whole window (as the op requires).
"""
from __future__ import annotations

import numpy as np

from ...ops import elementwise
from ...ops import nn as nnops
from ...ops import window
from ..builder import InsertPoint
from ..ir import Graph, Node
from ..rewriter import Rewriter
from ..types import Tensor


def run(graph: Graph, rw: Rewriter) -> bool:
    """Split biased dense layers and pool before relu; True if anything was rewritten."""
    for node in list(graph.walk()):
        if node.parent is None or node.is_region:
            continue
        if node.op is nnops.dense:
            _split_dense(node, rw)
        elif node.op is window.max_pool2d:
            _pool_before_relu(node, rw)
    return rw.changed


def _split_dense(node: Node, rw: Rewriter) -> None:
    out = node.output.type
    if len(node.inputs) != 3 or not (isinstance(out, Tensor) and out.is_symbolic and out.rank):
        return
    x, weight, bias = node.inputs
    if np.result_type(x.type.dtype, weight.type.dtype) != out.dtype:
        return  # NOTE: a bias of another dtype: the add could not reuse the product's buffer
    b = rw.builder(InsertPoint.before(node), node.loc)
    product = b.op("matmul", x, b.op("transpose", weight, perm=None), name=node.output.name)
    rw.replace(node, [b.op("add", product, bias, name=node.output.name)])


def _pool_before_relu(node: Node, rw: Rewriter) -> None:
    relu = node.inputs[0].producer
    if relu is None or relu.op is not elementwise.relu or len(relu.output.uses) != 1:
        return
    b = rw.builder(InsertPoint.before(node), node.loc)
    pooled = b.op(node.op, relu.inputs[0], name=node.output.name, **node.attrs)
    rw.replace(node, [b.op("relu", pooled, name=node.output.name)])
    rw.erase(relu)

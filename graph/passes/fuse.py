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

from ..ir import Graph, InsertPoint, Node, Rewriter
from ..types import Tensor


def run(graph: Graph, rw: Rewriter) -> bool:
    """Split biased dense layers and pool before relu; True if anything was rewritten."""
    changed = False  # NOTE: not rw.changed, which a turned-down dense split also sets
    for node in list(graph.walk()):
        if node.parent is None:
            continue
        if node.name == "dense":
            changed |= _split_dense(node, rw)
        elif node.name == "max_pool2d":
            changed |= _pool_before_relu(node, rw)
    return changed


def _split_dense(node: Node, rw: Rewriter) -> bool:
    out = node.output.type
    if len(node.inputs) != 3 or not (isinstance(out, Tensor) and out.is_static and out.rank):
        return False
    x, weight, bias = node.inputs
    b = rw.builder(InsertPoint.before(node), node.loc)
    product = b.op("matmul", x, b.op("transpose", weight, perm=None), name=node.output.name)
    if product.type != out:  # a bias of another dtype: the add could not reuse the buffer
        for dead in (product.producer, product.producer.inputs[1].producer):
            rw.erase(dead)
        return False
    rw.replace(node, [b.op("add", product, bias, name=node.output.name)])
    return True


def _pool_before_relu(node: Node, rw: Rewriter) -> bool:
    relu = node.inputs[0].producer
    if relu is None or relu.name != "relu" or len(relu.output.uses) != 1:
        return False
    b = rw.builder(InsertPoint.before(node), node.loc)
    pooled = b.op(node.op, relu.inputs[0], name=node.output.name, **node.attrs)
    rw.replace(node, [b.op("relu", pooled, name=node.output.name)])
    rw.erase(relu)
    return True

"""Place gradients: a weight gradient computed by a matmul (`dY.T @ X`) that goes only into the
step's all-reduce (`all_reduce_grads`) is written straight into its slot of the reduction's
flat buffer (`np.matmul(..., out=slot)`), instead of into a new array the all-reduce then
copies in; and the mean's 1/N, which the copy applied, multiplies the product's smaller operand
(a batch of activations, not the weight-sized product) on the way.

In a data-parallel train step that saves a pass over every weight gradient per rank: the copy
is weight-sized work that does not shrink with the rank's share of the batch.

Only for a graph with one all-reduce (the buffer is per thread and per size, so a second
reduction in the same step could overwrite a slot before its reduction reads it) whose
gradients all have static shapes, and only for products used by nothing but that reduction's
tuple. Scaling the operand instead of the product changes rounding (to float precision, as
`scale_operand` does); every rank still reduces the same way, so ranks stay bit-identical.
"""
from __future__ import annotations

import numpy as np

from ...ops import collective
from ...ops import nn as nn_ops
from ...ops import python as pyops
from ..builder import InsertPoint
from ..ir import Graph, Node, Value
from ..rewriter import Rewriter
from ..types import Tensor


def run(graph: Graph, rw: Rewriter) -> bool:
    """Write the matmul gradients of the graph's one all-reduce into its flat buffer."""
    reductions = [n for n in graph.walk() if n.op is collective.all_reduce_grads]
    if len(reductions) != 1:
        return False
    reduction = reductions[0]
    items = reduction.inputs[0].producer
    if items is None or items.op is not pyops.make_tuple or items.parent is not \
            reduction.parent or len(reduction.inputs[0].uses) != 1 or \
            reduction.attrs.get("placed"):
        return False
    layout = _layout(items.inputs)
    if layout is None:
        return False
    placed = []
    for k, value in enumerate(items.inputs):
        if _place(value, reduction, layout[k], rw):
            placed.append(k)
    if placed:
        rw.set_attr(reduction, "placed", tuple(placed))
    return rw.changed


def _layout(values: list[Value]) -> list[tuple[str, int, int]] | None:
    """(dtype, offset, total) of each value in the flat buffers `flat_buffers` fills: one per
    dtype, values in order; None unless every shape is static."""
    if not all(isinstance(v.type, Tensor) and v.type.is_static for v in values):
        return None
    sizes = [int(np.prod(v.type.shape, dtype=np.int64)) for v in values]
    totals: dict[str, int] = {}
    offsets = []
    for value, size in zip(values, sizes):
        dtype = np.dtype(value.type.dtype).name
        offsets.append(totals.get(dtype, 0))
        totals[dtype] = offsets[-1] + size
    return [(np.dtype(v.type.dtype).name, offset, totals[np.dtype(v.type.dtype).name])
            for v, offset in zip(values, offsets)]


def _place(value: Value, reduction: Node, slot: tuple[str, int, int], rw: Rewriter) -> bool:
    """Rewrite the matmul making `value` into a `placed_matmul` writing into `slot`."""
    matmul = value.producer
    out = value.type
    if matmul is None or matmul.op is not nn_ops.matmul or matmul.parent is not \
            reduction.parent or len(value.uses) != 1 or \
            not np.issubdtype(out.dtype, np.floating) or \
            any(not isinstance(v.type, Tensor) or not v.type.is_static
                or v.type.dtype != out.dtype for v in matmul.inputs):
        return False
    sizes = [int(np.prod(v.type.shape, dtype=np.int64)) for v in matmul.inputs]
    dtype, offset, total = slot
    b = rw.builder(InsertPoint.before(matmul), matmul.loc)
    new = b.op("placed_matmul", *matmul.inputs, name=value.name, **matmul.attrs,
               scaled=int(np.argmin(sizes)), mean=reduction.attrs.get("mean", True),
               degree=reduction.attrs.get("degree"), dtype=dtype, offset=offset, total=total,
               shape=tuple(out.shape))
    rw.replace(matmul, [new])
    return True

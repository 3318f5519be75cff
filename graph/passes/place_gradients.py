"""Place gradients: a weight gradient computed by a matmul (`dY.T @ X`) that goes only into the
step's all-reduce (`all_reduce_grads`) is written straight into its slot of the reduction's
flat buffer (`np.matmul(..., out=slot)`), instead of into a new array the all-reduce then
copies in; and the mean's 1/N, which the copy applied, multiplies the product's smaller operand
(a batch of activations, not the weight-sized product) on the way.

In a data-parallel train step that saves a pass over every weight gradient per rank: the copy
is weight-sized work that does not shrink with the rank's share of the batch.

A reduced gradient used only by `s * grad` (SGD's `rate * grad`), with `s` a scalar every rank
holds the same (`_same_on_every_rank`: constants and parameters that the step only ever sets
to such values), takes `s` before the reduction instead: the sum of `s * g` over the ranks is
`s` times their sum, and `s` then lands on the product's smaller operand too, so the update
is one weight-sized pass (`param -= grad`) instead of two.

Only for a graph with one all-reduce (the buffer is per thread and per size, so a second
reduction in the same step could overwrite a slot before its reduction reads it) whose
gradients all have static shapes, and only for products used by nothing but that reduction's
tuple. Scaling the operand instead of the product changes rounding (to float precision, as
`scale_operand` does); every rank still reduces the same way, so ranks stay bit-identical.
"""
from __future__ import annotations

from collections.abc import Iterator

import numpy as np

from ...ops import binary, collective
from ...ops import nn as nn_ops
from ...ops import python as pyops
from ..builder import InsertPoint
from ..ir import IF, Block, Graph, Node, Value
from ..rewriter import Rewriter
from ..types import Scalar, Tensor


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
    _take_scalars_in(graph, reduction, items, rw)
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
    new = b.op("placed_matmul", *matmul.inputs, name=value.name,
               transpose_a=matmul.attrs["transpose_a"], transpose_b=matmul.attrs["transpose_b"],
               scaled=int(np.argmin(sizes)), mean=reduction.attrs.get("mean", True),
               degree=reduction.attrs.get("degree"), dtype=dtype, offset=offset, total=total,
               shape=tuple(out.shape))
    rw.replace(matmul, [new])
    return True


def _take_scalars_in(graph: Graph, reduction: Node, items: Node, rw: Rewriter) -> None:
    """Move each `s * reduced[k]` (its only use) before the reduction, onto gradient k."""
    same = None
    for use in list(reduction.output.uses):
        getter = use.user
        if not isinstance(getter, Node) or getter.op is not pyops.tuple_getitem or \
                len(getter.output.uses) != 1:
            continue
        scaling = getter.output.uses[0].user
        if not isinstance(scaling, Node) or scaling.op is not binary.mul or \
                scaling.parent is not reduction.parent:
            continue
        k = getter.attrs["index"]
        scalar = scaling.inputs[1] if scaling.inputs[0] is getter.output else scaling.inputs[0]
        gradient = items.inputs[k]
        if scalar is getter.output or not _is_scalar(scalar, gradient.type.dtype) or \
                scaling.output.type != getter.output.type or not _before(scalar, items):
            continue
        same = _same_on_every_rank(graph) if same is None else same
        if scalar not in same:
            continue
        items.set_input(k, _scaled(gradient, scalar, items, rw))
        rw.replace(scaling, [getter.output])


def _is_scalar(value: Value, dtype: np.dtype) -> bool:
    """A Python float or int, or a 0-d array of `dtype` (the product's dtype stays)."""
    t = value.type
    if isinstance(t, Scalar):
        return t.kind in (int, float)
    return isinstance(t, Tensor) and t.rank == 0 and t.dtype == dtype


def _before(value: Value, node: Node) -> bool:
    """`value` is a graph input or made before `node` in its block."""
    producer = value.producer
    if producer is None:
        return value.owner is node.parent and node.parent.parent is not None and \
            isinstance(node.parent.parent, Graph)
    return producer.parent is node.parent and \
        node.parent.index(producer) < node.parent.index(node)


def _scaled(gradient: Value, scalar: Value, items: Node, rw: Rewriter) -> Value:
    """`scalar * gradient`: on the smaller operand of a single-use matmul made after
    `scalar`, else a multiply just before the reduction's tuple."""
    matmul = gradient.producer
    if matmul is not None and matmul.op is nn_ops.matmul and len(gradient.uses) == 1 and \
            matmul.parent is items.parent and _before(scalar, matmul) and \
            all(isinstance(v.type, Tensor) and v.type.is_static
                and v.type.dtype == gradient.type.dtype for v in matmul.inputs):
        sizes = [int(np.prod(v.type.shape, dtype=np.int64)) for v in matmul.inputs]
        k = int(np.argmin(sizes))
        b = rw.builder(InsertPoint.before(matmul), matmul.loc)
        inputs = list(matmul.inputs)
        inputs[k] = b.op("mul", scalar, inputs[k], name=inputs[k].name)
        new = b.op("matmul", *inputs, name=gradient.name, **matmul.attrs)
        rw.replace(matmul, [new])
        return new
    b = rw.builder(InsertPoint.before(items), items.loc)
    return b.op("mul", scalar, gradient, name=gradient.name)


def _same_on_every_rank(graph: Graph) -> set[Value]:
    """Values of the top-level block every rank of a data-parallel job holds alike: constants,
    the results of collectives, parameters every write of which (anywhere in the graph) stores
    such a value (the first-step broadcast does; a BatchNorm's moving statistics, updated
    from the rank's own rows, do not), and effect-free ops of these. A write through a value
    derived from parameters counts against all of them."""
    params = set(graph.inputs[:len(graph.param_paths)])
    while True:
        same = set(params)
        for node in _post_order(graph.body):
            if node.op in (collective.all_reduce_grads, collective.broadcast_params):
                same.update(node.outputs)
            elif node.op == IF and node.inputs[0] in same:  # an If's result from alike arms
                same.update(out for k, out in enumerate(node.outputs)
                            if all(block.results[k] in same for block in node.blocks))
            elif not node.is_region and (not node.op.effects or node.op.writes is not None) \
                    and all(v in same for v in node.inputs):
                same.update(node.outputs)  # NOTE: a write's result is its target, now alike
        varying = set()
        for node in graph.walk():
            if node.is_region or node.op.writes is None:
                continue
            target = node.inputs[node.op.writes]
            if not all(v in same for i, v in enumerate(node.inputs) if i != node.op.writes):
                varying |= _parameters_behind(target, params)
        if not varying:
            return same
        params -= varying


def _post_order(block: Block) -> Iterator[Node]:
    """The nodes of `block` in order, each region after the nodes nested in it."""
    for node in block.nodes:
        for inner in node.blocks:
            yield from _post_order(inner)
        yield node


def _parameters_behind(value: Value, params: set[Value]) -> set[Value]:
    """The parameters `value` is, or may be a view of (every one its producers read)."""
    found, stack, seen = set(), [value], set()
    while stack:
        v = stack.pop()
        if v in seen:
            continue
        seen.add(v)
        if v in params:
            found.add(v)
        producer = v.producer
        if producer is not None and producer.is_region:  # the arms' (or body's) results
            stack.extend(block.results[v.index] for block in producer.blocks
                         if v.index < len(block.results))
            stack.extend(producer.inputs if producer.op != IF else ())
        elif producer is not None:
            stack.extend(producer.inputs)
    return found

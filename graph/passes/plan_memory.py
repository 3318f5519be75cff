"""Memory planning: an elementwise op writes its result into the buffer of an input that dies
at it, so chains like `relu(x @ w.T + b) * s` run on one buffer (`np.maximum(t, 0, out=t)`).

Marks `node.attrs[INPLACE_ATTR] = k` (codegen emits the op's `inplace` spelling with `out` =
input k and gives the result input k's name). Input k qualifies only when it is a private
buffer: made in the same block by an op that allocates a fresh array (or by an in-place op over
one), with the result's exact shape (static, or symbolic: one symbol is one size in a call)
and dtype (rank >= 1: 0-d results are NumPy scalars), read afterwards by nobody, and never
seen by anything that could keep it: no block
result, tuple, list, view-making op, effect that stores it, graph input, parameter or constant.
Every call allocates its own buffers, so compiled functions stay re-entrant and thread-safe.
Assumes ops' `fresh` and `inplace` declarations are true, and that no pass runs after it.
"""
from __future__ import annotations

from ..ir import INPLACE_ATTR, Block, Graph, Node, Value
from ..rewriter import Rewriter
from ..types import Tensor


def run(graph: Graph, rw: Rewriter) -> bool:
    """Mark elementwise ops that may write into a dying input's buffer; True if any."""
    for block in _blocks(graph.body):
        for position, node in enumerate(block.nodes):
            if node.is_region or node.op.inplace is None or INPLACE_ATTR in node.attrs:
                continue
            k = _reusable_input(node, block, position)
            if k is not None:
                rw.set_attr(node, INPLACE_ATTR, k)
    return rw.changed


def _blocks(block: Block):
    yield block
    for node in block.nodes:
        for inner in node.blocks:
            yield from _blocks(inner)


def _reusable_input(node: Node, block: Block, position: int) -> int | None:
    out = node.output.type
    if not (isinstance(out, Tensor) and out.is_symbolic and out.rank >= 1):
        return None
    for k, value in enumerate(node.inputs):
        if value.type == out and _private(value, block) and _dies_at(value, node, block, position):
            return k
    return None


def _private(value: Value, block: Block) -> bool:
    producer = value.producer
    return producer is not None and producer.parent is block and not producer.is_region and \
        (producer.op.fresh or INPLACE_ATTR in producer.attrs)


def _dies_at(value: Value, node: Node, block: Block, position: int) -> bool:
    """Every use of `value` is `node` itself or a harmless, fresh-result op before it."""
    for use in value.uses:
        user = use.user
        if not isinstance(user, Node) or user.is_region:
            return False
        if user is node:
            continue
        if user.parent is not block or block.index(user) > position:
            return False
        if not (user.op.fresh or user.op.reads_only):  # NOTE: readers keep nothing
            return False
    return True

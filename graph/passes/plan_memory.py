"""Memory planning: an elementwise op writes its result into the buffer of an input that dies
at it, so chains like `relu(x @ w.T + b) * s` run on one buffer (`np.maximum(t, 0, out=t)`).

Marks `node.attrs[INPLACE_ATTR] = k` (codegen emits the op's `inplace` spelling with `out` =
input k and gives the result input k's name; k is any input of an elementwise op, the first of
any other, such as an adjoint accumulated at an index). Input k qualifies only when it is a
private buffer: made in the same block by an op that allocates a fresh array (or by an in-place
op over one), or a loop's carried value whose buffer is private from start to end (see
`_private_carry`: a gradient accumulated over a reverse loop), with the result's exact shape
(static, or symbolic: one symbol is one size in a call) and dtype (rank >= 1: 0-d results are
NumPy scalars), read afterwards by nobody, and never seen by anything that could keep it: no
block result, tuple, list, view-making op, effect that stores it, graph input, parameter or
constant. Every call allocates its own buffers, so compiled functions stay re-entrant and
thread-safe. Assumes ops' `fresh` and `inplace` declarations are true, and that no pass runs
after it.
"""
from __future__ import annotations

from ..ir import FOR, INPLACE_ATTR, WHILE, Block, Graph, Node, Value
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
    candidates = node.inputs if node.op.elementwise else node.inputs[:1]
    for k, value in enumerate(candidates):
        if value.type == out and _private(value, block) and _dies_at(value, node, block, position):
            return k
    return None


def _private(value: Value, block: Block) -> bool:
    producer = value.producer
    if producer is None:
        return _private_carry(value, block)
    return producer.parent is block and not producer.is_region and \
        (producer.op.fresh or INPLACE_ATTR in producer.attrs)


def _private_carry(param: Value, block: Block) -> bool:
    """`param` is a loop body's carried value whose buffer nobody else holds in any iteration:
    the loop starts it from a private buffer that nothing but the loop reads from then on, and
    the body hands on a private buffer of its own that nothing keeps (not a tape, a tuple or a
    region) or the parameter itself; a While's condition only reads it. (Writing into it then
    changes no value anyone could still see: `dx[t] += g` over the whole reverse loop.)"""
    loop = block.owner_node
    if param.owner is not block or loop is None or loop.op not in (WHILE, FOR) \
            or block is not loop.body:
        return False
    slot = loop.slot_of(param)
    if slot is None:  # NOTE: a For's index
        return False
    init, following = loop.incoming(slot)
    outer = loop.parent
    if not (_private(init, outer) and _feeds_only(init, loop, outer)):
        return False
    # NOTE: another carried parameter handed on (`a, b = b, a`) is not private: its buffer
    # goes round the loop under two names
    if following is not param and not (following.producer is not None and
                                       _private(following, block) and
                                       _handed_on_only(following, block)):
        return False
    if loop.op == WHILE:
        return all(_harmless(use.user, loop.cond) for use in loop.cond.params[slot].uses)
    return True


def _feeds_only(init: Value, loop: Node, outer: Block) -> bool:
    """`init` enters `loop` once, and is otherwise only read, before it."""
    entries = 0
    for use in init.uses:
        if use.user is loop:
            entries += 1
        elif not (_harmless(use.user, outer) and outer.index(use.user) < outer.index(loop)):
            return False
    return entries == 1


def _handed_on_only(value: Value, body: Block) -> bool:
    """`value` is the body's result once (the next iteration's carried value) and otherwise
    only read."""
    results = 0
    for use in value.uses:
        if use.user is body:
            results += 1
        elif not _harmless(use.user, body):
            return False
    return results == 1


def _harmless(user: Node | Block, block: Block) -> bool:
    """An op directly in `block` that reads a value without keeping it."""
    return isinstance(user, Node) and not user.is_region and user.parent is block and \
        (user.op.fresh or user.op.reads_only)


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

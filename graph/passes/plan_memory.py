"""Memory planning: an elementwise op writes its result into the buffer of an input that dies
at it, so chains like `relu(x @ w.T + b) * s` run on one buffer (`np.maximum(t, 0, out=t)`),
in straight-line code and in loop bodies alike.

Marks `node.attrs[INPLACE_ATTR] = k` (codegen emits the op's `inplace` spelling with `out` =
input k and gives the result input k's name; k is any input of an elementwise op, the first of
any other, such as an adjoint accumulated at an index). Input k qualifies only when it is a
private buffer: made by an op that allocates a fresh array (or by an in-place op over one), an
If result every arm of which makes one, or a loop's carried value whose buffer is private from
start to end (see `_private_carry`); with the result's exact shape (static, or symbolic: one
symbol is one size in a call) and dtype (rank >= 1: 0-d results are NumPy scalars); read
afterwards by nobody, and never seen by anything that could keep it: no block result, tuple,
list, view-making op, effect that stores it, graph input, parameter or constant. The op may sit
in arms of Ifs below the block that made its input (reads in the other arm never run with it),
never in a loop below it (the next iteration reads the input again).
An item taken once out of a tuple of distinct fresh arrays (`OpDef.fresh_items`: the reduced
gradients) is a private buffer too.

A For loop that surely runs (constant bounds, one trip or more) and would write in place over
a carried value starting from a buffer it may not overwrite (the caller's argument) starts
from a copy of it instead: one copy per call instead of a new array per iteration.

Every call allocates its own buffers, so compiled functions stay re-entrant and thread-safe
(codegen then keeps the large top-level temporaries across calls, per running call:
codegen/buffers.py).
Assumes ops' `fresh` and `inplace` declarations are true, and that no pass runs after it.
"""
from __future__ import annotations

from ..analysis import buffer_maker, defined_before, row_put
from ..builder import InsertPoint
from ..ir import FOR, IF, INPLACE_ATTR, INTO_ROW_ATTR, WHILE, Block, Graph, Node, Value
from ..rewriter import Rewriter
from ..types import Tensor
from ...ops import python as pyops
from ...ops import stacks


def run(graph: Graph, rw: Rewriter) -> bool:
    """Mark elementwise ops that may write into a dying input's buffer; True if any."""
    _mark_rows(graph, rw)
    _mark(graph, rw)
    _mark_appends(graph, rw)
    if _copy_loop_starts(graph, rw):
        _mark(graph, rw)
    _root_rows(graph, rw)
    return rw.changed


def _mark_appends(graph: Graph, rw: Rewriter) -> None:
    """A list appended to and read by nothing else (a loop's tape) is appended as a statement,
    `items.append(x)`, its result sharing the list's variable (the same object)."""
    for node in graph.walk():
        if not node.is_region and node.op in (pyops.list_append, stacks.stack_put) and \
                INPLACE_ATTR not in node.attrs and len(node.inputs[0].uses) == 1:
            rw.set_attr(node, INPLACE_ATTR, 0)


def _mark_rows(graph: Graph, rw: Rewriter) -> None:
    """An elementwise op whose result a loop body writes into a stack's row right after (a
    tape's row, graph/passes/stack_tapes.py) computes into the row instead (`out=`): no copy.
    The stack and the row must exist before the op, and nothing else use that stack value."""
    for put in graph.walk():
        if put.is_region or put.op is not stacks.stack_put:
            continue
        stack, row, value = put.inputs
        made = value.producer
        block = put.parent
        if made is None or made.is_region or made.parent is not block or \
                made.op.inplace is None or not made.op.elementwise or \
                len(stack.uses) != 1 or not defined_before(stack, made) or \
                not defined_before(row, made) or \
                block.owner_node is None or block.owner_node.op not in (WHILE, FOR):
            continue
        t, rows = value.type, stack.type
        if isinstance(t, Tensor) and t.is_symbolic and isinstance(rows, Tensor) and \
                t.shape == rows.shape[1:] and t.dtype == rows.dtype and _only_read(value, put):
            rw.set_attr(made, INTO_ROW_ATTR, True)


def _root_rows(graph: Graph, rw: Rewriter) -> None:
    """Move a row mark up a chain of in-place ops: when the op computing a row could run in
    place over a dying input, it does, and the op that made that buffer (a matmul, or the first
    elementwise op of the chain) computes into the row instead: the whole chain runs there."""
    for last in graph.walk():
        if last.is_region or not last.attrs.get(INTO_ROW_ATTR):
            continue
        put = row_put(last)
        for k, value in enumerate(last.inputs if put is not None else ()):
            root = buffer_maker(value)
            if value.type != last.output.type or not _private(value) or \
                    not _dies_at(value, last) or root is None or root.is_region or \
                    root.parent is not last.parent or not root.op.fresh or \
                    root.op.into_template(root.attrs) is None or \
                    not all(defined_before(v, root) for v in put.inputs[:2]):
                continue
            rw.set_attr(last, INTO_ROW_ATTR, False)
            rw.set_attr(last, INPLACE_ATTR, k)
            rw.set_attr(root, INTO_ROW_ATTR, True)
            break


def _only_read(value: Value, put: Node) -> bool:
    """Besides `put`, only ops that neither write nor keep it read `value`, wherever it flows
    (the next trip's carried value, the loop's result, an If's result): as a view of the row
    it would otherwise write into the stack."""
    seen: set[Value] = set()
    work = [value]
    while work:
        current = work.pop()
        if current in seen:
            continue
        seen.add(current)
        for use in current.uses:
            user = use.user
            if user is put:
                continue
            if isinstance(user, Block):
                region = user.owner_node
                if region is None:
                    continue  # NOTE: returned: the call is over, nothing reads the stack again
                if region.op == IF:
                    work.append(region.outputs[use.index])
                elif region.op in (WHILE, FOR) and user is region.body:
                    work.extend(_carried_on(region, use.index))
                else:
                    return False
            elif user.is_region:
                slot = use.index - (len(user.inputs) - len(user.inits)) \
                    if user.op in (WHILE, FOR) else -1
                if slot < 0:
                    return False
                work.extend(_carried_on(user, slot))
            elif not (user.op.fresh or user.op.reads_only):
                return False
    return True


def _carried_on(loop: Node, slot: int) -> list[Value]:
    """Where a value entering `loop`'s carried `slot` is seen: each block's parameter, the
    loop's result."""
    return [*(loop.carried(block)[slot] for block in loop.blocks), loop.outputs[slot]]


def _mark(graph: Graph, rw: Rewriter) -> None:
    """Mark every node that may run in place, until a round marks nothing more (a mark makes
    its result private, which may free a carried value marked earlier in the walk)."""
    marked = True
    while marked:
        marked = False
        for node in graph.walk():
            if node.is_region or node.op.inplace is None or INPLACE_ATTR in node.attrs or \
                    node.attrs.get(INTO_ROW_ATTR):
                continue
            k = _reusable_input(node)
            if k is not None:
                rw.set_attr(node, INPLACE_ATTR, k)
                marked = True


def _reusable_input(node: Node, assumed: frozenset[Value] = frozenset()) -> int | None:
    out = node.output.type
    if not (isinstance(out, Tensor) and out.is_symbolic and out.rank >= 1):
        return None
    candidates = node.inputs if node.op.elementwise else node.inputs[:1]
    for k, value in enumerate(candidates):
        if value.type == out and _private(value, assumed) and _dies_at(value, node):
            return k
    return None


# -- private buffers ---------------------------------------------------------------------------

def _home(value: Value) -> Block:
    """The block that defines `value`."""
    return value.producer.parent if value.producer is not None else value.owner


def _private(value: Value, assumed: frozenset[Value] = frozenset()) -> bool:
    """`value` is a buffer nobody else holds where it is defined."""
    producer = value.producer
    if producer is None:
        return _private_carry(value, assumed)
    if producer.op == IF:
        return _private_merge(producer, value.index)
    if producer.op is pyops.tuple_getitem:
        return _private_item(value)
    return not producer.is_region and (producer.op.fresh or INPLACE_ATTR in producer.attrs)


def _private_item(item: Value) -> bool:
    """`item` is taken out of a tuple of distinct fresh arrays (`OpDef.fresh_items`: the
    reduced gradients) that is only taken apart, this item once."""
    getter = item.producer
    made = getter.inputs[0]
    maker = made.producer
    if maker is None or maker.is_region or not maker.op.fresh_items:
        return False
    count = len(made.type.elements)
    takes = 0
    for use in made.uses:
        user = use.user
        if not isinstance(user, Node) or user.op is not pyops.tuple_getitem:
            return False  # NOTE: the tuple itself is kept or passed on
        takes += user.attrs["index"] % count == getter.attrs["index"] % count
    return takes == 1


def _private_merge(branch: Node, slot: int) -> bool:
    """Every arm of If `branch` yields into `slot` a private buffer it made itself and
    otherwise only reads (`x = x * 0.5 - 1 if c else x * 0.5 + 1`)."""
    for arm in branch.blocks:
        value = arm.results[slot]
        if _home(value) is not arm or value.producer is None or \
                not (_private(value) and _handed_on_only(value, arm)):
            return False
    return True


def _private_carry(param: Value, assumed: frozenset[Value] = frozenset()) -> bool:
    """`param` is a loop body's carried value whose buffer nobody else holds in any iteration:
    the loop starts it from a private buffer that nothing but the loop reads from then on (or
    it is `assumed` to: a copy will be made), and the body hands on a private buffer of its
    own that nothing keeps (not a tape, a tuple or a region) or the parameter itself; a While's
    condition only reads it. (Writing into it then changes no value anyone could still see:
    `dx[t] += g` over a reverse loop, `x = x * 0.5 - 1` over a forward one.)"""
    block = param.owner
    loop = block.owner_node if isinstance(block, Block) else None
    if loop is None or loop.op not in (WHILE, FOR) or block is not loop.body:
        return False
    slot = loop.slot_of(param)
    if slot is None:  # NOTE: a For's index
        return False
    init, following = loop.incoming(slot)
    if param not in assumed and not (_home(init) is loop.parent and _private(init) and
                                     _feeds_only(init, loop, loop.parent)):
        return False
    if not _hands_on_private(param, following, block):
        return False
    if loop.op == WHILE:
        return all(_harmless(use.user, loop.cond) for use in loop.cond.params[slot].uses)
    return True


def _hands_on_private(param: Value, following: Value, body: Block) -> bool:
    """The body hands `param`'s slot on itself or a private buffer nothing else keeps.
    NOTE: another carried parameter handed on (`a, b = b, a`) is not private: its buffer goes
    round the loop under two names."""
    return following is param or (following.producer is not None and
                                  following.producer.parent is body and
                                  _private(following) and _handed_on_only(following, body))


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
    """`value` is the block's result once (the next iteration's carried value, an If's
    result) and otherwise only read."""
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


# -- dying -------------------------------------------------------------------------------------

def _dies_at(value: Value, node: Node) -> bool:
    """Every use of `value` is `node` itself, a harmless, fresh-result op that runs before it,
    or one in another arm of an If holding `node` (which never runs with it). `node` lies in
    `value`'s block or in arms of Ifs below it; never in a loop below it."""
    anchors = _anchors(node, _home(value))
    if anchors is None:
        return False
    for use in value.uses:
        user = use.user
        if user is node:
            continue
        if not isinstance(user, Node) or user.is_region:
            return False
        block, child = _enclosing(user, anchors)
        anchor = anchors[block]
        if child is anchor:  # NOTE: inside an If on the way to `node`, in its other arm
            continue
        if child is not user or not (user.op.fresh or user.op.reads_only) or \
                block.index(user) > block.index(anchor):
            return False  # NOTE: nested in another region, kept, or read afterwards
    return True


def _anchors(node: Node, home: Block) -> dict[Block, Node] | None:
    """Each block from `node`'s up to `home` -> the node in it that holds `node` (`node`
    itself, then the Ifs around it); None if a loop lies between or `home` is not above."""
    anchors: dict[Block, Node] = {}
    child, block = node, node.parent
    while True:
        anchors[block] = child
        if block is home:
            return anchors
        owner = block.owner_node
        if owner is None or owner.op != IF:
            return None
        child, block = owner, owner.parent


def _enclosing(user: Node, anchors: dict[Block, Node]) -> tuple[Block, Node]:
    """The innermost of `anchors`' blocks holding `user`, and `user`'s ancestor directly in
    it (the user's own home is at or below `anchors`' outermost block, the value's)."""
    child = user
    while child.parent not in anchors:
        child = child.parent.owner_node
    return child.parent, child


# -- private loop starts -----------------------------------------------------------------------

def _copy_loop_starts(graph: Graph, rw: Rewriter) -> bool:
    """Start carried values from a copy where that lets the body run in place over them (see
    the module docstring); True if any copy was made."""
    copied = False
    for loop in [n for n in graph.walk() if n.op == FOR and _surely_runs(n)]:
        for slot, param in enumerate(loop.carried(loop.body)):
            init = loop.inits[slot]
            if _private(init) and _home(init) is loop.parent and \
                    _feeds_only(init, loop, loop.parent):
                continue  # NOTE: already private: marked in place without a copy
            if not isinstance(init.type, Tensor) or not _would_reuse(param):
                continue
            b = rw.builder(InsertPoint.before(loop), loop.loc)
            loop.set_input(len(loop.inputs) - len(loop.inits) + slot,
                           b.op("copy", init, name=loop.outputs[slot].name or init.name))
            copied = True
    return copied


def _surely_runs(loop: Node) -> bool:
    """A For whose constant bounds make it run once or more: its results are then whatever
    the body hands on, never its start (a copy would be seen where the start was returned)."""
    bounds = [v.producer for v in loop.bounds]
    if any(p is None or p.op is not pyops.constant for p in bounds):
        return False
    start, stop, step = (p.attrs["value"] for p in bounds)
    if not all(type(v) is int for v in (start, stop, step)) or step == 0:
        return False
    return len(range(start, stop, step)) >= 1


def _would_reuse(param: Value) -> bool:
    """Some op in the loop body would write in place over `param` if it started private."""
    assumed = frozenset({param})
    if not _private_carry(param, assumed):
        return False
    for use in param.uses:
        user = use.user
        if isinstance(user, Node) and not user.is_region and user.op.inplace is not None \
                and INPLACE_ATTR not in user.attrs:
            k = _reusable_input(user, assumed)
            if k is not None and user.inputs[k] is param:
                return True
    return False

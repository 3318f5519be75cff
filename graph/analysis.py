"""Small facts about values that several passes ask: is it a compile-time constant, is it
defined inside a region, can anyone but pure readers see it."""
from __future__ import annotations

from typing import Any, Sequence

import numpy as np

from ..ops import python as pyops
from ..ops.opdef import NO_GRAD
from ..ops.stacks import stack_put
from .ir import FOR, IF, INPLACE_ATTR, TRY, WHILE, Block, Graph, Node, Value
from .types import ListType, NoneType, Scalar, Tensor, TupleType, Type

NOT_CONSTANT: Any = type("NotConstant", (), {"__repr__": lambda self: "NOT_CONSTANT"})()


def static_float_matrices(values: Sequence[Value]) -> bool:
    """All 2-D tensors of static shape and one dtype, float32 or float64: operands and results
    a single BLAS GEMM takes as they are (`update_in_gemm`, `orient_products`)."""
    types = [v.type for v in values]
    return all(isinstance(t, Tensor) and t.rank == 2 and t.is_static and t.dtype == types[0].dtype
               for t in types) and types[0].dtype in (np.float32, np.float64)


def constant_of(value: Value) -> Any:
    """The compile-time value of `value` (made by a `constant` node), or `NOT_CONSTANT`."""
    node = value.producer
    if node is not None and node.op is pyops.constant:
        return node.attrs["value"]
    return NOT_CONSTANT


def trip_count(loop: Node) -> int | None:
    """How many times a For with constant bounds runs its body (None when not known)."""
    bounds = [constant_of(v) for v in loop.bounds]
    if any(b is NOT_CONSTANT for b in bounds):
        return None
    try:
        return len(range(*bounds))
    except Exception:  # NOTE: non-int or zero-step bounds fail at run time, as Python's range
        return None


def writes_an_array(node: Node) -> bool:
    """An op writing one of its array inputs in place (`x[i] = v`, `assign`)."""
    index = None if node.is_region else node.op.writes
    return index is not None and isinstance(node.inputs[index].type, Tensor)


def within_block(value: Value, block: Block) -> bool:
    """True if `value` is made inside `block` (a parameter of it, or an output of a node in it
    or in one of its nested regions)."""
    owner: Any = value.owner
    while owner is not None:
        if owner is block:
            return True
        owner = owner.parent if isinstance(owner, Node) else owner.owner_node
    return False


def reads_at_any_depth(node: Node) -> set[Value]:
    """Every value `node` reads, at any depth (the results of its nested blocks included)."""
    found: set[Value] = set()
    for n in node.walk():
        found.update(n.inputs)
        for block in n.blocks:
            found.update(block.results)
    return found


def defined_inside(value: Value, region: Node) -> bool:
    """True if `value` is computed within one of `region`'s blocks (at any depth)."""
    block = value.owner.parent if isinstance(value.owner, Node) else value.owner
    while isinstance(block, Block):
        owner = block.owner_node
        if owner is region:
            return True
        if owner is None:
            return False
        block = owner.parent
    return False


def may_raise(node: Node) -> bool:
    """An op that may raise on its typed inputs: a `can_raise` op, arithmetic on Python scalars
    only (`n // 0` raises where NumPy warns), operands whose shapes are known only at run time
    (they may not broadcast)."""
    types = [v.type for v in node.inputs]
    python_only = bool(types) and all(isinstance(t, Scalar) for t in types)
    unknown_shapes = len(types) > 1 and any(isinstance(t, Tensor) and not t.is_static
                                            for t in types)
    return node.op.can_raise or python_only or unknown_shapes


def watched_by_try(node: Node) -> bool:
    """True if `node` lies (at any depth) in the try block of a Try region, where an error it
    raises is observed (caught, or seen by a finally block), so it must stay and stay in order."""
    block = node.parent
    while block is not None and block.owner_node is not None:
        region = block.owner_node
        if region.op == TRY and block is region.try_body:
            return True
        block = region.parent
    return False


def only_read(value: Value, _seen: set[int] | None = None) -> bool:
    """True if nobody can write to `value` or hold on to it after the graph returns: every use
    is an input of a pure, non-region op not marked to write over it (`INPLACE_ATTR`), an
    effect that only reads (`OpDef.reads_only`), a yield into an If output that is itself only
    read, or a loop's carried value (its start or next value) that each of the loop's blocks
    and the loop's output only read; and where a pure op's result may share memory with its
    inputs (a view, a tuple: the op is not `fresh`), that result is only read in turn."""
    seen = set() if _seen is None else _seen
    if id(value) in seen:  # NOTE: a carried value met again around its loop: checked there
        return True
    seen.add(id(value))
    for use in value.uses:
        user = use.user
        if isinstance(user, Block):
            region = user.owner_node
            if region is None:
                return False
            if region.op == IF:
                if not only_read(region.outputs[use.index], seen):
                    return False
            elif region.op not in (FOR, WHILE) or user is not region.body or \
                    not _carried_only_read(region, use.index, seen):
                return False
        elif user.is_region:
            if user.op not in (FOR, WHILE):
                return False
            slot = use.index - 3 if user.op == FOR else use.index
            if slot >= 0 and not _carried_only_read(user, slot, seen):
                return False
        elif (user.effectful and not user.op.reads_only) or \
                user.attrs.get(INPLACE_ATTR) == use.index:
            return False
        elif not user.effectful and not user.op.fresh and \
                not all(only_read(o, seen) for o in user.outputs if _may_share(o)):
            return False
    return True


def _carried_only_read(loop: Node, slot: int, seen: set[int]) -> bool:
    """Carried slot `slot` of `loop` is only read in each of its blocks and after the loop."""
    return all(only_read(loop.carried(block)[slot], seen) for block in loop.blocks) and \
        only_read(loop.outputs[slot], seen)


def unwritten(value: Value) -> bool:
    """True if nobody can write to or keep any array `value` may share memory with: `only_read`
    for every value of its memory class, found backwards through what may be the same memory
    (an If output's arm results, a loop's initial and next values, the inputs of a view,
    tuple or in-place write). `only_read(value)` alone misses an If whose arms yield one array
    that a later `setitem` writes under another name (issue 29, item 5)."""
    seen: dict[int, Value] = {}
    todo = [value]
    while todo:
        v = todo.pop()
        if id(v) in seen or not _may_share(v):
            continue
        seen[id(v)] = v
        owner = v.owner
        if isinstance(owner, Node):
            if owner.is_region:
                todo.extend(owner.incoming(v.index))
            elif not owner.op.fresh:
                todo.extend(owner.inputs)
        elif isinstance(owner, Block):
            loop = owner.owner_node
            if loop is not None and loop.op != IF:
                slot = loop.slot_of(v)
                if slot is not None:
                    todo.extend(loop.incoming(slot))
    return all(only_read(v) for v in seen.values())


def _may_share(value: Value) -> bool:
    """A value that can hold an array: Python scalars and None cannot."""
    return not isinstance(value.type, Scalar | NoneType)


def identity_matters(value: Value) -> bool:
    """True if `value` may be an array someone writes to or keeps (a list, a tuple, a yield, the
    graph's result): then it must stay its own object, not be shared by merging or hoisting."""
    return isinstance(value.type, Tensor) and not only_read(value)


# -- for autodiff: what carries an adjoint, what depends on the differentiated values, what
# -- an in-place write may change

def differentiable(t: Type) -> bool:
    """True for types that carry an adjoint: floating tensors and Python floats, and tuples or
    lists holding them."""
    if isinstance(t, Tensor):
        return t.dtype.kind in "fc"
    if isinstance(t, Scalar):
        return t.kind is float
    if isinstance(t, TupleType):
        return any(differentiable(e) for e in t.elements)
    if isinstance(t, ListType):
        return differentiable(t.element)
    return False


def active_values(nodes: Sequence[Node], wrt: Sequence[Value]) -> set[Value]:
    """The differentiable values that `nodes` (and the nodes nested in them) compute from
    `wrt` through ops with gradient rules: only these receive adjoints (so no tape records what
    no gradient needs)."""
    active = {v for v in wrt if differentiable(v.type)}
    every = [n for top in nodes for n in top.walk()]
    changed = True
    while changed:  # NOTE: loops feed values back to their start; a few rounds settle them
        changed = False
        for node in every:
            found = _newly_active(node, active)
            if found:
                active |= found
                changed = True
    return active


def _newly_active(node: Node, active: set[Value]) -> set[Value]:
    if not node.is_region:
        if node.op.grad is NO_GRAD or not any(v in active for v in node.inputs):
            return set()
        return {v for v in node.outputs if differentiable(v.type) and v not in active}
    found = set()
    for k, out in enumerate(node.outputs):
        if out not in active and differentiable(out.type) and \
                any(v in active for v in node.incoming(k)):
            found.add(out)
        if node.op not in (IF, TRY):
            for block in node.blocks:
                param = node.carried(block)[k]
                if param not in active and differentiable(param.type) and \
                        any(v in active for v in node.incoming(k)):
                    found.add(param)
    return found


def written_roots(graph: Graph) -> set[Value]:
    """The allocations some op writes in place (`x[i] = v`, `assign`, `list.append`)."""
    written: set[Value] = set()
    for node in graph.walk():
        if not node.is_region and node.op.writes is not None:
            written |= memory_roots(node.inputs[node.op.writes])
    return written


def memory_roots(value: Value, seen: set[Value] | None = None) -> set[Value]:
    """The allocations (fresh results, graph inputs) `value` may share memory with."""
    seen = set() if seen is None else seen
    if value in seen or isinstance(value.type, Scalar):
        return set()
    seen.add(value)
    owner = value.owner
    if isinstance(owner, Block):
        region = owner.owner_node
        if region is None:
            return {value}
        if region.op == FOR and value is region.induction:
            return set()
        slot = region.slot_of(value)
        assert slot is not None
        return set().union(*(memory_roots(v, seen) for v in region.incoming(slot)))
    node = owner
    assert isinstance(node, Node)
    if node.is_region:
        return set().union(*(memory_roots(v, seen) for v in node.incoming(value.index)))
    if node.op.fresh:
        return {value}
    if node.op.same_object:
        return memory_roots(node.inputs[0], seen) | {value}
    return set().union({value}, *(memory_roots(v, seen) for v in node.inputs))


def buffer_maker(value: Value) -> Node | None:
    """The op whose result buffer `value` is: its producer, or for an op marked to run in place
    (`INPLACE_ATTR` k), the maker of its input k's buffer, in the producer's block; None when
    the buffer comes from elsewhere (a parameter, another block)."""
    node = value.producer
    while node is not None and not node.is_region and node.attrs.get(INPLACE_ATTR) is not None:
        source = node.inputs[node.attrs[INPLACE_ATTR]].producer
        if source is None or source.is_region or source.parent is not node.parent:
            return None
        node = source
    return node


def row_put(node: Node) -> Node | None:
    """The `stack_put` whose row `node`'s result buffer ends in, through elementwise ops marked
    to run in place over it, or None."""
    value = node.output
    while True:
        following = None
        for use in value.uses:
            user = use.user
            if not isinstance(user, Node) or user.is_region:
                continue
            if user.op is stack_put and use.index == 2:
                return user
            if user.op.elementwise and user.attrs.get(INPLACE_ATTR) == use.index:
                following = user
        if following is None:
            return None
        value = following.output


def defined_before(value: Value, node: Node) -> bool:
    """`value` exists where `node` runs: a graph input or block parameter of an enclosing
    region, made before `node` in its block, or made in a block enclosing it."""
    producer = value.producer
    if producer is None:
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


def repeats_one_value(array: np.ndarray) -> bool:
    """Every element of `array` has the bits of its first (a zero's sign and a NaN's payload
    included): the last is compared first, so most arrays fail before a whole copy."""
    first = array.flat[:1].tobytes()
    return array.size > 0 and array.flat[-1:].tobytes() == first and \
        array.tobytes() == first * array.size

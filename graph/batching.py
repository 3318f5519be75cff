"""vmap's batching transform: the compiled loop over the examples that frontend/batching.py
builds is rewritten, when it can be, into code on the whole batch.

Batched values carry the batch axis first; a value no batched value reaches stays unbatched and
is computed once. Each op on a batched input runs its `OpDef.batch` rule; an op without one
(or whose rule declines these inputs) runs in a compiled loop over the examples of its own,
visible in `amber dump`. An If whose condition differs per example runs both arms on the whole
batch and selects per example (its arms must not have effects or raise). What this module does
not batch (a loop or try reached by a batched value, an If whose arms a batched value reaches
under a shared condition, batched non-array values) leaves the whole loop over the examples as
it was: exact, only slower.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from ..ops import Dyn, OpDef
from .analysis import within_block
from .builder import Builder, InsertPoint
from .ir import FOR, IF, INDEX_TYPE, WHILE, Block, Node, Value
from .types import ListType, Tensor, Type


def vectorize(b: Builder, loop: Node, size: Value) -> list[Value] | None:
    """The results of frontend/batching.py's `loop` (not yet inserted: a For over the
    examples whose body slices the batched arguments with getitem(arg, i) and appends each
    output leaf to a list) as batched values built at `b` (batch axis first), or None when the
    loop must stay. On success the loop's body is consumed."""
    body = loop.body
    index, rows = body.params[0], body.params[1:]
    batched: set[Value] = set()
    leaves: dict[Value, Value] = {}
    if not _plan(body, index, set(rows), batched, leaves) or len(leaves) != len(rows) \
            or not all(_array(leaf.type) for leaf in leaves.values()):
        return None
    done: set[Value] = set()
    _rewrite(b, body, index, size, done)
    results = []
    for row in rows:
        leaf = _leaf_of(body, row)
        results.append(leaf if leaf in done else _repeated(b, leaf, size))
    body.drop_all_uses()
    return results


# ---- planning: which values are batched, and can every node be batched ---------------------

def _slice_axis(node: Node, index: Value, body: Block) -> int | None:
    """The batch axis of `getitem(arg, i)` slicing one example of an argument, else None."""
    if not (isinstance(node.op, OpDef) and node.op.name == "getitem" and len(node.inputs) == 2
            and node.inputs[1] is index and not within_block(node.inputs[0], body)):
        return None
    where = node.attrs.get("index")
    if not (isinstance(where, tuple) and where and where[-1] == Dyn(0)
            and all(w == slice(None) for w in where[:-1])):
        return None
    return len(where) - 1


def _within(node: Node, block: Block) -> bool:
    return bool(node.outputs) and within_block(node.outputs[0], block) or node.parent is block


def _reached(node: Node, values: set[Value]) -> bool:
    """True if one of `values` is an input of `node` or is used anywhere inside it."""
    return any(v in values for n in node.walk() for v in n.inputs) or any(
        v in values for n in node.walk() for blk in n.blocks for v in blk.results)


def _loops_in(node: Node) -> bool:
    """A While in an arm run for every example may never end for the examples that would not
    take that arm."""
    return any(n.op == WHILE for n in node.walk())


def _pure(block: Block) -> bool:
    return not any(n.effectful or (isinstance(n.op, OpDef) and n.op.can_raise)
                   for n in block.walk())


def _plan(block: Block, index: Value, rows: set[Value], batched: set[Value],
          leaves: dict[Value, Value]) -> bool:
    """Mark the batched values of `block`; False if some node cannot be batched here."""
    for node in block.nodes:
        if _slice_axis(node, index, block) is not None:
            batched.add(node.output)
            continue
        if any(v is index for v in node.inputs) or (
                node.is_region and any(index in n.inputs for n in node.walk())):
            return False
        if isinstance(node.op, OpDef) and node.op.name == "list_append" \
                and node.inputs[0] in rows:
            leaves[node.inputs[0]] = node.inputs[1]
            continue
        if any(v in rows for v in node.inputs):
            return False
        if not _reached(node, batched):
            continue
        if node.op == IF and node.inputs[0] in batched:
            if not (_pure(node.then) and _pure(node.else_) and not _loops_in(node)
                    and all(_array(v.type) for v in node.outputs)
                    and _plan(node.then, index, rows, batched, leaves)
                    and _plan(node.else_, index, rows, batched, leaves)):
                return False
            if any(_dtype(a.type) != _dtype(v.type) for arm in node.blocks
                   for a, v in zip(arm.results, node.outputs)):
                return False
            batched.update(node.outputs)
            continue
        if node.op == WHILE:
            if not _plan_while(node, index, rows, batched, leaves):
                return False
            continue
        if node.op == IF:  # NOTE: one condition for every example: the If stays an If
            if not (_plan(node.then, index, rows, batched, leaves)
                    and _plan(node.else_, index, rows, batched, leaves)):
                return False
            for k, out in enumerate(node.outputs):
                if any(arm.results[k] in batched for arm in node.blocks):
                    if not _array(out.type):
                        return False
                    batched.add(out)
            continue
        kind = _plumbing(node)
        if kind == "make_tuple":
            if not all(_plumbing(u) == "tuple_getitem" for u in node.output.users):
                return False
        elif kind == "tuple_getitem":
            if _plumbing(node.inputs[0].producer) != "make_tuple":
                return False
            if node.inputs[0].producer.inputs[node.attrs["index"]] not in batched:
                continue
        elif kind == "depend":
            if node.inputs[0] not in batched:
                continue
        elif node.is_region or node.effectful or len(node.outputs) != 1 \
                or not _array(node.output.type):
            return False
        batched.add(node.output)
    return True


def _plan_while(node: Node, index: Value, rows: set[Value], batched: set[Value],
                leaves: dict[Value, Value]) -> bool:
    """A While a batched value reaches: every carry its body changes is batched (examples
    stop at different trips) and must be an array; cond and body must be pure, as they run
    on examples that are already done."""
    if not (_pure(node.cond) and _pure(node.body)) or any(
            n.op == WHILE for n in node.body.walk()):  # NOTE: see _loops_in
        return False
    changed = [r is not p for r, p in zip(node.body.results, node.body.params)]
    if not all(_array(v.type) for v, c in zip(node.outputs, changed) if c):
        return False
    carries = [c or v in batched for v, c in zip(node.inputs, changed)]
    for block in node.blocks:
        batched.update(p for p, c in zip(block.params, carries) if c)
    if not (_plan(node.cond, index, rows, batched, leaves)
            and _plan(node.body, index, rows, batched, leaves)):
        return False
    batched.update(v for v, c in zip(node.outputs, carries) if c)
    return True


def _plumbing(node: Node | Block | None) -> str | None:
    """The name of a tuple or ordering op, which batching passes its values through."""
    if isinstance(node, Node) and isinstance(node.op, OpDef) \
            and node.op.name in ("make_tuple", "tuple_getitem", "depend"):
        return node.op.name
    return None


def _array(t: Type) -> bool:
    return isinstance(t, Tensor)


def _dtype(t: Type) -> Any:
    return t.dtype if isinstance(t, Tensor) else None


def _leaf_of(body: Block, row: Value) -> Value:
    appended = next(r for r in body.results if r.producer is not None
                    and r.producer.inputs[0] is row)
    return appended.producer.inputs[1]


# ---- rewriting ------------------------------------------------------------------------------

def _rewrite(b: Builder, block: Block, index: Value, size: Value, done: set[Value]) -> None:
    """Move `block`'s unbatched nodes to `b` and build the batched form of the others there;
    the values they replace are redirected to their batched forms (in `done`)."""
    for node in list(block.nodes):
        axis = _slice_axis(node, index, block)
        if axis is not None:
            whole = node.inputs[0]
            if axis:
                rank = whole.type.rank
                perm = (axis, *(a for a in range(rank) if a != axis))
                whole = b.op("transpose", whole, perm=perm, loc=node.loc)
            _redirect(node.output, whole, done)
            continue
        if isinstance(node.op, OpDef) and node.op.name == "list_append" \
                and node.inputs[0].owner is block and node.inputs[0].producer is None:
            continue
        if not _reached(node, done):
            block.remove(node)
            # NOTE: an ordering edge to a node left behind (a batched op, pure) orders nothing
            node.control_inputs[:] = [c for c in node.control_inputs if not _within(c, block)]
            b.insert(node)
            continue
        if node.op == IF and node.inputs[0] in done:
            _select_arms(b, node, index, size, done)
            continue
        if node.op == IF:
            _shared_if(b, node, index, size, done)
            continue
        if node.op == WHILE:
            _masked_while(b, node, index, size, done)
            continue
        kind = _plumbing(node)
        if kind == "make_tuple":
            done.add(node.output)  # NOTE: left behind: each of its uses takes the item itself
            continue
        if kind in ("tuple_getitem", "depend"):
            item = node.inputs[0].producer.inputs[node.attrs["index"]] \
                if kind == "tuple_getitem" else node.inputs[0]
            node.output.replace_all_uses_with(item)
            continue
        _redirect(node.output, _batched_op(b, node, size, done), done)


def _redirect(old: Value, new: Value, done: set[Value]) -> None:
    old.replace_all_uses_with(new)
    done.add(new)


def _select_arms(b: Builder, node: Node, index: Value, size: Value, done: set[Value]) -> None:
    """An If on a batched condition: both arms on the whole batch, then a per-example select."""
    cond = node.inputs[0]
    for arm in node.blocks:
        _rewrite(b, arm, index, size, done)
    for k, out in enumerate(node.outputs):
        then, else_ = node.then.results[k], node.else_.results[k]
        rank = out.type.rank
        mask = b.op("expand_dims", cond, axis=tuple(range(1, rank + 1)), loc=node.loc) \
            if rank else cond
        if then not in done and else_ not in done:  # NOTE: keep the example's shape per row
            then = _broadcast(b, then, size)
        _redirect(out, b.op("select", mask, then, else_, loc=node.loc), done)


def _shared_if(b: Builder, node: Node, index: Value, size: Value, done: set[Value]) -> None:
    """An If on a condition every example shares, whose arms batched values reach: the same If
    with batched arms; an output batched in one arm is broadcast in the other."""
    arms = [Block(), Block()]
    for old, new in zip(node.blocks, arms):
        with b.at(InsertPoint.at_end(new)):
            _rewrite(b, old, index, size, done)
    outs = [any(arm.results[k] in done for arm in node.blocks) for k in range(len(node.outputs))]
    for old, new in zip(node.blocks, arms):
        with b.at(InsertPoint.at_end(new)):
            new.set_results([_broadcast(b, r, size) if batched and r not in done else r
                             for r, batched in zip(old.results, outs)])
    results = b.if_(node.inputs[0], *arms, names=[v.name for v in node.outputs])
    results[0].producer.loc = node.loc
    for out, new, batched in zip(node.outputs, results, outs):
        if batched:
            _redirect(out, new, done)
        else:
            out.replace_all_uses_with(new)


def _masked_while(b: Builder, node: Node, index: Value, size: Value, done: set[Value]) -> None:
    """A While on the batch: it runs while any example is active; each trip evaluates the
    condition and the body for all examples, and only the active ones whose condition holds
    take the body's values (the others keep theirs, frozen)."""
    changed = [r is not p for r, p in zip(node.body.results, node.body.params)]
    carries = [c or v in done for v, c in zip(node.inputs, changed)]
    inits = [_broadcast(b, v, size) if c and v not in done else v
             for v, c in zip(node.inputs, carries)]
    active = _broadcast(b, b.constant(np.array(True)), size)
    cond, body = Block(), Block()
    for block in (cond, body):
        for v in (*inits, active):
            block.add_param(v.type, v.name)
    with b.at(InsertPoint.at_end(cond)):
        cond.set_results([b.op("any", cond.params[-1], loc=node.loc)])
    params, still = body.params[:-1], body.params[-1]
    done.update(p for p, c in zip(params, carries) if c)
    done.add(still)
    with b.at(InsertPoint.at_end(body)):
        for old in node.blocks:
            for p, new in zip(old.params, params):
                p.replace_all_uses_with(new)
            _rewrite(b, old, index, size, done)
        go = b.op("logical_and", node.cond.results[0], still, loc=node.loc)
        results = []
        for p, new, c in zip(params, node.body.results, carries):
            if c:
                new = new if new in done else _broadcast(b, new, size)
                rank = new.type.rank - 1
                mask = b.op("expand_dims", go, axis=tuple(range(1, rank + 1))) if rank else go
                new = b.op("select", mask, new, p, loc=node.loc)
            results.append(new)
        body.set_results([*results, go])
    loop = b.insert(Node(WHILE, [*inits, active], {}, [v.type for v in (*inits, active)],
                         [v.name for v in (*inits, active)], [cond, body], loc=node.loc))
    for out, new, c in zip(node.outputs, loop.outputs, carries):
        if c:
            _redirect(out, new, done)
        else:
            out.replace_all_uses_with(new)


class _Context:
    """The BatchContext a rule sees (ops/opdef.py)."""

    def __init__(self, b: Builder, node: Node, done: set[Value], size: Value) -> None:
        self.b, self.node, self.size = b, node, size
        known = size.producer is not None and getattr(size.producer.op, "name", "") == "constant"
        self.static_size = size.producer.attrs["value"] if known else None
        self.inputs = tuple(node.inputs)
        self.batched = tuple(v in done for v in node.inputs)
        self.types = tuple(_example(v, v in done) for v in node.inputs)
        self.out_type = node.output.type
        self.attrs = node.attrs

    def op(self, op: Any, *inputs: Any, **attrs: Any) -> Value:
        return self.b.op(op, *inputs, loc=self.node.loc, **attrs)

    def apply(self, *inputs: Any, **attrs: Any) -> Value:
        return self.b.op(self.node.op, *inputs, loc=self.node.loc, **{**self.node.attrs, **attrs})

    def constant(self, value: Any) -> Value:
        return self.b.constant(value)


def _example(v: Value, batched: bool) -> Type:
    """The type of one example of `v`."""
    if not batched:
        return v.type
    return Tensor(v.type.shape[1:], v.type.dtype)


def _batched_op(b: Builder, node: Node, size: Value, done: set[Value]) -> Value:
    """`node` on the batch: its op's rule where it has one that fits, else a loop."""
    rule = node.op.batch
    if rule is not None:
        scratch = Block()
        try:
            with b.at(InsertPoint.at_end(scratch)):
                out = rule(_Context(b, node, done, size))
        except (TypeError, ValueError):  # NOTE: a rule's op refused these types: loop instead
            out = None
        if out is not None and _fits(out.type, node.output.type):
            for moved in list(scratch.nodes):
                scratch.remove(moved)
                b.insert(moved)
            return out
        scratch.drop_all_uses()
    return _loop(b, node, size, done)


def _fits(got: Type, example: Type) -> bool:
    if not (isinstance(got, Tensor) and isinstance(example, Tensor)):
        return False
    return got.dtype == example.dtype and got.rank == example.rank + 1 and all(
        g == e or not isinstance(g, int) or not isinstance(e, int)
        for g, e in zip(got.shape[1:], example.shape))


def _loop(b: Builder, node: Node, size: Value, done: set[Value]) -> Value:
    """`node` run once per example in a compiled loop, the results stacked."""
    body = Block()
    i = body.add_param(INDEX_TYPE, "i")
    rows = body.add_param(ListType(node.output.type), "rows")
    with b.at(InsertPoint.at_end(body)):
        sliced = [b.op("getitem", v, i, index=(Dyn(0),), loc=node.loc) if v in done else v
                  for v in node.inputs]
        one = b.op(node.op, *sliced, loc=node.loc, name=node.output.name, **node.attrs)
        body.set_results([b.op("list_append", rows, one, name="rows", loc=node.loc)])
    empty = b.op("list_new", name="rows", loc=node.loc)
    zero, step = b.constant(0), b.constant(1)
    loop = Node(FOR, [zero, size, step, empty], {}, [rows.type], ["rows"], [body], loc=node.loc)
    loop.control_inputs.append(empty.producer)
    b.insert(loop)
    return b.op("stack", loop.outputs[0], axis=0, loc=node.loc)


def _repeated(b: Builder, v: Value, size: Value) -> Value:
    """An unbatched output stacked once per example, exactly as the loop over examples stacks
    it (a fresh array, whatever the value's run-time rank)."""
    body = Block()
    body.add_param(INDEX_TYPE, "i")
    rows = body.add_param(ListType(v.type), "rows")
    with b.at(InsertPoint.at_end(body)):
        body.set_results([b.op("list_append", rows, v, name="rows")])
    empty = b.op("list_new", name="rows")
    loop = Node(FOR, [b.constant(0), size, b.constant(1), empty], {}, [rows.type], ["rows"],
                [body], loc=b.loc)
    loop.control_inputs.append(empty.producer)
    b.insert(loop)
    return b.op("stack", loop.outputs[0], axis=0)


def _broadcast(b: Builder, v: Value, size: Value) -> Value:
    """An unbatched array repeated for every example (the batch axis first)."""
    rank = v.type.rank
    shape = b.op("shape", v)
    dims = [b.op("tuple_getitem", shape, index=k) for k in range(rank)]
    return b.op("broadcast_to", v, size, *dims, shape=tuple(Dyn(k) for k in range(rank + 1)))

"""Loop batching: per-step matmuls over the rows of an outer array become one GEMM over all steps.

Forward (rows): in the body of a For or While, `X[i] @ W` (`matmul`, or `dense` with its bias)
where `X` and `W` come from outside the loop and `i` is the trip counter (a For's index with step
+-1, or a While's carried int that grows or shrinks by one each trip) becomes `Y[i]`, with
`Y = X @ W` computed once before the loop: row `i` of `Y` is that step's product, and one BLAS
call replaces one per step. An `add`/`sub`/`mul` of such a row and an operand from outside climbs
out after it (the bias of `x[t] @ W + b`). `Y[i]` raises where `X[i]` did (same leading axis).
Only ops that cannot raise on their typed inputs move (static shapes), since the batched op runs
even when the loop runs no trip. A loop that stops early (a `break`) leaves the rows after it
computed and unread: one GEMM over every row still costs less than a small one per step.

Backward (accumulations): `acc = acc + A @ B` (2-d operands, computed in the body; the weight
gradient autodiff writes at every step, `dW += g[t].T @ h[t]`) or `acc = acc + sum(A, axis=k)`,
with `acc` carried and read by nothing else in the loop, becomes: append `A` and `B` to lists the
loop carries, and after it, when a trip ran, `acc + concat(As) @ concat(Bs)`, joined along the
contracted axis (a sum of per-step products is the product of the joined operands), or `acc +
sum(concat(As))`. Sums run in another order than step by step, so float results differ in the
last bits (docs/performance.md, "Loop batching", states the tolerance).

Rows from a tape: when the backward loop replays every forward trip by position (`for k in
range(n - 1, -1, -1)`, n the forward's trip count) and an operand is `tape[k]` of a tape that
recorded the row `X[c]` each trip (X unwritten, c counting up by one from a constant c0), the
joined operand is `X[c0:c0 + n]` reshaped, a view instead of a list and a copy; the step lists
then join reversed (`g_steps[::-1]`), in forward order like the rows, and the forward stops
recording the rows when nothing else reads them.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ...ops.opdef import Dyn
from ..analysis import (constant_of, defined_inside, may_raise, memory_roots, only_read,
                        trip_count)
from ..builder import Builder, InsertPoint
from ..ir import FOR, WHILE, Block, Graph, Node, Value
from ..rewriter import Rewriter
from ..tapes import TAPE_ATTR
from ..types import ListType, Scalar, Tensor

ROW_ELEMENTWISE = ("add", "sub", "mul")
"""Elementwise ops that climb out of a loop after a batched row (with an operand from outside)."""


def run(graph: Graph, rw: Rewriter) -> bool:
    """Batch row matmuls and weight-gradient accumulations of every loop; True if any changed."""
    loops = [n for n in graph.walk() if n.op in (WHILE, FOR)]
    for loop in loops:
        counters, written = _counters(loop), _written_arrays(loop)
        for node in list(loop.body.nodes):
            if not node.is_region:
                _hoist_row_op(node, loop, counters, written, rw)
    written_anywhere = _written_arrays(graph)
    for loop in loops:  # NOTE: after every row rule: a hoisted row is a view of its batch
        _batch_accumulations(loop, _written_arrays(loop), written_anywhere, rw)
    return rw.changed


# -- forward: rows of an outer array ---------------------------------------------------------

def _written_arrays(loop: Node | Graph) -> set[Value]:
    """The allocations an op inside `loop` (or anywhere in a graph) writes in place as an array
    (`x[i] = v`, `assign`): writes before or after the loop are ordered before or after both the
    steps and the batched GEMM. Unlike `written_roots`, appending to a list does not write the
    items it holds."""
    return {root for node in loop.walk() if node is not loop
            if not node.is_region and node.op.writes is not None and
            isinstance(node.inputs[node.op.writes].type, Tensor)
            for root in memory_roots(node.inputs[node.op.writes])}


def _counters(loop: Node) -> set[Value]:
    """The body's values that step through consecutive rows: a For's index (step +-1), a
    While's carried int whose next value is itself plus or minus one."""
    body = loop.body
    if loop.op == FOR:
        step = constant_of(loop.bounds[2])
        return {loop.induction} if type(step) is int and step in (1, -1) else set()
    found = set()
    for param, following in zip(loop.carried(body), body.results):
        step_node = following.producer
        if not (isinstance(param.type, Scalar) and param.type.kind is int and step_node is not None
                and step_node.parent is body and _name(step_node) in ("add", "sub")
                and len(step_node.inputs) == 2 and step_node.inputs[0] is param):
            continue
        step = constant_of(step_node.inputs[1])
        if type(step) is int and step in (1, -1):
            found.add(param)
    return found


def _row_source(value: Value, loop: Node, counters: set[Value],
                written: set[Value]) -> tuple[Value, Value] | None:
    """(X, i) when `value` is `X[i]`: X an array from outside `loop` that nothing writes, i a
    trip counter."""
    node = value.producer
    if node is None or _name(node) != "getitem" or len(node.inputs) != 2 or \
            node.attrs.get("index") != (Dyn(0),) or node.inputs[1] not in counters:
        return None
    x = node.inputs[0]
    if not isinstance(x.type, Tensor) or x.type.rank < 2 or defined_inside(x, loop) or \
            memory_roots(x) & written:
        return None
    return x, node.inputs[1]


def _hoist_row_op(node: Node, loop: Node, counters: set[Value], written: set[Value],
                  rw: Rewriter) -> None:
    """Compute `node` over every row before `loop` when it reads one row and invariants."""
    name = _name(node)
    if name not in ("matmul", "dense", *ROW_ELEMENTWISE) or not node.inputs or \
            not only_read(node.output):
        return  # NOTE: a row that is written or kept would be a view into the batched array
    rows = [k for k, v in enumerate(node.inputs) if _row_source(v, loop, counters, written)]
    if len(rows) != 1 or any(defined_inside(v, loop) or memory_roots(v) & written
                             for k, v in enumerate(node.inputs) if k != rows[0]):
        return
    k = rows[0]
    if name in ("matmul", "dense") and (k != 0 or node.inputs[1].type.rank != 2 or
                                        node.attrs.get("transpose_a")):
        return
    out, row_rank = node.output.type, node.inputs[k].type.rank
    if not isinstance(out, Tensor) or any(isinstance(v.type, Tensor) and v.type.rank > row_rank
                                          for j, v in enumerate(node.inputs) if j != k and
                                          not (name in ("matmul", "dense") and j == 1)):
        return  # NOTE: an operand above the row's rank would broadcast against the new axis
    x, index = _row_source(node.inputs[k], loop, counters, written)
    inputs = list(node.inputs)
    inputs[k] = x
    build = Builder(InsertPoint.before(loop), node.loc)
    rows_name = x.name if x.name.endswith("_rows") else f"{x.name or 'x'}_rows"
    try:
        batched = build.op(node.op, *inputs, name=rows_name, **node.attrs)
    except (TypeError, ValueError):  # NOTE: shapes the checks above missed: stay per step
        return
    t = batched.type
    if not (isinstance(t, Tensor) and t.shape[1:] == out.shape and t.dtype == out.dtype) or \
            may_raise(batched.producer):
        batched.producer.erase()
        return
    with build.at(InsertPoint.before(node)):
        row = build.op("getitem", batched, index, index=(Dyn(0),), name=node.output.name)
    rw.replace(node, [row])


# -- backward: per-step accumulations --------------------------------------------------------

def _batch_accumulations(loop: Node, written: set[Value], written_anywhere: set[Value],
                         rw: Rewriter) -> None:
    """Move every batchable `acc = acc + term` of `loop`'s body after the loop (one If)."""
    body = loop.body
    found = [(slot, add, term) for slot, (param, following)
             in enumerate(zip(loop.carried(body), body.results))
             if (match := _accumulation(loop, param, following)) for add, term in [match]
             # NOTE: the operands are kept until the loop ends: nothing may write into them
             if not any(memory_roots(v) & written for v in term.inputs)]
    if not found:
        return
    lists: dict[Value, tuple[Value, Value]] = {}  # NOTE: operand -> (body param, loop output)

    def listed(operand: Value) -> Value:
        if operand not in lists:
            steps_name = f"{_hint(operand)}_steps"
            start = Builder(InsertPoint.before(loop), loop.loc).op("list_new", name=steps_name)
            start.producer.attrs[TAPE_ATTR] = True  # NOTE: its items are never written
            param, out = loop.add_carried(start, ListType(operand.type), steps_name)
            with_item = Builder(InsertPoint.at_end(body), loop.loc).op(
                "list_append", param, operand, name=steps_name)
            body.set_result(len(body.results) - 1, with_item)
            lists[operand] = (param, out)
        return lists[operand][1]

    replay = _replayed_trips(loop)
    rows = {term: [_recorded(v, axis, replay, written_anywhere) if replay is not None
                   else None for v, axis in zip(term.inputs, _join_axes(term))]
            for _, _, term in found}
    # NOTE: rows run in forward order; a descending replay fills its lists backwards, so then
    # every list is joined reversed (one join per list, any pairing stays step by step)
    backwards = replay is not None and replay.descending and any(map(any, rows.values()))
    pending = []
    for slot, add, term in found:
        operands = [r if r is not None else Reversed(listed(v)) if backwards else listed(v)
                    for v, r in zip(term.inputs, rows[term])]
        body.set_result(slot, loop.carried(body)[slot])
        shape = (_name(term), dict(term.attrs), term.inputs[0].type.rank)  # NOTE: erased below
        pending.append((loop.outputs[slot], shape, operands, add.loc))
        rw.erase(add)
        rw.erase(term)
    _emit_after(loop, pending, replay, rw)
    for found_rows in {r.read: r for found in rows.values() for r in found if r}.values():
        _drop_unread_tape(found_rows.read, rw)


def _drop_unread_tape(read: Value, rw: Rewriter) -> None:
    """Remove the tape of rows `read` read from when nothing reads it any more: the forward loop
    no longer records the rows."""
    if read.uses:
        return
    node = read.producer
    tape = node.inputs[0]
    rw.erase(node)
    if tape.uses:
        return
    forward, slot = tape.producer, tape.index
    appended = forward.body.results[slot].producer
    start = forward.inits[slot].producer
    rw.drop_yields(forward, [slot])
    rw.erase(appended)
    rw.drop_slot(forward, slot)
    forward.control_inputs[:] = [c for c in forward.control_inputs if c is not start]
    if not start.output.uses:
        rw.erase(start)


def _accumulation(loop: Node, param: Value, following: Value) -> tuple[Node, Node] | None:
    """(add, term) when slot `param` -> `following` is `param + term`, nothing else in the loop
    reads `param` or the sum, and `term` is a batchable matmul or sum of body values."""
    add = following.producer
    body = loop.body
    if add is None or add.parent is not body or _name(add) != "add" or \
            len(following.uses) != 1 or len(param.uses) != 1 or param.uses[0].user is not add:
        return None
    if loop.op == WHILE and loop.carried(loop.cond)[param.index].uses:
        return None
    term_value = add.inputs[1] if add.inputs[0] is param else add.inputs[0]
    term = term_value.producer
    t = param.type
    if term is None or term.parent is not body or len(term_value.uses) != 1 or \
            not all(defined_inside(v, loop) for v in term.inputs) or \
            not isinstance(t, Tensor) or not t.is_static or following.type != t or \
            term_value.type != t or param not in add.inputs:
        return None
    if _name(term) == "matmul" and t.rank == 2 and \
            all(isinstance(v.type, Tensor) and v.type.rank == 2 and v.type.is_static
                for v in term.inputs):
        return add, term
    axis = term.attrs.get("axis")
    axis = axis[0] if isinstance(axis, tuple) and len(axis) == 1 else axis
    if _name(term) == "sum" and isinstance(axis, int) and not term.attrs.get("keepdims") and \
            term.attrs.get("dtype") is None and isinstance(term.inputs[0].type, Tensor) and \
            term.inputs[0].type.is_static and term.inputs[0].type.dtype == t.dtype:
        return add, term
    return None


def _emit_after(loop: Node, pending: list, replay: Replay | None, rw: Rewriter) -> None:
    """After `loop`: if any trip ran, add each batched term to its accumulator's output."""
    readers = [list(acc.uses) for acc, *_ in pending]  # NOTE: before the If adds its own reads
    build = rw.builder(InsertPoint.after(loop), loop.loc)
    first = pending[0][2][0]
    if isinstance(first, Value):
        ran = build.op("gt", build.op("len", first), build.constant(0))
    else:  # NOTE: the loop replays every forward trip: it ran if the forward loop did
        assert replay is not None
        ran = build.op("gt", _trips(build, replay), build.constant(0))
    then, else_ = Block(), Block()
    joined: dict[tuple[Value, int], Value] = {}
    sums = []
    with build.at(InsertPoint.at_end(then)):
        for acc, term, operands, loc in pending:
            build.loc = loc
            sums.append(build.op("add", acc,
                                 _batched_term(build, term, operands, joined, replay),
                                 name=acc.name))
    then.set_results(sums)
    else_.set_results([acc for acc, *_ in pending])
    build.loc = loop.loc
    merged = build.if_(ran, then, else_, names=[acc.name for acc, *_ in pending])
    for uses, new in zip(readers, merged):
        for use in uses:
            if isinstance(use.user, Node):
                use.user.set_input(use.index, new)
            else:
                use.user.set_result(use.index, new)


def _batched_term(build: Builder, term: tuple[str, dict, int], operands: list,
                  joined: dict, replay: Replay | None) -> Value:
    """The sum over steps of `term` (its op name, attrs and first operand's rank), from its
    operands' step lists (`Reversed` lists) or `Rows`."""
    name, attrs, rank = term
    def join(items: Any, axis: int) -> Value:
        if (items, axis) in joined:
            return joined[items, axis]
        if isinstance(items, Rows):  # NOTE: X[c0:c0 + n] as one [n * rows, cols] view
            assert replay is not None and axis == 0
            stop = _trips(build, replay) if items.start == 0 else \
                build.op("add", _trips(build, replay), build.constant(items.start))
            window = build.op("getitem", items.array, stop,
                              index=(slice(items.start, Dyn(0), None),))
            value = build.op("reshape", window, shape=(-1, *items.array.type.shape[2:]),
                             name=f"{items.array.name or 'x'}_all")
        elif isinstance(items, Taped):
            value = build.op("concat", items.tape, axis=axis,
                             name=items.tape.name.replace("_tape", "_all"))
        else:
            listed = items.items if isinstance(items, Reversed) else items
            if isinstance(items, Reversed):
                listed = build.op("getitem", listed, index=(slice(None, None, -1),),
                                  name=listed.name)
            value = build.op("concat", listed, axis=axis,
                             name=listed.name.replace("_steps", "_all"))
        joined[items, axis] = value
        return value

    if name == "sum":
        axis = attrs["axis"]
        axis = (axis[0] if isinstance(axis, tuple) else axis) % rank
        return build.op("sum", join(operands[0], axis), axis=(axis,))
    ta, tb = attrs.get("transpose_a", False), attrs.get("transpose_b", False)
    a = join(operands[0], 0 if ta else 1)  # NOTE: the contracted axis of each operand
    b = join(operands[1], 1 if tb else 0)
    return build.op("matmul", a, b, transpose_a=ta, transpose_b=tb)


# -- rows a backward loop would read from a tape of rows ---------------------------------------

@dataclass(frozen=True)
class Replay:
    """A For loop visiting every trip of a forward loop once, by position: `for k in
    range(n - 1, -1, -1)` (descending) or `for k in range(n)`, `n` the forward loop's trip
    count (its `trips` counter, or a constant for a For with constant bounds)."""
    loop: Node
    trips: Value | int
    forward: Node | None
    """The While or For whose trips counter `trips` is (None: `trips` is a constant)."""
    descending: bool


@dataclass(frozen=True)
class Rows:
    """The rows `array[start + k]` a forward loop read at its trips k = 0, 1, ..., recorded on a
    tape: after the backward loop, all of them are `array[start:start + n]`, no copy."""
    array: Value
    start: int
    read: Value = field(compare=False)
    """The backward's `tape[k]`, which the joined rows replace."""


@dataclass(frozen=True)
class Taped:
    """A tape's items, one per forward trip, in forward order: what the backward read from it
    step by step, joined after the loop without listing them again."""
    tape: Value
    read: Value = field(compare=False)
    """The backward's `tape[k]`."""


@dataclass(frozen=True)
class Reversed:
    """A step list a descending replay filled backwards, joined in forward order (to pair with
    `Rows`)."""
    items: Value


def _trips(build: Builder, replay: Replay) -> Value:
    trips = replay.trips
    return build.constant(trips) if isinstance(trips, int) else trips


def _replayed_trips(loop: Node) -> Replay | None:
    """`loop` as a `Replay`, or None."""
    if loop.op != FOR:
        return None
    start, stop, step = loop.bounds
    if _int(step) == -1 and _int(stop) == -1 and _int(start) is not None:
        return Replay(loop, max(_int(start) + 1, 0), None, True)
    if _int(step) == -1 and _int(stop) == -1:
        minus = start.producer
        if minus is None or minus.is_region or _name(minus) != "sub" or \
                _int(minus.inputs[1]) != 1:
            return None
        trips, descending = minus.inputs[0], True
    elif _int(step) == 1 and _int(start) == 0:
        trips, descending = stop, False
    else:
        return None
    if _int(trips) is not None:
        return Replay(loop, _int(trips), None, descending)
    forward = trips.producer
    if forward is None or forward.op not in (WHILE, FOR) or not isinstance(trips.type, Scalar):
        return None
    slot = trips.index
    param, following = forward.carried(forward.body)[slot], forward.body.results[slot]
    step_node = following.producer
    if _int(forward.inits[slot]) != 0 or step_node is None or step_node.is_region or \
            step_node.parent is not forward.body or _name(step_node) != "add" or \
            step_node.inputs[0] is not param or _int(step_node.inputs[1]) != 1:
        return None
    return Replay(loop, trips, forward, descending)


def _recorded(value: Value, axis: int, replay: Replay,
              written: set[Value]) -> Rows | Taped | None:
    """When `value` is `tape[k]` (k: the replay's position) of a tape recording one item per
    forward trip: `Rows` when the item is the row `X[c]` of an array nothing writes, `c` counting
    up by one from a constant >= 0, and the steps join along axis 0; else `Taped`."""
    read = value.producer
    if read is None or read.is_region or _name(read) != "getitem" or len(read.inputs) != 2 or \
            read.attrs.get("index") != (Dyn(0),) or read.inputs[1] is not replay.loop.induction:
        return None
    tape = read.inputs[0]
    forward = tape.producer
    if forward is None or forward.op not in (WHILE, FOR) or not isinstance(tape.type, ListType):
        return None
    if replay.forward is not forward and not (
            replay.forward is None and forward.op == FOR and
            trip_count(forward) == replay.trips):
        return None
    slot = tape.index
    param, appended = forward.carried(forward.body)[slot], forward.body.results[slot].producer
    start = forward.inits[slot].producer
    # NOTE: an autodiff tape: nothing changes its items or their order once recorded (a
    # user's list could be written, sorted or appended to between the loops)
    if start is None or start.is_region or _name(start) != "list_new" or start.inputs or \
            start.attrs.get(TAPE_ATTR) is not True or \
            len(start.output.uses) != 1 or appended is None or appended.is_region or \
            _name(appended) != "list_append" or appended.parent is not forward.body or \
            appended.inputs[0] is not param or len(param.uses) != 1:
        return None
    taped = Taped(tape, value)
    row = appended.inputs[1].producer
    if axis != 0 or row is None or row.is_region or row.parent is not forward.body or \
            _name(row) != "getitem" or len(row.inputs) != 2 or row.attrs.get("index") != (Dyn(0),):
        return taped
    array, counter = row.inputs
    t = array.type
    if not (isinstance(t, Tensor) and t.rank == 3 and type(t.shape[2]) is int) or \
            defined_inside(array, forward) or memory_roots(array) & written:
        return taped
    first = _count_start(forward, counter)
    return taped if first is None else Rows(array, first, value)


def _count_start(loop: Node, counter: Value) -> int | None:
    """The constant (>= 0) `counter` starts at, when it is `loop`'s trip counter stepping +1."""
    if loop.op == FOR:
        start, _, step = loop.bounds
        first = _int(start) if counter is loop.induction and _int(step) == 1 else None
    else:
        if counter.owner is not loop.body or counter not in _counters(loop):
            return None
        step_node = loop.body.results[loop.slot_of(counter)].producer
        first = _int(loop.inits[loop.slot_of(counter)]) \
            if step_node is not None and _name(step_node) == "add" and \
            _int(step_node.inputs[1]) == 1 else None
    return first if first is not None and first >= 0 else None


def _join_axes(term: Node) -> list[int]:
    """The axis each operand's steps join along (the contracted one of a matmul)."""
    if _name(term) == "matmul":
        return [0 if term.attrs.get("transpose_a") else 1,
                1 if term.attrs.get("transpose_b") else 0]
    axis = term.attrs["axis"]
    return [(axis[0] if isinstance(axis, tuple) else axis) % term.inputs[0].type.rank]


def _int(value: Value) -> int | None:
    found = constant_of(value)
    return found if type(found) is int else None


def _hint(value: Value) -> str:
    """A name for the steps of `value`: its own, its tape's (`x` for `x_tape[k]`), or `g`
    (unnamed values of a backward loop are mostly adjoints)."""
    source = value.producer
    if not value.name and source is not None and _name(source) == "getitem":
        return source.inputs[0].name.removesuffix("_tape") or "g"
    return value.name or "g"


def _name(node: Node) -> str:
    return getattr(node.op, "name", node.op)

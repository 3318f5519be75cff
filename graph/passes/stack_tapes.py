"""Tape stacks: a loop's autodiff tape (a list appended once per trip) becomes one array the loop
fills a row per trip, allocated before it, when after the loop the tape is only read item by
item by a backward loop replaying the trips, or joined whole (`concat`, reversed or not), and
a row costs no more than the list did: the tape is joined (a join copies every item anyway),
or its items are states or results of elementwise ops (computed into their rows); a tape of
views read item by item stays a list, which copies nothing.

Rows: a For with constant bounds and step 1 writes row `k` (rows below its start unused); a
For `range(s, -1, -1)` row `k`, so its tape's reversed join is the stack's first rows; a loop
with a trips counter (init 0, +1 a trip: autodiff's, for a While) row `trips`. A For sizes
its stack by its trip count; a While by the bound `t < N` its condition implies of a counter
(a `break` stops it sooner), else it grows the stack by doubling when full (`stack_reserve`).

A tape of a carried value and one of its successor (`h` and the next `h`, what `tanh(W h)`'s
backward saves) share one stack of the states: row 0 the loop's start, row j + 1 the value
the trip j hands on; the first tape reads row k, the second row k + 1.

The join `concat(tape)` becomes the view `stack[lo:lo + n].reshape(-1, ...)`, no copy; a read
`tape[k]` the view `stack[k]`. Only compiler tapes (TAPE_ATTR lists: their items are never
written and the replay reads each trip once, in range) change; a user's list never does.
Memory planning then lets the elementwise op producing a row compute into it (`out=`).
"""
from __future__ import annotations

from dataclasses import dataclass

from ...ops.opdef import Dyn
from ..analysis import constant_of, trip_count
from ..builder import InsertPoint
from ..ir import FOR, IF, WHILE, Graph, Node, Value
from ..rewriter import Rewriter
from ..tapes import TAPE_ATTR
from ..types import Tensor

FIRST_CAPACITY = 16
"""Rows a While with no bound starts its stack with (doubled when full)."""

LARGEST_PLANNED = 4096
"""A bound or trip count known while compiling above this grows the stack instead: a loop
bounded by `t < 10**6` that breaks after a few trips must not allocate a million rows."""


def run(graph: Graph, rw: Rewriter) -> bool:
    """Turn every qualifying tape of every loop into a stack; True if any changed."""
    for loop in [n for n in graph.walk() if n.op in (WHILE, FOR)]:
        counter = _counter(loop)
        if counter is None:
            continue
        stacks: dict[Value, Value] = {}  # NOTE: the state or item a stack holds -> the stack
        for init in [v for v in loop.inits if _is_tape_start(v)]:
            plan = _plan(loop, loop.inits.index(init), counter)
            if plan is not None:
                _rewrite(loop, plan, counter, stacks, rw)
    return rw.changed


# -- how a loop counts its trips ----------------------------------------------------------------

@dataclass(frozen=True)
class Counter:
    """Where trip j of a loop writes: row `position` (+ an offset), a value of its body; how
    many trips it made, `count` (a value or int readable after the loop); `bound`: rows enough
    for every trip (an int or a value before the loop), None: unknown (grow by doubling)."""
    position: Value | int
    start: int
    """`position` is the trip index plus `start` (a For counting from a constant)."""
    count: Value | int
    bound: Value | int | None
    reversed: bool
    """Rows run backwards from the append order (a For counting down to 0): only a reversed
    join of the tape reads them in order."""
    counts: tuple[Value, ...] = ()
    """Every output equal to `count` (a user's counter as well as autodiff's)."""


def _counter(loop: Node) -> Counter | None:
    if loop.op == FOR:
        start, stop, step = (_int(v) for v in loop.bounds)
        trips = trip_count(loop)
        if step == 1 and start is not None and start >= 0 and trips is not None:
            return Counter(loop.induction, start, trips, trips, False)
        count = _count_down(loop.bounds[0]) if step == -1 and stop == -1 else None
        if count is not None:  # NOTE: range(s, -1, -1): s + 1 trips (none if s < 0), row k
            return Counter(loop.induction, 0, count, count, True)
    slots = _trips_slots(loop)
    if not slots:
        return None
    param = loop.carried(loop.body)[slots[-1]]  # NOTE: autodiff's `trips`, added last
    bound = _while_bound(loop) if loop.op == WHILE else None
    return Counter(param, 0, loop.outputs[slots[-1]], bound, False,
                   tuple(loop.outputs[s] for s in slots))


def _count_down(first: Value) -> Value | int | None:
    """The trips of `range(first, -1, -1)` when `first` is a constant or `n - 1`."""
    value = _int(first)
    if value is not None:
        return max(value + 1, 0)
    minus = first.producer
    if minus is not None and not minus.is_region and minus.op.name == "sub" and \
            _int(minus.inputs[1]) == 1:
        return minus.inputs[0]
    return None


def _trips_slots(loop: Node) -> list[int]:
    """The slots of carried ints starting at 0 and growing by one each trip (all equal)."""
    return [slot for slot, (param, following)
            in enumerate(zip(loop.carried(loop.body), loop.body.results))
            if _int(loop.inits[slot]) == 0 and (step := following.producer) is not None and
            not step.is_region and step.parent is loop.body and step.op.name == "add" and
            step.inputs[0] is param and _int(step.inputs[1]) == 1]


def _while_bound(loop: Node) -> int | None:
    """N - c0 when the condition implies `t < N` (N a constant) for a carried int t that
    starts at the constant c0 and grows by one each trip."""
    value = loop.cond.results[0]
    while True:
        node = value.producer
        if node is None:
            return None
        if node.op == IF and node.blocks[1].results[value.index] is node.inputs[0]:
            value = node.blocks[0].results[value.index]  # NOTE: `a and b`: false unless b
            continue
        if node.is_region or node.op.name != "lt":
            return None
        break
    param, limit = node.inputs
    slot = loop.slot_of(param) if param.owner is loop.cond else None
    if slot is None or _int(limit) is None:
        return None
    body_param, following = loop.carried(loop.body)[slot], loop.body.results[slot]
    step = following.producer
    c0 = _int(loop.inits[slot])
    if c0 is None or step is None or step.is_region or step.parent is not loop.body or \
            step.op.name != "add" or step.inputs[0] is not body_param or \
            _int(step.inputs[1]) != 1:
        return None
    return max(_int(limit) - c0, 0)


# -- which tapes qualify ---------------------------------------------------------------------------

@dataclass
class Plan:
    slot: int
    item: Value
    state: Value | None
    """The body parameter of the carried slot whose values the tape records (its start or what
    each trip hands on), None: a value of the body."""
    offset: int
    """Trip j's item is row j + offset."""
    reads: list[Node]
    joins: list[tuple[Node, Node | None]]
    """(concat, the reversal it joins or None)."""


def _is_tape_start(value: Value) -> bool:
    start = value.producer
    return start is not None and not start.is_region and start.op.name == "list_new" and \
        not start.inputs and start.attrs.get(TAPE_ATTR) is True and len(value.uses) == 1


def _plan(loop: Node, slot: int, counter: Counter) -> Plan | None:
    body = loop.body
    param, appended = loop.carried(body)[slot], body.results[slot].producer
    if appended is None or appended.is_region or appended.op.name != "list_append" or \
            appended.parent is not body or appended.inputs[0] is not param or \
            len(param.uses) != 1 or len(appended.output.uses) != 1:
        return None
    item = appended.inputs[1]
    t = item.type
    if not (isinstance(t, Tensor) and t.rank >= 1 and t.is_symbolic) or \
            (loop.op == WHILE and loop.carried(loop.cond)[slot].uses):
        return None
    state, offset = _state_of(loop, item, counter)
    offset += counter.start
    reads, joins = [], []
    for use in loop.outputs[slot].uses:
        user = use.user
        if not isinstance(user, Node) or user.is_region:
            return None
        if _is_concat(user) and not counter.reversed:
            joins.append((user, None))
        elif user.op.name == "getitem" and user.attrs.get("index") == (slice(None, None, -1),) \
                and user.output.uses and counter.reversed and \
                all(isinstance(u.user, Node) and _is_concat(u.user) for u in user.output.uses):
            joins.extend((u.user, user) for u in user.output.uses)
        elif _is_replay_read(user, counter) and not counter.reversed:
            reads.append(user)
        else:
            return None
    if joins and not all(type(d) is int for d in t.shape[1:]):
        return None  # NOTE: the joined rows' shape is spelled as constants
    made = item.producer
    if not joins and state is None and (made is None or made.is_region or
                                        not made.op.elementwise or made.op.inplace is None):
        return None  # NOTE: a list keeps views uncopied; a row costs a copy unless computed in
    return Plan(slot, item, state, offset, reads, joins)


def _state_of(loop: Node, item: Value, counter: Counter) -> tuple[Value | None, int]:
    """(body parameter, offset) of a tape of a carried value (row 0 its start) or of its successor, or
    (None, 0)."""
    if counter.reversed:
        return None, 0
    body = loop.body
    for slot, (param, following) in enumerate(zip(loop.carried(body), body.results)):
        if loop.inits[slot].type != item.type or param.type != item.type:
            continue
        if item is param:
            return param, 0
        if item is following:
            return param, 1
    return None, 0


def _is_concat(node: Node) -> bool:
    return not node.is_region and node.op.name == "concat" and node.attrs.get("axis", 0) == 0


def _is_replay_read(node: Node, counter: Counter) -> bool:
    """`tape[k]`, k the index of a For replaying the loop's trips (k in [0, count))."""
    if node.op.name != "getitem" or len(node.inputs) != 2 or \
            node.attrs.get("index") != (Dyn(0),):
        return False
    k = node.inputs[1]
    replay = k.owner.owner_node if k.producer is None and k.owner is not None else None
    if replay is None or replay.op != FOR or replay.induction is not k:
        return False
    start, stop, step = replay.bounds
    count = counter.count
    if _int(step) == 1 and _int(start) == 0:
        return stop is count or stop in counter.counts or \
            (type(count) is int and _int(stop) == count)
    if _int(step) == -1 and _int(stop) == -1:
        minus = start.producer
        if type(count) is int:
            return _int(start) == count - 1
        return minus is not None and not minus.is_region and minus.op.name == "sub" and \
            (minus.inputs[0] is count or minus.inputs[0] in counter.counts) and \
            _int(minus.inputs[1]) == 1
    return False


# -- the rewrite ---------------------------------------------------------------------------------

def _rewrite(loop: Node, plan: Plan, counter: Counter, stacks: dict[Value, Value],
             rw: Rewriter) -> None:
    stack = _stack_for(loop, plan, counter, stacks, rw)
    for read in plan.reads:
        b = rw.builder(InsertPoint.before(read), read.loc)
        row = read.inputs[1] if plan.offset == 0 else \
            b.op("add", read.inputs[1], b.constant(plan.offset))
        rw.replace(read, [b.op("getitem", stack, row, index=(Dyn(0),), name=read.output.name)])
    for join, reversal in plan.joins:
        b = rw.builder(InsertPoint.before(join), join.loc)
        count = counter.count if not isinstance(counter.count, int) else \
            b.constant(counter.count)
        stop = count if plan.offset == 0 else b.op("add", count, b.constant(plan.offset))
        rows = b.op("getitem", stack, stop, index=(slice(plan.offset, Dyn(0), None),))
        item = plan.item.type
        joined = b.op("reshape", rows, shape=(-1, *item.shape[1:]), name=join.output.name)
        rw.replace(join, [joined])
        if reversal is not None and not reversal.output.uses:
            rw.erase(reversal)
    _drop_tape(loop, plan.slot, rw)


def _stack_for(loop: Node, plan: Plan, counter: Counter, stacks: dict[Value, Value],
               rw: Rewriter) -> Value:
    """The stack output of `loop` holding the plan's rows (one per state: its two tapes share
    it)."""
    key = plan.state if plan.state is not None else plan.item
    if key in stacks:
        return stacks[key]
    body, item = loop.body, plan.item.type
    before = rw.builder(InsertPoint.before(loop), loop.loc)
    extra = (1 if plan.state is not None else 0) + counter.start  # NOTE: rows before trip 0's
    bound = counter.bound
    if isinstance(bound, int) and bound > LARGEST_PLANNED:
        bound = None
    capacity = FIRST_CAPACITY if bound is None else bound
    if isinstance(capacity, int):
        rows = before.constant(capacity + extra)
    else:  # NOTE: a count below zero means no trip
        more = capacity if extra == 0 else before.op("add", capacity, before.constant(extra))
        rows = before.op("max", more, before.constant(0))
    name = _stack_name(loop, plan)
    stack = before.op("stack_new", rows, item=item.shape, dtype=item.dtype, name=name)
    if plan.state is not None:
        start = loop.inits[loop.slot_of(plan.state)]
        stack = before.op("stack_put", stack, before.constant(counter.start), start, name=name)
    param, out = loop.add_carried(stack, stack.type, name)
    b = rw.builder(InsertPoint.at_start(body), loop.loc)
    written = 1 if plan.state is not None else 0  # NOTE: a state's trip writes its successor
    row = counter.position if written == 0 else \
        b.op("add", counter.position, b.constant(written), name="row")
    target = param
    if bound is None:
        target = b.op("stack_reserve", param, b.op("add", row, b.constant(1)), name=name)
    value = plan.item if plan.state is None else body.results[loop.slot_of(plan.state)]
    at = InsertPoint.after(value.producer) if value.producer is not None and \
        value.producer.parent is body else InsertPoint.at_end(body)
    # NOTE: a snapshot `copy(v)` stays: autodiff copied v because something writes into it
    # later, and memory planning may let v's producer compute into the row when it is put
    with b.at(at):
        put = b.op("stack_put", target, row, value, name=name)
    body.set_result(len(body.results) - 1, put)
    stacks[key] = out
    return out


def _stack_name(loop: Node, plan: Plan) -> str:
    base = loop.inits[plan.slot].name.removesuffix("_tape").removesuffix("_steps") or "t"
    return f"{base}_stack"


def _drop_tape(loop: Node, slot: int, rw: Rewriter) -> None:
    """Remove the tape in `slot` (nothing reads it any more): the loop no longer records it."""
    start = loop.inits[slot].producer
    appended = loop.body.results[slot].producer
    rw.drop_yields(loop, [slot])
    rw.erase(appended)
    rw.drop_slot(loop, slot)
    rw.set_control_inputs(loop, [c for c in loop.control_inputs if c is not start])
    rw.erase(start)


def _int(value: Value) -> int | None:
    found = constant_of(value)
    return found if type(found) is int else None

"""Loops: `while` and indexed `for` become While/For regions; a `for` over a compile-time
sequence is unrolled. Loop-carried values start with their types before the loop and are
widened (`values.widen`) until the body yields what it takes: a fixpoint, a few rounds at most.
A variable the body leaves at the same compile-time value stays compile-time."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable

import gast
import numpy as np

from ..graph import (FOR, INDEX_TYPE, WHILE, AnyType, Block, InsertPoint, ListType, Node, Tensor,
                     TupleType, Type, Value)
from . import aliases, names
from .context import DtypeChange, Frame, Mark, NeedsUnrolling, Scope, tuple_items
from .control import (Branch, branch_on, changed_names, defined_in, mutated_lists,
                      prepare_lists, run_branch, same_constant)
from .errors import CompileError
from .operators import condition_value
from .seeds import CarryState, Seeding
from .sequences import as_sequence, indexed, is_compile_time_sequence
from .values import (MISSING, Unusable, absent, describe, has_runtime, is_undefined, kind_name,
                     static_type, truth, widen)

MAX_ROUNDS = 6
"""Rounds of loop-body building before carried types must have settled."""
UNROLL_LIMIT = 256
"""The longest constant range unrolled when one region cannot express the loop."""


@dataclass(eq=False)
class Carry:
    """A loop-carried variable: a compile-time constant while the body leaves it unchanged
    ("const"), unbound before the loop ("unbound"), a block parameter of `type` ("var"), or a
    tuple whose items are carried one by one ("tuple"; tuples never become run-time values, so
    no node reads an item that is unbound on some path)."""
    name: str
    init: Any
    state: CarryState
    type: Type | None = None
    items: list[Carry] = field(default_factory=list)
    keys: tuple[Any, ...] | None = None
    """For a dict carried item by item: its keys (None for a tuple)."""
    param: Value | None = None
    """This round's block parameter (state "var")."""
    shares: frozenset[Any] = frozenset()
    """What the variable was found to alias at the end of an iteration besides what it started
    as: other carries (as `Carry`s) and arrays from outside the loop (see `_shared`)."""

    def container(self, items: list[Any]) -> tuple | dict:
        return dict(zip(self.keys, items)) if self.keys is not None else tuple(items)

    def parts(self, end: Any) -> list[Any] | None:
        """The items of `end` in this carry's order, if it has this carry's structure."""
        if self.keys is None:
            return list(end) if isinstance(end, tuple) and len(end) == len(self.items) else None
        if isinstance(end, dict) and end.keys() == set(self.keys):
            return [end[k] for k in self.keys]
        return None

    def leaves(self) -> list[Carry]:
        """The block parameters this variable needs, in order."""
        if self.state == CarryState.TUPLE:
            return [leaf for item in self.items for leaf in item.leaves()]
        return [self] if self.state == CarryState.VAR else []


def loop_live(body: list[gast.stmt], live: frozenset[str], reads: set[str]) -> frozenset[str]:
    """Names live at the loop header: read by a later iteration or after the loop."""
    header = set(live) | reads
    while True:
        more = names.live_in(body, header) - header
        if not more:
            return frozenset(header)
        header |= more


def _nothing_to_carry(f: Frame, v: Any) -> bool:
    """No value enters the loop: absent, undefined on some path, or unusable."""
    return absent(v, f.pending_is_none) or is_undefined(v) or isinstance(v, Unusable)


def _carry(f: Frame, name: str, init: Any) -> Carry:
    if _nothing_to_carry(f, init):
        return Carry(name, init, CarryState.UNBOUND)
    if isinstance(init, Value) and isinstance(init.type, TupleType):
        init = tuple_items(f, init)
    if isinstance(init, tuple):
        return Carry(name, init, CarryState.TUPLE, items=[_carry(f, name, x) for x in init])
    if isinstance(init, dict):
        return Carry(name, init, CarryState.TUPLE,
                     items=[_carry(f, name, x) for x in init.values()],
                     keys=tuple(init))
    if isinstance(init, Value):
        return Carry(name, init, CarryState.VAR, init.type)
    return Carry(name, init, CarryState.CONST)


def _carries(f: Frame, candidates: set[str]) -> list[Carry]:
    return [_carry(f, name, f.scope.get(name)) for name in sorted(candidates)]


def _seeding(f: Frame, node: gast.stmt, carries: list[Carry]) -> Seeding:
    """Start `carries` from what this loop settled on when the enclosing loop's last round
    built it (see seeds)."""
    return Seeding(f.compiler.loop_seeds, node, carries,
                   lambda name: _carry(f, name, f.scope.get(name)))


def _entry_scope(f: Frame, carries: list[Carry], block: Block) -> Scope:
    """The symbol table at the top of a loop block: carried variables bound to its params."""
    scope = f.scope.copy()
    with f.builder.at(InsertPoint.at_end(block)):
        for c in carries:
            value = _entry(f, c, block)
            if value is MISSING:
                scope.unbind(c.name)
            else:
                scope.vars[c.name] = value
    _share_roots(f, carries)
    return scope


def _share_roots(f: Frame, carries: list[Carry]) -> None:
    """Each loop parameter may alias what its variable started as and what it was found to
    alias at the end of an iteration (see aliases)."""
    for leaf in _leaves(carries):
        if leaf.param is not None:
            others = [x.param if isinstance(x, Carry) else x for x in leaf.shares]
            aliases.share(f, leaf.param, leaf.init, [x for x in others if x is not None])


def _shared(f: Frame, carries: list[Carry], body: Branch) -> bool:
    """Record what each parameter's value at the end of the body may alias that the parameter
    was not known to (a view of another carried array, of one from outside the loop, or an
    array made in the body that another variable also holds); True if that grew."""
    if not aliases.writes_in(body.block):
        return False  # NOTE: what the parameters alias matters only to writes in the body
    by_param = {leaf.param: leaf for leaf in _leaves(carries) if leaf.param is not None}
    made: dict[Value, list[Carry]] = {}
    found: dict[Carry, set[Any]] = {}
    for c in carries:
        for leaf, end in _leaf_ends(f, c, body.scope.get(c.name)):
            if leaf.param is None or not isinstance(end, Value):
                continue
            known, tokens = aliases.roots(f, leaf.param), found.setdefault(leaf, set())
            for root in aliases.roots(f, end) - known:
                if root in by_param:
                    tokens.add(by_param[root])
                elif defined_in(root, body.block):
                    made.setdefault(root, []).append(leaf)
                else:
                    tokens.add(root)
    for group in made.values():
        for leaf in group:
            found[leaf].update(x for x in group if x is not leaf)
    grew = [leaf for leaf, tokens in found.items() if not tokens <= leaf.shares]
    for leaf in grew:
        leaf.shares = leaf.shares | found[leaf]
    return bool(grew)


def _entry(f: Frame, c: Carry, block: Block) -> Any:
    c.param = None
    if c.state == CarryState.VAR:
        c.param = block.add_param(c.type, _hint(c.name))
        return c.param
    if c.state == CarryState.CONST:
        return c.init
    if c.state == CarryState.UNBOUND:
        return c.init if isinstance(c.init, Unusable) else MISSING
    items = [_entry(f, item, block) for item in c.items]
    if all(x is MISSING for x in items):
        return MISSING
    return c.container([f.undefined(c.name) if x is MISSING else x for x in items])


def _settle(f: Frame, carries: list[Carry], body: Branch, header: frozenset[str],
            own: frozenset[str] = frozenset()) -> bool:
    """Update carried states from the body's end; True if nothing changed (a fixpoint)."""
    if body.dead:
        return True
    with f.builder.at(InsertPoint.at_end(body.block)):
        shared = _shared(f, carries, body)
        stable = [_settle_one(f, c, body.scope.get(c.name)) for c in carries]
    return all(stable) and not shared and not _written(f, carries, body, header, own)


def _written(f: Frame, carries: list[Carry], body: Branch, header: frozenset[str],
             own: frozenset[str]) -> bool:
    """Carry the names the body changed without assigning them (an in-place write through
    another name, see aliases) that are read later; True if there were any. `own`: the
    loop's targets, bound by the loop itself."""
    carried = {c.name for c in carries} | own
    more = {name for name in changed_names(f.scope, body.scope) if name not in carried
            and (name in header or names.is_memory(name))}
    carries.extend(_carries(f, more))
    return bool(more)


def _settle_one(f: Frame, c: Carry, end: Any) -> bool:
    if isinstance(end, Unusable):
        raise f.read_unusable(end)
    if isinstance(end, Value) and isinstance(end.type, TupleType) and c.state in (
            CarryState.TUPLE, CarryState.UNBOUND):
        end = tuple_items(f, end)
    if c.state == CarryState.TUPLE:
        if end is MISSING or is_undefined(end):
            return True
        parts = c.parts(end)
        if parts is not None:
            return all([_settle_one(f, item, e) for item, e in zip(c.items, parts)])
        c.state, c.type, c.items = CarryState.VAR, _widen(f, c, _static(f, c.name, c.init), end), []
        return False
    if c.state == CarryState.CONST:
        if end is c.init or not has_runtime(end) and same_constant(end, c.init):
            return True
        c.state, c.type = CarryState.VAR, _widen(f, c, _static(f, c.name, c.init), end)
        return False
    if c.state == CarryState.UNBOUND:
        if end is MISSING or end is c.init or is_undefined(end):
            return True
        if isinstance(end, tuple | dict):
            c.state = CarryState.TUPLE
            c.items = [Carry(c.name, MISSING, CarryState.UNBOUND) for _ in end]
            c.keys = tuple(end) if isinstance(end, dict) else None
            _settle_one(f, c, end)
        else:
            c.state, c.type = CarryState.VAR, _static(f, c.name, end)
        return False
    if end is MISSING or is_undefined(end):
        return True
    new = _widen(f, c, c.type, end)
    if new == c.type:
        return True
    c.type = new
    return False


def _static(f: Frame, name: str, v: Any) -> Type:
    try:
        return static_type(v)
    except TypeError:
        raise f.error(f"`{name}` changes inside a run-time loop, but holds a {describe(v)}, "
                      "which exists only when compiling",
                      "change it with a compile-time loop (over a tuple or list) instead",
                      kind=NeedsUnrolling)


def _widen(f: Frame, c: Carry, before: Type, end: Any) -> Type:
    after = _static(f, c.name, end)
    try:
        return widen(before, after)
    except TypeError:
        if names.is_synthetic(c.name):
            return AnyType()
        hint = ("give it the dtype it ends with before the loop, e.g. "
                f"`{c.name} = {c.name}.astype(np.{after.dtype})`"
                if isinstance(before, Tensor) and isinstance(after, Tensor) else
                "give it a value of the same kind before the loop (e.g. a zeros array instead "
                "of None)")
        kind = DtypeChange if _widens_dtype(before, after) else NeedsUnrolling
        raise f.error(f"`{c.name}` is {kind_name(before)} before the loop but "
                      f"{kind_name(after)} after an iteration", hint, kind=kind) from None


def _widens_dtype(before: Type, after: Type) -> bool:
    """True if only the dtype changed, to one that holds the old one (so peeling settles)."""
    return (isinstance(before, Tensor) and isinstance(after, Tensor)
            and before.rank == after.rank and before.dtype != after.dtype
            and np.promote_types(before.dtype, after.dtype) == after.dtype)


def _leaf_ends(f: Frame, c: Carry, end: Any) -> list[tuple[Carry, Any]]:
    """Each block parameter of `c` with the value the body ends with for it."""
    if c.state == CarryState.TUPLE:
        if isinstance(end, Value) and isinstance(end.type, TupleType):
            end = tuple_items(f, end)
        ends = c.parts(end) or [MISSING] * len(c.items)
        return [pair for item, e in zip(c.items, ends) for pair in _leaf_ends(f, item, e)]
    return [(c, end)] if c.state == CarryState.VAR else []


def _yields(f: Frame, carries: list[Carry], body: Branch) -> list[Value]:
    out = []
    with f.builder.at(InsertPoint.at_end(body.block)):
        for c in carries:
            for leaf, end in _leaf_ends(f, c, body.scope.get(c.name)):
                if body.dead or end is MISSING:
                    out.append(f.undefined(leaf.name))
                else:
                    out.append(f.materialise(end))
    return out


def _inits(f: Frame, carries: list[Carry]) -> list[Value]:
    return [f.undefined(leaf.name) if _nothing_to_carry(f, leaf.init) else f.materialise(leaf.init)
            for c in carries for leaf in c.leaves()]


def _rebuild(c: Carry, outs: Any) -> Any:
    """The variable's value after the loop (MISSING: still unbound)."""
    if c.state == CarryState.VAR:
        return next(outs)
    if c.state == CarryState.CONST:
        return c.init
    if c.state == CarryState.UNBOUND:
        return c.init if isinstance(c.init, Unusable) else MISSING
    items = [_rebuild(item, outs) for item in c.items]
    return MISSING if any(x is MISSING for x in items) else c.container(items)


def _leaves(carries: list[Carry]) -> list[Carry]:
    return [leaf for c in carries for leaf in c.leaves()]


def _after_loop(f: Frame, node: Node, carries: list[Carry], body: Branch, line: int) -> None:
    """Insert the loop node and bind what it carries out; other names the body changed
    cannot be used after the loop."""
    f.builder.insert(node)
    if node.effectful:
        f.compiler.note_effect(node)
    outs = iter(node.outputs)
    for c in carries:
        value = _rebuild(c, outs)
        if value is MISSING:
            f.scope.unbind(c.name)
        else:
            f.scope.bind(c.name, value, line)
    names_carried = {c.name for c in carries}
    for name in changed_names(f.scope, body.scope):
        if name not in names_carried:
            f.scope.vars[name] = Unusable(f"internal: `{name}` was taken to be unused after the "
                                          f"loop at line {line}")


def _discard(*blocks: Block) -> None:
    for block in blocks:
        block.drop_all_uses()


def _candidates(body: list[gast.stmt]) -> set[str]:
    return names.assigned_names(body) | mutated_lists(body)


def build_while(f: Frame, node: gast.While) -> None:
    """A `while` loop: a While region (or nothing, when the condition is false on entry). A
    `for` over a constant range that canonicalize made a while (it breaks or returns) is
    unrolled when its body indexes layers by the loop index."""
    live = f.live_after()
    header = loop_live(node.body, live, names.read_names(node.test))
    mark = Mark(f)
    try:
        _while_region(f, node, header)
    except NeedsUnrolling:
        steps = _constant_range_while(f, node)
        if steps is None or len(steps[1]) > UNROLL_LIMIT:
            raise
        mark.restore(f)
        _unroll_range_while(f, node, header, *steps)


def _constant_range_while(f: Frame, node: gast.While) -> tuple[str, range] | None:
    """(index name, its values) for canonicalize's `while <i> < <stop> and not <brk>:` over a
    range with bounds known now; None for any other while."""
    body = node.body
    if len(body) < 2 or not isinstance(body[1], gast.Assign):
        return None
    target, advance = body[1].targets[0], body[1].value
    if not (isinstance(target, gast.Name) and target.id.startswith(RANGE_PREFIX)
            and isinstance(advance, gast.BinOp) and isinstance(advance.op, gast.Add | gast.Sub)):
        return None
    test = node.test.values[0] if isinstance(node.test, gast.BoolOp) else None
    if not isinstance(test, gast.Compare):
        return None
    start, stop = f.scope.get(target.id), f.evaluate(test.comparators[0])
    step = f.evaluate(advance.right)
    if not all(type(v) is int for v in (start, stop, step)) or step == 0:
        return None
    step = step if isinstance(advance.op, gast.Add) else -step
    return target.id, range(start, stop, step)


def _unroll_range_while(f: Frame, node: gast.While, header: frozenset[str], index: str,
                        values: range) -> None:
    """Each iteration: the index set to its constant, then `if <test>: <body>`."""
    for value in values:
        f.set_stmt(node)
        f.scope.bind(index, value, node.lineno)
        branch_on(f, f.evaluate(node.test), node.body, [], header, node.lineno)
        if f.scope.dead:
            return
    f.scope.vars[index] = Unusable(f"internal: `{index}` is not used after its loop")


RANGE_PREFIX = names.RANGE_INDEX.format("")


def _while_region(f: Frame, node: gast.While, header: frozenset[str]) -> None:
    """One While region."""
    mark = Mark(f)
    prepare_lists(f, node.body)
    seeding = _seeding(f, node, _carries(f, _candidates(node.body) & header))
    carries = seeding.carries
    for _ in range(MAX_ROUNDS):
        cond_block, body_block = Block(), Block()
        try:
            with seeding.round():
                cond, body, stable = _while_round(f, node, header, carries, cond_block,
                                                  body_block)
        except CompileError:
            _discard(cond_block, body_block)  # NOTE: the loop is built again another way
            raise
        if cond is None:
            _discard(cond_block, body_block)
            mark.restore(f)  # never runs: lists stay compile-time
            return
        if not stable:
            _discard(cond_block, body_block)
            continue
        known = truth(cond.result)
        with f.builder.at(InsertPoint.at_end(cond_block)):
            flag = f.constant(True) if known else _condition_in(f, cond)
        cond_block.set_results([flag])
        body_block.set_results(_yields(f, carries, body))
        inits = _inits(f, carries)
        carried = _leaves(carries)
        loop = Node(WHILE, inits, {}, [c.type for c in carried],
                    [_hint(c.name) for c in carried], [cond_block, body_block])
        _after_loop(f, loop, carries, body, node.lineno)
        seeding.settled(carries)
        return
    raise _unsettled(f)


def _while_round(f: Frame, node: gast.While, header: frozenset[str], carries: list[Carry],
                 cond_block: Block, body_block: Block) -> tuple[Branch | None, Branch | None,
                                                                bool]:
    """Build the condition and body once; (None, None, True) when the loop never runs."""
    cond = run_branch(f, lambda: f.evaluate(node.test), _entry_scope(f, carries, cond_block),
                      cond_block)
    if cond.dead:
        raise f.error("a loop condition that always raises is not supported", node=node.test)
    if truth(cond.result) is False:
        return None, None, True
    body = run_branch(f, lambda: f.run_block(node.body, header),
                      _entry_scope(f, carries, body_block), body_block)
    return cond, body, _settle(f, carries, body, header)


def _condition_in(f: Frame, cond: Branch) -> Value:
    saved, f.scope = f.scope, cond.scope
    try:
        return condition_value(f, cond.result)
    finally:
        f.scope = saved


def _hint(name: str) -> str:
    return names.value_hint(name)


def _unsettled(f: Frame) -> CompileError:
    return f.error("the types of the loop's variables keep changing from one iteration to "
                   "the next", "keep each variable's kind, dtype and rank fixed in the loop",
                   kind=NeedsUnrolling)


def build_for(f: Frame, node: gast.For) -> None:
    """A `for` loop: unrolled over a compile-time sequence, else one For region (unrolled
    after all when its body indexes layers by the index and the range is constant)."""
    live = f.live_after()
    iterable = f.evaluate(node.iter)
    targets = names.target_names(node.target)
    # NOTE: the targets are bound afresh at the top of every iteration: live at the header
    # (carried from one iteration to the next) only when read after the loop
    header = (loop_live(node.body, live, set()) - targets) | (targets & live)
    if is_compile_time_sequence(iterable):
        _unroll(f, node, as_sequence(f, iterable), header)
        return
    if isinstance(iterable, Value) and iterable.type == ListType(AnyType()):
        return  # a list nothing is ever appended to: zero trips
    it = indexed(f, iterable)
    bounds = (it.start, it.stop, it.step)
    if not all(isinstance(b, int) for b in bounds):
        _for_region(f, node, it, header, live)
        return
    if it.step != 0 and not range(*bounds):
        return  # zero trips: the target keeps its binding
    mark = Mark(f)
    try:
        _for_region(f, node, it, header, live)
    except NeedsUnrolling:
        if len(range(*bounds)) > UNROLL_LIMIT:
            raise
        mark.restore(f)
        _unroll(f, node, (it.element(i) for i in range(*bounds)), header)


def _unroll(f: Frame, node: gast.For, items: Any, header: frozenset[str]) -> None:
    for item in items:
        f.set_stmt(node)
        f.assign(node.target, item)
        f.run_block(node.body, header)
        if f.scope.dead:
            return


def _for_region(f: Frame, node: gast.For, it: Any, header: frozenset[str],
                live: frozenset[str]) -> None:
    """One For region over range(start, stop, step) of `it`."""
    prepare_lists(f, node.body)
    targets = names.target_names(node.target)
    candidates = (_candidates(node.body) & header) | (targets & live)
    seeding = _seeding(f, node, _carries(f, candidates))
    carries = seeding.carries
    index_name = node.target.id if isinstance(node.target, gast.Name) else "i"
    for _ in range(MAX_ROUNDS):
        body_block = Block()
        index = body_block.add_param(INDEX_TYPE, _hint(index_name))

        def build() -> None:
            f.assign(node.target, it.element(index))
            f.run_block(node.body, header)
        try:
            with seeding.round():
                body = run_branch(f, build, _entry_scope(f, carries, body_block), body_block)
                stable = _settle(f, carries, body, header, frozenset(targets))
        except CompileError:
            _discard(body_block)  # NOTE: the loop is built again another way
            raise
        if not stable:
            _discard(body_block)
            continue
        body_block.set_results(_yields(f, carries, body))
        start, stop, step = (f.materialise(b) for b in (it.start, it.stop, it.step))
        inits = _inits(f, carries)
        carried = _leaves(carries)
        loop = Node(FOR, [start, stop, step, *inits], {}, [c.type for c in carried],
                    [_hint(c.name) for c in carried], [body_block])
        _after_loop(f, loop, carries, body, node.lineno)
        seeding.settled(carries)
        return
    raise _unsettled(f)


HANDLERS: dict[type, Callable[[Frame, Any], None]] = {gast.While: build_while,
                                                      gast.For: build_for}
"""Statement handlers this module adds to `statements.HANDLERS`."""

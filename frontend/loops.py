"""Loops: `while` and indexed `for` become While/For regions; a `for` over a compile-time
sequence is unrolled. Loop-carried values start with their types before the loop and are
widened (`values.widen`) until the body yields what it takes: a fixpoint, a few rounds at most.
A variable the body leaves at the same compile-time value stays compile-time."""
from __future__ import annotations

import copy
from typing import Any, Callable

import gast

from ..graph import FOR, INDEX_TYPE, WHILE, AnyType, Block, InsertPoint, ListType, Node, Value
from . import context, names
from .carries import (Carry, after_loop, entry_scope, hint, init_values, leaves, make_carries,
                      make_seeding, settle, yields)
from .context import Frame, IndexesLayers, KindChanges, Mark, NeedsUnrolling
from .control import Branch, branch_on, branch_with, mutated_lists, run_branch
from .errors import CompileError
from .operators import binary, compare, condition_value
from .sequences import as_sequence, indexed, is_compile_time_sequence
from .values import IndexedIter, Unusable, truth

MAX_ROUNDS = 6
"""Rounds of loop-body building before carried types must have settled."""
UNROLL_LIMIT = 256
"""The longest constant range unrolled when one region cannot express the loop."""
MAX_PEELS = 3
"""How many first iterations of one loop are built before the loop when a carried dtype
changes (int32 -> int64 -> float64 takes two)."""

Tail = tuple[list[gast.stmt], frozenset[str]]
"""The statements after a loop and the names live after them."""


def loop_live(body: list[gast.stmt], live: frozenset[str], reads: set[str]) -> frozenset[str]:
    """Names live at the loop header: read by a later iteration or after the loop."""
    header = set(live) | reads
    while True:
        more = names.live_in(body, header) - header
        if not more:
            return frozenset(header)
        header |= more


def _discard(*blocks: Block) -> None:
    for block in blocks:
        block.drop_all_uses()


def _candidates(body: list[gast.stmt]) -> set[str]:
    return names.assigned_names(body) | mutated_lists(body)


def build_while(f: Frame, node: gast.While) -> None:
    """A `while` loop: a While region (or nothing, when the condition is false on entry). A
    `for` over a constant range that canonicalize made a while (it breaks or returns) is
    unrolled when its body indexes layers by the loop index. When a carried dtype changes in
    the first iteration, that iteration is built before the loop (`_peel_while`)."""
    tail, f.loop_tail = f.loop_tail, None
    live = f.live_after()
    header = loop_live(node.body, live, names.read_names(node.test))
    mark = Mark(f)
    try:
        _while_region(f, node, header)
    except NeedsUnrolling as error:
        steps = _constant_range_while(f, node)
        if steps is not None and len(steps[1]) <= UNROLL_LIMIT:
            mark.restore(f)
            _unroll_range_while(f, node, header, *steps)
        else:
            mark.restore(f)
            try:
                unrolled = _unroll_while(f, node, header)
            except IndexesLayers:
                mark.restore(f)
                unrolled = False
            if not unrolled and _while_another_way(f, node, header, error, mark,
                                                   tail or ([], live)):
                return
    _run_tail(f, tail)


def _while_another_way(f: Frame, node: gast.While, header: frozenset[str],
                       error: NeedsUnrolling, mark: Mark, tail: Tail) -> bool:
    """The loop that neither one plain region nor unrolling could build: with the layers it
    indexes chosen at run time (IndexesLayers), and with its first iteration peeled where a
    carried dtype changes (KindChanges), both when both hold. True if it built `tail` too."""
    if isinstance(error, IndexesLayers):
        try:
            _with_layer_choices(f, lambda: _while_region(f, node, header))
            return False
        except KindChanges as changes:
            mark.restore(f)
            return _with_layer_choices(
                f, lambda: _while_another_way(f, node, header, changes, mark, tail))
    if not isinstance(error, KindChanges) or f.peels.get(id(node), 0) >= MAX_PEELS:
        raise error
    _peel_while(f, node, tail)
    return True


def _with_layer_choices(f: Frame, build: Callable[[], Any]) -> Any:
    """Build a loop that indexes layers by a run-time value and cannot be unrolled: the
    index picks the layer at run time (see `IndexesLayers`)."""
    f.compiler.layer_choices += 1
    try:
        return build()
    finally:
        f.compiler.layer_choices -= 1


def _run_tail(f: Frame, tail: Tail | None) -> None:
    if tail is not None and not f.scope.dead:
        f.run_block(*tail)


def build_loop_with_tail(f: Frame, node: gast.While | gast.For, rest: list[gast.stmt],
                         live_out: frozenset[str]) -> None:
    """Build a loop whose peeled first iteration left a variable with different dtypes after
    the loop (it ran, or not): the statements after the loop are built on both paths."""
    f.loop_tail = (rest, live_out)
    try:
        (build_while if isinstance(node, gast.While) else build_for)(f, node)
    finally:
        f.loop_tail = None


def _peel_while(f: Frame, node: gast.While, tail: Tail) -> None:
    """`while c: body` as `if c: body; while c: body`, then what follows on both paths (Python
    promotion changed a carried dtype in the first iteration, and only then)."""
    rest, live_out = tail
    f.peels[id(node)] = f.peels.get(id(node), 0) + 1
    try:
        # NOTE: the peeled iteration is a copy: what is keyed by a statement (the types a loop
        # inside settled on, functions defined in it) belongs to the loop's own body
        branch_with(f, f.condition(node.test),
                    lambda: f.run_block([*copy.deepcopy(node.body), node, *rest], live_out),
                    lambda: f.run_block(rest, live_out), live_out, node.lineno)
    finally:
        f.peels[id(node)] -= 1


def _unroll_while(f: Frame, node: gast.While, header: frozenset[str]) -> bool:
    """Run the loop's iterations one by one while its condition is known now (a counter or a
    dict the body changes at compile time); the rest, once the condition depends on run-time
    values, is one region. False if the condition is not known on entry, or stays known for
    more than UNROLL_LIMIT iterations."""
    mark = Mark(f)
    for count in range(UNROLL_LIMIT + 1):
        f.set_stmt(node)
        known = truth(f.condition(node.test))
        if known is False:
            return True
        if known is None or count == UNROLL_LIMIT:
            if count == 0 or known is not None:
                mark.restore(f)
                return False
            _while_region(f, node, header)
            return True
        f.run_block(node.body, header)
        if f.scope.dead:
            return True
    return False


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
        branch_on(f, f.condition(node.test), node.body, [], header, node.lineno)
        if f.scope.dead:
            return
    f.scope.vars[index] = Unusable(f"internal: `{index}` is not used after its loop")


RANGE_PREFIX = names.RANGE_INDEX.format("")


def _while_region(f: Frame, node: gast.While, header: frozenset[str]) -> None:
    """One While region."""
    mark = Mark(f)
    seeding = make_seeding(f, node, make_carries(f, _candidates(node.body) & header))
    carries = seeding.carries
    for _ in range(MAX_ROUNDS):
        cond_block, body_block = Block(), Block()
        try:
            with seeding.round():
                cond, body, stable = _while_round(f, node, header, carries, cond_block,
                                                  body_block)
        except BaseException:
            _discard(cond_block, body_block)  # NOTE: the loop is built again another way
            raise
        if cond is None:
            _discard(cond_block, body_block)
            mark.restore(f)  # never runs: lists stay compile-time
            return
        if cond.dead:
            _discard(cond_block, body_block)
            mark.restore(f)
            f.condition(node.test)  # NOTE: its first check raises at run time: so does this
            raise f.error("a loop condition that always raises is not supported",
                          node=node.test)  # NOTE: only where it raises for later iterations
        if not stable:
            _discard(cond_block, body_block)
            continue
        known = truth(cond.result)
        with f.builder.at(InsertPoint.at_end(cond_block)):
            flag = f.constant(True) if known else _condition_in(f, cond)
        cond_block.set_results([flag])
        body_block.set_results(yields(f, carries, body))
        inits = init_values(f, carries)
        carried = leaves(carries)
        loop = Node(WHILE, inits, {}, [c.type for c in carried],
                    [hint(c.name) for c in carried], [cond_block, body_block])
        after_loop(f, loop, carries, body, node.lineno)
        seeding.settled(carries)
        return
    raise _unsettled(f)


def _while_round(f: Frame, node: gast.While, header: frozenset[str], carries: list[Carry],
                 cond_block: Block, body_block: Block) -> tuple[Branch | None, Branch | None,
                                                                bool]:
    """Build the condition and body once; (None, None, True) when the loop never runs,
    (cond, None, True) when its condition always raises."""
    cond = run_branch(f, lambda: f.condition(node.test), entry_scope(f, carries, cond_block),
                      cond_block)
    if cond.dead:
        return cond, None, True
    if truth(cond.result) is False:
        return None, None, True
    body = run_branch(f, _peel_on_conflict(
        lambda: f.run_block(node.body, _carried_live(header, carries))),
        entry_scope(f, carries, body_block), body_block)
    return cond, body, settle(f, carries, body, header)


def _carried_live(header: frozenset[str], carries: list[Carry]) -> frozenset[str]:
    """The names live at the end of a loop body: those read later, and every carried name (a
    name holding a list another carried name holds is carried too: it must end the body
    bound, even if nothing reads it again)."""
    return header | {c.name for c in carries}


def _peel_on_conflict(build_body: Callable[[], None]) -> Callable[[], None]:
    """`build_body`, with a MergeConflict that reaches the end of the loop body (a variable's
    dtype or kind differs between the paths through the body's last `if`, as when one path
    promotes an int32 accumulator and another `continue`s) raised as KindChanges: the loop's
    first iteration is then built before it, where the promotion may be decided at compile
    time (`if i > 2: continue` with i = 0), and the loop over the rest carries the wider value."""
    def build() -> None:
        try:
            build_body()
        except context.MergeConflict as conflict:
            raise KindChanges(conflict.message, conflict.file, conflict.line, conflict.col,
                              conflict.source_line, conflict.hint) from None
    return build


def _condition_in(f: Frame, cond: Branch) -> Value:
    saved, f.scope = f.scope, cond.scope
    try:
        return condition_value(f, cond.result)
    finally:
        f.scope = saved


def _unsettled(f: Frame) -> CompileError:
    return f.error("the types of the loop's variables keep changing from one iteration to "
                   "the next", "keep each variable's kind, dtype and rank fixed in the loop",
                   kind=NeedsUnrolling)


def build_for(f: Frame, node: gast.For) -> None:
    """A `for` loop: unrolled over a compile-time sequence, else one For region (unrolled
    after all when its body indexes layers by the index and the range is constant). When a
    carried dtype changes in the first iteration, that iteration is built before the loop."""
    tail, f.loop_tail = f.loop_tail, None
    live = f.live_after()
    iterable = f.evaluate(node.iter)
    targets = names.target_names(node.target)
    # NOTE: the targets are bound afresh at the top of every iteration: live at the header
    # (carried from one iteration to the next) only when read after the loop
    header = (loop_live(node.body, live, set()) - targets) | (targets & live)
    if is_compile_time_sequence(iterable):
        _unroll(f, node, as_sequence(f, iterable), header)
    elif isinstance(iterable, Value) and iterable.type == ListType(AnyType()):
        pass  # a list nothing is ever appended to: zero trips
    elif _for_over(f, node, indexed(f, iterable), header, live, tail):
        return
    _run_tail(f, tail)


def _for_over(f: Frame, node: gast.For, it: IndexedIter, header: frozenset[str],
              live: frozenset[str], tail: Tail | None) -> bool:
    """The loop over `it`'s indices; True if it built `tail` too (on both sides of a peeled
    first iteration)."""
    bounds = (it.start, it.stop, it.step)
    static = all(isinstance(b, int) for b in bounds)
    if static and it.step != 0 and not range(*bounds):
        return False  # zero trips: the target keeps its binding
    mark = Mark(f)
    try:
        _for_region(f, node, it, header, live)
    except NeedsUnrolling as error:
        if static and len(range(*bounds)) <= UNROLL_LIMIT:
            mark.restore(f)
            _unroll(f, node, (it.element(i) for i in range(*bounds)), header)
            return False
        mark.restore(f)
        return _for_another_way(f, node, it, header, live, error, mark, tail or ([], live))
    return False


def _for_another_way(f: Frame, node: gast.For, it: IndexedIter, header: frozenset[str],
                     live: frozenset[str], error: NeedsUnrolling, mark: Mark, tail: Tail
                     ) -> bool:
    """`_while_another_way` for a loop over `it`'s indices."""
    if isinstance(error, IndexesLayers):
        try:
            _with_layer_choices(f, lambda: _for_region(f, node, it, header, live))
            return False
        except KindChanges as changes:
            mark.restore(f)
            return _with_layer_choices(f, lambda: _for_another_way(
                f, node, it, header, live, changes, mark, tail))
    if (not isinstance(error, KindChanges) or not isinstance(it.step, int)
            or it.step == 0 or f.peels.get(id(node), 0) >= MAX_PEELS):
        raise error
    _peel_for(f, node, it, header, live, tail)
    return True


def _peel_for(f: Frame, node: gast.For, it: IndexedIter, header: frozenset[str],
              live: frozenset[str], tail: Tail) -> None:
    """The first iteration under `if start < stop` (`>` for a negative step), then the loop
    from the next index, then what follows; only what follows on the other path."""
    rest, live_out = tail

    def first_then_loop() -> None:
        f.assign(node.target, it.element(it.start))
        f.run_block(copy.deepcopy(node.body), header)
        if f.scope.dead:
            return
        f.set_stmt(node)
        later = IndexedIter(binary(f, "Add", it.start, it.step), it.stop, it.step, it.element)
        if not _for_over(f, node, later, header, live, tail):
            _run_tail(f, tail)

    f.peels[id(node)] = f.peels.get(id(node), 0) + 1
    try:
        runs = compare(f, "Lt" if it.step > 0 else "Gt", it.start, it.stop)
        branch_with(f, runs, first_then_loop, lambda: f.run_block(rest, live_out), live_out,
                    node.lineno)
    finally:
        f.peels[id(node)] -= 1


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
    targets = names.target_names(node.target)
    candidates = (_candidates(node.body) & header) | (targets & live)
    seeding = make_seeding(f, node, make_carries(f, candidates))
    carries = seeding.carries
    index_name = node.target.id if isinstance(node.target, gast.Name) else "i"
    for _ in range(MAX_ROUNDS):
        body_block = Block()
        index = body_block.add_param(INDEX_TYPE, hint(index_name))

        @_peel_on_conflict
        def build() -> None:
            f.assign(node.target, it.element(index))
            f.run_block(node.body, _carried_live(header, carries))
        try:
            with seeding.round():
                body = run_branch(f, build, entry_scope(f, carries, body_block), body_block)
                stable = settle(f, carries, body, header, frozenset(targets))
        except BaseException:
            _discard(body_block)  # NOTE: the loop is built again another way
            raise
        if not stable:
            _discard(body_block)
            continue
        body_block.set_results(yields(f, carries, body))
        start, stop, step = (f.materialise(b) for b in (it.start, it.stop, it.step))
        inits = init_values(f, carries)
        carried = leaves(carries)
        loop = Node(FOR, [start, stop, step, *inits], {}, [c.type for c in carried],
                    [hint(c.name) for c in carried], [body_block])
        after_loop(f, loop, carries, body, node.lineno)
        seeding.settled(carries)
        return
    raise _unsettled(f)


HANDLERS: dict[type, Callable[[Frame, Any], None]] = {gast.While: build_while,
                                                      gast.For: build_for}
"""Statement handlers this module adds to `statements.HANDLERS`."""

"""Loops: `while` and indexed `for` become While/For regions; a `for` over a compile-time
sequence is unrolled. Loop-carried values start with their types before the loop and are
widened (`values.widen`) until the body yields what it takes: a fixpoint, a few rounds at most.
A variable the body leaves at the same compile-time value stays compile-time."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import gast

from ..graph import FOR, INDEX_TYPE, WHILE, AnyType, Block, InsertPoint, Node, Tensor, Type, Value
from . import names
from .context import Frame, Scope
from .control import Branch, changed_names, mutated_lists, prepare_lists, run_branch, same_constant
from .errors import CompileError
from .expressions import evaluate
from .operators import condition_value
from .sequences import as_sequence, indexed, is_compile_time_sequence
from .values import (MISSING, PENDING, Unusable, describe, has_runtime, is_undefined, kind_name,
                     static_type, truth, widen)

MAX_ROUNDS = 6
"""Rounds of loop-body building before carried types must have settled."""


@dataclass
class Carry:
    """A loop-carried variable: a compile-time constant while the body leaves it unchanged
    ("const"), unbound before the loop ("unbound"), or a block parameter of `type` ("var")."""
    name: str
    init: Any
    state: str
    type: Type | None = None


def loop_live(body: list[gast.stmt], live: frozenset[str], reads: set[str]) -> frozenset[str]:
    """Names live at the loop header: read by a later iteration or after the loop."""
    header = set(live) | reads
    while True:
        more = names.live_in(body, header) - header
        if not more:
            return frozenset(header)
        header |= more


def _carries(f: Frame, candidates: set[str]) -> list[Carry]:
    out = []
    for name in sorted(candidates):
        init = f.scope.get(name)
        absent = init is MISSING or is_undefined(init) or isinstance(init, Unusable) or (
            init is PENDING and not f.pending_is_none)
        if absent:
            out.append(Carry(name, init, "unbound"))
        elif isinstance(init, Value):
            out.append(Carry(name, init, "var", init.type))
        else:
            out.append(Carry(name, init, "const"))
    return out


def _entry_scope(f: Frame, carries: list[Carry], block: Block) -> Scope:
    """The symbol table at the top of a loop block: carried variables bound to its params."""
    scope = f.scope.copy()
    for c in carries:
        if c.state == "var":
            scope.bind(c.name, block.add_param(c.type, "" if names.is_synthetic(c.name)
                                               else c.name))
        elif c.state == "unbound" and not isinstance(c.init, Unusable):
            scope.unbind(c.name)
    return scope


def _settle(f: Frame, carries: list[Carry], body: Branch) -> bool:
    """Update carried states from the body's end; True if nothing changed (a fixpoint)."""
    if body.dead:
        return True
    stable = True
    for c in carries:
        end = body.scope.get(c.name)
        if isinstance(end, Unusable):
            raise f.read_unusable(end)
        if c.state == "const":
            if end is c.init or not has_runtime(end) and same_constant(end, c.init):
                continue
            c.state, c.type = "var", _widen(f, c, _static(f, c.name, c.init), end)
        elif c.state == "unbound":
            if end is MISSING or end is c.init or is_undefined(end):
                continue
            c.state, c.type = "var", _static(f, c.name, end)
        else:
            if end is MISSING or is_undefined(end):
                continue
            new = _widen(f, c, c.type, end)
            if new == c.type:
                continue
            c.type = new
        stable = False
    return stable


def _static(f: Frame, name: str, v: Any) -> Type:
    try:
        return static_type(v)
    except TypeError:
        raise f.error(f"`{name}` changes inside a run-time loop, but holds a {describe(v)}, "
                      "which exists only when compiling",
                      "change it with a compile-time loop (over a tuple or list) instead")


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
        raise f.error(f"`{c.name}` is {kind_name(before)} before the loop but "
                      f"{kind_name(after)} after an iteration", hint) from None


def _yields(f: Frame, carries: list[Carry], body: Branch) -> list[Value]:
    out = []
    for c in (c for c in carries if c.state == "var"):
        end = body.scope.get(c.name)
        if body.dead or end is MISSING:
            with f.builder.at(InsertPoint.at_end(body.block)):
                out.append(f.undefined(c.name))
        else:
            out.append(f.new_block_value(body.block, end))
    return out


def _inits(f: Frame, carries: list[Carry]) -> list[Value]:
    out = []
    for c in (c for c in carries if c.state == "var"):
        absent = c.init is MISSING or isinstance(c.init, Unusable) or (
            c.init is PENDING and not f.pending_is_none)
        out.append(f.undefined(c.name) if absent else f.materialise(c.init))
    return out


def _after_loop(f: Frame, node: Node, carries: list[Carry], body: Branch, line: int) -> None:
    """Insert the loop node and bind what it carries out; other names the body changed
    cannot be used after the loop."""
    f.builder.insert(node)
    if node.effectful:
        f.compiler.note_effect(node)
    carried = [c for c in carries if c.state == "var"]
    for c, out in zip(carried, node.outputs):
        f.scope.bind(c.name, out, line)
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
    """A `while` loop: a While region (or nothing, when the condition is false on entry)."""
    from .statements import run_block
    live = f.live_after()
    prepare_lists(f, node.body)
    header = loop_live(node.body, live, names.read_names(node.test))
    carries = _carries(f, _candidates(node.body) & header)
    for _ in range(MAX_ROUNDS):
        cond_block, body_block = Block(), Block()
        cond = run_branch(f, lambda: evaluate(f, node.test),
                          _entry_scope(f, carries, cond_block), cond_block)
        if cond.dead:
            raise f.error("a loop condition that always raises is not supported",
                          node=node.test)
        known = truth(cond.result)
        if known is False:
            _discard(cond_block, body_block)
            return
        body = run_branch(f, lambda: run_block(f, node.body, header),
                          _entry_scope(f, carries, body_block), body_block)
        if not _settle(f, carries, body):
            _discard(cond_block, body_block)
            continue
        with f.builder.at(InsertPoint.at_end(cond_block)):
            flag = f.constant(True) if known else _condition_in(f, cond)
        cond_block.set_results([flag])
        body_block.set_results(_yields(f, carries, body))
        inits = _inits(f, carries)
        carried = [c for c in carries if c.state == "var"]
        loop = Node(WHILE, inits, {}, [c.type for c in carried],
                    [_hint(c.name) for c in carried], [cond_block, body_block])
        _after_loop(f, loop, carries, body, node.lineno)
        return
    raise _unsettled(f)


def _condition_in(f: Frame, cond: Branch) -> Value:
    saved, f.scope = f.scope, cond.scope
    try:
        return condition_value(f, cond.result)
    finally:
        f.scope = saved


def _hint(name: str) -> str:
    return "" if names.is_synthetic(name) else name


def _unsettled(f: Frame) -> CompileError:
    return f.error("the types of the loop's variables keep changing from one iteration to "
                   "the next", "keep each variable's kind, dtype and rank fixed in the loop")


def build_for(f: Frame, node: gast.For) -> None:
    """A `for` loop: unrolled over a compile-time sequence, else one For region."""
    from .statements import assign_target, run_block
    live = f.live_after()
    iterable = evaluate(f, node.iter)
    header = loop_live(node.body, live, set())
    if is_compile_time_sequence(iterable):
        for item in as_sequence(f, iterable):
            f.set_stmt(node)
            assign_target(f, node.target, item)
            run_block(f, node.body, header)
            if f.scope.dead:
                return
        return
    it = indexed(f, iterable)
    bounds = (it.start, it.stop, it.step)
    if all(isinstance(b, int) for b in bounds) and it.step != 0 and not range(*bounds):
        return  # zero trips: the target keeps its binding
    start, stop, step = (f.materialise(b) for b in bounds)
    prepare_lists(f, node.body)
    targets = names.target_names(node.target)
    carries = _carries(f, (_candidates(node.body) & header) | (targets & live))
    index_name = node.target.id if isinstance(node.target, gast.Name) else "i"
    for _ in range(MAX_ROUNDS):
        body_block = Block()
        index = body_block.add_param(INDEX_TYPE, _hint(index_name))

        def build() -> None:
            assign_target(f, node.target, it.element(index))
            run_block(f, node.body, header)
        body = run_branch(f, build, _entry_scope(f, carries, body_block), body_block)
        if not _settle(f, carries, body):
            _discard(body_block)
            continue
        body_block.set_results(_yields(f, carries, body))
        inits = _inits(f, carries)
        carried = [c for c in carries if c.state == "var"]
        loop = Node(FOR, [start, stop, step, *inits], {}, [c.type for c in carried],
                    [_hint(c.name) for c in carried], [body_block])
        _after_loop(f, loop, carries, body, node.lineno)
        return
    raise _unsettled(f)


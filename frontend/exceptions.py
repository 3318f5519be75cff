"""Try statements become Try regions: the try block, one except block dispatching on the caught
exception's class (an if chain, in the order of the `except` clauses), and the finally block.

Python lets an except or finally block start at whichever statement raised, seeing every
variable as it was then. A Try region's blocks see only values from before the statement, so a
name the try block changes is unusable there, and unusable after the statement when an except
block falls through without binding it, with two exact exceptions: the compiler's own flags
(set only where nothing can raise after them) and names the try block binds in its last
statement (an exception leaves them unbound by it). A finally block sees the values from before
the statement and may bind names of its own; `canonicalize` has rewritten `else` blocks and
jumps, and `check` refused jumps out of a finally block.
"""
from __future__ import annotations

from typing import Any

import gast

from ..graph import TRY, AnyType, Block, Node, Value
from . import names
from .context import DeadPath, Frame, Scope
from .control import Branch, Merger, branch_with, changed_names, fill, run_branch
from .values import MISSING, Unusable, describe


def build_try(f: Frame, stmt: gast.Try) -> None:
    """A try statement (see the module docstring)."""
    line = stmt.lineno
    live = f.live_after()
    clauses = [(_caught(f, h), h) for h in stmt.handlers]
    catch = tuple(dict.fromkeys(c for types, _ in clauses for c in types))
    watched = live | names.read_names(stmt.handlers) | names.read_names(stmt.finalbody)
    before = f.scope
    f.compiler.watched += 1
    try:
        body = run_branch(f, lambda: f.run_block(stmt.body, watched))
    finally:
        f.compiler.watched -= 1
    stale = _stale(before, body.scope, _bound_last(stmt.body), "the try block")
    handler = None
    if clauses:
        block = Block([AnyType()], ["exc"])
        f.scope = _with(before, stale)
        try:
            handler = run_branch(f, lambda: _dispatch(f, block.params[0], clauses, live, line),
                                 block=block)
        except BaseException:
            body.block.drop_all_uses()
            block.drop_all_uses()
            raise
        finally:
            f.scope = before
    merger = Merger(f, body, handler or _never(before))
    merged = {name: merger.merge(name, body.scope.get(name), merger.else_.scope.get(name))
              for name in changed_names(before, body.scope, merger.else_.scope)}
    final = _build_finally(f, stmt, before, [body] + ([handler] if handler else []), live)
    node = _finish(f, merger, final, catch)
    outs = node.outputs if node is not None else []
    memo: dict[int, Any] = {}
    for name, value in merged.items():
        _rebind(f, name, fill(value, outs, memo), line)
    if final is not None:
        tail_outs = outs[len(merger.yields):]
        for name, value in final[1].items():
            _rebind(f, name, fill(value, tail_outs, memo), line)
    if body.dead and (handler is None or handler.dead):
        f.scope.dead = True


def _caught(f: Frame, handler: gast.ExceptHandler) -> tuple[type, ...]:
    """The exception classes one `except` clause names (bare `except:` is BaseException)."""
    if handler.type is None:
        return (BaseException,)
    value = f.evaluate(handler.type)
    classes = value if isinstance(value, tuple) else (value,)
    for cls in classes:
        if not (isinstance(cls, type) and issubclass(cls, BaseException)):
            raise f.error(f"`except` needs exception classes known when compiling, not "
                          f"{describe(cls)}", "name the class: `except ValueError:`",
                          node=handler.type)
    return classes


def _bound_last(stmts: list[gast.stmt]) -> set[str]:
    """Names the last statement binds (before the compiler's flag assignments), if it is an
    assignment to plain names: an exception raised in the try block leaves them as they were."""
    real = [s for s in stmts if not _sets_flag(s)]
    if not real or not isinstance(real[-1], gast.Assign | gast.AugAssign | gast.AnnAssign):
        return set()
    last = real[-1]
    targets = last.targets if isinstance(last, gast.Assign) else [last.target]
    if not all(_plain(t) for t in targets):
        return set()
    return set().union(*(names.target_names(t) for t in targets))


def _plain(target: gast.expr) -> bool:
    if isinstance(target, gast.Tuple | gast.List):
        return all(_plain(e) for e in target.elts)
    return isinstance(target, gast.Name)


def _sets_flag(stmt: gast.stmt) -> bool:
    """`__amber_... = <constant>` (a flag canonicalize added)."""
    return isinstance(stmt, gast.Assign) and isinstance(stmt.value, gast.Constant) and all(
        isinstance(t, gast.Name) and names.is_synthetic(t.id) for t in stmt.targets)


def _stale(before: Scope, after: Scope, exact: set[str], where: str) -> dict[str, Any]:
    """Names `after` changed whose value an exception may have caught half-way: each ->
    what an except or finally block sees instead (Unusable, or the value from before)."""
    stale: dict[str, Any] = {}
    for name in changed_names(before, after):
        if names.is_synthetic(name) and not names.is_memory(name) or name in exact:
            continue  # NOTE: flags are set where nothing can raise after them
        stale[name] = Unusable(
            f"{names.shown(name)} is changed by {where}, which may have raised before or after "
            "changing it", f"bind {names.shown(name)} in every except block too, or read it "
            "only after the try statement")
    return stale


def _with(scope: Scope, stale: dict[str, Any]) -> Scope:
    """A copy of `scope` with the `stale` names bound to what they stand for there."""
    out = scope.copy()
    for name, value in stale.items():
        out.bind(name, value, scope.lines.get(name, 0))
    return out


def _never(before: Scope) -> Branch:
    """The except block of a try statement without one: a path that never ends."""
    scope = before.copy()
    scope.dead = True
    return Branch(Block(), scope)


def _dispatch(f: Frame, exc: Value, clauses: list, live: frozenset[str], line: int) -> None:
    """The except block: the first clause whose classes match runs (the last one needs no test:
    the region catches only what some clause names)."""
    (types, handler), rest = clauses[0], clauses[1:]

    def run() -> None:
        saved = f.handling
        f.handling = saved + [exc]
        try:
            if handler.name is not None:
                f.scope.bind(handler.name.id, exc, line)
            f.run_block(handler.body, live)
            if handler.name is not None and not f.scope.dead:
                f.scope.unbind(handler.name.id)  # NOTE: as Python deletes it after the block
        finally:
            f.handling = saved

    if not rest:
        run()
        return
    test = f.op("exc_matches", exc, types=types)
    branch_with(f, test, run, lambda: _dispatch(f, exc, rest, live, line), live, line)


def _build_finally(f: Frame, stmt: gast.Try, before: Scope, ran: list[Branch],
                   live: frozenset[str]) -> tuple[Merger, dict[str, Any]] | None:
    """The finally block, built from the values before the statement (none the try or except
    block changed: it runs after any of their statements); returns its merger (one live
    side) and what it binds."""
    if not stmt.finalbody:
        return None
    changed = {name: Unusable(f"{names.shown(name)} is changed by the try statement, and its "
                              "finally block may run after any of its statements",
                              "read it after the try statement instead")
               for name in changed_names(before, *(b.scope for b in ran))
               if not names.is_synthetic(name) or names.is_memory(name)}
    start = _with(before, changed)
    saved = f.scope
    f.scope = start
    try:
        final = run_branch(f, lambda: f.run_block(stmt.finalbody, live))
    finally:
        f.scope = saved
    merger = Merger(f, final, _never(start))
    binds = {name: merger.merge(name, final.scope.get(name), None)
             for name in changed_names(start, final.scope)}
    if final.dead:
        raise DeadPath
    return merger, binds


def _finish(f: Frame, merger: Merger, final: tuple[Merger, dict[str, Any]] | None,
            catch: tuple[type, ...]) -> Node | None:
    """Build the Try region (unless it would do nothing): outputs are the try/except merges,
    then what the finally block binds."""
    body, handler = merger.then.block, merger.else_.block
    body.set_results([a for a, _ in merger.yields])
    blocks = [body]
    if catch:
        handler.set_results([b for _, b in merger.yields])
        blocks.append(handler)
    else:
        handler.drop_all_uses()
    types, hints = list(merger.types), list(merger.names)
    if final is not None:
        tail, _ = final
        tail.then.block.set_results([a for a, _ in tail.yields])
        tail.else_.block.drop_all_uses()
        blocks.append(tail.then.block)
        types += tail.types
        hints += tail.names
    effects = any(n.effectful for b in blocks for n in b.nodes)
    if not types and not any(b.nodes for b in blocks):
        for block in blocks:
            block.drop_all_uses()
        return None
    node = Node(TRY, [], {"catch": catch}, types, hints, blocks)
    f.builder.insert(node)
    f.compiler.numbers.update((node.outputs[i], o) for i, o in merger.numbers.items())
    if final is not None:
        shift = len(merger.yields)
        f.compiler.numbers.update((node.outputs[shift + i], o)
                                  for i, o in final[0].numbers.items())
    if effects:
        f.compiler.note_effect(node)
    return node


def _rebind(f: Frame, name: str, value: Any, line: int) -> None:
    if value is MISSING:
        f.scope.unbind(name)
    else:
        f.scope.bind(name, value, line)


HANDLERS = {gast.Try: build_try}
"""Statement handlers this module adds to `statements.HANDLERS`."""

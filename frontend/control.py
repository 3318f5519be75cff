"""Control flow: `if` statements and expressions (`and`, `or`, ternaries) on run-time conditions
become If regions; `while` and indexed `for` become While/For regions; conditions and
iterables known at compile time are decided (or unrolled) while building.

Branch and loop bodies are built with copies of the symbol table; what they bind differently
is merged into region outputs. Loop-carried values start with their types before the loop and
are widened (`values.widen`) until the body yields what it takes (a few rounds at most).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable

import gast

from ..graph import FOR, IF, INDEX_TYPE, WHILE, AnyType, Block, InsertPoint, Node, Type, Value
from . import names
from .context import DeadPath, Frame, Scope
from .errors import CompileError
from .expressions import evaluate
from .guards import same_value
from .operators import condition_value
from .sequences import as_sequence, indexed, is_compile_time_sequence
from .values import (MISSING, PENDING, PyList, Unusable, describe, has_runtime, is_undefined,
                     kind_name, static_type, truth, widen)

MAX_ROUNDS = 6
"""Rounds of loop-body building before carried types must have settled."""
LIST_MUTATORS = ("append", "extend", "insert", "pop", "reverse", "clear")


@dataclass
class Branch:
    """One built block (a branch or loop body) and the symbol table at its end."""
    block: Block
    scope: Scope
    result: Any = None

    @property
    def dead(self) -> bool:
        return self.scope.dead


def run_branch(f: Frame, build: Callable[[], Any], scope: Scope | None = None,
               block: Block | None = None) -> Branch:
    """Build into a fresh (or given) block with a copy of the symbol table."""
    block = block if block is not None else Block()
    saved = (f.scope, f.builder.loc, f.stmt)
    f.scope = (scope if scope is not None else f.scope).copy()
    try:
        with f.builder.at(InsertPoint.at_end(block)):
            result = None
            try:
                result = build()
            except DeadPath:
                f.scope.dead = True
        return Branch(block, f.scope, result)
    finally:
        f.scope, f.builder.loc, f.stmt = saved


def defined_in(value: Value, block: Block) -> bool:
    """True if `value` is made inside `block` (at any depth)."""
    owner = value.owner
    inner = owner.parent if isinstance(owner, Node) else owner
    while isinstance(inner, Block):
        if inner is block:
            return True
        node = inner.parent
        if not isinstance(node, Node):
            return False
        inner = node.parent
    return False


def same_constant(a: Any, b: Any) -> bool:
    """Two compile-time values that are interchangeable."""
    if isinstance(a, PyList) or isinstance(b, PyList):
        return a is b
    return same_value(a, b)


class _Out:
    """Stands for output `k` of the region being built, until the node exists."""
    __slots__ = ("k",)

    def __init__(self, k: int) -> None:
        self.k = k


def fill(v: Any, outs: list[Value]) -> Any:
    if isinstance(v, _Out):
        return outs[v.k]
    if isinstance(v, tuple):
        return tuple(fill(x, outs) for x in v)
    return v


class Merger:
    """Merges what two branches bind into If outputs (the phis)."""

    def __init__(self, f: Frame, then: Branch, else_: Branch) -> None:
        self.f, self.then, self.else_ = f, then, else_
        self.yields: list[tuple[Value, Value]] = []
        self.types: list[Type] = []
        self.names: list[str] = []

    def merge(self, name: str, a: Any, b: Any) -> Any:
        if self.then.dead:
            return self._one_side(name, b, 1)
        if self.else_.dead:
            return self._one_side(name, a, 0)
        return self._merge(name, a, b)

    def _absent(self, v: Any) -> bool:
        return v is MISSING or (v is PENDING and not self.f.pending_is_none)

    def _merge(self, name: str, a: Any, b: Any) -> Any:
        if a is b or isinstance(a, Unusable):
            return a
        if isinstance(b, Unusable):
            return b
        if self._absent(a) and self._absent(b):
            return a
        if self._absent(a):
            return self._half(name, b, 1)
        if self._absent(b):
            return self._half(name, a, 0)
        if not has_runtime(a) and not has_runtime(b) and same_constant(a, b):
            return a
        if isinstance(a, tuple) and isinstance(b, tuple) and len(a) == len(b):
            return tuple(self._merge(name, x, y) for x, y in zip(a, b))
        return self._output(name, a, b)

    def _one_side(self, name: str, v: Any, side: int) -> Any:
        """The other branch never ends: keep `v`, as an output if it was made in the branch."""
        branch = (self.then, self.else_)[side]
        if isinstance(v, tuple):
            return tuple(self._one_side(name, x, side) for x in v)
        if isinstance(v, Value) and not defined_in(v, branch.block) or not has_runtime(v):
            return v
        return self._half(name, v, side)

    def _half(self, name: str, v: Any, side: int) -> Any:
        """`v` bound on one side only: the other side yields `undefined`."""
        if isinstance(v, tuple):
            return tuple(self._half(name, x, side) for x in v)
        blocks = (self.then.block, self.else_.block)
        try:
            value = self.f.new_block_value(blocks[side], v)
        except CompileError:
            return Unusable(f"`{name}` is bound on only some paths here and holds a "
                            f"{describe(v)}", "bind it before the `if` as well")
        with self.f.builder.at(InsertPoint.at_end(blocks[1 - side])):
            other = self.f.undefined(name)
        pair = (value, other) if side == 0 else (other, value)
        return self._add(pair, value.type, name)

    def _output(self, name: str, a: Any, b: Any) -> Any:
        try:
            va = self.f.new_block_value(self.then.block, a)
            vb = self.f.new_block_value(self.else_.block, b)
        except CompileError:
            return Unusable(f"`{name}` is {describe(a)} on one path and {describe(b)} on the "
                            "other, and such objects exist only at compile time",
                            "choose between them with a compile-time condition")
        return self._add((va, vb), self._join(name, va, vb), name)

    def _join(self, name: str, va: Value, vb: Value) -> Type:
        if is_undefined(va) or is_undefined(vb):
            return vb.type if is_undefined(va) else va.type
        try:
            return widen(va.type, vb.type)
        except TypeError:
            if names.is_synthetic(name) or name == EXPRESSION:
                return AnyType()  # e.g. a function returning different kinds on different paths
            lines = [b.scope.lines.get(name, 0) for b in (self.then, self.else_)]
            raise self.f.error(
                f"`{name}` is {kind_name(va.type)} on the path through line {lines[0]} but "
                f"{kind_name(vb.type)} on the path through line {lines[1]}",
                "give it the same kind of value on every path (e.g. a zeros array instead of "
                "None)") from None

    def _add(self, pair: tuple[Value, Value], t: Type, name: str) -> _Out:
        self.yields.append(pair)
        self.types.append(t)
        self.names.append("" if names.is_synthetic(name) or name == EXPRESSION else name)
        return _Out(len(self.yields) - 1)

    def finish(self, cond: Value) -> list[Value]:
        """Build the If node (unless it would do nothing); returns its outputs."""
        then, else_ = self.then.block, self.else_.block
        then.set_results([a for a, _ in self.yields])
        else_.set_results([b for _, b in self.yields])
        if not self.yields and not any(n.effectful for b in (then, else_) for n in b.nodes):
            then.drop_all_uses()
            else_.drop_all_uses()
            return []
        node = Node(IF, [cond], {}, self.types, self.names, [then, else_])
        self.f.builder.insert(node)
        if node.effectful:
            self.f.compiler.note_effect(node)
        return node.outputs


EXPRESSION = "<expression>"


def build_if(f: Frame, node: gast.If) -> None:
    """An `if` statement."""
    from .statements import run_block
    test = evaluate(f, node.test)
    live = f.live_after()
    known = truth(test)
    if known is not None:
        run_block(f, node.body if known else node.orelse, live)
        return
    cond = condition_value(f, test)
    prepare_lists(f, node.body + node.orelse)
    before = f.scope
    then = run_branch(f, lambda: run_block(f, node.body, live))
    else_ = run_branch(f, lambda: run_block(f, node.orelse, live))
    merger = Merger(f, then, else_)
    merged: dict[str, Any] = {}
    for name in _changed(before, then.scope, else_.scope):
        a, b = then.scope.get(name), else_.scope.get(name)
        if name in live:
            merged[name] = merger.merge(name, a, b)
        else:
            merged[name] = a if a is b else Unusable(
                f"internal: `{name}` was taken to be unused after line {node.lineno}")
    outs = merger.finish(cond)
    for name, value in merged.items():
        value = fill(value, outs)
        if value is MISSING:
            f.scope.unbind(name)
        else:
            f.scope.bind(name, value, node.lineno)
    if then.dead and else_.dead:
        f.scope.dead = True


def _changed(before: Scope, *after: Scope) -> list[str]:
    """Names bound differently in any of `after` than in `before` (sorted, deterministic)."""
    keys = set(before.vars).union(*(s.vars for s in after))
    return sorted(k for k in keys if any(s.get(k) is not before.get(k) for s in after))


def choose(f: Frame, test: Any, then_fn: Callable[[], Any], else_fn: Callable[[], Any]) -> Any:
    """`then_fn() if test else else_fn()` for a run-time `test`: an If region."""
    cond = condition_value(f, test)
    then = run_branch(f, then_fn)
    else_ = run_branch(f, else_fn)
    merger = Merger(f, then, else_)
    value = merger.merge(EXPRESSION, then.result, else_.result)
    outs = merger.finish(cond)
    if then.dead and else_.dead:
        raise DeadPath
    value = fill(value, outs)
    if isinstance(value, Unusable):
        raise f.read_unusable(value)
    return value


def short_circuit(f: Frame, kind: str, left: Any, right: Callable[[], Any]) -> Any:
    """`left and right()` / `left or right()` with Python's semantics (an operand is the
    result; the right side is evaluated only when needed, inside a branch if at run time)."""
    known = truth(left)
    if known is not None:
        return left if (kind == "And") != known else right()
    if kind == "And":
        return choose(f, left, right, lambda: left)
    return choose(f, left, lambda: left, right)


def prepare_lists(f: Frame, stmts: list[gast.stmt]) -> None:
    """Compile-time lists changed inside a region become run-time lists before it."""
    for name in sorted(mutated_lists(stmts)):
        value = f.scope.get(name)
        if isinstance(value, PyList):
            f.scope.bind(name, f.materialise(value), f.scope.lines.get(name, 0))


def mutated_lists(stmts: list[gast.stmt]) -> set[str]:
    """Names `x` in `x.append(...)`, `x[i] = v` and friends inside `stmts`."""
    found: set[str] = set()
    for stmt in stmts:
        for node in gast.walk(stmt):
            if (isinstance(node, gast.Call) and isinstance(node.func, gast.Attribute)
                    and node.func.attr in LIST_MUTATORS and isinstance(node.func.value,
                                                                       gast.Name)):
                found.add(node.func.value.id)
    return found | names.mutated_names(stmts)


# -- loops ---------------------------------------------------------------------------------

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
        raise f.error(f"`{c.name}` is {kind_name(before)} before the loop but "
                      f"{kind_name(after)} after an iteration",
                      "give it a value of the same kind before the loop (e.g. a zeros array "
                      "instead of None)") from None


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
    for name in _changed(f.scope, body.scope):
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


__all__ = ["build_if", "build_while", "build_for", "choose", "short_circuit", "run_branch"]

"""Branches: `if` statements and expressions (`and`, `or`, ternaries) on run-time conditions
become If regions; conditions known at compile time are decided while building, so only the
taken side is built. Each side is built with a copy of the symbol table; what the sides bind
differently is merged into the region's outputs (its phis)."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable

import gast

from ..graph import IF, AnyType, Block, InsertPoint, Node, TupleType, Type, Value
from ..graph.types import same_tuple_kind
from . import names
from .aliases import replace_object
from .containers import LIST_MUTATORS
from .context import DeadPath, Frame, MergeConflict, NeedsUnrolling, Scope, tuple_items
from .errors import CompileError
from .guards import same_value
from .operators import condition_value
from .values import (MISSING, Instance, PyList, Unusable, absent, describe, has_runtime, is_undefined,
                     kind_name, truth, widen)



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
    """Build into a fresh (or given) block with a copy of the symbol table. A fresh block
    that is abandoned (an exception makes its statement be built again another way) gives
    back its uses of outside values; a given one is the caller's to discard."""
    own = block is None
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
            except BaseException:
                # NOTE: the caller builds this code again another way (or gives up): what the
                # block's nodes use must not keep uses by nodes that are never in the graph
                block.drop_all_uses()
                raise
        return Branch(block, f.scope, result)
    except BaseException:
        if own:
            block.drop_all_uses()
        raise
    finally:
        f.scope, f.builder.loc, f.stmt = saved


def run_branches(f: Frame, then_fn: Callable[[], Any], else_fn: Callable[[], Any]
                 ) -> tuple[Branch, Branch]:
    """Both sides of an If region (the first released if building the second fails)."""
    then = run_branch(f, then_fn)
    try:
        return then, run_branch(f, else_fn)
    except BaseException:
        then.block.drop_all_uses()
        raise


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


CONTAINERS = (tuple, dict, PyList, Instance)
"""Compile-time containers merged and carried item by item."""


class _Out:
    """Stands for output `k` of the region being built, until the node exists."""
    __slots__ = ("k",)

    def __init__(self, k: int) -> None:
        self.k = k


def fill(v: Any, outs: list[Value], memo: dict[int, Any] | None = None) -> Any:
    """`v` with the region's outputs in place of its `_Out`s; `memo` (id -> filled) keeps one
    list or dict held by several names one object."""
    if isinstance(v, _Out):
        return outs[v.k]
    if not isinstance(v, CONTAINERS) or not v:
        return v
    memo = {} if memo is None else memo
    if id(v) not in memo:
        memo[id(v)] = rebuild(v, [fill(x, outs, memo) for _, x in items_of(v)])
    return memo[id(v)]


def same_structure(a: Any, b: Any) -> bool:
    """Two compile-time containers merged item by item: tuples and lists of one length, dicts
    with the same keys."""
    if isinstance(a, tuple) and isinstance(b, tuple) and type(a) is not type(b):
        return False  # NOTE: a namedtuple and a plain tuple (or another namedtuple) differ
    if isinstance(a, tuple) and isinstance(b, tuple) or isinstance(a, PyList) and isinstance(
            b, PyList):
        return len(items_of(a)) == len(items_of(b))
    if isinstance(a, Instance) and isinstance(b, Instance):  # NOTE: versions of one object
        return a.ident is b.ident and a.fields.keys() == b.fields.keys()
    return isinstance(a, dict) and isinstance(b, dict) and a.keys() == b.keys()


def items_of(v: tuple | dict | PyList | Instance) -> list[tuple[Any, Any]]:
    if isinstance(v, PyList):
        return list(enumerate(v.items))
    if isinstance(v, Instance):
        return list(v.fields.items())
    return list(v.items()) if isinstance(v, dict) else list(enumerate(v))


def rebuild(like: tuple | dict | PyList | Instance, items: list[Any]) -> Any:
    """A container of `like`'s kind and keys holding `items`."""
    if isinstance(like, PyList):
        return PyList(list(items))
    if isinstance(like, Instance):
        return like.with_fields(dict(zip(like.fields.keys(), items)))
    return dict(zip(like.keys(), items)) if isinstance(like, dict) else same_tuple_kind(
        like, items)

class Merger:
    """Merges what two branches bind into If outputs (the phis)."""

    def __init__(self, f: Frame, then: Branch, else_: Branch) -> None:
        self.f, self.then, self.else_ = f, then, else_
        self.yields: list[tuple[Value, Value]] = []
        self.types: list[Type] = []
        self.names: list[str] = []
        self.numbers: dict[int, frozenset[Type]] = {}
        """Outputs that may be a number of another type at run time (see `Compiler.numbers`),
        with those types."""
        self.shared: dict[tuple[int, int, int], Any] = {}
        """(how, id, id) -> what a list or dict merged to: every name holding the same one
        (`e = d`) still holds one object after the if."""

    def merge(self, name: str, a: Any, b: Any) -> Any:
        if self.then.dead:
            return self._one_side(name, b, 1)
        if self.else_.dead:
            return self._one_side(name, a, 0)
        return self._merge(name, a, b)

    def _memo(self, how: int, a: Any, b: Any, make: Callable[[], Any]) -> Any:
        if not isinstance(a, dict | PyList | Instance) and not isinstance(
                b, dict | PyList | Instance):
            return make()
        key = (how, id(a), id(b))
        if key not in self.shared:
            self.shared[key] = make()
        return self.shared[key]

    def _merge(self, name: str, a: Any, b: Any) -> Any:
        if a is b or isinstance(a, Unusable):
            return a
        if isinstance(b, Unusable):
            return b
        if absent(a, self.f.pending_is_none) and absent(b, self.f.pending_is_none):
            return a
        if absent(a, self.f.pending_is_none):
            return self._half(name, b, 1)
        if absent(b, self.f.pending_is_none):
            return self._half(name, a, 0)
        if not has_runtime(a) and not has_runtime(b) and same_constant(a, b):
            return a
        a, b = self._split(a, 0), self._split(b, 1)
        if same_structure(a, b):
            return self._memo(0, a, b, lambda: rebuild(a, [
                self._merge(name, x, y) for (_, x), (_, y) in zip(items_of(a), items_of(b))]))
        if isinstance(a, dict) and isinstance(b, dict) and not names.is_synthetic(name):
            raise self.f.error(f"{names.shown(name)} is a dict with keys {sorted(a, key=repr)} on one path "
                               f"and {sorted(b, key=repr)} on the other",
                               "give the dict the same keys on every path (set them before the "
                               "`if`)", kind=MergeConflict)
        return self._memo(1, a, b, lambda: self._output(name, a, b))

    def _split(self, v: Any, side: int) -> Any:
        """A run-time tuple as a compile-time tuple of its items (read where it is defined),
        so no node later reads an item that is unbound on some path."""
        if isinstance(v, Value) and isinstance(v.type, TupleType) and not is_undefined(v):
            with self.f.builder.at(InsertPoint.at_end((self.then, self.else_)[side].block)):
                return tuple_items(self.f, v)
        return v

    def _one_side(self, name: str, v: Any, side: int) -> Any:
        """The other branch never ends: keep `v`, as an output if it was made in the branch."""
        branch = (self.then, self.else_)[side]
        if isinstance(v, CONTAINERS):
            return self._memo(2 + side, v, None, lambda: rebuild(v, [
                self._one_side(name, x, side) for _, x in items_of(v)]))
        if isinstance(v, Value) and not defined_in(v, branch.block) or not has_runtime(v):
            return v
        return self._half(name, v, side)

    def _half(self, name: str, v: Any, side: int) -> Any:
        """`v` bound on one side only: the other side yields `undefined`."""
        v = self._split(v, side)
        if isinstance(v, CONTAINERS):
            return self._memo(4 + side, v, None, lambda: rebuild(v, [
                self._half(name, x, side) for _, x in items_of(v)]))
        blocks = (self.then.block, self.else_.block)
        try:
            value = self.f.new_block_value(blocks[side], v)
        except CompileError:
            return Unusable(f"{names.shown(name)} is bound on only some paths here and holds a "
                            f"{describe(v)}", "bind it before the `if` as well")
        with self.f.builder.at(InsertPoint.at_end(blocks[1 - side])):
            other = self.f.undefined(name)
        pair = (value, other) if side == 0 else (other, value)
        return self._add(pair, value.type, name)

    def _output(self, name: str, a: Any, b: Any) -> Any:
        try:
            va = self.f.new_block_value(self.then.block, a)
            vb = self.f.new_block_value(self.else_.block, b)
        except MergeConflict:
            raise  # NOTE: the caller's list holding items of another kind on one path
        except CompileError:
            return Unusable(f"{names.shown(name)} is {describe(a)} on one path and {describe(b)} on the "
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
                f"{names.shown(name)} is {kind_name(va.type)} on the path through line {lines[0]} but "
                f"{kind_name(vb.type)} on the path through line {lines[1]}",
                "give it the same kind of value on every path (e.g. a zeros array instead of "
                "None)", kind=MergeConflict) from None

    def _add(self, pair: tuple[Value, Value], t: Type, name: str) -> _Out:
        others = self.f.number_types(pair, t)
        if others is not None:
            self.numbers[len(self.yields)] = others  # NOTE: a number on one path
        self.yields.append(pair)
        self.types.append(t)
        self.names.append("" if name == EXPRESSION else names.value_hint(name))
        return _Out(len(self.yields) - 1)

    def finish(self, cond: Value) -> list[Value]:
        """Build the If node (unless it would do nothing); returns its outputs."""
        then, else_ = self.then.block, self.else_.block
        then.set_results([a for a, _ in self.yields])
        else_.set_results([b for _, b in self.yields])
        effects = any(n.effectful for b in (then, else_) for n in b.nodes)
        if not self.yields and not effects:
            then.drop_all_uses()
            else_.drop_all_uses()
            return []
        node = Node(IF, [cond], {}, self.types, self.names, [then, else_])
        self.f.builder.insert(node)
        self.f.compiler.numbers.update((node.outputs[i], o) for i, o in self.numbers.items())
        if effects:
            self.f.compiler.note_effect(node)
        return node.outputs


EXPRESSION = "<expression>"


def build_if(f: Frame, node: gast.If, tail: list[gast.stmt] | None = None,
             live_out: frozenset[str] | None = None) -> None:
    """An `if` statement; with `tail`, the statements after it are built into both sides
    (`live_out`: the names live after them)."""
    live = f.live_after() if tail is None else live_out
    tail = tail or []
    branch_on(f, f.condition(node.test), node.body + tail, node.orelse + tail, live,
              node.lineno)


def branch_on(f: Frame, test: Any, body: list[gast.stmt], orelse: list[gast.stmt],
              live: frozenset[str], line: int) -> None:
    """Run `body` if `test` else `orelse`: decided now, or an If region."""
    branch_with(f, test, lambda: f.run_block(body, live), lambda: f.run_block(orelse, live),
                live, line)


def branch_with(f: Frame, test: Any, then_fn: Callable[[], None], else_fn: Callable[[], None],
                live: frozenset[str], line: int) -> None:
    """`branch_on` building each side with a function (`live`: the names live after it)."""
    known = truth(test)
    if known is not None:
        (then_fn if known else else_fn)()
        return
    cond = condition_value(f, test, at_run_time=True)
    before = f.scope
    then, else_ = run_branches(f, then_fn, else_fn)
    merger = Merger(f, then, else_)
    merged: dict[str, Any] = {}
    try:
        for name in changed_names(before, then.scope, else_.scope):
            a, b = then.scope.get(name), else_.scope.get(name)
            if name in live or names.is_memory(name):
                merged[name] = merger.merge(name, a, b)
            else:
                merged[name] = a if a is b else Unusable(
                    f"internal: `{name}` was taken to be unused after line {line}")
    except MergeConflict:
        then.block.drop_all_uses()  # NOTE: the if is built again, with what follows it
        else_.block.drop_all_uses()
        raise
    outs = merger.finish(cond)
    memo: dict[int, Any] = {}
    for name, value in merged.items():
        value = fill(value, outs, memo)
        if value is MISSING:
            f.scope.unbind(name)
        else:
            f.scope.bind(name, value, line)
    if then.dead and else_.dead:
        f.scope.dead = True


def changed_names(before: Scope, *after: Scope) -> list[str]:
    """Names bound differently in any of `after` than in `before` (sorted, deterministic)."""
    keys = set(before.vars).union(*(s.vars for s in after))
    return sorted(k for k in keys if any(s.get(k) is not before.get(k) for s in after))


def choose(f: Frame, test: Any, then_fn: Callable[[], Any], else_fn: Callable[[], Any]) -> Any:
    """`then_fn() if test else else_fn()` for a run-time `test`: an If region."""
    cond = condition_value(f, test, at_run_time=True)
    then, else_ = run_branches(f, then_fn, else_fn)
    merger = Merger(f, then, else_)
    value = merger.merge(EXPRESSION, then.result, else_.result)
    # NOTE: an expression binds no names, but a write in it (a helper's) changes versions
    changed = {name: merger.merge(name, then.scope.get(name), else_.scope.get(name))
               for name in changed_names(f.scope, then.scope, else_.scope)}
    outs = merger.finish(cond)
    if then.dead and else_.dead:
        raise DeadPath
    memo: dict[int, Any] = {}
    for name, version in changed.items():
        version = fill(version, outs, memo)
        if version is MISSING:
            f.scope.unbind(name)
        else:
            f.scope.bind(name, version, f.scope.lines.get(name, 0))
    value = fill(value, outs, memo)
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
    """Compile-time lists whose length a method changes inside a region (`xs.append`) become
    run-time lists before it, under every name and in every container holding them (`ys = xs`
    sees `xs.append`). Item assignment needs no run-time list: a list is then updated like a
    dict, and merged and carried item by item."""
    for name in sorted(resized_lists(stmts)):
        value = f.scope.get(name)
        if isinstance(value, PyList):
            f.writable(value)
            try:
                runtime = f.materialise(value)
            except CompileError as err:  # NOTE: e.g. a list of functions: only unrolling can
                raise f.error(f"the list `{name}` changes inside a run-time loop or branch, "
                              f"but {err.message[0].lower()}{err.message[1:]}", err.hint,
                              kind=NeedsUnrolling) from None
            replace_object(f, value, runtime)


def resized_lists(stmts: list[gast.stmt]) -> set[str]:
    """Names `x` in `x.append(...)` and the other calls of list methods that change it."""
    found: set[str] = set()
    for stmt in stmts:
        for node in gast.walk(stmt):
            if (isinstance(node, gast.Call) and isinstance(node.func, gast.Attribute)
                    and node.func.attr in LIST_MUTATORS and isinstance(node.func.value,
                                                                       gast.Name)):
                found.add(node.func.value.id)
    return found


def mutated_lists(stmts: list[gast.stmt]) -> set[str]:
    """Names `x` in `x.append(...)`, `x[i] = v` and friends inside `stmts`."""
    return resized_lists(stmts) | names.mutated_names(stmts)


HANDLERS: dict[type, Callable[[Frame, Any], None]] = {gast.If: build_if}
"""Statement handlers this module adds to `statements.HANDLERS`."""

"""Inside an inlined generator (see `generators`): each `yield` becomes its consumer's code (a
site: a loop body, or a with block for a contextmanager helper), a `return` ends the generator,
and after anything that may end it the rest of its block runs only while it has not ended."""
from __future__ import annotations

import copy
from typing import Any

import gast

from .canonicalize import _assign, _at, _const, _name, _not
from .names import SYNTHETIC_PREFIX

MAX_NESTING = 16
"""Generators inlined inside each other deeper than this are refused (a recursive generator)."""

Stmts = list[gast.stmt]


def flag(prefix: str, what: str) -> str:
    """A compiler-made flag of the inlined generator whose locals have `prefix`."""
    return f"{SYNTHETIC_PREFIX}{prefix[2:]}{what}"


class LoopSite:
    """What replaces each `yield e` of one inlined generator: bind the consumer's target, run
    its body; `done` flags of every generator the consumer's break ends."""

    def __init__(self, loop: gast.For, done: list[str], broke: str | None) -> None:
        self.loop, self.done, self.broke = loop, done, broke
        self.before: Stmts = []      # per item, before the target is bound (zip's length test)
        self.item = lambda value: value
        self.after: Stmts = []       # per item, after binding (enumerate's count)
        self.leaves = 0
        self.thrown_in = False       # the consumer's exceptions are the generator's (with)

    def wrap(self, rewriter: Any, call: gast.Call, prefix: str, pre: Stmts) -> None:
        if call.keywords and call.func.id == "zip":
            raise rewriter.error(call, "cannot inline a generator into zip(..., strict=...)",
                                 "zip without keywords, or check the lengths yourself")
        if call.func.id == "enumerate":
            count = prefix + "count"
            start = call.args[1] if len(call.args) > 1 else (
                call.keywords[0].value if call.keywords else _const(0))
            pre.append(_assign(count, start))
            self.item = lambda value: gast.Tuple(elts=[_name(count), value], ctx=gast.Load())
            self.after = [_assign(count, gast.BinOp(left=_name(count), op=gast.Add(),
                                                    right=_const(1)))]
            return
        others = [prefix + f"zip{i}" for i in range(1, len(call.args))]
        index = prefix + "zip_index"
        pre.extend(_assign(name, arg) for name, arg in zip(others, call.args[1:]))
        pre.append(_assign(index, _const(0)))
        ends = [gast.Compare(left=_name(index), ops=[gast.GtE()], comparators=[gast.Call(
            func=_name("len"), args=[_name(o)], keywords=[])]) for o in others]
        test = ends[0] if len(ends) == 1 else gast.BoolOp(op=gast.Or(), values=ends)
        # NOTE: a shorter sequence ends the loop like the generator's end: else still runs
        self.before = [gast.If(test=test, body=[_assign(d, _const(True)) for d in self.done],
                               orelse=[])]
        self.item = lambda value: gast.Tuple(elts=[value] + [gast.Subscript(
            value=_name(o), slice=_name(index), ctx=gast.Load()) for o in others],
            ctx=gast.Load())
        self.after = [_assign(index, gast.BinOp(left=_name(index), op=gast.Add(),
                                                right=_const(1)))]

    def at_yield(self, rewriter: Any, value: gast.expr, where: gast.AST) -> Stmts:
        body = copy.deepcopy(self.loop.body)
        self.leaves += 1
        leave = f"{self.done[-1]}_leave{self.leaves}"  # NOTE: done[-1] is a flag name
        jumps = Jumps(self, leave)
        body = jumps.block(body)
        bind = [_assign(copy.deepcopy(self.loop.target), self.item(value))] + \
            copy.deepcopy(self.after)
        inner = bind + ([_assign(leave, _const(False))] if jumps.used else []) + body
        if self.before:
            inner = copy.deepcopy(self.before) + [gast.If(test=_not(self.done[0]), body=inner,
                                                          orelse=[])]
        return [_at(s, where) for s in inner]


class WithSite:
    """What replaces the one `yield e` of a contextmanager generator: bind `as`, run the body
    (its exceptions reach the generator's try blocks, as contextlib throws them in)."""

    thrown_in = True

    def __init__(self, stmt: gast.With, target: gast.expr | None) -> None:
        self.stmt, self.target = stmt, target
        self.done: list[str] = []

    def at_yield(self, rewriter: Any, value: gast.expr, where: gast.AST) -> Stmts:
        bind = [] if self.target is None else [_assign(copy.deepcopy(self.target), value)]
        if self.target is None and not isinstance(value, gast.Constant | gast.Name):
            bind = [gast.Expr(value=value)]
        return [_at(s, where) for s in bind + copy.deepcopy(self.stmt.body)]


def reached(stmts: Stmts, target: gast.AST) -> bool:
    """Whether `target` (a yield) runs whenever the statements run to their end or raise: it is
    in a top-level statement or a try/with body on that path, with no return before it."""
    for stmt in stmts:
        if any(n is target for n in gast.walk(stmt)):
            if isinstance(stmt, gast.Expr):
                return stmt.value is target
            if isinstance(stmt, gast.Try | gast.With):
                return reached(stmt.body, target)
            return False
        if any(isinstance(n, gast.Return) for n in gast.walk(stmt)):
            return False
    return False


def last(stmts: Stmts, target: gast.AST) -> bool:
    """Whether nothing but finally blocks and with exits runs after `target` (a yield)."""
    if not stmts or not any(n is target for n in gast.walk(stmts[-1])):
        return False
    stmt = stmts[-1]
    if isinstance(stmt, gast.Expr):
        return stmt.value is target
    if isinstance(stmt, gast.Try) and not stmt.orelse or isinstance(stmt, gast.With):
        return last(stmt.body, target)
    return False


class Jumps:
    """The consumer's body at one yield: its own `break` and `continue` (not those of loops
    inside it) leave the body, a break ending the generator(s) too."""

    def __init__(self, site: LoopSite, leave: str) -> None:
        self.site, self.leave, self.used = site, leave, False

    def block(self, stmts: Stmts) -> Stmts:
        out: Stmts = []
        for i, stmt in enumerate(stmts):
            jumps = own_jump(stmt)
            out.extend(self.stmt(stmt))
            if jumps:
                rest = self.block(stmts[i + 1:])
                if rest:
                    out.append(_at(gast.If(test=_not(self.leave), body=rest, orelse=[]), stmt))
                break
        return out

    def stmt(self, stmt: gast.stmt) -> Stmts:
        if isinstance(stmt, gast.Break | gast.Continue):
            self.used = True
            sets = [self.leave]
            if isinstance(stmt, gast.Break):
                sets += self.site.done + ([self.site.broke] if self.site.broke else [])
            return [_at(_assign(s, _const(True)), stmt) for s in sets]
        if isinstance(stmt, gast.For | gast.While | gast.FunctionDef):
            return [stmt]  # NOTE: their jumps are their own
        for field in ("body", "orelse", "finalbody"):
            if hasattr(stmt, field):
                setattr(stmt, field, self.block(getattr(stmt, field)))
        for handler in getattr(stmt, "handlers", ()):
            handler.body = self.block(handler.body)
        return [stmt]


def own_jump(stmt: gast.stmt) -> bool:
    """Whether `stmt` holds a break or continue of the loop around it."""
    if isinstance(stmt, gast.Break | gast.Continue):
        return True
    if isinstance(stmt, gast.For | gast.While | gast.FunctionDef | gast.ClassDef):
        return False
    blocks = [getattr(stmt, f, []) for f in ("body", "orelse", "finalbody")]
    blocks += [h.body for h in getattr(stmt, "handlers", ())]
    return any(own_jump(s) for b in blocks for s in b)


class Lowering:
    """One inlined generator's body: each yield becomes the site's code, a return ends it, and
    after anything that may end it the rest runs only if it has not ended."""

    def __init__(self, rewriter: Any, site: LoopSite, prefix: str, depth: int = 0) -> None:
        self.rewriter, self.site, self.prefix, self.depth = rewriter, site, prefix, depth
        self.done = site.done[-1]
        self.catching: gast.AST | None = None  # a try with handlers or a with around here
        self.from_count = 0

    def block(self, stmts: Stmts, in_loop: bool) -> Stmts:
        out: Stmts = []
        for i, stmt in enumerate(stmts):
            new, ends = self.stmt(stmt, in_loop)
            out.extend(new)
            if isinstance(stmt, gast.Return):
                break  # NOTE: what follows it never runs
            rest = stmts[i + 1:]
            # NOTE: in a loop the test is needed even last in the body: the loop must stop
            if ends and (rest or in_loop):
                rest = self.block(rest, in_loop)
                if in_loop:
                    out.append(_at(gast.If(test=_name(self.done), body=[gast.Break()],
                                           orelse=[]), stmt))
                    out.extend(rest)
                else:
                    out.append(_at(gast.If(test=_not(self.done), body=rest, orelse=[]), stmt))
                break
        return out

    def stmt(self, stmt: gast.stmt, in_loop: bool) -> tuple[Stmts, bool]:
        if isinstance(stmt, gast.Expr) and isinstance(stmt.value, gast.Yield | gast.YieldFrom) \
                and self.catching is not None and not self.site.thrown_in:
            raise self.rewriter.error(
                stmt, "cannot inline a generator that yields inside a try with except blocks "
                "or a with statement: the consumer's loop body would run inside it, and its "
                "exceptions would reach the generator, which Python never does",
                "yield outside the try/with (a try/finally is fine)")
        if isinstance(stmt, gast.Expr) and isinstance(stmt.value, gast.Yield):
            value = stmt.value.value or _const(None)
            return self.site.at_yield(self.rewriter, value, stmt), True
        if isinstance(stmt, gast.Expr) and isinstance(stmt.value, gast.YieldFrom):
            return self.yield_from(stmt, in_loop), True
        if isinstance(stmt, gast.Return):
            out: Stmts = []
            if stmt.value is not None and not isinstance(stmt.value, gast.Constant | gast.Name):
                out.append(gast.Expr(value=stmt.value))  # NOTE: Python evaluates it
            out.append(_assign(self.done, _const(True)))
            if in_loop:
                out.append(gast.Break())
            return [_at(s, stmt) for s in out], False  # NOTE: what follows it is dead
        if isinstance(stmt, gast.FunctionDef | gast.ClassDef):
            return [stmt], False
        for node in gast.walk(stmt):
            if isinstance(node, gast.Yield | gast.YieldFrom) and not inside_def(stmt, node):
                if not isinstance(stmt, gast.If | gast.For | gast.While | gast.Try | gast.With):
                    raise self.rewriter.error(
                        node, "cannot compile a `yield` whose value is used (a value sent "
                        "into the generator)", "amber inlines generators into the loop that "
                        "consumes them, which never sends a value: pass it as an argument")
        ends = False
        loop = isinstance(stmt, gast.For | gast.While)
        for field in ("body", "orelse", "finalbody"):
            if hasattr(stmt, field):
                inner = in_loop or (loop and field == "body")
                before = getattr(stmt, field)
                ends |= may_end(before)
                catching = self.catching
                if field == "body" and (isinstance(stmt, gast.With)
                                        or isinstance(stmt, gast.Try) and stmt.handlers):
                    self.catching = stmt
                try:
                    setattr(stmt, field, self.block(before, inner))
                finally:
                    self.catching = catching
        for handler in getattr(stmt, "handlers", ()):
            ends |= may_end(handler.body)
            handler.body = self.block(handler.body, in_loop)
        return [stmt], ends

    def yield_from(self, stmt: gast.Expr, in_loop: bool) -> Stmts:
        source = stmt.value.value
        func = self.rewriter.generator_of(source)
        self.from_count += 1
        if func is None:
            item = f"{self.prefix}from{self.from_count}"
            loop = _at(gast.For(target=_name(item, store=True), iter=source, body=[
                gast.Expr(value=gast.Yield(value=_name(item)))], orelse=[], type_comment=None),
                stmt)
            return self.stmt(loop, in_loop)[0]
        if self.depth >= MAX_NESTING:
            raise self.rewriter.error(stmt, f"`yield from` is nested more than {MAX_NESTING} "
                                      "deep", "a generator that yields from itself cannot be "
                                      "inlined; write the recursion as a loop")
        prefix = self.rewriter.fresh()
        body, pre = self.rewriter.callee(func, source, prefix)
        site = copy.copy(self.site)
        site.done = self.site.done + [flag(prefix, "done")]
        pre.append(_assign(site.done[-1], _const(False)))
        inner = Lowering(self.rewriter, site, prefix, self.depth + 1).block(body, in_loop=False)
        return [_at(s, stmt) for s in pre] + inner


def may_end(stmts: Stmts) -> bool:
    """Whether the statements contain a yield or return of the generator (not of a def in it)."""
    for stmt in stmts:
        for node in gast.walk(stmt):
            if isinstance(node, gast.Yield | gast.YieldFrom | gast.Return) \
                    and not inside_def(stmt, node):
                return True
    return False


def inside_def(root: gast.AST, target: gast.AST) -> bool:
    for node in gast.walk(root):
        if isinstance(node, gast.FunctionDef | gast.Lambda) and node is not root:
            if any(n is target for n in gast.walk(node)):
                return True
    return False

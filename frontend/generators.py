"""Generators inlined where they are consumed, before `check_supported` and `canonicalize`.

A generator function called right where it is consumed is compiled as the loop it is:

    for v in gen(a, n):            __amber_gen1_x = a; __amber_gen1_n = n
        <body>                     __amber_gen1_done = False
                           ->      <gen's body, its locals renamed, each `yield e` becoming
                                    `v = e; <body>`>

- A `break` of the consumer sets the done flag; after every statement of the generator that
  may yield or return, the rest of its block runs under `if not done` (or `if done: break` in
  one of its loops). So the generator leaves its loops through `break`, running its `finally`
  blocks at that moment, as CPython does when a `for` loop drops a generator it broke out of.
- A `continue` of the consumer skips the rest of the body (a per-yield leave flag); a `return`
  in the generator sets the done flag; the consumer's `else` runs unless it broke.
- `yield from` a generator call inlines that one too (a consumer break ends both); `yield from`
  any other iterable is a `for` over it.
- `enumerate(gen(...))` and `zip(gen(...), seq, ...)` (the generator first) count along.
- `list/tuple/sum/min/max/sorted(gen(...))` build a list by such a loop first, in a statement
  of their own placed before the one they were in; a generator expression given to one of them
  becomes a list comprehension (it is consumed whole either way), and one iterated by a `for`
  is inlined like a generator.

A generator called anywhere else (stored, returned, passed on, driven by next/send/throw) is
refused by `inlining.inline` at the call; `x = yield v` (a value sent in) is refused at the
yield. The generator must be a global or closure function of the same module that reads none
of the caller's local names (it is compiled inside the caller's scope).
"""
from __future__ import annotations

import builtins
import contextlib
import copy
import inspect
import types
from dataclasses import replace
from typing import Any, Callable

import gast

from .canonicalize import _assign, _at, _const, _name, _not
from .check import _check_node, _preorder
from .names import assigned_names, read_names
from .source import ParsedFunction, error_at, parse_function
from .yields import MAX_NESTING, LoopSite, Lowering, WithSite, flag, last, own_jump, reached

CONSUMERS = frozenset({"list", "tuple", "sum", "min", "max", "sorted"})
"""Builtins that consume a whole iterable before anything else happens."""
WHY = ("amber compiles a generator by inlining it into the loop that consumes it; consume it "
       "right where it is called: `for v in gen(...)`, list/tuple/sum/min/max/sorted of it, or "
       "enumerate/zip with it first")

LOCAL_PREFIX = "__gen"
"""Inlined generators' locals are renamed `__gen<k>_<name>`; their flags are compiler-made."""

Stmts = list[gast.stmt]
_CONTEXTMANAGER_CODE = contextlib.contextmanager(lambda: iter(())).__code__
"""The code of every function `contextlib.contextmanager` returns."""


def inline_generators(parsed: ParsedFunction,
                      on_inline: Callable[[types.FunctionType], None]) -> ParsedFunction:
    """`parsed` with its generator consumers rewritten (the same object if there are none).
    `on_inline(func)` is told of each generator function inlined (to guard its code)."""
    if not any(isinstance(n, gast.GeneratorExp | gast.Call) for n in gast.walk(parsed.node)):
        return parsed
    rewriter = _Rewriter(parsed, on_inline)
    if not rewriter.needed():
        return parsed
    node = copy.deepcopy(parsed.node)
    node.body = rewriter.block(node.body, depth=0)
    return replace(parsed, node=node)


class _Rewriter:
    def __init__(self, parsed: ParsedFunction,
                 on_inline: Callable[[types.FunctionType], None]) -> None:
        self.parsed, self.on_inline = parsed, on_inline
        params = {a.id for a in gast.walk(parsed.node.args) if isinstance(a, gast.Name)}
        self.local = params | assigned_names(parsed.node.body)
        self.count = 0

    # -- finding consumers --------------------------------------------------------------------

    def generator_of(self, node: gast.AST) -> types.FunctionType | None:
        """The generator function `node` calls, if it is a call of one by a plain name."""
        if not (isinstance(node, gast.Call) and isinstance(node.func, gast.Name)):
            return None
        name = node.func.id
        if name in self.local:
            return None
        value = self.parsed.closure.get(name, self.parsed.globals.get(name))
        if isinstance(value, types.FunctionType) and inspect.isgeneratorfunction(value):
            return value
        return None

    def is_builtin(self, node: gast.expr, names: frozenset[str] | tuple[str, ...]) -> bool:
        """`node` names one of the builtins `names`, not shadowed here."""
        return (isinstance(node, gast.Name) and node.id in names and node.id not in self.local
                and node.id not in self.parsed.closure
                and self.parsed.globals.get(node.id, getattr(builtins, node.id))
                is getattr(builtins, node.id))

    def needed(self) -> bool:
        for n in gast.walk(self.parsed.node):
            if isinstance(n, gast.GeneratorExp) or self.generator_of(n) is not None \
                    or self.context_generator(n) is not None:
                return True
        return False

    def error(self, node: gast.AST, message: str, hint: str = WHY) -> Exception:
        return error_at(self.parsed, node, message, hint)

    def fresh(self) -> str:
        """A prefix for one inlined generator's names. NOTE: not a compiler-made name
        (`names.is_synthetic`): they hold the user's values and get the user's checks."""
        self.count += 1
        return f"{LOCAL_PREFIX}{self.count}_"

    # -- statements of the consumer -------------------------------------------------------------

    def block(self, stmts: Stmts, depth: int) -> Stmts:
        out: Stmts = []
        for stmt in stmts:
            out.extend(self.stmt(stmt, depth))
        return out

    def stmt(self, stmt: gast.stmt, depth: int) -> Stmts:
        if isinstance(stmt, gast.FunctionDef | gast.ClassDef):
            return [stmt]
        if isinstance(stmt, gast.For):
            loop = self.for_loop(stmt, depth)
            if loop is not None:
                return loop
        if isinstance(stmt, gast.With) and any(self.context_generator(i.context_expr)
                                               for i in stmt.items):
            if len(stmt.items) > 1:  # NOTE: `with a, b:` is `with a: with b:`
                inner = _at(gast.With(items=stmt.items[1:], body=stmt.body,
                                      type_comment=None), stmt)
                stmt = _at(gast.With(items=stmt.items[:1], body=[inner], type_comment=None),
                           stmt)
            func = self.context_generator(stmt.items[0].context_expr)
            if func is not None:
                return self.with_generator(stmt, func, depth)
        pre: Stmts = []
        for field in ("value", "test", "iter", "items"):
            # NOTE: a while test runs again each trip: never hoisted out of it
            if hasattr(stmt, field) and not (isinstance(stmt, gast.While) and field == "test"):
                setattr(stmt, field, self.hoist(getattr(stmt, field), stmt, pre, depth))
        for field in ("body", "orelse", "finalbody"):
            if hasattr(stmt, field):
                setattr(stmt, field, self.block(getattr(stmt, field), depth))
        for handler in getattr(stmt, "handlers", ()):
            handler.body = self.block(handler.body, depth)
        return pre + [stmt]

    def hoist(self, expr: Any, stmt: gast.stmt, pre: Stmts, depth: int) -> Any:
        """`expr` with each whole-consuming builtin's generator argument replaced: a generator
        expression by a list comprehension, a generator call by a list built in `pre`."""
        if isinstance(expr, list):
            return [self.hoist(e, stmt, pre, depth) for e in expr]
        if not isinstance(expr, gast.AST):
            return expr
        unwrap: set[int] = set()
        consumers = [n for n in gast.walk(expr) if isinstance(n, gast.Call)
                     and self.is_builtin(n.func, CONSUMERS) and n.args]
        # NOTE: in source order, so the generators run in the order Python runs them
        consumers.sort(key=lambda n: (n.args[0].lineno, n.args[0].col_offset))
        for node in consumers:
            first = node.args[0]
            if isinstance(first, gast.GeneratorExp):
                node.args[0] = gast.copy_location(
                    gast.ListComp(elt=first.elt, generators=first.generators), first)
            elif self.generator_of(first) is not None:
                self.check_hoistable(expr, stmt, first)
                items = self.fresh() + "items"
                item = _name(items + "_item", store=True)
                build = [_assign(items, gast.List(elts=[], ctx=gast.Load()))]
                append = gast.Expr(value=gast.Call(
                    func=gast.Attribute(value=_name(items), attr="append", ctx=gast.Load()),
                    args=[_name(items + "_item")], keywords=[]))
                build.append(gast.For(target=item, iter=first, body=[append], orelse=[],
                                      type_comment=None))
                pre.extend(self.block([_at(s, stmt) for s in build], depth))
                node.args[0] = _at(_name(items), first)
            else:
                continue
            if node.func.id == "list" and len(node.args) == 1:
                unwrap.add(id(node))  # NOTE: the list is new already; amber's own is a list
        return _Unwrap(unwrap).visit(expr) if unwrap else expr

    def check_hoistable(self, expr: gast.AST, stmt: gast.stmt, call: gast.Call) -> None:
        """Running the generator first must not reorder it with calls before it or skip a
        short-circuit: refuse what could."""
        if isinstance(stmt, gast.While):
            raise self.error(call, "cannot compile a generator consumed in a while condition",
                             "consume it in a statement before the loop and in its body")
        for node in gast.walk(expr):
            lazy = (node.values[1:] if isinstance(node, gast.BoolOp) else
                    [node.body, node.orelse] if isinstance(node, gast.IfExp) else
                    [node] if isinstance(node, gast.Lambda | gast.ListComp | gast.DictComp
                                         | gast.SetComp | gast.GeneratorExp) else [])
            if any(call is n for part in lazy for n in gast.walk(part)):
                raise self.error(call, "cannot compile a generator consumed in a part of an "
                                 "expression that may not run (after and/or, in a conditional "
                                 "expression, a comprehension or a lambda)",
                                 "consume it in a statement of its own first")
        before = (call.lineno, call.col_offset)
        for node in gast.walk(expr):
            # NOTE: ops are pure; a print or a Python helper could see the generator run early
            if (isinstance(node, gast.Call) and (node.lineno, node.col_offset) < before
                    and self.may_have_effects(node.func)
                    and not any(call is n for n in gast.walk(node))):
                raise self.error(call, "cannot compile a generator consumed after another call "
                                 "in the same statement (it runs first when compiled)",
                                 "consume it in a statement of its own first")

    def may_have_effects(self, func: gast.expr) -> bool:
        if not isinstance(func, gast.Name):
            return False
        if self.is_builtin(func, ("print", "input", "open", "next", "exec", "eval")):
            return True
        value = self.parsed.closure.get(func.id, self.parsed.globals.get(func.id))
        if isinstance(value, types.FunctionType) and inspect.isgeneratorfunction(value):
            return False  # NOTE: another generator consumed here: hoisted in order too
        return func.id in self.local or isinstance(value, types.FunctionType)

    # -- with over contextlib.contextmanager helpers ------------------------------------------

    def context_generator(self, node: gast.expr) -> types.FunctionType | None:
        """The generator function of a `contextlib.contextmanager` helper `node` calls."""
        if not (isinstance(node, gast.Call) and isinstance(node.func, gast.Name)) \
                or node.func.id in self.local:
            return None
        value = self.parsed.closure.get(node.func.id, self.parsed.globals.get(node.func.id))
        inner = getattr(value, "__wrapped__", None)
        if (isinstance(value, types.FunctionType) and value.__code__ is _CONTEXTMANAGER_CODE
                and isinstance(inner, types.FunctionType)
                and inspect.isgeneratorfunction(inner)):
            return inner
        return None

    def with_generator(self, stmt: gast.With, func: types.FunctionType, depth: int) -> Stmts:
        """`with helper(...) as v: body` as contextlib runs it: the generator up to its yield,
        `v = <yielded>; body` there (an exception of the body is raised at the yield, as
        contextlib throws it in), then the rest of the generator."""
        what = f"the context manager {func.__qualname__}"
        if depth >= MAX_NESTING:
            raise self.error(stmt, f"context managers are nested more than {MAX_NESTING} deep",
                             "a contextmanager helper that uses itself cannot be inlined")
        item = stmt.items[0]
        prefix = self.fresh()
        body, pre = self.callee(func, item.context_expr, prefix)
        yields = [n for s in body for n in gast.walk(s) if isinstance(n, gast.Yield | gast.YieldFrom)]
        if len(yields) != 1 or not reached(body, yields[0]):
            raise self.error(item.context_expr, f"cannot compile {what}: amber inlines a "
                             "contextmanager generator whose one `yield` runs on every path "
                             "(not in an if, loop, except or finally block, no return before "
                             "it)", "yield exactly once, at the top level of the generator or "
                             "in a try block")
        # NOTE: a jump out of the block skips what follows the yield, unless only finally
        # blocks (and with exits) do
        for node in (n for s in stmt.body for n in gast.walk(s)):
            if last(body, yields[0]):
                break
            if isinstance(node, gast.Return | gast.Break | gast.Continue) and (
                    not isinstance(node, gast.Break | gast.Continue)
                    or any(own_jump(s) for s in stmt.body)):
                raise self.error(node, f"cannot compile a `{type(node).__name__.lower()}` out "
                                 f"of a with block over {what} (the generator's code after "
                                 "its yield must run first)",
                                 "set a variable in the block and act on it after the with "
                                 "statement, or put the generator's code after its yield in "
                                 "a finally block")
        site = WithSite(stmt, item.optional_vars)
        done = flag(prefix, "done")
        site.done = [done]
        pre.append(_assign(done, _const(False)))
        lowered = Lowering(self, site, prefix).block(body, in_loop=False)
        return self.block([_at(s, stmt) for s in pre] + lowered, depth + 1)

    # -- for loops over generators ------------------------------------------------------------

    def for_loop(self, loop: gast.For, depth: int) -> Stmts | None:
        it, wrap = loop.iter, None
        if (isinstance(it, gast.Call) and it.args
                and self.is_builtin(it.func, ("enumerate", "zip"))
                and (self.generator_of(it.args[0]) is not None
                     or isinstance(it.args[0], gast.GeneratorExp))):
            wrap, it = it, it.args[0]
        if isinstance(it, gast.GeneratorExp):
            gen_body, prefix, pre = self.generator_expression(it), self.fresh(), []
        else:
            func = self.generator_of(it)
            if func is None:
                return None
            prefix = self.fresh()
            gen_body, pre = self.callee(func, it, prefix)
        if depth >= MAX_NESTING:
            raise self.error(loop, f"generators are nested more than {MAX_NESTING} deep",
                             "a generator that yields from itself cannot be inlined; "
                             "write the recursion as a loop")
        done, broke = flag(prefix, "done"), flag(prefix, "broke")
        site = LoopSite(loop, done=[done], broke=broke if loop.orelse else None)
        pre.append(_assign(done, _const(False)))
        if loop.orelse:
            pre.append(_assign(broke, _const(False)))
        if wrap is not None:
            site.wrap(self, wrap, prefix, pre)
        body = Lowering(self, site, prefix).block(gen_body, in_loop=False)
        out = [_at(s, loop) for s in pre] + body
        if loop.orelse:
            out.append(_at(gast.If(test=_not(broke), body=loop.orelse, orelse=[]), loop))
        return self.block(out, depth + 1)

    def callee(self, func: types.FunctionType, call: gast.Call,
               prefix: str) -> tuple[Stmts, Stmts]:
        """The generator's body, its locals renamed, and the statements binding its arguments."""
        what = f"generator {func.__qualname__}"
        if (func.__globals__ is not self.parsed.globals or func.__closure__
                or func.__code__.co_filename != self.parsed.file):
            raise self.error(call, f"cannot inline {what}: it is not a plain function of this "
                             "module", "define the generator at the top level of this module")
        if any(isinstance(a, gast.Starred) for a in call.args) or any(
                k.arg is None for k in call.keywords):
            raise self.error(call, f"cannot inline {what} called with *args or **kwargs",
                             "pass its arguments one by one")
        sig = inspect.signature(func)
        if any(p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD) for p in sig.parameters.values()):
            raise self.error(call, f"cannot inline {what}: it takes *args or **kwargs",
                             "give the generator named parameters")
        try:
            bound = sig.bind(*range(len(call.args)), **{k.arg: k for k in call.keywords})
        except TypeError as exc:
            raise self.error(call, f"{func.__qualname__}(): {exc}",
                             "pass the arguments its definition asks for") from None
        parsed = parse_function(func)
        for stmt in parsed.node.body:
            for node in _preorder(stmt):
                if not isinstance(node, gast.Yield | gast.YieldFrom):
                    _check_node(parsed, node)
        body = copy.deepcopy(parsed.node.body)
        params = [p for p in sig.parameters]
        own = set(params) | assigned_names(body)
        clash = sorted((read_names(body) - own) & (self.local | set(self.parsed.closure)))
        if clash:
            raise self.error(call, f"cannot inline {what}: it reads {clash[0]!r}, a name this "
                             "function defines too", f"rename {clash[0]!r} in one of them")
        _rename(body, own, prefix)
        self.on_inline(func)
        # NOTE: the name is read (and so guarded) as the call would have read it
        pre: Stmts = [_at(gast.Expr(value=copy.deepcopy(call.func)), call)]
        for name in params:
            if name in bound.arguments:
                got = bound.arguments[name]
                value = call.args[got] if isinstance(got, int) else got.value
            else:
                default = sig.parameters[name].default
                if default is not None and type(default) not in (bool, int, float, str):
                    raise self.error(call, f"cannot inline {what}: the default of {name!r} is "
                                     "not a number, string or None", f"pass {name!r}")
                value = _const(default)
            pre.append(_at(_assign(prefix + name, value), call))
        # NOTE: arguments are evaluated in the order they are written, as Python does
        pre[1:] = sorted(pre[1:], key=lambda s: (getattr(s.value, "lineno", 0) or 0,
                                                 getattr(s.value, "col_offset", 0) or 0))
        return body, pre

    def generator_expression(self, gen: gast.GeneratorExp) -> Stmts:
        """A generator expression as the body of the generator it is (its targets local)."""
        own = set().union(*(_targets(c.target) for c in gen.generators))
        prefix = self.fresh()
        body: Stmts = [_at(gast.Expr(value=gast.Yield(value=gen.elt)), gen)]
        for comp in reversed(gen.generators):
            for cond in reversed(comp.ifs):
                body = [_at(gast.If(test=cond, body=body, orelse=[]), gen)]
            body = [_at(gast.For(target=comp.target, iter=comp.iter, body=body, orelse=[],
                                 type_comment=None), gen)]
        first = body[0].iter
        _rename(body, own, prefix)
        body[0].iter = first  # NOTE: the first iterable is read in the enclosing scope
        return body


class _Unwrap(gast.NodeTransformer):
    """Replaces the marked `list(x)` calls by `x`."""

    def __init__(self, calls: set[int]) -> None:
        self.calls = calls

    def visit_Call(self, node: gast.Call) -> gast.AST:
        self.generic_visit(node)
        return node.args[0] if id(node) in self.calls else node


def _targets(target: gast.expr) -> set[str]:
    return {n.id for n in gast.walk(target) if isinstance(n, gast.Name)}


def _rename(stmts: Stmts, own: set[str], prefix: str) -> None:
    for stmt in stmts:
        for n in gast.walk(stmt):
            if isinstance(n, gast.Name) and n.id in own:
                n.id = prefix + n.id
            elif isinstance(n, gast.FunctionDef) and n.name in own:
                n.name = prefix + n.name

"""Control-flow canonicalization: `break`, `continue` and early `return` become flags, so the IR
builder only meets structured if/while/for and one final `return`. Expects `check_supported`.

The output (a fresh `gast.FunctionDef`, decorators stripped) has exactly this shape:

- No `Break`, no `Continue`. Exactly one `Return`: the last statement of the body, always with a
  value. If the function has no `return`, `return None` is appended; if its only `return` is its
  last top-level statement, that statement is kept as written (`return a, b`); otherwise every
  `return e` becomes `__amber_ret_value = e` and the body ends with `return __amber_ret_value`.
- `__amber_ret_value = None` is then the first statement, followed by `__amber_ret_flag = False`
  when some `return` is not in tail position (tail: last statement of the body, or of a branch of
  a tail `if`). Such a return assigns the value, sets `__amber_ret_flag = True` and the break
  flag of every enclosing loop; code after it runs under `if not <flag>:`. A bare return or
  `return None` assigns nothing (the value is still None there).
- Loops are numbered 0, 1, ... in source (pre-)order; loop k may use `__amber_brk{k}` (break, or
  a return inside it), `__amber_cont{k}` (continue), `__amber_range_i{k}`, `__amber_range_stop{k}`,
  `__amber_range_step{k}` (a range loop rewritten to while) and `__amber_item{k}` (the element of
  a guarded for). Every name made here starts with `SYNTHETIC_PREFIX`.
- `__amber_brk{k} = False` is the statement right before loop k. A `while` whose body can break
  or return gets the test `not __amber_brk{k} and (<test>)` (just `not __amber_brk{k}` for
  `while True`): the break flag comes first so a broken loop never re-evaluates the user's test.
- `__amber_cont{k} = False` is the first statement of loop k's body (after the loop variable
  assignments below); a `continue` sets it and the rest of the body is guarded. A `continue` or
  `if ...: continue` that ends the body needs no flag and disappears.
- `for <name> in range(a[, b[, c]])` whose body can break or return becomes
      __amber_range_i{k} = <start>
      __amber_range_stop{k} = <stop>          # only when <stop> is not an int literal
      __amber_range_step{k} = <step>          # only when <step> is not an int literal, then:
      if __amber_range_step{k} == 0: raise ValueError('range() arg 3 must not be zero')
      __amber_brk{k} = False
      while __amber_range_i{k} < <stop> and not __amber_brk{k}:    # `>` for a negative step;
          <name> = __amber_range_i{k}               # `(i < stop if step > 0 else i > stop)`
          __amber_range_i{k} = __amber_range_i{k} + <step>         # for a non-literal step
          <body>
  so range arguments are evaluated once, in order, and <name> is bound only by iterations that
  run (it keeps its old binding, or stays unbound, after zero trips), exactly as in Python.
- Any other `for` whose body can break or return keeps its iterable and becomes
      __amber_brk{k} = False
      for __amber_item{k} in <iter>:
          if not __amber_brk{k}:
              <target> = __amber_item{k}
              <body>
  After canonicalization no `for` body contains a jump, and every `while` that had one tests
  its break flag.
- An `if` one of whose branches always leaves (return/break/continue/raise) while the other does
  not absorbs the statements after it into the other branch, so `if x is None: return 0` needs
  no flag. Statements after an unconditional return/break/continue/raise are dropped (dead), so
  a `raise` is the last statement of its block (only the final `return` may follow it).
- A `while` whose test binds a name (`:=`) tests it at the top of its body instead:
  `while True: if not <test>: break` (check_supported refuses one with an `else`).
- A `try` keeps its shape (its blocks rewritten like an if's branches: a `return` in it sets
  the flags, and its finally block still runs, as in Python); an `else` block becomes
      __amber_try_ok{k} = False
      try: <body>; __amber_try_ok{k} = True        # (inside a try/finally if it has one)
      except ...: <handlers>
      if __amber_try_ok{k}: <else>
  so an exception raised in the else block is not caught by the handlers. check_supported
  refuses a jump out of a finally block (it would swallow the exception).
- A `with` statement keeps its shape too, one context manager per statement (`with a, b:` is
  two nested ones), its body rewritten like a try block.
- Everything else is untouched: `elif` chains (nested ifs), assert, raise, pass, print, and/or,
  ternaries, comprehensions. A loop's `else` block becomes `if not __amber_brk{k}: <else>`
  after the loop (just the block when the loop cannot break). New nodes carry the line and
  column of the statement they came from.
"""
from __future__ import annotations

import builtins
import copy
from dataclasses import dataclass
from typing import Any, Callable

import gast

from .names import (BREAK_FLAG, CONTINUE_FLAG, LOOP_ITEM, RANGE_INDEX, RANGE_STEP, RANGE_STOP,
                    RESULT, RETURN_FLAG, RETURN_VALUE, SYNTHETIC_PREFIX, TRY_OK, Namer,
                    assigned_names)
from .source import ParsedFunction, error_at

__all__ = ["canonicalize", "SYNTHETIC_PREFIX"]

Stmts = list[gast.stmt]


def canonicalize(parsed: ParsedFunction) -> gast.FunctionDef:
    """A new FunctionDef equivalent to `parsed.node` in the canonical shape described above."""
    return _Canonicalizer(parsed).run()


@dataclass
class _Loop:
    """Flags of one loop being rewritten."""

    number: int
    brk: str | None          # set when the body can break or return
    cont: str
    cont_used: bool = False  # whether some `continue` needed the continue flag


@dataclass
class _Result:
    """A statement (list) rewritten: its output, the flags it may set that guard what follows,
    and whether control never falls through it."""

    stmts: Stmts
    flags: frozenset[str] = frozenset()
    leaves: bool = False


class _Canonicalizer:
    """Rewrites one function; holds the loop stack and the return mode."""

    def __init__(self, parsed: ParsedFunction) -> None:
        self.parsed = parsed
        self.fn: gast.FunctionDef = copy.deepcopy(parsed.node)
        self.namer = Namer()
        self.loops: list[_Loop] = []
        self.ret_flag_used = False
        self.tries = 0
        self.range_is_builtin = _range_is_builtin(parsed, self.fn)

    def run(self) -> gast.FunctionDef:
        fn, body = self.fn, _prune(self.fn.body)
        returns = own_returns(body)
        if not returns or (len(returns) == 1 and body[-1] is returns[0]):
            final = body.pop() if returns else _at(gast.Return(value=_const(None)), body[-1])
            fn.body = self.block(body, tail_fn=False, tail_loop=False).stmts + [final]
            return fn
        new_body = self.block(body, tail_fn=True, tail_loop=False).stmts
        prologue = [_assign(RETURN_VALUE, _const(None))]
        if self.ret_flag_used:
            prologue.append(_assign(RETURN_FLAG, _const(False)))
        final = gast.Return(value=_name(RETURN_VALUE))
        fn.body = [_at(s, fn) for s in prologue] + new_body + [_at(final, body[-1])]
        return fn

    # --- statement lists -------------------------------------------------------------------

    def block(self, stmts: Stmts, tail_fn: bool, tail_loop: bool) -> _Result:
        """Rewrite a block; `tail_*`: nothing follows it in the function / the loop body."""
        out: Stmts = []
        flags: frozenset[str] = frozenset()
        for i, stmt in enumerate(stmts):
            rest = stmts[i + 1:]
            if rest and isinstance(stmt, gast.If) and _absorbs_rest(stmt):
                _absorb(stmt, rest)
                rest = []
            last = not rest
            result = self.stmt(stmt, tail_fn and last, tail_loop and last)
            out += result.stmts
            flags |= result.flags
            if result.leaves or last:
                return _Result(out, flags, result.leaves)
            if result.flags:
                guarded = self.block(rest, tail_fn, tail_loop)
                if guarded.stmts:
                    out.append(_at(gast.If(test=_none_set(result.flags), body=guarded.stmts,
                                           orelse=[]), rest[0]))
                return _Result(out, flags | guarded.flags, guarded.leaves)
        return _Result(out, flags)

    def stmt(self, stmt: gast.stmt, tail_fn: bool, tail_loop: bool) -> _Result:
        """Rewrite one statement."""
        if isinstance(stmt, gast.If):
            return self.if_(stmt, tail_fn, tail_loop)
        if isinstance(stmt, gast.Try):
            result = self.try_(stmt, tail_fn, tail_loop)
            result.stmts = [_at(s, stmt) for s in result.stmts]
            return result
        if isinstance(stmt, gast.With):
            return self.with_(stmt, tail_fn, tail_loop)
        if isinstance(stmt, (gast.While, gast.For)) and stmt.orelse:
            result = self.loop_else(stmt, tail_fn, tail_loop)
        elif isinstance(stmt, gast.While):
            result = self.while_(stmt)
        elif isinstance(stmt, gast.For):
            result = self.for_(stmt)
        elif isinstance(stmt, gast.Return):
            result = self.return_(stmt, tail_fn)
        elif isinstance(stmt, gast.Break):
            loop = self.loops[-1]
            result = _Result([_assign(loop.brk, _const(True))], frozenset([loop.brk]), True)
        elif isinstance(stmt, gast.Continue):
            result = self.continue_(tail_loop)
        else:
            result = _Result([stmt], leaves=isinstance(stmt, gast.Raise))
        result.stmts = [_at(s, stmt) for s in result.stmts]
        return result

    def if_(self, stmt: gast.If, tail_fn: bool, tail_loop: bool) -> _Result:
        then = self.block(stmt.body, tail_fn, tail_loop)
        orelse = self.block(stmt.orelse, tail_fn, tail_loop)
        stmt.body, stmt.orelse = then.stmts or [_at(gast.Pass(), stmt)], orelse.stmts
        return _Result([stmt], then.flags | orelse.flags, then.leaves and orelse.leaves)

    def try_(self, stmt: gast.Try, tail_fn: bool, tail_loop: bool) -> _Result:
        """A try statement: each block rewritten in place (see the module docstring)."""
        ok = None
        body = stmt.body
        if stmt.orelse:
            ok = TRY_OK.format(self.tries)
            self.tries += 1
            body = body + [_at(_assign(ok, _const(True)), stmt.body[-1])]
        tried = self.block(body, tail_fn and ok is None, tail_loop and ok is None)
        handlers = [self.block(h.body, tail_fn, tail_loop) for h in stmt.handlers]
        for handler, result in zip(stmt.handlers, handlers):
            handler.body = result.stmts or [_at(gast.Pass(), handler)]
        orelse = self.block(stmt.orelse, tail_fn, tail_loop)
        final = self.block(stmt.finalbody, False, False)
        flags = frozenset().union(tried.flags, orelse.flags, *(h.flags for h in handlers))
        leaves = (tried.leaves or orelse.leaves) and all(h.leaves for h in handlers)
        inner = gast.Try(body=tried.stmts or [gast.Pass()], handlers=stmt.handlers, orelse=[],
                         finalbody=[] if ok is not None else final.stmts)
        if ok is None:
            return _Result([inner], flags, leaves)
        stmts = [_assign(ok, _const(False)), inner]
        if orelse.stmts:
            stmts.append(gast.If(test=_name(ok), body=orelse.stmts, orelse=[]))
        if final.stmts:
            stmts = [gast.Try(body=stmts, handlers=[], orelse=[], finalbody=final.stmts)]
        return _Result(stmts, flags, leaves)

    def with_(self, stmt: gast.With, tail_fn: bool, tail_loop: bool) -> _Result:
        """A with statement keeps its shape, one context manager per statement (`with a, b:`
        nests), its body rewritten like a try block's (`__exit__` runs on every exit)."""
        body = stmt.body
        if len(stmt.items) > 1:
            inner = _at(gast.With(items=stmt.items[1:], body=body, type_comment=None), stmt)
            body = [inner]
        result = self.block(body, tail_fn, tail_loop)
        out = gast.With(items=stmt.items[:1], body=result.stmts or [gast.Pass()],
                        type_comment=None)
        return _Result([_at(out, stmt)], result.flags, result.leaves)

    def return_(self, stmt: gast.Return, tail_fn: bool) -> _Result:
        out: Stmts = []
        if not _is_none(stmt.value):
            out.append(_assign(RETURN_VALUE, stmt.value))
        if tail_fn:
            return _Result(out, leaves=True)
        self.ret_flag_used = True
        out.append(_assign(RETURN_FLAG, _const(True)))
        out += [_assign(loop.brk, _const(True)) for loop in self.loops]
        return _Result(out, frozenset([self.loops[-1].brk if self.loops else RETURN_FLAG]), True)

    def continue_(self, tail_loop: bool) -> _Result:
        if tail_loop:  # the iteration ends here anyway
            return _Result([], leaves=True)
        loop = self.loops[-1]
        loop.cont_used = True
        return _Result([_assign(loop.cont, _const(True))], frozenset([loop.cont]), True)

    # --- loops ---------------------------------------------------------------------------

    def loop_body(self, body: Stmts, number: int) -> tuple[_Loop, Stmts]:
        """Rewrite the body of loop `number`; prepends the continue-flag reset if needed."""
        jumps = _jumps(body)
        brk = BREAK_FLAG.format(number) if jumps & {"break", "return"} else None
        loop = _Loop(number, brk, CONTINUE_FLAG.format(number))
        self.loops.append(loop)
        stmts = self.block(body, tail_fn=False, tail_loop=True).stmts
        self.loops.pop()
        reset = [_assign(loop.cont, _const(False))] if loop.cont_used else []
        return loop, reset + stmts

    def exit_flags(self, body: Stmts) -> frozenset[str]:
        """What a loop sets for the code after it: a return inside leaves the enclosing loop
        (its break flag) or the function (the return flag)."""
        if "return" not in _jumps(body):
            return frozenset()
        return frozenset([self.loops[-1].brk if self.loops else RETURN_FLAG])

    def while_(self, stmt: gast.While) -> _Result:
        if any(isinstance(n, gast.NamedExpr) for n in gast.walk(stmt.test)):
            # NOTE: a condition binding a name (`while (x := f()) > 0`) is evaluated in the
            # body, where the binding is an assignment: `while True: if not <test>: break`
            stop = gast.If(test=gast.UnaryOp(op=gast.Not(), operand=stmt.test),
                           body=[gast.Break()], orelse=[])
            stmt = _at(gast.While(test=_const(True), body=[stop, *stmt.body], orelse=[]), stmt)
        exits = self.exit_flags(stmt.body)  # NOTE: before loop_body rewrites the body's ifs
        loop, body = self.loop_body(stmt.body, self.namer.loop())
        if loop.brk is None:
            return _Result([gast.While(test=stmt.test, body=body or [gast.Pass()], orelse=[])])
        test = _not(loop.brk)
        if not (isinstance(stmt.test, gast.Constant) and stmt.test.value is True):
            test = gast.BoolOp(op=gast.And(), values=[test, stmt.test])
        loop_stmt = gast.While(test=test, body=body or [gast.Pass()], orelse=[])
        return _Result([_assign(loop.brk, _const(False)), loop_stmt], exits)

    def for_(self, stmt: gast.For) -> _Result:
        number, exits = self.namer.loop(), self.exit_flags(stmt.body)
        bounds = self.range_bounds(stmt)
        if bounds is not None and _jumps(stmt.body) & {"break", "return"}:
            return self.range_while(stmt, number, exits, *bounds)
        loop, body = self.loop_body(stmt.body, number)
        if loop.brk is None:
            return _Result([gast.For(target=stmt.target, iter=stmt.iter, body=body or
                                     [gast.Pass()], orelse=[], type_comment=None)])
        item = LOOP_ITEM.format(loop.number)
        guarded = gast.If(test=_not(loop.brk), body=[_assign(stmt.target, _name(item))] + body,
                          orelse=[])
        loop_stmt = gast.For(target=_name(item, store=True), iter=stmt.iter, body=[guarded],
                             orelse=[], type_comment=None)
        return _Result([_assign(loop.brk, _const(False)), loop_stmt], exits)

    def loop_else(self, stmt: gast.While | gast.For, tail_fn: bool, tail_loop: bool
                  ) -> _Result:
        """A loop with an `else` block: the block runs after the loop unless a `break` (or a
        `return`, which also sets the break flag) ended it, so `if not <break flag>: <else>`,
        rewritten in the enclosing context (its break/continue belong to the outer loop)."""
        orelse, stmt.orelse = stmt.orelse, []
        number = self.namer.loops  # NOTE: the number the loop is about to get
        jumps = _jumps(stmt.body)
        loop = self.while_(stmt) if isinstance(stmt, gast.While) else self.for_(stmt)
        after = self.block(orelse, tail_fn, tail_loop)
        if not jumps & {"break", "return"}:
            return _Result(loop.stmts + after.stmts, loop.flags | after.flags, after.leaves)
        guarded = gast.If(test=_not(BREAK_FLAG.format(number)),
                          body=after.stmts or [gast.Pass()], orelse=[])
        return _Result(loop.stmts + [_at(guarded, orelse[0])], loop.flags | after.flags)

    def range_bounds(self, stmt: gast.For) -> tuple[gast.expr, gast.expr, gast.expr] | None:
        """(start, stop, step) of `for <name> in range(...)` with the builtin range, else None."""
        call = stmt.iter
        if not (self.range_is_builtin and isinstance(stmt.target, gast.Name)
                and isinstance(call, gast.Call) and isinstance(call.func, gast.Name)
                and call.func.id == "range" and not call.keywords and 1 <= len(call.args) <= 3
                and not any(isinstance(a, gast.Starred) for a in call.args)):
            return None
        args = list(call.args)
        args = ([_const(0)] if len(args) == 1 else []) + args
        args += [_const(1)] if len(args) == 2 else []
        if _int_literal(args[2]) == 0:
            return None  # the plain for raises range()'s own ValueError
        return args[0], args[1], args[2]

    def range_while(self, stmt: gast.For, number: int, exits: frozenset[str],
                    start: gast.expr, stop: gast.expr, step: gast.expr) -> _Result:
        """`for i in range(...)` with a break or return inside -> an indexed while loop."""
        index = RANGE_INDEX.format(number)
        pre = [_assign(index, start)]
        stop_at = _once(stop, RANGE_STOP.format(number), pre)
        step_at = _once(step, RANGE_STEP.format(number), pre)
        step_value = _int_literal(step)
        if step_value is None:
            message = _const("range() arg 3 must not be zero")
            pre.append(gast.If(test=_compare(step_at(), gast.Eq(), _const(0)), body=[
                gast.Raise(exc=gast.Call(func=_name("ValueError"), args=[message], keywords=[]),
                           cause=None)], orelse=[]))
            going_up = _compare(step_at(), gast.Gt(), _const(0))
            test = gast.IfExp(test=going_up, body=_compare(_name(index), gast.Lt(), stop_at()),
                              orelse=_compare(_name(index), gast.Gt(), stop_at()))
        else:
            test = _compare(_name(index), gast.Lt() if step_value > 0 else gast.Gt(), stop_at())
        loop, body = self.loop_body(stmt.body, number)
        if step_value is not None and step_value < 0:  # `i - 3`, not `i + -3`
            advance = gast.BinOp(left=_name(index), op=gast.Sub(), right=_const(-step_value))
        else:
            advance = gast.BinOp(left=_name(index), op=gast.Add(), right=step_at())
        body = [_assign(stmt.target, _name(index)), _assign(index, advance)] + body
        pre.append(_assign(loop.brk, _const(False)))
        test = gast.BoolOp(op=gast.And(), values=[test, _not(loop.brk)])
        loop_stmt = gast.While(test=test, body=body, orelse=[])
        return _Result(pre + [loop_stmt], exits)


# --- control-flow facts of the original statements -------------------------------------------

def _jumps(stmts: Stmts, nested: bool = False) -> set[str]:
    """Which of "break"/"continue" (of this loop) and "return" (anywhere) occur in `stmts`."""
    found: set[str] = set()
    for stmt in stmts:
        if isinstance(stmt, gast.Return):
            found.add("return")
        elif isinstance(stmt, (gast.Break, gast.Continue)) and not nested:
            found.add("break" if isinstance(stmt, gast.Break) else "continue")
        elif isinstance(stmt, gast.If):
            found |= _jumps(stmt.body, nested) | _jumps(stmt.orelse, nested)
        elif isinstance(stmt, (gast.For, gast.While)):
            # NOTE: a break or continue in a loop's `else` belongs to the enclosing loop
            found |= _jumps(stmt.body, nested=True) | _jumps(stmt.orelse, nested)
        elif isinstance(stmt, gast.Try):
            found = found.union(*(_jumps(b, nested) for b in _try_blocks(stmt)))
        elif isinstance(stmt, gast.With):
            found |= _jumps(stmt.body, nested)
    return found


def _try_blocks(stmt: gast.Try) -> list[Stmts]:
    return [stmt.body, *(h.body for h in stmt.handlers), stmt.orelse, stmt.finalbody]


def _try_leaves(stmt: gast.Try, leaves: Callable[[Stmts], bool]) -> bool:
    """Control never falls out of the try statement (by `leaves`' notion of a block)."""
    return (leaves(stmt.body) or leaves(stmt.orelse)) and all(
        leaves(h.body) for h in stmt.handlers) or leaves(stmt.finalbody)


def _leaves(stmts: Stmts) -> bool:
    """Whether control never falls off the end of `stmts`."""
    return any(isinstance(s, (gast.Return, gast.Break, gast.Continue, gast.Raise))
               or (isinstance(s, gast.If) and _leaves(s.body) and _leaves(s.orelse))
               or (isinstance(s, gast.Try) and _try_leaves(s, _leaves))
               or (isinstance(s, gast.With) and _leaves(s.body))
               for s in stmts)


def _prune(stmts: Stmts) -> Stmts:
    """Drop statements after an unconditional jump or raise, so analyses see only live code."""
    for i, stmt in enumerate(stmts):
        if isinstance(stmt, (gast.If, gast.While, gast.For)):
            stmt.body, stmt.orelse = _prune(stmt.body), _prune(stmt.orelse)
        if isinstance(stmt, gast.Try):
            stmt.body, stmt.orelse = _prune(stmt.body), _prune(stmt.orelse)
            stmt.finalbody = _prune(stmt.finalbody)
            for handler in stmt.handlers:
                handler.body = _prune(handler.body)
        if isinstance(stmt, gast.With):
            stmt.body = _prune(stmt.body)
        if _leaves([stmt]):
            del stmts[i + 1:]
            break
    return stmts


def _absorbs_rest(stmt: gast.If) -> bool:
    """Exactly one branch always leaves, by a jump: the statements after go to the other."""
    then, orelse = _leaves(stmt.body), _leaves(stmt.orelse)
    return then != orelse and bool(_jumps(stmt.body if then else stmt.orelse))


def _absorb(stmt: gast.If, rest: Stmts) -> None:
    if _leaves(stmt.body):
        stmt.orelse = stmt.orelse + rest
    else:
        stmt.body = stmt.body + rest


def _range_is_builtin(parsed: ParsedFunction, fn: gast.FunctionDef) -> bool:
    """`range` in this function is the builtin (not a local, parameter, closure or global)."""
    params = {a.id for a in gast.walk(fn.args) if isinstance(a, gast.Name)}
    local = assigned_names(fn.body) | params | set(parsed.closure)
    return "range" not in local and parsed.globals.get("range", builtins.range) is builtins.range


# --- node helpers ----------------------------------------------------------------------------

def _name(name: str, store: bool = False) -> gast.Name:
    return gast.Name(id=name, ctx=gast.Store() if store else gast.Load(), annotation=None,
                     type_comment=None)


def _const(value: object) -> gast.Constant:
    return gast.Constant(value=value, kind=None)


def _assign(target: str | gast.expr, value: gast.expr) -> gast.Assign:
    target = _name(target, store=True) if isinstance(target, str) else target
    return gast.Assign(targets=[target], value=value, type_comment=None)


def _not(name: str) -> gast.UnaryOp:
    return gast.UnaryOp(op=gast.Not(), operand=_name(name))


def _none_set(flags: frozenset[str]) -> gast.expr:
    """`not f` or `not f and not g` (sorted, so output is deterministic)."""
    tests = [_not(f) for f in sorted(flags)]
    return tests[0] if len(tests) == 1 else gast.BoolOp(op=gast.And(), values=tests)


def _compare(left: gast.expr, op: gast.cmpop, right: gast.expr) -> gast.Compare:
    return gast.Compare(left=left, ops=[op], comparators=[right])


def _is_none(value: gast.expr | None) -> bool:
    return value is None or (isinstance(value, gast.Constant) and value.value is None)


def _int_literal(node: gast.expr) -> int | None:
    """The value of an int literal (`3`, `-1`), else None."""
    sign = 1
    if isinstance(node, gast.UnaryOp) and isinstance(node.op, (gast.USub, gast.UAdd)):
        sign, node = (-1 if isinstance(node.op, gast.USub) else 1), node.operand
    if isinstance(node, gast.Constant) and type(node.value) is int:
        return sign * node.value
    return None


def _once(value: gast.expr, temp: str, pre: Stmts) -> Callable[[], gast.expr]:
    """Evaluate `value` once: int literals are copied at each use, anything else is assigned to
    `temp` (appended to `pre`). Returns a maker of fresh nodes reading it."""
    if _int_literal(value) is not None:
        return lambda: copy.deepcopy(value)
    pre.append(_assign(temp, value))
    return lambda: _name(temp)


def _at(node: gast.AST, origin: gast.AST) -> gast.AST:
    """Give `node` and its descendants that have no location the location of `origin`."""
    for child in gast.walk(node):
        if "lineno" in child._attributes and getattr(child, "lineno", None) is None:
            for attr in ("lineno", "col_offset", "end_lineno", "end_col_offset"):
                setattr(child, attr, getattr(origin, attr, None))
    return node


# -- the canonical body as the builder runs it, and facts of the original function ------

def result_body(parsed: Any, fdef: gast.FunctionDef) -> list[gast.stmt]:
    """The canonical body with its final `return e` written `__amber_result = e`."""
    *body, final = fdef.body
    if not isinstance(final, gast.Return):
        raise error_at(parsed, final, "internal: the canonical body does not end with return")
    value = final.value if final.value is not None else gast.Constant(value=None, kind=None)
    target = gast.Name(id=RESULT, ctx=gast.Store(), annotation=None, type_comment=None)
    result = gast.Assign(targets=[target], value=value, type_comment=None)
    for attr in ("lineno", "col_offset", "end_lineno", "end_col_offset"):
        setattr(result, attr, getattr(final, attr, None))
        setattr(target, attr, getattr(final, attr, None))
    return body + [result]


def returns_none(fdef: gast.FunctionDef) -> bool:
    """True if some path of the function may return None: a bare `return`, `return None`, or
    falling off the end. The return value placeholder then merges as None."""
    returns = own_returns(fdef.body)
    if any(r.value is None or isinstance(r.value, gast.Constant) and r.value.value is None
           for r in returns):
        return True
    return _falls_through(fdef.body)


def own_returns(stmts: list[gast.stmt]) -> list[gast.Return]:
    """The `return` statements of this function (not of functions defined inside it)."""
    found: list[gast.Return] = []
    todo: list[gast.AST] = list(stmts)
    while todo:
        node = todo.pop()
        if isinstance(node, gast.Return):
            found.append(node)
        if not isinstance(node, gast.FunctionDef | gast.Lambda | gast.ClassDef):
            todo.extend(gast.iter_child_nodes(node))
    return sorted(found, key=lambda r: (r.lineno, r.col_offset))


def _falls_through(stmts: list[gast.stmt]) -> bool:
    for stmt in stmts:
        if isinstance(stmt, gast.Return | gast.Raise):
            return False
        if isinstance(stmt, gast.If) and not _falls_through(stmt.body) and not _falls_through(
                stmt.orelse):
            return False
        if isinstance(stmt, gast.Try) and _try_leaves(stmt, lambda b: not _falls_through(b)):
            return False
        if isinstance(stmt, gast.With) and not _falls_through(stmt.body):
            return False
        if isinstance(stmt, gast.While) and _always_true(stmt.test) and not any(
                isinstance(n, gast.Break) for n in _loop_level(stmt.body)):
            return False
    return True


def _always_true(test: gast.expr) -> bool:
    return isinstance(test, gast.Constant) and bool(test.value)


def _loop_level(stmts: list[gast.stmt]) -> list[gast.stmt]:
    """The statements of a loop body, not descending into nested loops."""
    out: list[gast.stmt] = []
    for stmt in stmts:
        out.append(stmt)
        if isinstance(stmt, gast.If):
            out += _loop_level(stmt.body) + _loop_level(stmt.orelse)
        if isinstance(stmt, gast.Try):
            out += [s for b in _try_blocks(stmt) for s in _loop_level(b)]
        if isinstance(stmt, gast.With):
            out += _loop_level(stmt.body)
    return out

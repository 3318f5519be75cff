"""Name analysis on gast statements (bound names, read names, liveness) and the synthetic-name
namer shared by canonicalization, the IR builder and codegen."""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Iterable

import gast

SYNTHETIC_PREFIX = "__amber_"  # every compiler-made variable starts with it; user names may not

# Synthetic names, per loop number k (Namer.loop) or once per function.
BREAK_FLAG = SYNTHETIC_PREFIX + "brk{}"
CONTINUE_FLAG = SYNTHETIC_PREFIX + "cont{}"
RANGE_INDEX = SYNTHETIC_PREFIX + "range_i{}"
RANGE_STOP = SYNTHETIC_PREFIX + "range_stop{}"
RANGE_STEP = SYNTHETIC_PREFIX + "range_step{}"
LOOP_ITEM = SYNTHETIC_PREFIX + "item{}"
RETURN_FLAG = SYNTHETIC_PREFIX + "ret_flag"
TRY_OK = SYNTHETIC_PREFIX + "try_ok{}"
"""Set at the end of try statement k's try block: its `else` block runs after it only then."""
RETURN_VALUE = SYNTHETIC_PREFIX + "ret_value"
# What in-place writes must reach (see aliases): an instance array's current version, by path,
# and, inside an inlined callee, a caller's variable.
STATE = SYNTHETIC_PREFIX + "state:{}"
OUTER = SYNTHETIC_PREFIX + "outer:{}"

_COMPREHENSIONS = (gast.ListComp, gast.SetComp, gast.DictComp, gast.GeneratorExp)


def is_synthetic(name: str) -> bool:
    """Whether `name` was made by the compiler rather than written by the user."""
    return name.startswith(SYNTHETIC_PREFIX)


def shown(name: str) -> str:
    """How a message names variable `name`: the user's name in backquotes, or what a
    compiler-made variable holds (`return` statements assign the value returned)."""
    if name.startswith(RETURN_VALUE):
        return "the value returned"
    inlined = re.fullmatch(r"__gen\d+_(.+)", name)  # NOTE: a local of an inlined generator
    if inlined:
        return f"`{inlined.group(1)}`"
    return f"`{name}`"


def is_state(name: str) -> bool:
    """Whether `name` holds an instance array's current version."""
    return name.startswith(STATE[:-2])


def is_memory(name: str) -> bool:
    """Whether `name` exists so that writes reach it (`STATE`, `OUTER`): never dead code, it is
    merged after branches and carried through loops whenever it changes."""
    return name.startswith((STATE[:-2], OUTER[:-2]))


def value_hint(name: str, current: str = "", replace: bool = False) -> str:
    """The name hint a value bound to variable `name` gets when it has hint `current`: the
    user's name, else a loop flag's or counter's synthetic one (codegen shows `brk`, `i`), never
    the variables that only carry a result out (their value keeps its own name). A user's name
    replaces a synthetic one, or any when `replace`, except the throwaway `_`."""
    if is_memory(name):
        return current or value_hint(name.split(":", 1)[1])
    if is_synthetic(name):
        keep = name.startswith((RETURN_VALUE, SYNTHETIC_PREFIX + "result"))
        return current or ("" if keep else name)
    if not current or (replace or is_synthetic(current)) and name.strip("_"):
        return name
    return current


@dataclass
class Namer:
    """Numbers loops in the order they are met; names come from the format constants above."""

    loops: int = 0

    def loop(self) -> int:
        """A fresh loop number for BREAK_FLAG, CONTINUE_FLAG, RANGE_* and LOOP_ITEM."""
        self.loops += 1
        return self.loops - 1


def target_names(target: gast.expr) -> set[str]:
    """Names bound by one assignment target (`x`, `a, (b, *c)`); not `x[i]` or `x.attr`."""
    if isinstance(target, gast.Name):
        return {target.id}
    if isinstance(target, (gast.Tuple, gast.List)):
        return set().union(*(target_names(elt) for elt in target.elts))
    if isinstance(target, gast.Starred):
        return target_names(target.value)
    return set()


def assigned_names(stmts: Iterable[gast.stmt]) -> set[str]:
    """Every name bound by the statements, nested blocks included, comprehension targets not."""
    names: set[str] = set()
    for stmt in stmts:
        if isinstance(stmt, gast.Assign):
            names.update(*(target_names(t) for t in stmt.targets))
        elif isinstance(stmt, (gast.AugAssign, gast.For, gast.AsyncFor)):
            names |= target_names(stmt.target)
        elif isinstance(stmt, gast.AnnAssign) and stmt.value is not None:
            names |= target_names(stmt.target)
        elif isinstance(stmt, (gast.FunctionDef, gast.AsyncFunctionDef, gast.ClassDef)):
            names.add(stmt.name)
        for child in _child_blocks(stmt):
            names |= assigned_names(child)
        # a walrus binds in the function scope, even inside a comprehension
        names.update(n.target.id for n in gast.walk(stmt) if isinstance(n, gast.NamedExpr))
    return names


def mutated_names(stmts: Iterable[gast.stmt]) -> set[str]:
    """Names whose value is changed in place: the root `x` of `x[i] = v`, `x.a += v`, ..."""
    names: set[str] = set()
    for stmt in stmts:
        targets = (stmt.targets if isinstance(stmt, gast.Assign) else
                   [stmt.target] if isinstance(stmt, (gast.AugAssign, gast.AnnAssign)) else [])
        for target in targets:
            names |= _store_roots(target)
        for child in _child_blocks(stmt):
            names |= mutated_names(child)
    return names


def _store_roots(target: gast.expr) -> set[str]:
    if isinstance(target, (gast.Tuple, gast.List)):
        return set().union(*(_store_roots(elt) for elt in target.elts))
    if isinstance(target, gast.Starred):
        return _store_roots(target.value)
    if not isinstance(target, (gast.Subscript, gast.Attribute)):
        return set()
    root = target.value
    while isinstance(root, (gast.Subscript, gast.Attribute)):
        root = root.value
    return {root.id} if isinstance(root, gast.Name) else set()


def read_names(node_or_stmts: gast.AST | Iterable[gast.AST]) -> set[str]:
    """Every name the code reads (`x += 1` reads x); comprehension variables are not reads."""
    if not isinstance(node_or_stmts, gast.AST):
        return set().union(*(read_names(n) for n in node_or_stmts))
    node = node_or_stmts
    if isinstance(node, _COMPREHENSIONS):
        return _comprehension_reads(node)
    if isinstance(node, gast.Name):
        return {node.id} if isinstance(node.ctx, gast.Load) else set()
    names = set()
    if isinstance(node, gast.AugAssign) and isinstance(node.target, gast.Name):
        names.add(node.target.id)
    for child in gast.iter_child_nodes(node):
        names |= read_names(child)
    return names


def _comprehension_reads(node: gast.expr) -> set[str]:
    # NOTE: only the first iterable is evaluated in the enclosing scope.
    gens = node.generators
    bound = set().union(*(target_names(g.target) for g in gens))
    elts = [node.key, node.value] if isinstance(node, gast.DictComp) else [node.elt]
    inner = read_names(elts + [g.iter for g in gens[1:]] + [c for g in gens for c in g.ifs])
    return read_names(gens[0].iter) | (inner - bound)


@dataclass(frozen=True)
class _Exits:
    """Live sets where `break` (after the loop) and `continue` (the loop head) go."""

    at_break: frozenset[str] = frozenset()
    at_continue: frozenset[str] = frozenset()


def live_in(stmts: list[gast.stmt], live_out: set[str]) -> set[str]:
    """Names live before `stmts` given those live after (loops solved to a fixpoint, so a name
    each iteration assigns before reading it is not live into the loop)."""
    return _live_block(stmts, set(live_out), _Exits())


def _live_block(stmts: list[gast.stmt], live: set[str], exits: _Exits) -> set[str]:
    for stmt in reversed(stmts):
        live = _live_stmt(stmt, live, exits)
    return live


def _live_stmt(stmt: gast.stmt, live: set[str], exits: _Exits) -> set[str]:
    if isinstance(stmt, gast.Assign):
        bound = set().union(*(target_names(t) for t in stmt.targets))
        return (live - bound) | read_names(stmt)
    if isinstance(stmt, gast.AnnAssign):
        if stmt.value is None:  # `x: int` binds nothing and its annotation is not evaluated
            return live
        return (live - target_names(stmt.target)) | read_names([stmt.target, stmt.value])
    if isinstance(stmt, gast.If):
        return (read_names(stmt.test) | _live_block(stmt.body, live, exits)
                | _live_block(stmt.orelse, live, exits))
    if isinstance(stmt, (gast.While, gast.For)):
        return _live_loop(stmt, _live_block(stmt.orelse, live, exits), live)
    if isinstance(stmt, (gast.Return, gast.Raise)):
        return read_names(stmt)
    if isinstance(stmt, gast.With):
        bound = set().union(*(target_names(i.optional_vars) for i in stmt.items
                              if i.optional_vars is not None))
        # NOTE: the manager is read again when it exits, after the body
        managers = read_names([i.context_expr for i in stmt.items])
        return read_names([i.optional_vars for i in stmt.items if i.optional_vars is not None]
                          ) | managers | (_live_block(stmt.body, live, exits) - bound)
    if isinstance(stmt, gast.Try):
        # NOTE: an except or finally block may start anywhere in the try block
        final = _live_block(stmt.finalbody, live, exits)
        handlers = set().union(*(_live_block(h.body, final, exits) | (
            read_names(h.type) if h.type is not None else set()) for h in stmt.handlers))
        watched = handlers | final
        return _live_block(stmt.body, _live_block(stmt.orelse, final, exits) | watched,
                           exits) | watched
    if isinstance(stmt, gast.Break):
        return set(exits.at_break)
    if isinstance(stmt, gast.Continue):
        return set(exits.at_continue)
    return live | read_names(stmt)  # Expr, AugAssign, Assert, Pass


def _live_loop(loop: gast.While | gast.For, done: set[str], after: set[str]) -> set[str]:
    """Live at the loop head, to a fixpoint. `done`: live when the loop ends normally (before
    any else block); `after`: live where `break` goes. A for target is bound before each body
    runs, so it is live in only when live after a zero-trip loop."""
    # NOTE: one pass is the fixpoint (and nested loops cost linear, not exponential, time):
    # every transfer function here is `gen | (x - kill)`, so the head found, `done | f(done)`,
    # gives f(head) <= head when passed back in as the body's end or `continue` target.
    body = _live_block(loop.body, set(done), _Exits(frozenset(after), frozenset(done)))
    if isinstance(loop, gast.For):
        head = done | (body - target_names(loop.target)) | read_names(loop.target)
        return head | read_names(loop.iter)
    return done | body | read_names(loop.test)


def _child_blocks(stmt: gast.stmt) -> list[list[gast.stmt]]:
    """The statement lists nested directly in `stmt` (if/loop bodies, try handlers, ...)."""
    blocks = [getattr(stmt, f, None) for f in ("body", "orelse", "finalbody")]
    blocks += [h.body for h in getattr(stmt, "handlers", ())]
    blocks += [c.body for c in getattr(stmt, "cases", ())]
    blocks = [b for b in blocks if isinstance(b, list)]
    if isinstance(stmt, (gast.FunctionDef, gast.AsyncFunctionDef, gast.ClassDef)):
        return []  # a nested scope binds only its own name (rejected by check anyway)
    return blocks


RESULT = SYNTHETIC_PREFIX + "result"
"""The frontend's own name for the value of the final `return`."""

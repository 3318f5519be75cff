"""Rejects Python outside the compiled subset, before anything else looks at the function.

Each rule is one table row: the construct, how the error names it, and what to write instead.
"""
from __future__ import annotations

from typing import Iterator

import gast

from .names import SYNTHETIC_PREFIX
from .source import ParsedFunction, error_at

# node type -> (what the message calls it, what to do instead)
UNSUPPORTED: dict[type, tuple[str, str]] = {
    gast.Yield: ("`yield` (a generator)", "return a tuple or list of the values instead"),
    gast.YieldFrom: ("`yield from` (a generator)", "return a tuple or list of the values instead"),
    gast.Global: ("`global`", "pass the value in as an argument, or keep it on `self`"),
    gast.Nonlocal: ("`nonlocal`", "return the new value instead of rebinding an outer variable"),
    gast.TryStar: ("try/except*", "validate inputs before calling the model"),
    gast.AsyncWith: ("`async with`", "enter the context outside the compiled function"),
    gast.AsyncFunctionDef: ("`async def`", "define a plain helper function at module level"),
    gast.Await: ("`await`", "compiled code is synchronous: await outside the model"),
    gast.AsyncFor: ("`async for`", "iterate with a plain for loop"),
    gast.Match: ("`match`", "use if/elif/else"),
    gast.SetComp: ("a set comprehension", "use a list comprehension [... for ...]"),
    gast.ClassDef: ("a class definition", "define the class at module level"),
    gast.Import: ("`import`", "import at the top of the module"),
    gast.ImportFrom: ("`from ... import`", "import at the top of the module"),
    gast.TypeAlias: ("a `type` alias", "define the alias at module level"),
}


_WALRUS_REFUSED = {gast.While: "the condition of a while loop with an else block",
                   gast.ListComp: "a comprehension",
                   gast.SetComp: "a comprehension", gast.DictComp: "a comprehension",
                   gast.GeneratorExp: "a generator expression", gast.Lambda: "a lambda"}
"""Where a `:=` would bind a name the compiled form cannot carry out (comprehensions and lambdas
have scopes of their own; a while condition is tested in the body, where a break would skip the
loop's else block)."""


def check_supported(parsed: ParsedFunction, nested: bool = False) -> None:
    """Raise CompileError at the first construct of the function body outside the subset.
    `nonlocal` is allowed in functions defined inside compiled code (`nested`: this is one),
    where it rebinds a variable of the compiled code, never of the caller."""
    for arg in gast.walk(parsed.node.args):
        if isinstance(arg, gast.Name):
            _check_name(parsed, arg)
    inner = {id(n) for stmt in parsed.node.body for d in gast.walk(stmt)
             if isinstance(d, gast.FunctionDef | gast.Lambda) for n in gast.walk(d)
             if isinstance(n, gast.Nonlocal | gast.Global)}
    for stmt in parsed.node.body:
        for node in _preorder(stmt):
            if isinstance(node, gast.Nonlocal) and (nested or id(node) in inner):
                continue
            if isinstance(node, gast.Global) and not nested and id(node) not in inner:
                continue  # NOTE: module globals the function writes: see frontend/effects.py
            _check_node(parsed, node)


def _preorder(node: gast.AST) -> Iterator[gast.AST]:
    """Nodes in source order, so the first error reported is the first one in the text."""
    yield node
    for child in gast.iter_child_nodes(node):
        yield from _preorder(child)


def _check_node(parsed: ParsedFunction, node: gast.AST) -> None:
    where = parsed.node.name
    rule = UNSUPPORTED.get(type(node))
    if rule is not None:
        what, hint = rule
        raise error_at(parsed, node, f"{what} is not supported inside {where}", hint)
    walrus_scope = _WALRUS_REFUSED.get(type(node))
    if walrus_scope is not None and not (isinstance(node, gast.While) and not node.orelse):
        inner = node.test if isinstance(node, gast.While) else node
        walrus = next((n for n in gast.walk(inner) if isinstance(n, gast.NamedExpr)), None)
        if walrus is not None:
            raise error_at(parsed, walrus, f"the walrus operator `:=` in {walrus_scope} is not "
                           f"supported inside {where}",
                           "assign on its own line before it (in a while loop: at the end of "
                           "the body too)")
    if isinstance(node, gast.Try):
        _check_finally(parsed, node.finalbody)
    if isinstance(node, gast.comprehension) and node.is_async:
        raise error_at(parsed, node.target, f"`async for` is not supported inside {where}",
                       "iterate with a plain for loop")
    if isinstance(node, (gast.Assign, gast.For, gast.AugAssign, gast.AnnAssign)):
        targets = node.targets if isinstance(node, gast.Assign) else [node.target]
        for target in targets:
            _check_target(parsed, target, top=True)
    if isinstance(node, gast.Name):
        _check_name(parsed, node)


def _check_finally(parsed: ParsedFunction, stmts: list[gast.stmt], in_loop: bool = False
                   ) -> None:
    """No `return`, and no `break`/`continue` of an enclosing loop, in a finally block: such a
    jump would discard an exception being raised (Python 3.14 warns about it too)."""
    for stmt in stmts:
        if isinstance(stmt, gast.Return) or (
                isinstance(stmt, gast.Break | gast.Continue) and not in_loop):
            raise error_at(parsed, stmt, f"`{type(stmt).__name__.lower()}` in a finally block "
                           f"is not supported inside {parsed.node.name}",
                           "set a variable in the finally block and act on it after the try "
                           "statement")
        loop = isinstance(stmt, gast.For | gast.While)
        for block in ("body", "orelse", "finalbody"):
            _check_finally(parsed, getattr(stmt, block, []), in_loop or loop and block == "body")
        for handler in getattr(stmt, "handlers", []):
            _check_finally(parsed, handler.body, in_loop)


def _check_name(parsed: ParsedFunction, node: gast.Name) -> None:
    if node.id.startswith(SYNTHETIC_PREFIX):
        raise error_at(parsed, node, f"the name {node.id!r} in {parsed.node.name} is reserved "
                       f"for the compiler (it starts with {SYNTHETIC_PREFIX!r})",
                       "rename the variable")


def _check_target(parsed: ParsedFunction, target: gast.expr, top: bool) -> None:
    """Starred targets only inside a tuple/list target, at most one per level (as Python)."""
    if isinstance(target, gast.Starred) and top:
        raise error_at(parsed, target, "a starred assignment target must be in a tuple or list",
                       "write `first, *rest = values`")
    if not isinstance(target, (gast.Tuple, gast.List)):
        return
    starred = [elt for elt in target.elts if isinstance(elt, gast.Starred)]
    if len(starred) > 1:
        raise error_at(parsed, starred[1], "only one starred target is allowed per tuple",
                       "unpack with one `*rest` and index the rest")
    for elt in target.elts:
        _check_target(parsed, elt.value if isinstance(elt, gast.Starred) else elt, top=False)

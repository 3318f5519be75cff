"""Functions defined inside compiled code: `lambda` and nested `def`. Each is a compile-time
`Closure` (its AST, the frame that defined it, its defaults evaluated at definition time, as
Python does); a call is inlined like any helper, reading the enclosing function's variables as
they are at the call (Python's late binding)."""
from __future__ import annotations

import inspect
from dataclasses import replace
from typing import Any, Callable

import gast

from . import aliases, names
from .canonicalize import canonicalize, result_body, returns_none
from .check import check_supported
from .context import Frame, Prepared, nested_reads
from .values import MISSING, Closure, is_undefined

MAX_DEPTH = 64


def _lambda(f: Frame, node: gast.Lambda) -> Closure:
    """`lambda args: body` as a function `def <lambda>(args): return body`."""
    body = gast.Return(value=node.body)
    fdef = gast.FunctionDef(name="<lambda>", args=node.args, body=[body], decorator_list=[],
                            returns=None, type_comment=None, type_params=[])
    for n in (fdef, body):
        for attr in ("lineno", "col_offset", "end_lineno", "end_col_offset"):
            setattr(n, attr, getattr(node, attr, None))
    return _closure(f, fdef, node)


def _def(f: Frame, node: gast.FunctionDef) -> None:
    """A nested `def`: binds its name to the function."""
    if node.decorator_list:
        raise f.error("a decorated nested function is not supported in compiled code",
                      "define it at module level", node=node.decorator_list[0])
    f.scope.bind(node.name, _closure(f, node, node), node.lineno)


def _closure(f: Frame, fdef: gast.FunctionDef, key: gast.AST) -> Closure:
    """The function `fdef` defined now in `f`: its defaults are evaluated here."""
    args = fdef.args
    positional = [*args.posonlyargs, *args.args]
    defaults = {p.id: f.evaluate(d) for p, d in zip(positional[len(positional) -
                                                                len(args.defaults):],
                                                     args.defaults)}
    defaults.update({p.id: f.evaluate(d) for p, d in zip(args.kwonlyargs, args.kw_defaults)
                     if d is not None})
    return Closure(fdef, key, f, defaults)


def prepare(f: Frame, closure: Closure) -> Prepared:
    """Check and canonicalize a nested function (once per build)."""
    cache = f.compiler.nested
    found = cache.get(closure.key)
    if found is None:
        outer = closure.outer.parsed
        parsed = replace(outer, node=closure.node)
        check_supported(parsed, nested=True)
        fdef = canonicalize(parsed)
        local = frozenset(_parameters(fdef.args) | names.assigned_names(fdef.body))
        # NOTE: a `nonlocal` name stays live to the end: the caller reads it back
        live = nested_reads(fdef) | nonlocal_names(closure.node)
        found = cache[closure.key] = Prepared(parsed, fdef, local, returns_none(closure.node),
                                              result_body(parsed, fdef), live)
    return found


def _parameters(args: gast.arguments) -> set[str]:
    found = [*args.posonlyargs, *args.args, *args.kwonlyargs, args.vararg, args.kwarg]
    return {a.id for a in found if isinstance(a, gast.Name)}


def signature(closure: Closure) -> inspect.Signature:
    """The closure's signature, its defaults the values evaluated when it was defined."""
    args = closure.node.args
    kinds = inspect.Parameter
    params = [inspect.Parameter(a.id, kinds.POSITIONAL_ONLY,
                                default=closure.defaults.get(a.id, kinds.empty))
              for a in args.posonlyargs]
    params += [inspect.Parameter(a.id, kinds.POSITIONAL_OR_KEYWORD,
                                 default=closure.defaults.get(a.id, kinds.empty))
               for a in args.args]
    if args.vararg is not None:
        params.append(inspect.Parameter(args.vararg.id, kinds.VAR_POSITIONAL))
    params += [inspect.Parameter(a.id, kinds.KEYWORD_ONLY,
                                 default=closure.defaults.get(a.id, kinds.empty))
               for a in args.kwonlyargs]
    if args.kwarg is not None:
        params.append(inspect.Parameter(args.kwarg.id, kinds.VAR_KEYWORD))
    return inspect.Signature(params)


def call_closure(f: Frame, closure: Closure, args: list[Any], kwargs: dict[str, Any]) -> Any:
    """Inline a call of a function defined inside compiled code."""
    compiler = f.compiler
    identity = (closure.key, None)
    if any(entry == identity for entry, _ in compiler.stack):
        raise f.error(f"recursive call of the nested function {closure.name}",
                      "amber compiles a call by inlining it: rewrite the recursion as a loop")
    if len(compiler.stack) >= MAX_DEPTH:
        raise f.error(f"calls are nested more than {MAX_DEPTH} deep")
    try:
        bound = signature(closure).bind(*args, **kwargs)
    except TypeError as exc:
        raise f.error(f"{closure.name}() {exc}", "pass the arguments its definition asks for"
                      ) from None
    bound.apply_defaults()
    if any(outer is closure.outer for outer in compiler.rebinding):
        raise f.error(f"{closure.name} reads the variables of the function that defined it "
                      "while another function of it rebinds them (`nonlocal`)",
                      "pass the values as arguments")
    shared = nonlocal_names(closure.node)
    if shared:
        _check_rebinding(f, closure, shared)
    frame = Frame(compiler, closure.outer.func, prepare(f, closure))
    frame.outer = closure.outer
    frame.caller = f.builder.loc
    compiler.frames.append(frame)
    compiler.stack.append((identity, closure.name))
    for name in shared:  # NOTE: copied in here, and back out when the call returns
        frame.scope.bind(name, f.scope.get(name))
    for name, value in bound.arguments.items():
        frame.scope.bind(name, value)
    passed = aliases.enter(f, frame)
    saved_loc = f.builder.loc
    if shared:
        compiler.rebinding.append(f)
    try:
        result = frame.run_function()
        aliases.leave(f, frame, passed)
        for name in shared:
            f.scope.bind(name, frame.scope.get(name), getattr(f.stmt, "lineno", 0) or 0)
        return result
    finally:
        if shared:
            compiler.rebinding.pop()
        compiler.frames.pop()
        compiler.stack.pop()
        f.builder.loc = saved_loc


def nonlocal_names(fdef: gast.AST) -> frozenset[str]:
    """The names a nested function declares `nonlocal` (in its own body, not deeper)."""
    found: set[str] = set()
    todo = list(gast.iter_child_nodes(fdef))
    while todo:
        node = todo.pop()
        if isinstance(node, gast.Nonlocal):
            found.update(node.names)
        elif not isinstance(node, gast.FunctionDef | gast.Lambda):
            todo.extend(gast.iter_child_nodes(node))
    return frozenset(found)


def _check_rebinding(f: Frame, closure: Closure, shared: frozenset[str]) -> None:
    """A function rebinding variables of the function that defined it (`nonlocal`) compiles
    when that function calls it outside any branch or loop: its new values are then bound
    where the call is, as an assignment there would bind them (a branch or loop decides what
    it carries from the names assigned in it, and a call assigns none)."""
    if closure.outer is not f:
        raise f.error(f"{closure.name} rebinds variables of the function that defined it "
                      "(`nonlocal`), but is called from elsewhere",
                      "call it only from the function that defines it, or return the new "
                      "values")
    if f.builder.ip.block is not f.compiler.graph.body:
        raise f.error(f"{closure.name} rebinds variables of this function (`nonlocal`), but "
                      "is called inside a branch or loop",
                      "call it outside branches and loops, or return the new values")
    for name in sorted(shared):
        value = f.scope.get(name)
        if name not in f.locals:
            raise f.error(f"{closure.name} rebinds `{name}` (`nonlocal`) of a function other "
                          "than the one calling it", "return the new value instead")
        if value is MISSING or is_undefined(value):
            raise f.error(f"{closure.name} rebinds `{name}` (`nonlocal`), which is not bound "
                          "here on every path", f"bind `{name}` before calling {closure.name}")


def _nonlocal(f: Frame, stmt: gast.Nonlocal) -> None:
    """`nonlocal a, b`: nothing to build (`call_closure` binds the names in and out)."""


EXPRESSIONS: dict[type, Callable[[Frame, Any], Any]] = {gast.Lambda: _lambda}
"""Expression handlers this module adds."""
STATEMENTS: dict[type, Callable[[Frame, Any], None]] = {gast.FunctionDef: _def,
                                                        gast.Nonlocal: _nonlocal}
"""Statement handlers this module adds."""

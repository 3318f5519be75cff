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
from .values import Closure

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
        check_supported(parsed)
        fdef = canonicalize(parsed)
        local = frozenset(_parameters(fdef.args) | names.assigned_names(fdef.body))
        found = cache[closure.key] = Prepared(parsed, fdef, local, returns_none(closure.node),
                                              result_body(parsed, fdef), nested_reads(fdef))
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
    frame = Frame(compiler, closure.outer.func, prepare(f, closure))
    frame.outer = closure.outer
    frame.caller = f.builder.loc
    compiler.frames.append(frame)
    compiler.stack.append((identity, closure.name))
    for name, value in bound.arguments.items():
        frame.scope.bind(name, value)
    passed = aliases.enter(f, frame)
    saved_loc = f.builder.loc
    try:
        result = frame.run_function()
        aliases.leave(f, frame, passed)
        return result
    finally:
        compiler.frames.pop()
        compiler.stack.pop()
        f.builder.loc = saved_loc


EXPRESSIONS: dict[type, Callable[[Frame, Any], Any]] = {gast.Lambda: _lambda}
"""Expression handlers this module adds."""
STATEMENTS: dict[type, Callable[[Frame, Any], None]] = {gast.FunctionDef: _def}
"""Statement handlers this module adds."""

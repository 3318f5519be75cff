"""With statements, as Python defines them: `__enter__`, then the body in a try block whose
finally block calls `__exit__` (a Try region, see `exceptions`).

The manager is a compile-time object: a user class's `__enter__`/`__exit__` are compiled like
other methods; `np.errstate(...)` becomes the `seterr`/`restore_err` ops. Compiled code calls
`__exit__(None, None, None)` on every exit, which is exact only for an `__exit__` that does not
read the exception it is given and returns a false value known when compiling (never
suppresses it); any other is refused.
"""
from __future__ import annotations

import copy
import types
from typing import Any

import gast
import numpy as np

from . import exceptions, names
from .context import Frame
from .source import parse_function
from .values import Instance, Ref, describe, has_runtime, truth

MANAGER = names.SYNTHETIC_PREFIX + "with{}"
EXITED = names.SYNTHETIC_PREFIX + "exited{}"
ERRSTATE = names.SYNTHETIC_PREFIX + "errstate{}"

_ERRSTATE_KEYS = ("all", "divide", "over", "under", "invalid")
_QUIET = ("ignore", "warn")
"""errstate handlings compiled code keeps exactly (folding may compute under other settings,
which only changes warnings; `raise` and `call` would change results)."""


def build_with(f: Frame, stmt: gast.With) -> None:
    """A with statement of one context manager (canonicalize splits `with a, b:`)."""
    (item,) = stmt.items
    f.compiler.withs += 1
    number = f.compiler.withs
    settings = _errstate_settings(f, item.context_expr)
    if settings is not None:
        _errstate(f, stmt, item, settings, number)
        return
    manager = f.evaluate(item.context_expr)
    _check_exit(f, manager, item.context_expr)
    held = MANAGER.format(number)
    f.scope.bind(held, manager, stmt.lineno)
    enter = _call(held, "__enter__", [], stmt)
    head = gast.Assign(targets=[item.optional_vars], value=enter, type_comment=None) \
        if item.optional_vars is not None else gast.Expr(value=enter)
    f.run_block([_located(head, stmt)], _live(f, stmt))
    if f.scope.dead:
        return
    exited = EXITED.format(number)
    exit_ = _call(held, "__exit__", [_none(), _none(), _none()], stmt)
    leave = gast.Assign(targets=[_name(exited, store=True)], value=exit_, type_comment=None)
    _run_try(f, stmt, [_located(leave, stmt)])
    if f.scope.dead:
        return
    result = f.scope.get(exited)
    if has_runtime(result) or truth(result) is not False:
        raise f.error(f"`__exit__` of {describe(manager)} returns {describe(result)}, which may "
                      "suppress an exception; compiled code never does",
                      "return None from __exit__ (or enter the context outside the compiled "
                      "function)", node=item.context_expr)
    f.scope.unbind(exited)
    f.scope.unbind(held)


def _run_try(f: Frame, stmt: gast.With, final: list[gast.stmt]) -> None:
    """The body in a try block with `final` as its finally block."""
    body = gast.Try(body=stmt.body, handlers=[], orelse=[], finalbody=final)
    exceptions.build_try(f, _located(body, stmt))


def _errstate(f: Frame, stmt: gast.With, item: gast.withitem, settings: tuple, number: int
              ) -> None:
    if item.optional_vars is not None:
        raise f.error("`with np.errstate(...) as name` is not supported in compiled code",
                      "drop the `as` part", node=item.optional_vars)
    saved = ERRSTATE.format(number)
    old = f.op("seterr", settings=settings)
    leave = gast.Expr(value=gast.Call(func=_name(saved), args=[], keywords=[]))
    # NOTE: a call of this compile-time object is how the finally block spells `restore_err`
    f.scope.bind(saved, _Restore(f, old), stmt.lineno)
    _run_try(f, stmt, [_located(leave, stmt)])
    f.scope.unbind(saved)


class _Restore:
    """Called (at compile time) by the finally block of a `with np.errstate`: adds the
    `restore_err` op putting back the handling `seterr` replaced."""
    __amber_compile_time__ = True

    def __init__(self, f: Frame, old: Any) -> None:
        self.f, self.old = f, old

    def __call__(self) -> None:
        self.f.op("restore_err", self.old)


def _errstate_settings(f: Frame, expr: gast.expr) -> tuple | None:
    """The sorted (key, value) pairs of `np.errstate(key=value, ...)`, if `expr` is one."""
    if not (isinstance(expr, gast.Call) and not expr.args):
        return None
    try:
        func = f.evaluate(expr.func)
    except Exception:
        return None
    if func is not np.errstate:
        return None
    pairs = []
    for keyword in expr.keywords:
        value = f.evaluate(keyword.value)
        if keyword.arg not in _ERRSTATE_KEYS or value not in _QUIET:
            raise f.error(f"np.errstate({keyword.arg}={value!r}) is not supported in compiled "
                          f"code: only {' or '.join(map(repr, _QUIET))} for "
                          f"{', '.join(_ERRSTATE_KEYS)}",
                          "enter the context outside the compiled function", node=keyword)
        pairs.append((keyword.arg, value))
    return tuple(sorted(pairs))


def _check_exit(f: Frame, manager: Any, where: gast.expr) -> None:
    """Refuse a manager whose `__exit__` compiled code cannot call as Python would."""
    cls = manager.cls if isinstance(manager, Instance) else type(
        manager.obj if isinstance(manager, Ref) else manager)
    exit_ = getattr(cls, "__exit__", None)
    if not isinstance(getattr(cls, "__enter__", None), types.FunctionType) or not isinstance(
            exit_, types.FunctionType):
        raise f.error(f"{describe(manager)} is not a context manager compiled code can enter "
                      "(a class of yours with __enter__ and __exit__, or np.errstate)",
                      "enter the context outside the compiled function", node=where)
    fdef = parse_function(exit_).node
    args = fdef.args
    params = [a.id for a in [*args.posonlyargs, *args.args][1:] + [args.vararg] if a is not None]
    read = names.read_names(fdef.body) & set(params)
    if read:
        raise f.error(f"`__exit__` of {describe(manager)} reads the exception it is given "
                      f"({', '.join(sorted(read))}); compiled code calls it as if none was raised",
                      "enter the context outside the compiled function", node=where)


def _live(f: Frame, stmt: gast.With) -> frozenset[str]:
    return f.live_after() | names.read_names(stmt.body)


def _call(held: str, method: str, args: list[gast.expr], at: gast.AST) -> gast.Call:
    func = gast.Attribute(value=_name(held), attr=method, ctx=gast.Load())
    return _located(gast.Call(func=func, args=args, keywords=[]), at)


def _name(name: str, store: bool = False) -> gast.Name:
    return gast.Name(id=name, ctx=gast.Store() if store else gast.Load(), annotation=None,
                     type_comment=None)


def _none() -> gast.Constant:
    return gast.Constant(value=None, kind=None)


def _located(node: gast.AST, origin: gast.AST) -> gast.AST:
    node = copy.copy(node)
    for child in gast.walk(node):
        if "lineno" in child._attributes and getattr(child, "lineno", None) is None:
            for attr in ("lineno", "col_offset", "end_lineno", "end_col_offset"):
                setattr(child, attr, getattr(origin, attr, None))
    return node


HANDLERS = {gast.With: build_with}
"""Statement handlers this module adds to `statements.HANDLERS`."""

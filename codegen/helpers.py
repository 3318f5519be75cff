"""Copies the NumPy helper functions ops list in `OpDef.helpers` (and the helpers they call)
into the generated module, by source; a helper may use only `np`, builtins and other helpers.
"""
from __future__ import annotations

import ast
import builtins
import functools
import inspect
import linecache
import textwrap
import types
from dataclasses import dataclass
from typing import Iterable

import numpy as np


_VISIBLE = frozenset(dir(builtins)) | {"np"}


def collect_helpers(roots: Iterable[types.FunctionType]) -> list[types.FunctionType]:
    """`roots` and every helper they call, each once, callees before callers."""
    ordered: list[types.FunctionType] = []
    seen: set[types.FunctionType] = set()

    def visit(fn: types.FunctionType) -> None:
        if fn in seen:
            return
        seen.add(fn)
        for dep in _parse(fn).calls:
            visit(dep)
        ordered.append(fn)

    for fn in roots:
        visit(fn)
    names = [fn.__name__ for fn in ordered]
    clash = {n for n in names if names.count(n) > 1}
    assert not clash, f"codegen: different helper functions share the name(s) {sorted(clash)}"
    return ordered


def helper_source(fn: types.FunctionType) -> str:
    """The function's source as it goes into the generated module: verbatim, unless it has
    annotations the module could not evaluate (`Any`); those are dropped, at the price of
    reprinting the function without its comments."""
    return _parse(fn).source


@dataclass(frozen=True)
class _Helper:
    """A helper's checked source and the helpers it calls."""
    source: str
    calls: tuple[types.FunctionType, ...]


@functools.cache
def _parse(fn: types.FunctionType) -> _Helper:
    where = f"helper {fn.__module__}.{fn.__qualname__}"
    assert isinstance(fn, types.FunctionType), f"{where} is not a Python function"
    text = _source(fn)
    tree = ast.parse(text)
    node = tree.body[0]
    assert isinstance(node, ast.FunctionDef) and node.name == fn.__name__, \
        f"{where} is not a plain `def {fn.__name__}` (lambda or alias)"
    assert not node.decorator_list, f"{where} is decorated; codegen copies undecorated functions"
    if fn.__globals__.get("np", np) is not np:
        raise NameError(f"{where}: `np` there is not numpy")
    calls = []
    for ident in sorted(_free_names(node) - _VISIBLE):
        value = fn.__globals__.get(ident)
        if not isinstance(value, types.FunctionType):
            raise NameError(f"{where} uses the global {ident!r}, which generated code does not "
                            "have (helpers may use only np, builtins and other helpers)")
        calls.append(value)
    if _drop_foreign_annotations(node):
        text = ast.unparse(node)  # NOTE: drops comments
    return _Helper(text.rstrip() + "\n", tuple(calls))


def _source(fn: types.FunctionType) -> str:
    """The function's source text, dedented: its lines up to the last one its code (or a nested
    function's) spans, which is much cheaper than `inspect.getsource` tokenizing the file."""
    code = fn.__code__
    lines = linecache.getlines(code.co_filename, fn.__globals__)
    if not lines or not hasattr(code, "co_positions"):  # NOTE: Python 3.10
        return textwrap.dedent(inspect.getsource(fn))
    last = max(_last_line(code), code.co_firstlineno)
    text = textwrap.dedent("".join(lines[code.co_firstlineno - 1:last]))
    try:
        tree = ast.parse(text)
    except SyntaxError:
        tree = None
    if tree is None or len(tree.body) != 1 or getattr(tree.body[0], "name", None) != fn.__name__:
        return textwrap.dedent(inspect.getsource(fn))
    return text


def _last_line(code: types.CodeType) -> int:
    ends = [end for _, end, _, _ in code.co_positions() if end is not None]
    nested = [_last_line(c) for c in code.co_consts if isinstance(c, types.CodeType)]
    return max(ends + nested, default=code.co_firstlineno)


def _annotated(fn: ast.FunctionDef) -> list[ast.arg]:
    args = fn.args
    every = args.posonlyargs + args.args + args.kwonlyargs + [args.vararg, args.kwarg]
    return [a for a in every if a is not None and a.annotation is not None]


def _free_names(fn: ast.FunctionDef) -> set[str]:
    """Names the function reads but does not bind (annotations aside: they may be dropped)."""
    annotations = [a.annotation for a in _annotated(fn)]
    if fn.returns is not None:
        annotations.append(fn.returns)
    skip = {id(n) for a in annotations for n in ast.walk(a)}
    loads, bound = set(), set()
    for n in ast.walk(fn):
        if id(n) in skip:
            continue
        if isinstance(n, ast.Name):
            (loads if isinstance(n.ctx, ast.Load) else bound).add(n.id)
        elif isinstance(n, ast.arg):
            bound.add(n.arg)
        elif isinstance(n, ast.FunctionDef | ast.ClassDef) and n is not fn:
            bound.add(n.name)
        elif isinstance(n, ast.ExceptHandler) and n.name:
            bound.add(n.name)
        elif isinstance(n, ast.alias):
            bound.add((n.asname or n.name).split(".")[0])
    return loads - bound


def _drop_foreign_annotations(fn: ast.FunctionDef) -> bool:
    """Remove annotations naming anything but builtins and `np`; True if any went."""
    def foreign(a: ast.expr) -> bool:
        return any(isinstance(n, ast.Name) and n.id not in _VISIBLE for n in ast.walk(a))

    dropped = False
    for a in _annotated(fn):
        if foreign(a.annotation):
            a.annotation, dropped = None, True
    if fn.returns is not None and foreign(fn.returns):
        fn.returns, dropped = None, True
    return dropped

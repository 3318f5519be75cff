"""One-line constructors for the Python AST nodes codegen builds, and printing them with astor.
Standard-library `ast` nodes: op templates are parsed with `ast.parse`, so one family serves both.
"""
from __future__ import annotations

import ast
from typing import Iterable, Sequence

import astor
from astor.source_repr import split_lines

MAX_COLUMNS = 99
"""astor wraps longer lines (the project's limit is 100 columns)."""


def name(ident: str) -> ast.Name:
    return ast.Name(id=ident, ctx=ast.Load())


def store(ident: str) -> ast.Name:
    return ast.Name(id=ident, ctx=ast.Store())


def const(value: object) -> ast.Constant:
    return ast.Constant(value=value)


def attr(value: ast.expr | str, field: str) -> ast.Attribute:
    base = name(value) if isinstance(value, str) else value
    return ast.Attribute(value=base, attr=field, ctx=ast.Load())


def subscript(value: ast.expr, index: ast.expr) -> ast.Subscript:
    return ast.Subscript(value=value, slice=index, ctx=ast.Load())


def call(func: ast.expr | str, args: Sequence[ast.expr] = (), **kwargs: ast.expr) -> ast.Call:
    fn = name(func) if isinstance(func, str) else func
    keywords = [ast.keyword(arg=k, value=v) for k, v in kwargs.items()]
    return ast.Call(func=fn, args=list(args), keywords=keywords)


def tuple_(elements: Sequence[ast.expr]) -> ast.Tuple:
    return ast.Tuple(elts=list(elements), ctx=ast.Load())


def list_(elements: Sequence[ast.expr]) -> ast.List:
    return ast.List(elts=list(elements), ctx=ast.Load())


def neg(operand: ast.expr) -> ast.UnaryOp:
    return ast.UnaryOp(op=ast.USub(), operand=operand)


def not_(operand: ast.expr) -> ast.UnaryOp:
    return ast.UnaryOp(op=ast.Not(), operand=operand)


def assign(target: str, value: ast.expr) -> ast.Assign:
    return ast.Assign(targets=[store(target)], value=value)


def aug_assign(target: str, op: type[ast.operator], value: ast.expr) -> ast.AugAssign:
    """`target op= value` (`x += b`)."""
    return ast.AugAssign(target=store(target), op=op(), value=value)


def bool_op(op: type[ast.boolop], values: Sequence[ast.expr]) -> ast.BoolOp:
    """`a and b and c`, flattening operands that are the same operation."""
    flat: list[ast.expr] = []
    for value in values:
        same = isinstance(value, ast.BoolOp) and isinstance(value.op, op)
        flat.extend(value.values if same else [value])
    return ast.BoolOp(op=op(), values=flat)


def if_exp(test: ast.expr, body: ast.expr, orelse: ast.expr) -> ast.IfExp:
    return ast.IfExp(test=test, body=body, orelse=orelse)


def assign_tuple(targets: Sequence[str], values: Sequence[ast.expr]) -> ast.Assign:
    """`a, b = b, a`: a parallel assignment."""
    lhs = ast.Tuple(elts=[store(t) for t in targets], ctx=ast.Store())
    return ast.Assign(targets=[lhs], value=tuple_(values))


def expr_stmt(value: ast.expr) -> ast.Expr:
    return ast.Expr(value=value)


def delete(idents: Sequence[str]) -> ast.Delete:
    return ast.Delete(targets=[ast.Name(id=i, ctx=ast.Del()) for i in idents])


def if_(test: ast.expr, body: list[ast.stmt], orelse: list[ast.stmt]) -> ast.If:
    return ast.If(test=test, body=body or [ast.Pass()], orelse=orelse)


def while_(test: ast.expr, body: list[ast.stmt]) -> ast.While:
    return ast.While(test=test, body=body or [ast.Pass()], orelse=[])


def for_range(target: str, bounds: Sequence[ast.expr], body: list[ast.stmt]) -> ast.For:
    return ast.For(target=store(target), iter=call("range", bounds), body=body or [ast.Pass()],
                   orelse=[])


def break_() -> ast.Break:
    return ast.Break()


def return_(value: ast.expr) -> ast.Return:
    return ast.Return(value=value)


def function(fn_name: str, params: Sequence[str], body: list[ast.stmt]) -> ast.FunctionDef:
    args = ast.arguments(posonlyargs=[], args=[ast.arg(arg=p) for p in params], vararg=None,
                         kwonlyargs=[], kw_defaults=[], kwarg=None, defaults=[])
    return ast.FunctionDef(name=fn_name, args=args, body=body or [ast.Pass()],
                           decorator_list=[], returns=None, type_comment=None)


def import_numpy() -> ast.Import:
    return ast.Import(names=[ast.alias(name="numpy", asname="np")])


def module(body: list[ast.stmt]) -> ast.Module:
    return ast.Module(body=body, type_ignores=[])


class Copier(ast.NodeTransformer):
    """Rebuilds a tree node by node (a deep copy); subclasses substitute nodes on the way, and a
    visit returning a list splices it into the enclosing list field."""

    def generic_visit(self, node: ast.AST) -> ast.AST:
        fields = {}
        for field, value in ast.iter_fields(node):
            if isinstance(value, list):
                value = _flatten(self.visit(v) if isinstance(v, ast.AST) else v for v in value)
            elif isinstance(value, ast.AST):
                value = self.visit(value)
            fields[field] = value
        return type(node)(**fields)


def _flatten(items: Iterable[object]) -> list[object]:
    out: list[object] = []
    for item in items:
        if isinstance(item, list):
            out.extend(item)
        else:
            out.append(item)
    return out


def copy_expr(node: ast.expr) -> ast.expr:
    """A fresh copy of `node`, so one expression can appear at several places of a tree."""
    return Copier().visit(node)


def to_source(node: ast.AST) -> str:
    """Print `node` as Python source, wrapping lines at `MAX_COLUMNS`."""
    return astor.to_source(node, pretty_source=_pretty)


def _pretty(source: list[str]) -> str:
    return "".join(split_lines(source, maxline=MAX_COLUMNS))

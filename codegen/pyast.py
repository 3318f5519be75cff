"""One-line constructors for the Python AST nodes codegen builds, and printing them with
`ast.unparse` (lines wrapped at commas). Standard-library `ast` nodes: op templates are parsed
with `ast.parse`, so one family serves both.
"""
from __future__ import annotations

import ast
import io
import tokenize
from typing import Iterable, Sequence

MAX_COLUMNS = 99
"""Longer lines are wrapped where they can be (the project's limit is 100 columns)."""


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
    node = ast.fix_missing_locations(node)
    text = _Printer().visit(node) if _Printer is not None else ast.unparse(node)
    return wrap_lines(text + "\n")


_Unparser = getattr(ast, "_Unparser", None)


if _Unparser is not None:
    class _Printer(_Unparser):
        """`ast.unparse` without two kinds of needless parentheses: around a tuple returned or
        assigned (`return (h, t)`), and around a later operand of `and`/`or` that is a `not`
        (`a and (not b)`: every operand of a boolean operator binds one level tighter than
        the operator, the first as the others)."""

        def visit_Return(self, node: ast.Return) -> None:  # noqa: N802 (ast's names)
            if isinstance(node.value, ast.Tuple):
                self.set_precedence(ast._Precedence.TUPLE, node.value)
            super().visit_Return(node)

        def visit_Assign(self, node: ast.Assign) -> None:  # noqa: N802
            if isinstance(node.value, ast.Tuple):
                self.set_precedence(ast._Precedence.TUPLE, node.value)
            super().visit_Assign(node)

        def visit_BoolOp(self, node: ast.BoolOp) -> None:  # noqa: N802
            operator = self.boolops[node.op.__class__.__name__]
            operand = self.boolop_precedence[operator].next()
            with self.require_parens(self.boolop_precedence[operator], node):
                def write(value: ast.expr) -> None:
                    self.set_precedence(operand, value)
                    self.traverse(value)
                self.interleave(lambda: self.write(f" {operator} "), write, node.values)
else:  # NOTE: a Python whose ast has no _Unparser: plain ast.unparse
    _Printer = None


_FSTRING_START = getattr(tokenize, "FSTRING_START", None)  # NOTE: Python 3.12+ tokenizes
_FSTRING_END = getattr(tokenize, "FSTRING_END", None)      # f-strings into parts


def wrap_lines(source: str) -> str:
    """`source` with each line longer than MAX_COLUMNS broken inside brackets (where Python
    allows it): after a comma if one fits, else next to a keyword (`else`, `and`, ...), else
    at any space between two tokens, the least deeply nested first; continuation lines are four
    columns further in. A line with no place to break stays long."""
    cuts: dict[int, list[tuple[int, tuple[int, int]]]] = {}
    depth = fstrings = 0
    previous = ""
    lines = io.StringIO(source).readlines()
    for tok in tokenize.generate_tokens(io.StringIO(source).readline):
        if tok.type == _FSTRING_START:
            fstrings += 1
        elif tok.type == _FSTRING_END:
            fstrings -= 1
        if fstrings or tok.type == _FSTRING_START:
            continue
        after, previous = previous, tok.string
        (row, col), line = tok.start, lines[tok.start[0] - 1] if tok.start[0] <= len(lines) else ""
        if depth > 0 and col > 0 and line[col - 1] == " " and tok.start[0] == tok.end[0]:
            rank = (1 if {tok.string, after} & _KEYWORDS else 0, -depth)
            cuts.setdefault(row, []).append((col, rank))  # NOTE: before the token
        if tok.type == tokenize.OP:
            if tok.string in "([{":
                depth += 1
            elif tok.string in ")]}":
                depth -= 1
            elif tok.string == "," and depth > 0:
                cuts.setdefault(row, []).append((tok.end[1], (2, -depth)))  # NOTE: after it
    out = []
    for row, line in enumerate(lines, 1):
        text = line.rstrip("\n")
        if len(text) > MAX_COLUMNS and row in cuts:
            out.extend(piece + "\n" for piece in _split(text, sorted(cuts[row])))
        else:
            out.append(line)
    return "".join(out)


_KEYWORDS = {"and", "or", "not", "if", "else", "for", "in", "is"}


def _split(text: str, cuts: list[tuple[int, tuple[int, int]]]) -> list[str]:
    """`text` cut at some of `cuts` ((column, rank)): each piece filled up to the last cut of
    the best rank that fits."""
    indent = " " * (len(text) - len(text.lstrip(" ")) + 4)
    pieces, start, prefix = [], 0, ""
    while len(prefix) + len(text) - start > MAX_COLUMNS:
        later = [(c, rank) for c, rank in cuts if c > start and text[c:].strip()]
        if not later:
            break
        fitting = [(rank, c) for c, rank in later
                   if len(prefix) + len(text[start:c].rstrip()) <= MAX_COLUMNS]
        cut = max(fitting)[1] if fitting else later[0][0]
        pieces.append(prefix + text[start:cut].rstrip())
        start = len(text) - len(text[cut:].lstrip(" "))
        prefix = indent
    pieces.append(prefix + text[start:])
    return pieces

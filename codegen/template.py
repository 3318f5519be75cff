"""Op emit templates: each template string is parsed once, then filled with AST nodes (input
expressions, attribute literals) substituted for the placeholder names only, as Tangent does.
"""
from __future__ import annotations

import ast
import builtins
import functools
from dataclasses import dataclass
from typing import Any, Mapping, Sequence

from ..ops import OpDef
from . import pyast as py
from .literal import Hoist, literal

_ALWAYS_VISIBLE = frozenset(dir(builtins)) | {"np"}


@dataclass(frozen=True)
class Template:
    """A parsed emit expression and the names it binds itself (lambda and comprehension
    variables), which are not placeholders and need no definition."""
    text: str
    tree: ast.expr
    bound: frozenset[str]


@functools.cache
def parse_template(text: str) -> Template:
    """Parse an emit template once; SyntaxError names the template."""
    try:
        tree = ast.parse(text.strip(), mode="eval").body
    except SyntaxError as err:
        raise SyntaxError(f"emit template {text!r} is not a Python expression: {err.msg}") from None
    bound = {n.id for n in ast.walk(tree) if isinstance(n, ast.Name)
             and not isinstance(n.ctx, ast.Load)}
    bound |= {a.arg for n in ast.walk(tree) if isinstance(n, ast.arguments)
              for a in n.posonlyargs + n.args + n.kwonlyargs}
    return Template(text, tree, frozenset(bound))


def render(op: OpDef, attrs: Mapping[str, Any], args: Sequence[ast.expr], hoist: Hoist,
           out: ast.expr | None = None) -> ast.expr:
    """The expression computing `op` on `args` with `attrs`; with `out`, the op's in-place form
    writing into that buffer. `attrs` must not hold codegen markers (`__`-prefixed keys);
    `hoist` receives attribute values too large to write inline.

    Placeholders: input names (a variadic `*xs` splices its elements, `xs_0, xs_1, ...` name
    single ones, a bare `xs` is their tuple), attribute names, and `out`."""
    assert out is None or op.inplace is not None, f"{op.name} has no in-place form"
    template = parse_template(op.template(attrs) if out is None else op.inplace)
    inputs, variadic = bind_inputs(op, args)
    if out is not None:
        inputs["out"] = out
    filler = _Filler(inputs, variadic, attrs, hoist)
    tree = filler.visit(template.tree)
    visible = _ALWAYS_VISIBLE | template.bound | {h.__name__ for h in op.helpers}
    unknown = sorted(filler.free - visible)
    if unknown:
        raise NameError(f"op {op.name}: emit template {template.text!r} uses {', '.join(unknown)}"
                        ", neither an input, an attribute, np, a builtin nor one of its helpers")
    return tree


def bind_inputs(op: OpDef, args: Sequence[ast.expr]
                ) -> tuple[dict[str, ast.expr], tuple[str, list[ast.expr]] | None]:
    """Map the op's input names to `args`: fixed inputs one each, the variadic one (if any) to
    the rest, also reachable as `xs_0, xs_1, ...`."""
    inputs: dict[str, ast.expr] = {}
    variadic = None
    for i, input_name in enumerate(op.inputs):
        if input_name.startswith("*"):
            after = len(op.inputs) - i - 1
            items = list(args[i:len(args) - after])
            variadic = (input_name[1:], items)
            inputs.update({f"{input_name[1:]}_{j}": item for j, item in enumerate(items)})
            inputs.update(zip(op.inputs[i + 1:], args[len(args) - after:]))
            break
        inputs[input_name] = args[i]
    else:
        assert len(args) == len(op.inputs), \
            f"{op.name} takes {len(op.inputs)} inputs, the node has {len(args)}"
    return inputs, variadic


class _Filler(py.Copier):
    """Copies a template, substituting placeholder names; collects the names left free."""

    def __init__(self, inputs: dict[str, ast.expr], variadic: tuple[str, list[ast.expr]] | None,
                 attrs: Mapping[str, Any], hoist: Hoist) -> None:
        self.inputs, self.attrs, self.hoist = inputs, attrs, hoist
        self.variadic_name, self.items = variadic if variadic else (None, [])
        self.free: set[str] = set()

    def literal(self, value: Any, subscript: bool) -> ast.expr:
        """An attribute value; `Dyn(k)` inside it is the k-th variadic input."""
        return literal(value, self.items, self.hoist, subscript)

    def visit_Name(self, node: ast.Name) -> ast.expr:
        if node.id in self.inputs:
            return py.copy_expr(self.inputs[node.id])
        if node.id == self.variadic_name:  # the sequence itself, unstarred
            return py.tuple_([py.copy_expr(e) for e in self.items])
        if node.id in self.attrs:
            return self.literal(self.attrs[node.id], False)
        self.free.add(node.id)
        return ast.Name(id=node.id, ctx=node.ctx)

    def visit_Starred(self, node: ast.Starred) -> ast.AST | list[ast.expr]:
        if isinstance(node.value, ast.Name) and node.value.id == self.variadic_name:
            return [py.copy_expr(e) for e in self.items]
        return self.generic_visit(node)

    def visit_Subscript(self, node: ast.Subscript) -> ast.Subscript:
        index = node.slice
        if isinstance(index, ast.Name) and index.id in self.attrs and index.id not in self.inputs:
            index = self.literal(self.attrs[index.id], True)
        else:
            index = self.visit(index)
        return ast.Subscript(value=self.visit(node.value), slice=index, ctx=node.ctx)

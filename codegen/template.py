"""Op emit templates: each template string is parsed once, then filled with AST nodes (input
expressions, attribute literals) substituted for the placeholder names only, as Tangent does.

Filling happens in two steps: `prepare` substitutes attributes and stands a placeholder in for
each input (so codegen can see how often and in which order the expression reads its inputs
before deciding what to inline), and `Form.fill` puts the real input expressions in.
"""
from __future__ import annotations

import ast
import builtins
import functools
from dataclasses import dataclass
from typing import Any, Mapping, Sequence

from ..ops import OpDef, Spelling
from ..ops.symbolic import SYMBOL_NAME
from . import pyast as py
from .literal import SIZE_PREFIX, Hoist, literal

_ALWAYS_VISIBLE = frozenset(dir(builtins)) | {"np"}
_INPUT_PREFIX = "__amber_in"
_INPUT = _INPUT_PREFIX + "{}"
_OUT = "__amber_out"
_CONST = "__amber_const{}"
_CONDITIONAL = (ast.IfExp, ast.BoolOp, ast.Lambda, ast.ListComp, ast.SetComp, ast.DictComp,
                ast.GeneratorExp, ast.Dict)
"""Expressions that evaluate some parts conditionally, repeatedly or out of source order."""


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


@dataclass(frozen=True)
class Form:
    """An op's expression for one node with placeholders for its inputs (and `out`)."""
    tree: ast.expr
    order: tuple[int, ...]
    """The inputs in the order evaluating the expression reads them (an input read twice is
    listed twice)."""
    once: frozenset[int]
    """Inputs read exactly once and unconditionally: only these may be given as expressions
    that compute something (anything else would compute it twice, or maybe not at all)."""
    constants: tuple[Any, ...]
    """Attribute values too large to write inline, standing in the tree as placeholders."""
    sizes: frozenset[str] = frozenset()
    """The symbolic sizes the expression reads (`N` of `x.reshape(N, 400)`)."""

    def fill(self, args: Sequence[ast.expr], hoist: Hoist, out: ast.expr | None = None,
             sizes: Mapping[str, ast.expr] | None = None) -> ast.expr:
        """The expression with `args` (and the in-place buffer `out`, and the variables
        holding its symbolic sizes) put in."""
        names = {_INPUT.format(i): arg for i, arg in enumerate(args)}
        if out is not None:
            names[_OUT] = out
        for size in self.sizes:
            assert sizes is not None and size in sizes, f"no variable holds the size {size}"
            names[SIZE_PREFIX + size] = sizes[size]
        names.update((_CONST.format(k), hoist(v)) for k, v in enumerate(self.constants))
        return _Substitute(names).visit(self.tree)


def placeholders(n: int) -> list[str]:
    """The names standing for inputs 0..n-1 in a prepared form."""
    return [_INPUT.format(i) for i in range(n)]


def operand(i: int) -> Form:
    """The form that is just input `i` (the right-hand side of `x += y`)."""
    return Form(py.name(_INPUT.format(i)), (i,), frozenset({i}), ())


def prepare(op: OpDef, spelling: Spelling, n_inputs: int, out_template: str | None = None
            ) -> Form:
    """The spelling's expression over `n_inputs` placeholder inputs; or `out_template`, a form
    of the op writing its result into `out` (its in-place form over an input, or its form
    computing into a fresh buffer)."""
    template = parse_template(spelling.template if out_template is None else out_template)
    args = [py.name(_INPUT.format(i)) for i in range(n_inputs)]
    inputs, variadic = bind_inputs(op, args)
    if out_template is not None:
        inputs["out"] = py.name(_OUT)
    constants: list[Any] = []

    def park(value: Any) -> ast.expr:
        constants.append(value)
        return py.name(_CONST.format(len(constants) - 1))

    filler = _Filler(inputs, variadic, spelling.attrs, park)
    tree = filler.visit(template.tree)
    visible = _ALWAYS_VISIBLE | template.bound | {h.__name__ for h in spelling.helpers}
    unknown = sorted(filler.free - visible)
    if unknown:
        raise NameError(f"op {op.name}: emit template {template.text!r} uses {', '.join(unknown)}"
                        ", neither an input, an attribute, np, a builtin nor one of its helpers")
    order, conditional = _reads(tree)
    once = {i for i in order if order.count(i) == 1} - conditional
    sizes = {n.id[len(SIZE_PREFIX):] for n in ast.walk(tree)
             if isinstance(n, ast.Name) and n.id.startswith(SIZE_PREFIX)}
    return Form(tree, tuple(order), frozenset(once), tuple(constants), frozenset(sizes))


def render(op: OpDef, attrs: Mapping[str, Any], args: Sequence[ast.expr], hoist: Hoist,
           out: ast.expr | None = None) -> ast.expr:
    """The expression computing `op` on `args` with `attrs`; with `out`, the op's in-place form
    writing into that buffer. `attrs` must not hold codegen markers (`__`-prefixed keys);
    `hoist` receives attribute values too large to write inline.

    Placeholders: input names (a variadic `*xs` splices its elements, `xs_0, xs_1, ...` name
    single ones, a bare `xs` is their tuple), attribute names, and `out`."""
    spelling = Spelling(op.template(attrs), attrs, op.helpers)
    writing = None if out is None else op.inplace_template(attrs)
    return prepare(op, spelling, len(args), writing).fill(args, hoist, out)


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


def _reads(tree: ast.expr) -> tuple[list[int], set[int]]:
    """The input placeholders in evaluation order, and those read in a conditional part."""
    order: list[int] = []
    conditional: set[int] = set()

    def visit(node: ast.AST, maybe: bool) -> None:
        if isinstance(node, ast.Name) and node.id.startswith(_INPUT_PREFIX):
            index = int(node.id[len(_INPUT_PREFIX):])
            order.append(index)
            if maybe:
                conditional.add(index)
            return
        lazy = isinstance(node, _CONDITIONAL) or isinstance(node, ast.Compare) \
            and len(node.ops) > 1  # NOTE: `a < b < c` may stop before reading c
        first = _always_run(node)
        for child in ast.iter_child_nodes(node):
            visit(child, maybe or (lazy and child is not first))

    visit(tree, False)
    return order, conditional


def _always_run(node: ast.AST) -> ast.AST | None:
    """The part of a conditional expression that runs every time: the first operand of
    `and`/`or` and of a comparison chain, the test of `a if c else b`."""
    if isinstance(node, ast.BoolOp):
        return node.values[0]
    if isinstance(node, ast.IfExp):
        return node.test
    return node.left if isinstance(node, ast.Compare) else None


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
        if SYMBOL_NAME.match(node.id):  # NOTE: a symbolic size written into the template text
            return ast.Name(id=SIZE_PREFIX + node.id, ctx=node.ctx)
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


class _Substitute(py.Copier):
    """Copies a prepared form, putting expressions in for its placeholders."""

    def __init__(self, names: dict[str, ast.expr]) -> None:
        self.names = names

    def visit_Name(self, node: ast.Name) -> ast.expr:
        found = self.names.get(node.id)
        return py.copy_expr(found) if found is not None else ast.Name(id=node.id, ctx=node.ctx)

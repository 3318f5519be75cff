"""What each op node becomes in generated code: its spelling for the node's input types (the op's
specialized one where static shapes allow), run in place or not, and as an expression with its
inputs still placeholders (`template.Form`), so later steps can see what it reads and in which
order before they decide what to inline.
"""
from __future__ import annotations

import ast
import math
from dataclasses import dataclass
from typing import Callable

from ..graph import FOR, WHILE, Graph, Node, Tensor
from ..graph.ir import INPLACE_ATTR  # NOTE: node.attrs[INPLACE_ATTR] = k: write into input k
from ..graph.analysis import buffer_maker, row_put
from ..graph.ir import INTO_ROW_ATTR
from ..ops import Spelling
from ..ops.stacks import stack_put
from .template import Form, operand, prepare

INPLACE_MIN_ELEMENTS = 1024
"""Outside loops, results smaller than this are computed into a new array even when marked in
place: NumPy serves small allocations from a cache, so reuse saves little while `out=` costs a
keyword argument, and a new value can be inlined into the expression that reads it. In a loop
body every mark is taken: a chain then runs on one buffer, often the carried value's own, with
no array made per iteration (`x *= 0.5; x -= 1.0`)."""


@dataclass(frozen=True)
class Lowered:
    """One op node as generated code computes it."""
    form: Form
    """The expression; for an augmented assignment, its right-hand side."""
    helpers: tuple[Callable, ...]
    inplace: int | None = None
    """The input whose buffer receives the result (its variable is the result's)."""
    augmented: type[ast.operator] | None = None
    """`buffer op= operand` (`x += b`) instead of the in-place ufunc call."""
    into_row: Node | None = None
    """The `stack_put` whose row the op computes into (its in-place form, `out=stack[row]`)."""
    into_buffer: bool = False
    """The op computes into its buffer kept across calls (its form writing into `out`,
    `out=buffers.x`; see buffers.py)."""


def lower(graph: Graph, into_buffers: frozenset[Node] = frozenset()) -> dict[Node, Lowered]:
    """Every op node of `graph` (region nodes excluded) as generated code computes it; those
    in `into_buffers` compute into their kept buffers."""
    return {node: lower_node(node, node in into_buffers) for node in graph.walk()
            if not node.is_region}


def lower_node(node: Node, into_buffer: bool = False) -> Lowered:
    """The op node as generated code computes it (into its kept buffer if `into_buffer`)."""
    attrs = node.op_attrs
    if into_buffer:
        text = node.op.into_template(attrs)
        assert text is not None, f"codegen: {node.name} has no form writing into a buffer"
        return Lowered(*_writing_out(node, attrs, text), into_buffer=True)
    if node.attrs.get(INTO_ROW_ATTR):
        text = node.op.into_template(attrs)
        assert text is not None, f"codegen: {node.name} is marked {INTO_ROW_ATTR} but has no form"
        return Lowered(*_writing_out(node, attrs, text), into_row=row_write(node))
    maker = buffer_maker(node.inputs[2]) if node.op is stack_put else None
    if maker is not None and maker.attrs.get(INTO_ROW_ATTR):
        return Lowered(operand(0), (), 0)  # NOTE: the row is written: `stack` is the result
    k = inplace_input(node)
    if k is None:
        spelling = node.op.spelling(tuple(v.type for v in node.inputs), attrs)
        return Lowered(prepare(node.op, spelling, len(node.inputs)), spelling.helpers)
    augmented = _augmented(node, k)
    if augmented is not None:
        return Lowered(operand(1 - k), (), k, augmented)
    return Lowered(*_writing_out(node, attrs, node.op.inplace_template(attrs)), k)


def _writing_out(node: Node, attrs: dict, text: str) -> tuple[Form, tuple]:
    """The op's form from template `text`, which writes its result into `out`, and the
    helpers that form calls."""
    helpers = tuple(h for h in node.op.helpers if h.__name__ in text)  # NOTE: those it calls
    spelling = Spelling(node.op.template(attrs), attrs, helpers)
    return prepare(node.op, spelling, len(node.inputs), out_template=text), helpers


def row_write(node: Node) -> Node:
    """The `stack_put` whose row `node` computes into (see `INTO_ROW_ATTR`)."""
    put = row_put(node)
    assert put is not None, f"codegen: {node.name} is marked {INTO_ROW_ATTR} but puts no row"
    return put


def inplace_input(node: Node) -> int | None:
    """The input `node` runs in place over, if it is marked so and it is in a loop or its
    result is large enough to gain from it (see `INPLACE_MIN_ELEMENTS`)."""
    k = node.attrs.get(INPLACE_ATTR)
    assert k is None or type(k) is int and 0 <= k < len(node.inputs), \
        f"codegen: {node.name} has {INPLACE_ATTR}={k!r}, not an input index"
    out = node.outputs[0].type if len(node.outputs) == 1 else None
    if k is None or isinstance(out, Tensor) and out.is_static \
            and math.prod(out.shape) < INPLACE_MIN_ELEMENTS and not in_loop(node):
        return None
    return k


def in_loop(node: Node) -> bool:
    """`node` runs in the body (or condition) of a While or For, at any depth."""
    block = node.parent
    while block is not None and block.owner_node is not None:
        if block.owner_node.op in (WHILE, FOR):
            return True
        block = block.owner_node.parent
    return False


def _augmented(node: Node, k: int) -> type[ast.operator] | None:
    """`x += y` for a binary operator op over buffer x (or y, the operator commuting): NumPy
    runs `ndarray.__iadd__` as `np.add(x, y, out=x)`, with less call overhead."""
    operator = getattr(ast, node.op.operator or "", None)
    if not (isinstance(operator, type) and issubclass(operator, ast.operator)) \
            or len(node.inputs) != 2 or node.op.inplace is None:
        return None
    return operator if k == 0 or node.op.commutative else None

"""Elementwise ops inside a Numba kernel: the expression of one result element, built from the
op's `numba` template (`OpDef.numba`) with NumPy's casts written out, so the kernel computes in
exactly the dtypes NumPy does (NumPy 2 promotion: Python numbers are weak).

Placeholders a template may use besides its inputs: `R`, the scalar type of the result, and `T`,
the type NumPy brings the inputs to before comparing them (both `np.float32`-style NumPy types,
or `int`/`float`/`bool` when every input is a Python number). A cast of an input that already has
that type is dropped, so `R(x) + R(y)` on two float32 arrays reads `x[i] + y[i]`.
"""
from __future__ import annotations

import ast
from dataclasses import replace
from typing import Any, Sequence

import numpy as np

from ...graph import Node, Scalar, Tensor, Type
from ...ops import Spelling
from .. import pyast as py
from ..literal import literal
from ..template import Form, placeholders, prepare
from .types import NotNative, element_dtype, python_result, scalar_type

_KEEPS_TYPE = frozenset(np.dtype(d).type for d in (np.float32, np.float64, np.int64))
"""Result types Numba's scalar arithmetic keeps (int8 + int8 is int64 in Numba, not int8)."""

_BOOL_CALLS = frozenset({"isnan", "isfinite", "isinf"})


def element_types(node: Node) -> tuple[Any, Any]:
    """`(R, T)` for an elementwise node: its result's scalar type and the common type of its
    inputs (NumPy promotion with Python numbers weak; Python's own when all are Python)."""
    types = tuple(v.type for v in node.inputs)
    out = node.outputs[0].type
    numeric = [t for t in types if isinstance(t, Tensor | Scalar)]
    if not numeric:
        raise NotNative(f"{node.name} has no numeric input")
    if all(isinstance(t, Scalar) for t in numeric):
        common = python_result(tuple(numeric))
    else:
        try:
            common = np.result_type(*(element_dtype(t) for t in numeric)).type
        except TypeError as err:
            raise NotNative(f"{node.name}: {err}") from None
    return scalar_type(out), common


def element_form(node: Node) -> tuple[Form, Sequence[Any]]:
    """The node's prepared element expression (inputs as placeholders) and its helpers."""
    types = tuple(v.type for v in node.inputs)
    attrs = node.op_attrs
    spelling = node.op.numba_spelling(types, attrs)
    if spelling is None:
        raise NotNative(f"{node.name} has no Numba form for {', '.join(map(str, types))}")
    result, common = element_types(node)
    full = Spelling(spelling.template, {**spelling.attrs, "R": result, "T": common},
                    spelling.helpers)
    form = prepare(node.op, full, len(node.inputs))
    form = _drop_noop_casts(form, types, {"R": result, "T": common})
    if _needs_wrap(form.tree, result):
        form = replace(form, tree=py.call(literal(result), [form.tree]))
    return form, spelling.helpers


def _drop_noop_casts(form: Form, types: tuple[Type, ...], casts: dict[str, Any]) -> Form:
    """Remove `R(x)` / `T(x)` where input x already has that scalar type."""
    spelled = {ast.dump(literal(kind)): kind for kind in casts.values()}
    inputs = {name: scalar_type(t) if isinstance(t, Tensor | Scalar) else None
              for name, t in zip(placeholders(len(types)), types)}

    class Drop(py.Copier):
        def visit_Call(self, node: ast.Call) -> ast.expr:
            if len(node.args) == 1 and not node.keywords \
                    and isinstance(node.args[0], ast.Name) \
                    and spelled.get(ast.dump(node.func)) is not None \
                    and inputs.get(node.args[0].id) is spelled[ast.dump(node.func)]:
                return py.name(node.args[0].id)
            return self.generic_visit(node)

    return replace(form, tree=Drop().visit(form.tree))


def _needs_wrap(tree: ast.expr, result: Any) -> bool:
    """True unless Numba's own result already has type `result`: float32/float64/int64
    arithmetic, Python numbers, and comparisons or tests giving a bool."""
    if result in (int, float, bool) or result in _KEEPS_TYPE:
        return False
    if result is np.bool_:
        if isinstance(tree, ast.Compare | ast.BoolOp) or (
                isinstance(tree, ast.UnaryOp) and isinstance(tree.op, ast.Not)):
            return False
        if isinstance(tree, ast.Call) and isinstance(tree.func, ast.Attribute) \
                and tree.func.attr in _BOOL_CALLS:
            return False
        if isinstance(tree, ast.Call) and ast.dump(tree.func) == ast.dump(literal(np.bool_)):
            return False
    return not (isinstance(tree, ast.Call) and ast.dump(tree.func) == ast.dump(literal(result)))


def fill(form: Form, args: Sequence[ast.expr]) -> ast.expr:
    """The element expression with the inputs' element expressions put in."""
    return form.fill(args, _no_hoist)


def _no_hoist(value: Any) -> ast.expr:
    raise NotNative(f"an attribute value too large to write into a kernel ({type(value).__name__})")


def loop_nest(shape: Sequence[int], index: Sequence[str], body: ast.stmt) -> ast.stmt:
    """`for i0 in range(n0): for i1 in range(n1): <body>`."""
    for n, name in reversed(list(zip(shape, index))):
        body = py.for_range(name, [py.const(n)], [body])
    return body


def subscript(name: str, items: Sequence[ast.expr]) -> ast.Subscript:
    """`name[i0, i1]` (or `name[i0]`)."""
    index = items[0] if len(items) == 1 else ast.Tuple(elts=list(items), ctx=ast.Load())
    return ast.Subscript(value=py.name(name), slice=index, ctx=ast.Load())


def store_subscript(name: str, items: Sequence[ast.expr]) -> ast.Subscript:
    node = subscript(name, items)
    node.ctx = ast.Store()
    return node


def broadcast_index(shape: Sequence[int], loop_shape: Sequence[int],
                    index: Sequence[ast.expr]) -> list[ast.expr]:
    """The subscript reading an operand of `shape` at a position of the loop over `loop_shape`
    (NumPy broadcasting: trailing axes align, an axis of 1 is read at 0)."""
    offset = len(loop_shape) - len(shape)
    return [py.const(0) if n == 1 and loop_shape[offset + j] != 1 else py.copy_expr(index[offset + j])
            for j, n in enumerate(shape)]

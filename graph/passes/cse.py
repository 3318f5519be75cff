"""Common subexpression elimination.

Merges a pure op node into an earlier node with the same op, inputs, attributes, type and
control edges, within a block and from enclosing blocks into nested ones (an enclosing block's
earlier nodes dominate everything nested after them), never between sibling blocks. Never
merges effectful nodes or regions. Assumes a pure op's result depends only on its inputs and
attributes (and on what its control edges order it after).
"""
from __future__ import annotations

from typing import Any, Hashable

import numpy as np

from ..analysis import identity_matters
from ..ir import Block, Graph, Node, Value
from ..rewriter import Rewriter


def run(graph: Graph, rw: Rewriter) -> bool:
    """Merge repeated pure nodes into the first one that dominates them; True if any merged."""
    _visit(graph.body, {}, rw)
    return rw.changed


def _visit(block: Block, seen: dict[Hashable, Value], rw: Rewriter) -> None:
    scope = dict(seen)  # NOTE: a copy, so a nested block's entries never leak to its siblings
    for node in list(block.nodes):
        if node.is_region:
            for inner in node.blocks:
                _visit(inner, scope, rw)
            continue
        # NOTE: an array someone writes to or keeps must stay its own object
        if node.effectful or len(node.outputs) != 1 or identity_matters(node.output):
            continue
        key = _key(node)
        if key is None:
            continue
        if key in scope and not identity_matters(scope[key]):
            rw.replace(node, [scope[key]])
        else:
            scope[key] = node.output


def _key(node: Node) -> Hashable | None:
    try:
        attrs = tuple(sorted((k, _freeze(v)) for k, v in node.attrs.items()))
    except TypeError:
        return None  # an attribute we cannot compare safely: leave the node alone
    # NOTE: control edges are part of the key: a read ordered after an effect is another read
    return (node.name, tuple(id(v) for v in node.inputs), attrs, node.output.type,
            tuple(id(n) for n in node.control_inputs))


def _freeze(value: Any) -> Hashable:
    """A hashable stand-in that is equal exactly when the attribute values are."""
    if isinstance(value, np.ndarray | np.generic):
        arr = np.asarray(value)
        return ("array", arr.dtype.str, arr.shape, arr.tobytes())
    if isinstance(value, tuple):
        return ("tuple", tuple(_freeze(v) for v in value))
    if isinstance(value, slice):
        return ("slice", _freeze(value.start), _freeze(value.stop), _freeze(value.step))
    if isinstance(value, float):
        return ("float", value.hex())  # NOTE: keeps 0.0 and -0.0 (and NaNs) apart
    hash(value)
    return (type(value).__name__, value)

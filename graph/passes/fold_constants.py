"""Constant folding and branch pruning.

- A pure op whose inputs are all constants runs its kernel at compile time, unless the result
  is larger than `FOLD_LIMIT` elements, is mutable, or the kernel raises (then the error is left
  for run time, where the user's line is known).
- An If on a constant condition becomes its taken block; an If whose arms yield the same outer
  value forwards it.
- A While whose condition is constant false, or a For with constant bounds and zero trips,
  becomes its initial values.
- A loop-carried value the body passes through unchanged is its initial value everywhere, which
  carries constants into loop bodies.
"""
from __future__ import annotations

import numpy as np

from ...ops.types import type_of
from ..analysis import NOT_CONSTANT, constant_of, only_read
from ..ir import FOR, IF, WHILE, Block, Graph, InsertPoint, Node, Rewriter

FOLD_LIMIT = 4096
"""The largest number of elements a folded tensor may have."""

def run(graph: Graph, rw: Rewriter) -> bool:
    before, rw.changed = rw.changed, False
    _visit(graph.body, rw)
    changed, rw.changed = rw.changed, before or rw.changed
    return changed


def _visit(block: Block, rw: Rewriter) -> None:
    for node in list(block.nodes):
        if node.parent is not block:
            continue  # moved away by an earlier rewrite
        if node.is_region:
            _forward_passthroughs(node, rw)
            if _prune(node, rw):
                continue
            for inner in node.blocks:
                _visit(inner, rw)
        else:
            _fold(node, rw)


def _fold(node: Node, rw: Rewriter) -> None:
    if node.effectful or node.name in ("constant", "undefined"):
        return
    args = [constant_of(v) for v in node.inputs]
    if any(a is NOT_CONSTANT for a in args):
        return
    try:
        result = node.op.kernel(*args, **node.attrs)
        folded_type = type_of(result)
    except Exception:
        return
    too_big = isinstance(result, np.ndarray) and result.size > FOLD_LIMIT
    # NOTE: a folded array becomes one shared module constant: only pure readers may see it
    shared = isinstance(result, np.ndarray) and not only_read(node.output)
    if too_big or shared or isinstance(result, list) or folded_type != node.output.type:
        return
    value = rw.builder(InsertPoint.before(node), node.loc).constant(result, node.output.name)
    rw.replace(node, [value])


def _prune(node: Node, rw: Rewriter) -> bool:
    """Replace a region whose path is known at compile time; True if it is gone."""
    if node.op == IF:
        cond = constant_of(node.inputs[0])
        if cond is not NOT_CONSTANT:
            try:
                taken = node.then if bool(cond) else node.else_
            except Exception:
                return False
            results = rw.inline(taken, InsertPoint.before(node), [])
            rw.replace(node, results)
            return True
        same = [a if a is b else None for a, b in zip(node.then.results, node.else_.results)]
        for out, value in zip(node.outputs, same):
            if value is not None and value.owner not in node.blocks:
                rw.replace_value(out, value)
        return False
    if _never_runs(node):
        inits = node.inputs[3:] if node.op == FOR else node.inputs
        rw.replace(node, list(inits))
        return True
    return False


def _never_runs(node: Node) -> bool:
    if node.op == FOR:
        bounds = [constant_of(v) for v in node.inputs[:3]]
        if any(b is NOT_CONSTANT for b in bounds):
            return False
        try:
            return len(range(*bounds)) == 0
        except Exception:
            return False
    cond = constant_of(node.cond.results[0])
    if cond is NOT_CONSTANT or any(n.effectful for n in node.cond.walk()):
        return False
    try:
        return not bool(cond)
    except Exception:
        return False


def _forward_passthroughs(node: Node, rw: Rewriter) -> None:
    """A carried slot whose body yields its own parameter never changes: use the init."""
    if node.op not in (WHILE, FOR):
        return
    offset = 1 if node.op == FOR else 0
    inits = node.inputs[3:] if node.op == FOR else node.inputs
    for i, (init, result) in enumerate(zip(inits, node.body.results)):
        param = node.body.params[i + offset]
        if result is not param:
            continue
        params = [param] + ([node.cond.params[i]] if node.op == WHILE else [])
        for p in params:
            rw.replace_value(p, init)
        rw.replace_value(node.outputs[i], init)

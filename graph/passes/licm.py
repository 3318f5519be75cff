"""Loop-invariant code motion.

Moves pure nodes of a While's cond or body, or a For's body, to just before the loop when every
input is defined outside it. Innermost loops go first, so a value can climb several levels.
An op that can raise leaves a block only when the block surely runs (a For with constant bounds
and at least one trip, or a While's cond, which always runs once) and nothing observable (an
effect, another possible error, a region) comes before it in the block: then its error, if
any, still happens first. Assumes ops without `can_raise` never raise on their typed inputs.
"""
from __future__ import annotations

from ..analysis import NOT_CONSTANT, constant_of, defined_inside
from ..ir import FOR, WHILE, Block, Graph, InsertPoint, Node, Rewriter


def run(graph: Graph, rw: Rewriter) -> bool:
    before, rw.changed = rw.changed, False
    for loop in reversed([n for n in graph.walk() if n.op in (WHILE, FOR)]):
        blocks = [(loop.cond, True), (loop.body, False)] if loop.op == WHILE else \
            [(loop.body, _runs_at_least_once(loop))]
        for block, surely_runs in blocks:
            _hoist(loop, block, surely_runs, rw)
    changed, rw.changed = rw.changed, before or rw.changed
    return changed


def _hoist(loop: Node, block: Block, surely_runs: bool, rw: Rewriter) -> None:
    first = surely_runs  # NOTE: True while nothing observable has run in `block` yet
    for node in list(block.nodes):
        if _invariant(node, loop) and (first or not node.op.can_raise):
            rw.move(node, InsertPoint.before(loop))
        elif node.is_region or node.effectful or node.op.can_raise:
            first = False


def _invariant(node: Node, loop: Node) -> bool:
    """A pure op whose inputs all come from outside `loop` (and nothing orders it)."""
    return not (node.is_region or node.effectful or node.control_inputs
                or node.name == "undefined") and \
        not any(defined_inside(v, loop) for v in node.inputs)


def _runs_at_least_once(loop: Node) -> bool:
    bounds = [constant_of(v) for v in loop.inputs[:3]]
    if any(b is NOT_CONSTANT for b in bounds):
        return False
    try:
        return len(range(*bounds)) > 0
    except Exception:
        return False

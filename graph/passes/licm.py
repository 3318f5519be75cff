"""Loop-invariant code motion.

Moves pure nodes of a While's cond or body, or a For's body, to just before the loop when every
input is defined outside it. Innermost loops go first, so a value can climb several levels.
Ops that can raise leave a body only when the loop is known to run (a For with constant bounds
and at least one trip); a While's cond always runs, so its nodes may always leave.
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
    for node in list(block.nodes):
        movable = not (node.is_region or node.effectful or node.control_inputs
                       or node.name == "undefined")
        if movable and (surely_runs or not node.op.can_raise) and \
                not any(defined_inside(v, loop) for v in node.inputs):
            rw.move(node, InsertPoint.before(loop))


def _runs_at_least_once(loop: Node) -> bool:
    bounds = [constant_of(v) for v in loop.inputs[:3]]
    if any(b is NOT_CONSTANT for b in bounds):
        return False
    try:
        return len(range(*bounds)) > 0
    except Exception:
        return False

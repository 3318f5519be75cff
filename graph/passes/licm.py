"""Loop-invariant code motion.

Moves pure nodes of a While's cond or body, or a For's body, to just before the loop when every
input is defined outside it. Innermost loops go first, so a value can climb several levels.
A node that may raise leaves a block only when the block surely runs (a For with constant
bounds and at least one trip, or a While's cond, which always runs once) and nothing observable
(an effect, another possible error, a region) comes before it in the block: then its error, if
any, still happens first. May raise: a `can_raise` op, arithmetic on Python scalars only
(`n // 0` raises where NumPy warns), and operands whose shapes are known only at run time
(they may not broadcast). Assumes other ops never raise on their typed inputs.
"""
from __future__ import annotations

from ...ops import python as pyops
from ..analysis import defined_inside, identity_matters, may_raise, trip_count
from ..builder import InsertPoint
from ..ir import FOR, WHILE, Block, Graph, Node
from ..rewriter import Rewriter


def run(graph: Graph, rw: Rewriter) -> bool:
    """Hoist loop-invariant pure nodes out of While/For regions; True if any moved."""
    for loop in reversed([n for n in graph.walk() if n.op in (WHILE, FOR)]):
        blocks = [(loop.cond, True), (loop.body, False)] if loop.op == WHILE else \
            [(loop.body, (trip_count(loop) or 0) > 0)]
        for block, surely_runs in blocks:
            _hoist(loop, block, surely_runs, rw)
    return rw.changed


def _hoist(loop: Node, block: Block, surely_runs: bool, rw: Rewriter) -> None:
    first = surely_runs  # NOTE: True while nothing observable has run in `block` yet
    for node in list(block.nodes):
        if _invariant(node, loop) and (first or not may_raise(node)):
            rw.move(node, InsertPoint.before(loop))
        elif node.is_region or node.effectful or may_raise(node):
            first = False



def _invariant(node: Node, loop: Node) -> bool:
    """A pure op whose inputs all come from outside `loop` (and nothing orders it)."""
    # NOTE: an array the loop writes to or keeps must be allocated anew on every iteration
    return not (node.is_region or node.effectful or node.control_inputs
                or node.op is pyops.undefined or any(map(identity_matters, node.outputs))) and \
        not any(defined_inside(v, loop) for v in node.inputs)

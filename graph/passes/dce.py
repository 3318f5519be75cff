"""Dead code elimination (mark and sweep).

Marks what the graph's results and its effectful nodes need, following values through region
yields and loop-carried parameters; then removes every unmarked pure node, every unread output
of an If, every loop-carried value that feeds only itself, and regions left without outputs or
effects (a dead region goes whole). Effectful nodes always stay, with the regions around them.
Assumes an unused pure computation cannot be observed: an error it would raise (`can_raise`)
or a pure loop that never ends goes with it, except inside the try block of a Try region, where
an except or finally block observes it: there every op that may raise stays.
"""
from __future__ import annotations

from ..analysis import may_raise, watched_by_try
from ..ir import IF, TRY, Block, Graph, Node, Value
from ..rewriter import Rewriter


def run(graph: Graph, rw: Rewriter) -> bool:
    """Remove what neither the results nor an effect needs; True if anything went."""
    live, kept = _mark(graph)
    _sweep(graph.body, live, kept, rw)
    return rw.changed


def _mark(graph: Graph) -> tuple[set[Value], set[Node]]:
    """The values something needs, and the nodes kept for their effects (effectful ops and
    every region around one)."""
    live: set[Value] = set()
    kept: set[Node] = set()
    work: list[Value] = list(graph.outputs)

    def need(*values: Value) -> None:
        work.extend(v for v in values if v not in live)

    for node in graph.walk():
        if node.is_region or not (node.op.effects or may_raise(node) and watched_by_try(node)):
            continue
        need(*node.inputs)
        kept.add(node)
        region = node.parent.owner_node if node.parent else None
        while region is not None and region not in kept:  # they must run as before
            kept.add(region)
            need(*region.deciders())
            region = region.parent.owner_node if region.parent else None
    while work:
        value = work.pop()
        if value in live:
            continue
        live.add(value)
        owner = value.owner
        if isinstance(owner, Node):
            if owner.is_region:
                need(*owner.deciders(), *owner.incoming(value.index))
            else:
                need(*owner.inputs)
        elif isinstance(owner, Block) and owner.owner_node is not None:
            region = owner.owner_node
            if region.op == TRY:
                continue  # NOTE: the exception an except block catches needs nothing
            slot = region.slot_of(value)
            need(*region.deciders())
            if slot is not None:
                need(*region.incoming(slot))
    return live, kept


def _sweep(block: Block, live: set[Value], kept: set[Node], rw: Rewriter) -> None:
    for node in reversed(list(block.nodes)):
        if node not in kept and not any(out in live for out in node.outputs):
            rw.erase(node)  # NOTE: a whole dead region goes at once, its blocks unswept
            continue
        dead = _dead_slots(node, live) if node.is_region else []
        rw.drop_yields(node, dead)  # NOTE: first, so what computed them is unused when swept
        for inner in node.blocks:
            _sweep(inner, live, kept, rw)
        for i in dead:
            rw.drop_slot(node, i)


def _dead_slots(node: Node, live: set[Value]) -> list[int]:
    """Output slots of a region nobody needs, highest first (so indices stay valid)."""
    dead = []
    for i in reversed(range(len(node.outputs))):
        if node.outputs[i] in live:
            continue
        if node.op not in (IF, TRY) and any(node.carried(block)[i] in live for block in node.blocks):
            continue
        dead.append(i)
    return dead

"""Dead code elimination (mark and sweep).

Marks what the graph's results and its effectful nodes need, following values through region
yields and loop-carried parameters; then removes every unmarked pure node, every unread output
of an If, every loop-carried value that feeds only itself, and regions left without outputs or
effects (a dead region goes whole). Effectful nodes always stay, with the regions around them.
Assumes an unused pure computation cannot be observed: an error it would raise (`can_raise`)
or a pure loop that never ends goes with it.
"""
from __future__ import annotations

from ..ir import FOR, IF, WHILE, Block, Graph, Node, Rewriter, Value


def run(graph: Graph, rw: Rewriter) -> bool:
    """Remove what neither the results nor an effect needs; True if anything went."""
    live, kept = _mark(graph)
    before = rw.changed
    rw.changed = False
    _sweep(graph.body, live, kept, rw)
    changed, rw.changed = rw.changed, before or rw.changed
    return changed


def _mark(graph: Graph) -> tuple[set[Value], set[Node]]:
    """The values something needs, and the nodes kept for their effects (effectful ops and
    every region around one)."""
    live: set[Value] = set()
    kept: set[Node] = set()
    work: list[Value] = list(graph.outputs)

    def need(*values: Value) -> None:
        work.extend(v for v in values if v not in live)

    for node in graph.walk():
        if node.is_region or not node.op.effects:
            continue
        need(*node.inputs)
        kept.add(node)
        region = node.parent.owner_node if node.parent else None
        while region is not None and region not in kept:  # they must run as before
            kept.add(region)
            need(*_control_inputs(region))
            region = region.parent.owner_node if region.parent else None
    while work:
        value = work.pop()
        if value in live:
            continue
        live.add(value)
        owner = value.owner
        if isinstance(owner, Node):
            if owner.is_region:
                need(*_control_inputs(owner), *_slot_values(owner, value.index))
            else:
                need(*owner.inputs)
        elif isinstance(owner, Block) and owner.owner_node is not None:
            region = owner.owner_node
            slot = value.index - 1 if region.op == FOR else value.index
            need(*_control_inputs(region))
            if slot >= 0:
                need(*_slot_values(region, slot))
    return live, kept


def _control_inputs(region: Node) -> list[Value]:
    """What deciding whether/how often a region's blocks run reads."""
    if region.op == IF:
        return [region.inputs[0]]
    if region.op == WHILE:
        return list(region.cond.results)
    return list(region.inputs[:3])


def _slot_values(region: Node, i: int) -> list[Value]:
    """The values that flow into output/carried slot `i` of a region."""
    if region.op == IF:
        return [arm.results[i] for arm in region.blocks]
    init = region.inputs[i + 3] if region.op == FOR else region.inputs[i]
    return [init, region.body.results[i]]


def _sweep(block: Block, live: set[Value], kept: set[Node], rw: Rewriter) -> None:
    for node in reversed(list(block.nodes)):
        if node not in kept and not any(out in live for out in node.outputs):
            rw.erase(node)  # NOTE: a whole dead region goes at once, its blocks unswept
            continue
        dead = _dead_slots(node, live) if node.is_region else []
        for i in dead:  # NOTE: yields go first, so what computed them is unused when swept
            for arm in (node.blocks if node.op == IF else [node.body]):
                arm.erase_result(i)
        for inner in node.blocks:
            _sweep(inner, live, kept, rw)
        for i in dead:
            if node.op != IF:
                node.body.erase_param(i + 1 if node.op == FOR else i)
                if node.op == WHILE:
                    node.cond.erase_param(i)
                node.erase_input(i + 3 if node.op == FOR else i)
            node.erase_output(i)
            rw.changed = True


def _dead_slots(node: Node, live: set[Value]) -> list[int]:
    """Output slots of a region nobody needs, highest first (so indices stay valid)."""
    dead = []
    for i in reversed(range(len(node.outputs))):
        if node.outputs[i] in live:
            continue
        if node.op != IF:
            params = [node.body.params[i + 1 if node.op == FOR else i]]
            if node.op == WHILE:
                params.append(node.cond.params[i])
            if any(p in live for p in params):
                continue
        dead.append(i)
    return dead

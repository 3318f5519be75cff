"""`Rewriter`: the one object through which passes change the IR (xDSL's PatternRewriter in
spirit). It records whether anything really changed, which is what a pass returns."""
from __future__ import annotations

from typing import Any, Sequence

from .builder import Builder, InsertPoint
from .ir import IF, TRY, Block, Loc, Node, Value


class Rewriter:
    """The one object through which passes change the IR. `changed` is set by real mutations
    only, so a pass returns `rw.changed`."""

    def __init__(self) -> None:
        self.changed = False

    def _mutated(self, *_: Any) -> None:
        self.changed = True

    def builder(self, ip: InsertPoint, loc: Loc | None = None) -> Builder:
        """A builder whose every insertion counts as a change."""
        return Builder(ip, loc, on_insert=self._mutated)

    def replace_value(self, old: Value, new: Value) -> None:
        if old is not new and old.uses:
            old.replace_all_uses_with(new)
            self.changed = True

    def replace(self, node: Node, values: Sequence[Value]) -> None:
        """Route uses of `node`'s outputs to `values`, then erase `node`."""
        assert len(values) == len(node.outputs), f"{node.name}: replacement arity mismatch"
        for old, new in zip(node.outputs, values):
            self.replace_value(old, new)
        self.erase(node)

    def erase(self, node: Node) -> None:
        node.erase()
        self.changed = True

    def move(self, node: Node, ip: InsertPoint) -> None:
        """Detach `node` and insert it at `ip` (its uses are untouched)."""
        assert node.parent is not None
        node.parent.remove(node)
        ip.insert(node)
        self.changed = True

    def set_attr(self, node: Node, key: str, value: Any) -> None:
        if key not in node.attrs or node.attrs[key] is not value and node.attrs[key] != value:
            node.attrs[key] = value
            self.changed = True

    def set_control_inputs(self, node: Node, nodes: Sequence[Node]) -> None:
        if list(nodes) != node.control_inputs:
            node.control_inputs = list(nodes)
            self.changed = True

    def drop_yields(self, region: Node, slots: Sequence[int]) -> None:
        """Stop `region`'s blocks yielding into `slots` (highest first), so what computed those
        values may go; `drop_slot` then removes the slots."""
        for k in sorted(slots, reverse=True):
            for block in _yielding_blocks(region, k):
                block.erase_result(k - (len(region.try_body.results)
                                        if region.op == TRY and block is region.finally_ else 0))
            self.changed = True

    def drop_slot(self, region: Node, k: int) -> None:
        """Remove output slot `k` of `region`, whose yields `drop_yields` removed: the output
        and, for a loop, its initial value and its parameter in each block (all unused)."""
        if region.op not in (IF, TRY):
            for block in region.blocks:
                block.erase_param(region.carried(block)[k].index)
            region.erase_input(len(region.inputs) - len(region.inits) + k)
        region.erase_output(k)
        self.changed = True

    def inline(self, block: Block, ip: InsertPoint, args: Sequence[Value]) -> list[Value]:
        """Move `block`'s nodes to `ip`, substituting `args` for its params; return its results."""
        assert len(args) == len(block.params), "inline: argument count mismatch"
        for param, arg in zip(block.params, args):
            if param.uses:
                param.replace_all_uses_with(arg)
        for node in list(block.nodes):
            block.remove(node)
            ip.insert(node)
        results = list(block.results)
        block.set_results([])
        self.changed = True
        return results


def _yielding_blocks(region: Node, k: int) -> list[Block]:
    """The blocks whose results flow into output `k` of `region`."""
    if region.op == IF:
        return list(region.blocks)
    if region.op == TRY:
        if k >= len(region.try_body.results):
            return [region.finally_]
        return [b for b in (region.try_body, region.handler) if b is not None]
    return [region.body]

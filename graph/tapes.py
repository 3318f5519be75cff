"""Loop tapes: how reverse mode recognizes values an earlier differentiation already saved (read
from a tape a loop recorded, or exported from an If arm), so differentiating a backward again
reads them without copying them a second time."""
from __future__ import annotations

from ..ops import python as pyops
from .ir import FOR, IF, TRY, WHILE, Block, Value
from .types import ListType


TAPE_ATTR = "__tape__"
"""On a `list_new` node: the list is a tape (what a loop records for the backward), whose items
are saved values nothing writes, so differentiating the backward again reads them uncopied."""


def _exported_by_if(value: Value) -> bool:
    """An If or Try output an earlier differentiation added (`if_output`, `try_output`: a
    placeholder on one arm or on the except block)."""
    node = value.producer
    return node is not None and node.op in (IF, TRY) and any(
        r.producer is not None and r.producer.op is pyops.placeholder
        for r in node.incoming(value.index))


def _read_from_tape(value: Value) -> bool:
    node = value.producer
    if node is None or node.is_region or node.op.name != "getitem" or \
            not isinstance(node.inputs[0].type, ListType):
        return False
    items = node.inputs[0]
    for _ in range(64):  # NOTE: through the loops carrying the tape out, to where it is made
        maker = items.producer
        if maker is None:
            loop = items.owner.owner_node if isinstance(items.owner, Block) else None
            slot = None if loop is None or loop.op not in (WHILE, FOR) else loop.slot_of(items)
            if slot is None:
                return False
            items = loop.inits[slot]
        elif maker.is_region and maker.op in (WHILE, FOR):
            items = maker.inits[items.index]
        elif maker.is_region and maker.op == IF:  # a tape exported from the arm recording it
            kept = [arm.results[items.index] for arm in maker.blocks]
            made = [r for r in kept if r.producer is None or r.producer.op is not
                    pyops.placeholder]
            if len(made) != 1:
                return False
            items = made[0]
        elif not maker.is_region and maker.op.name == "getitem":
            return _read_from_tape(items)  # a tape read from a tape of tapes
        else:
            return not maker.is_region and maker.attrs.get(TAPE_ATTR, False) is True
    return False

"""Small facts about values that several passes ask: is it a compile-time constant, is it
defined inside a region, can anyone but pure readers see it."""
from __future__ import annotations

from typing import Any

from .ir import Block, Node, Value
from .types import NoneType, Scalar

NOT_CONSTANT: Any = type("NotConstant", (), {"__repr__": lambda self: "NOT_CONSTANT"})()


def constant_of(value: Value) -> Any:
    """The compile-time value of `value` (made by a `constant` node), or `NOT_CONSTANT`."""
    node = value.producer
    if node is not None and node.name == "constant":
        return node.attrs["value"]
    return NOT_CONSTANT


def defined_inside(value: Value, region: Node) -> bool:
    """True if `value` is computed within one of `region`'s blocks (at any depth)."""
    block = value.owner.parent if isinstance(value.owner, Node) else value.owner
    while isinstance(block, Block):
        owner = block.owner_node
        if owner is region:
            return True
        if owner is None:
            return False
        block = owner.parent
    return False


def only_read(value: Value) -> bool:
    """True if nobody can write to `value` or hold on to it after the graph returns: every use
    is an input of a pure, non-region op, and where that op's result may share memory with
    its inputs (a view, a tuple), that result is only read in turn."""
    return all(isinstance(u.user, Node) and not u.user.is_region and not u.user.effectful
               and (u.user.op.fresh or all(only_read(o) for o in u.user.outputs
                                           if not isinstance(o.type, Scalar | NoneType)))
               for u in value.uses)

"""Small facts about values that several passes ask: is it a compile-time constant, is it
defined inside a region, can anyone but pure readers see it."""
from __future__ import annotations

from typing import Any

from .ir import Block, Node, Value

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
    """True if every use of `value` is an input of a pure, non-region op other than tuple and
    list building: nobody can write to it or hold on to it after the graph returns."""
    return all(isinstance(u.user, Node) and not u.user.is_region and not u.user.effectful
               and u.user.name not in ("make_tuple",) for u in value.uses)

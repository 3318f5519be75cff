"""Small facts about values that several passes ask: is it a compile-time constant, is it
defined inside a region, can anyone but pure readers see it."""
from __future__ import annotations

from typing import Any

from .ir import IF, Block, Node, Value
from .types import Tensor
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


READING_EFFECTS = ("print", "assert")
"""Effectful ops that only look at their inputs: they neither write to them nor keep them."""


def only_read(value: Value) -> bool:
    """True if every use of `value` is an input of a pure, non-region op other than tuple
    building, an effect that only reads (`READING_EFFECTS`), or a yield into an If output that
    is itself only read: nobody can write to it or hold on to it after the graph returns."""
    for use in value.uses:
        user = use.user
        if isinstance(user, Block):
            region = user.owner_node
            if region is None or region.op != IF or not only_read(region.outputs[use.index]):
                return False
        elif user.is_region or user.name == "make_tuple" or \
                (user.effectful and user.name not in READING_EFFECTS):
            return False
    return True


def identity_matters(value: Value) -> bool:
    """True if `value` may be an array someone writes to or keeps (a list, a tuple, a yield, the
    graph's result): then it must stay its own object, not be shared by merging or hoisting."""
    return isinstance(value.type, Tensor) and not only_read(value)

"""Small facts about values that several passes ask: is it a compile-time constant, is it
defined inside a region, can anyone but pure readers see it."""
from __future__ import annotations

from typing import Any

from ..ops import python as pyops
from .ir import IF, Block, Node, Value
from .types import NoneType, Scalar, Tensor

NOT_CONSTANT: Any = type("NotConstant", (), {"__repr__": lambda self: "NOT_CONSTANT"})()


def constant_of(value: Value) -> Any:
    """The compile-time value of `value` (made by a `constant` node), or `NOT_CONSTANT`."""
    node = value.producer
    if node is not None and node.op is pyops.constant:
        return node.attrs["value"]
    return NOT_CONSTANT


def trip_count(loop: Node) -> int | None:
    """How many times a For with constant bounds runs its body (None when not known)."""
    bounds = [constant_of(v) for v in loop.bounds]
    if any(b is NOT_CONSTANT for b in bounds):
        return None
    try:
        return len(range(*bounds))
    except Exception:  # NOTE: non-int or zero-step bounds fail at run time, as Python's range
        return None


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
    is an input of a pure, non-region op, an effect that only reads (`OpDef.reads_only`), or a
    yield into an If output that is itself only read; and where a pure op's result may share
    memory with its inputs (a view, a tuple: the op is not `fresh`), that result is only read
    in turn."""
    for use in value.uses:
        user = use.user
        if isinstance(user, Block):
            region = user.owner_node
            if region is None or region.op != IF or not only_read(region.outputs[use.index]):
                return False
        elif user.is_region or (user.effectful and not user.op.reads_only):
            return False
        elif not user.effectful and not user.op.fresh and \
                not all(only_read(o) for o in user.outputs if _may_share(o)):
            return False
    return True


def _may_share(value: Value) -> bool:
    """A value that can hold an array: Python scalars and None cannot."""
    return not isinstance(value.type, Scalar | NoneType)


def identity_matters(value: Value) -> bool:
    """True if `value` may be an array someone writes to or keeps (a list, a tuple, a yield, the
    graph's result): then it must stay its own object, not be shared by merging or hoisting."""
    return isinstance(value.type, Tensor) and not only_read(value)

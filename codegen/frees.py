"""Where generated code frees large intermediates: `del x` right after the statement that last
reads any value living in `x`, in the block that defines them all (never inside a loop for a
variable defined outside it, never for a variable some path may leave unassigned).
"""
from __future__ import annotations

import math
from typing import Iterator

from ..graph import Block, Graph, Node, Tensor, Value
from .storage import Kind, Storage

FREE_MIN_ELEMENTS = 4096
"""Tensors of at least this many elements (or of unknown size) are freed after their last use."""


def plan_frees(graph: Graph, storage: Storage) -> dict[Block, dict[int, list[str]]]:
    """Per block: node index -> variables to `del` after that node's statements."""
    members: dict[Value, list[Value]] = {}
    for value, kind in storage.kind.items():
        if kind is Kind.VAR:
            members.setdefault(storage.slot(value), []).append(value)
    frees: dict[Block, dict[int, list[str]]] = {}
    for root, group in sorted(members.items(), key=lambda item: storage.order[item[0]]):
        home = root.producer.parent if root.producer is not None else None
        if home is None or root not in storage.names or not _freeable(group, home, storage):
            continue
        last = _last_use(group, home, storage)
        if last is not None:
            frees.setdefault(home, {}).setdefault(last, []).append(storage.names[root])
    return frees


def _freeable(group: list[Value], home: Block, storage: Storage) -> bool:
    return any(_large(v) and _owns_memory(v) for v in group) and all(
        v not in storage.unbound and _defined_within(v, home) for v in group)


def _large(value: Value) -> bool:
    t = value.type
    if not isinstance(t, Tensor) or t.rank == 0:
        return False
    return not t.is_static or math.prod(t.shape) >= FREE_MIN_ELEMENTS


def _owns_memory(value: Value) -> bool:
    """False for a view an op makes of its input (`w.T`): freeing it frees nothing."""
    node = value.producer
    return node is None or node.is_region or node.op.fresh


def _defined_within(value: Value, home: Block) -> bool:
    """Computed by a node of `home` or nested in one (a param of `home` itself is not)."""
    block = value.producer.parent if value.producer is not None else value.owner
    if block is home:
        return value.producer is not None
    while isinstance(block, Block) and isinstance(block.parent, Node):
        block = block.parent.parent
        if block is home:
            return True
    return False


def _last_use(group: list[Value], home: Block, storage: Storage) -> int | None:
    """The index in `home` of the last node reading the group; None if nothing reads it or
    `home` yields it."""
    index = {node: i for i, node in enumerate(home.nodes)}
    last = None
    for value in group:
        for user in _readers(value, storage):
            if user is home:
                return None
            node = user if isinstance(user, Node) else user.parent
            while node.parent is not home:
                node = node.parent.parent
            last = max(index[node], last if last is not None else -1)
    return last


def _readers(value: Value, storage: Storage) -> Iterator[Node | Block]:
    """Where `value` is read: its users; for an inlined expression, where that is read; for a
    branch of an If written as an expression, where the If is."""
    for use in value.uses:
        user = use.user
        if isinstance(user, Block) and user.owner_node in storage.ifs:
            user = user.owner_node
        if isinstance(user, Node) and (not user.is_region or user in storage.ifs) \
                and storage.kind[user.output] is Kind.EXPR:
            yield from _readers(user.output, storage)
        else:
            yield user

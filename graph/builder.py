"""`InsertPoint` and `Builder`: the only ways later stages create IR nodes (passes change
existing IR through `rewriter.Rewriter`). A new node's type comes from its op's `infer`."""
from __future__ import annotations

from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, Callable, Iterator, Sequence

import numpy as np

from ..ops import OpDef, lookup
from ..ops.types import KNOWN_VALUES, NOT_KNOWN
from .ir import FOR, IF, WHILE, Block, Loc, Node, Value
from .types import Type, join_types


@dataclass(frozen=True, slots=True)
class InsertPoint:
    """Where new nodes go: before `anchor` in `block`, or at the end when `anchor` is None."""
    block: Block
    anchor: Node | None = None

    @staticmethod
    def before(node: Node) -> InsertPoint:
        assert node.parent is not None, "node is not in a block"
        return InsertPoint(node.parent, node)

    @staticmethod
    def after(node: Node) -> InsertPoint:
        block = node.parent
        assert block is not None, "node is not in a block"
        i = block.index(node)
        return InsertPoint(block, block.nodes[i + 1] if i + 1 < len(block.nodes) else None)

    @staticmethod
    def at_start(block: Block) -> InsertPoint:
        return InsertPoint(block, block.nodes[0] if block.nodes else None)

    @staticmethod
    def at_end(block: Block) -> InsertPoint:
        return InsertPoint(block, None)

    def insert(self, node: Node) -> Node:
        index = len(self.block.nodes) if self.anchor is None else self.block.index(self.anchor)
        return self.block.insert(index, node)


class Builder:
    """Creates nodes at an insertion point, inferring their types from the op registry.
    `on_insert(node)` is told of every node placed (how a Rewriter learns of changes)."""

    def __init__(self, ip: InsertPoint, loc: Loc | None = None,
                 on_insert: Callable[[Node], None] | None = None) -> None:
        self.ip = ip
        self.loc = loc
        self.on_insert = on_insert

    @contextmanager
    def at(self, ip: InsertPoint) -> Iterator[Builder]:
        """Build at `ip` inside the `with`; the old insertion point comes back on exit."""
        saved, self.ip = self.ip, ip
        try:
            yield self
        finally:
            self.ip = saved

    def insert(self, node: Node) -> Node:
        if node.loc is None:
            node.loc = self.loc
        self.ip.insert(node)
        if self.on_insert is not None:
            self.on_insert(node)
        return node

    def op(self, op: OpDef | str, *inputs: Value, name: str = "", loc: Loc | None = None,
           control_inputs: Sequence[Node] = (), **attrs: Any) -> Value:
        """Add one op node and return its output; the type comes from the op's `infer`."""
        opdef = lookup(op) if isinstance(op, str) else op
        full = opdef.full_attrs(attrs)
        # NOTE: NumPy 1 promotes by the values of constants, and `**` with a constant exponent
        # has one dtype where a run-time exponent's value may decide it (under both NumPys)
        token = KNOWN_VALUES.set(tuple(_known_value(v) for v in inputs))
        try:
            out_type = opdef.infer(*(v.type for v in inputs), **full)
        finally:
            KNOWN_VALUES.reset(token)
        node = Node(opdef, inputs, full, [out_type], [name], loc=loc,
                    control_inputs=control_inputs)
        return self.insert(node).output

    def constant(self, value: Any, name: str = "") -> Value:
        return self.op("constant", name=name, value=value)

    def if_(self, cond: Value, then: Block, else_: Block, types: Sequence[Type] | None = None,
            names: Sequence[str] = ()) -> list[Value]:
        """An If region over filled blocks; output types default to the join of both arms."""
        if types is None:
            types = [join_types([a.type, b.type]) for a, b in zip(then.results, else_.results)]
        return self.insert(Node(IF, [cond], {}, types, names, [then, else_])).outputs

    def while_(self, inits: Sequence[Value], cond: Block, body: Block,
               names: Sequence[str] = ()) -> list[Value]:
        """A While region; carried types are the body's parameter types."""
        types = [p.type for p in body.params]
        return self.insert(Node(WHILE, inits, {}, types, names, [cond, body])).outputs

    def for_(self, start: Value, stop: Value, step: Value, inits: Sequence[Value], body: Block,
             names: Sequence[str] = ()) -> list[Value]:
        """A For region over range(start, stop, step); body params are (index, *carried)."""
        types = [p.type for p in body.params[1:]]
        return self.insert(Node(FOR, [start, stop, step, *inits], {}, types, names,
                                [body])).outputs


def _known_value(v: Value) -> Any:
    """The value of a constant scalar operand (a Python number, a NumPy scalar or 0-d array),
    for promotion by value (`KNOWN_VALUES`); `NOT_KNOWN` for anything else."""
    node = v.producer
    if node is None or node.is_region or node.op.name != "constant":
        return NOT_KNOWN
    value = node.attrs.get("value")
    if isinstance(value, bool | int | float | np.generic) or (
            isinstance(value, np.ndarray) and value.ndim == 0):
        return value
    return NOT_KNOWN

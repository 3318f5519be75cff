"""The graph IR core: `Value`, `Use`, `Node`, `Block`, `Graph` (new nodes are made by
`builder.Builder`; passes change IR through `rewriter.Rewriter`).

Control flow is structured: a node of kind `if`, `while` or `for` owns nested blocks (regions).
Use lists are kept right by construction: every way of setting an input goes through
`Node.set_input` / `Block.set_results`, so `value.uses` is always exact.
"""
from __future__ import annotations

import functools
import os
from dataclasses import dataclass, field
from typing import Any, Iterator, Sequence

import numpy as np

from ..ops import OpDef
from .types import Scalar, Type

IF, WHILE, FOR = "if", "while", "for"
TRY = "try"
REGION_KINDS = (IF, WHILE, FOR, TRY)


_AMBER_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
_NOT_LIBRARY = tuple(os.path.join(_AMBER_ROOT, d) + os.sep for d in ("samples", "tests",
                                                                      "benchmarks"))


@functools.lru_cache(maxsize=256)
def is_library_file(file: str) -> bool:
    """True for amber's own files (its layers and ops), whose lines a user did not write."""
    path = os.path.abspath(file)
    return path.startswith(_AMBER_ROOT + os.sep) and not path.startswith(_NOT_LIBRARY)


@dataclass(frozen=True, slots=True)
class Loc:
    """A position in the source: file, 1-based line, 0-based column, and the line's text.

    `caller` is where the function holding this line was called from when the frontend inlined
    that call (itself a Loc with its own caller): `x = self.conv1(x)` in the user's model is the
    caller of a line of `Conv2d.construct`. `user` picks the line to show a user."""
    file: str
    line: int
    col: int = 0
    text: str = ""
    caller: Loc | None = None

    def __str__(self) -> str:
        return f"{self.file}:{self.line}"

    def chain(self) -> tuple[Loc, ...]:
        """This location, then its caller, its caller's caller, ... (innermost first)."""
        out, loc = [], self
        while loc is not None:
            out.append(loc)
            loc = loc.caller
        return tuple(out)

    @property
    def user(self) -> Loc:
        """The innermost location of the chain in the user's code (not in amber's layers);
        this one if the whole chain is amber's."""
        return next((loc for loc in self.chain() if not is_library_file(loc.file)), self)


@dataclass(slots=True, eq=False)
class Use:
    """One use of a value: operand `index` of `user` (a node's input, or a block's result)."""
    user: Node | Block
    index: int


@dataclass(slots=True, eq=False)
class Value:
    """An SSA value, produced by exactly one node output or block parameter."""
    type: Type
    name: str = ""
    owner: Node | Block | None = None
    index: int = 0
    uses: list[Use] = field(default_factory=list)

    @property
    def producer(self) -> Node | None:
        """The node that computes this value, or None for a block parameter."""
        return self.owner if isinstance(self.owner, Node) else None

    @property
    def users(self) -> list[Node | Block]:
        return [u.user for u in self.uses]

    def replace_all_uses_with(self, new: Value) -> None:
        """Point every use of this value at `new`; `new` inherits the name hint if it has none."""
        assert new is not self, "a value cannot replace itself"
        for use in list(self.uses):
            if isinstance(use.user, Node):
                use.user.set_input(use.index, new)
            else:
                use.user.set_result(use.index, new)
        if not new.name:
            new.name = self.name

    def __repr__(self) -> str:
        return f"<Value %{self.name or '_'}: {self.type}>"


class Node:
    """One operation: an op from the registry, or a structured control-flow region.

    `blocks` roles: if -> (then, else); while -> (cond, body); for -> (body,);
    try -> (try, [except], [finally]): an except block when attrs["catch"] (the exception
    classes it catches) is not empty, taking the exception as its one parameter.
    For a `for`, inputs are (start, stop, step, *init) and the body's params (index, *carried).
    For a `while`, inputs are the initial carried values; both blocks take the carried values.
    """
    __slots__ = ("op", "_inputs", "attrs", "outputs", "blocks", "loc", "control_inputs", "parent")

    def __init__(self, op: OpDef | str, inputs: Sequence[Value] = (), attrs: dict | None = None,
                 output_types: Sequence[Type] = (), output_names: Sequence[str] = (),
                 blocks: Sequence[Block] = (), loc: Loc | None = None,
                 control_inputs: Sequence[Node] = ()) -> None:
        assert isinstance(op, OpDef) or op in REGION_KINDS, f"unknown node kind {op!r}"
        self.op = op
        self._inputs: list[Value] = []
        self.attrs: dict[str, Any] = dict(attrs or {})
        names = list(output_names) + [""] * (len(output_types) - len(output_names))
        self.outputs = [Value(t, n, self, i) for i, (t, n) in enumerate(zip(output_types, names))]
        self.blocks: list[Block] = []
        self.loc = loc
        self.control_inputs: list[Node] = list(control_inputs)
        self.parent: Block | None = None
        for value in inputs:
            self._append_input(value)
        for block in blocks:
            self.add_block(block)

    # -- identity -------------------------------------------------------------------------
    @property
    def name(self) -> str:
        """The op name (`"relu"`) or region kind (`"if"`)."""
        return self.op if isinstance(self.op, str) else self.op.name

    @property
    def is_region(self) -> bool:
        return isinstance(self.op, str)

    @property
    def op_attrs(self) -> dict[str, Any]:
        """The attributes the op's kernel, rules and templates take: all but the `__` codegen
        hints (`INPLACE_ATTR`, `INTO_ROW_ATTR`)."""
        return {k: v for k, v in self.attrs.items() if not k.startswith("__")}

    @property
    def effectful(self) -> bool:
        """True if the node (or anything nested in it) has a side effect."""
        if isinstance(self.op, OpDef):
            return self.op.effects
        # NOTE: walk() already visits every nested node; asking nested regions again would be
        # exponential in the nesting depth
        return any(not n.is_region and n.op.effects for b in self.blocks for n in b.walk())

    @property
    def output(self) -> Value:
        assert len(self.outputs) == 1, f"{self.name} has {len(self.outputs)} outputs, not one"
        return self.outputs[0]

    # -- block roles ----------------------------------------------------------------------
    @property
    def then(self) -> Block:
        assert self.op == IF
        return self.blocks[0]

    @property
    def else_(self) -> Block:
        assert self.op == IF
        return self.blocks[1]

    @property
    def cond(self) -> Block:
        assert self.op == WHILE
        return self.blocks[0]

    @property
    def body(self) -> Block:
        assert self.op in (WHILE, FOR)
        return self.blocks[-1]

    @property
    def try_body(self) -> Block:
        assert self.op == TRY
        return self.blocks[0]

    @property
    def handler(self) -> Block | None:
        """A Try region's except block (its parameter is the exception caught), if any."""
        assert self.op == TRY
        return self.blocks[1] if self.attrs.get("catch") else None

    @property
    def finally_(self) -> Block | None:
        """A Try region's finally block, if any: no parameters; what it yields comes after the
        merged values in the outputs."""
        assert self.op == TRY
        first = 2 if self.attrs.get("catch") else 1
        return self.blocks[first] if len(self.blocks) > first else None

    # -- region operand layout ------------------------------------------------------------
    # NOTE: the one place that knows it. For: inputs (start, stop, step, *inits), body params
    # (index, *carried). While: inputs (*inits), cond and body params (*carried). If: inputs
    # (cond,), no params; output k merges the arms' results k.
    @property
    def bounds(self) -> tuple[Value, Value, Value]:
        """A For region's (start, stop, step)."""
        assert self.op == FOR
        return self._inputs[0], self._inputs[1], self._inputs[2]

    @property
    def inits(self) -> tuple[Value, ...]:
        """A loop region's initial carried values (one per output)."""
        assert self.op in (WHILE, FOR)
        return tuple(self._inputs[3:] if self.op == FOR else self._inputs)

    @property
    def induction(self) -> Value:
        """A For region's induction variable (its body's first parameter)."""
        assert self.op == FOR
        return self.body.params[0]

    def carried(self, block: Block) -> list[Value]:
        """The parameters of loop block `block` that hold the carried values, slot by slot."""
        assert self.op in (WHILE, FOR) and block.parent is self
        return block.params[1:] if self.op == FOR else list(block.params)

    def slot_of(self, param: Value) -> int | None:
        """The carried slot a parameter of one of this loop's blocks holds (None: the index)."""
        assert self.op in (WHILE, FOR) and param.owner in self.blocks
        slot = param.index - 1 if self.op == FOR else param.index
        return slot if slot >= 0 else None

    def incoming(self, k: int) -> list[Value]:
        """The values that flow into output slot `k`: each arm's result for an If; the initial
        value and the body's next value for a loop."""
        if self.op == IF:
            return [arm.results[k] for arm in self.blocks]
        if self.op == TRY:
            return try_incoming(self, k)
        assert self.op in (WHILE, FOR)
        return [self.inits[k], self.body.results[k]]

    def add_output(self, type: Type, name: str = "", at: int | None = None) -> Value:
        """Append an output (a region gaining a slot; its blocks must yield one more value);
        `at`: insert it there instead, the later outputs moving up one (a Try's merged slot
        goes before the finally block's)."""
        at = len(self.outputs) if at is None else at
        value = Value(type, name, self, at)
        self.outputs.insert(at, value)
        for later in self.outputs[at + 1:]:
            later.index += 1
        return value

    def add_carried(self, init: Value, type: Type, name: str = "") -> tuple[Value, Value]:
        """Give this loop one more carried slot starting at `init`: a parameter in each block
        and an output. The body yields the parameter unchanged until the caller sets its
        result. Returns (the body's parameter, the output)."""
        assert self.op in (WHILE, FOR)
        self._append_input(init)
        params = [block.add_param(type, name) for block in self.blocks]
        body = self.body
        body.set_results([*body.results, params[-1]])
        return params[-1], self.add_output(type, name)

    def deciders(self) -> list[Value]:
        """What deciding whether or how often this region's blocks run reads: the If's
        condition, the While's cond results, the For's bounds."""
        if self.op == IF:
            return [self._inputs[0]]
        if self.op == TRY:
            return []  # NOTE: whether the except block runs is decided by what raises
        if self.op == WHILE:
            return list(self.cond.results)
        return list(self.bounds)

    # -- inputs ---------------------------------------------------------------------------
    @property
    def inputs(self) -> tuple[Value, ...]:
        return tuple(self._inputs)

    @inputs.setter
    def inputs(self, values: Sequence[Value]) -> None:
        self._drop_input_uses()
        self._inputs = []
        for value in values:
            self._append_input(value)

    def set_input(self, index: int, value: Value) -> None:
        """Replace operand `index`, moving the use from the old value to `value`."""
        old = self._inputs[index]
        old.uses[:] = [u for u in old.uses if not (u.user is self and u.index == index)]
        self._inputs[index] = value
        value.uses.append(Use(self, index))

    def erase_input(self, index: int) -> None:
        """Drop operand `index`; later operands shift down one place."""
        old = self._inputs.pop(index)
        old.uses[:] = [u for u in old.uses if not (u.user is self and u.index == index)]
        _shift_uses(self, self._inputs, index)

    def erase_output(self, index: int) -> None:
        """Drop output `index`, which must be unused; later outputs shift down."""
        assert not self.outputs[index].uses, f"{self.name}: erased output still has uses"
        self.outputs.pop(index)
        for i, out in enumerate(self.outputs):
            out.index = i

    def _append_input(self, value: Value) -> None:
        assert isinstance(value, Value), f"{self.name}: input is {value!r}, not a Value"
        value.uses.append(Use(self, len(self._inputs)))
        self._inputs.append(value)

    def _drop_input_uses(self) -> None:
        for value in self._inputs:
            value.uses[:] = [u for u in value.uses if u.user is not self]

    # -- structure ------------------------------------------------------------------------
    def add_block(self, block: Block) -> Block:
        assert block.parent is None, "block already belongs to a node"
        block.parent = self
        self.blocks.append(block)
        return block

    def walk(self) -> Iterator[Node]:
        """This node, then every node nested in its blocks, in order."""
        yield self
        for block in self.blocks:
            yield from block.walk()

    def is_ancestor_of(self, other: Node) -> bool:
        """True if `other` is nested (at any depth) inside one of this node's blocks."""
        block = other.parent
        while block is not None and block.parent is not None:
            if block.parent is self:
                return True
            block = block.parent.parent
        return False

    def erase(self) -> None:
        """Remove this node; refuses while any output still has uses."""
        for out in self.outputs:
            assert not out.uses, f"cannot erase {self.name}: %{out.name} still has uses"
        self.drop_all_uses()
        if self.parent is not None:
            self.parent.remove(self)

    def drop_all_uses(self) -> None:
        """Release every value this node and its nested blocks use (before discarding them)."""
        self._drop_input_uses()
        self._inputs = []
        for block in self.blocks:
            block.drop_all_uses()

    def __repr__(self) -> str:
        outs = ", ".join(f"%{o.name or '_'}" for o in self.outputs)
        ins = ", ".join(f"%{v.name or '_'}" for v in self._inputs)
        return f"<Node {outs} = {self.name}({ins})>"


class Block:
    """An ordered list of nodes with parameters (values flowing in) and results (flowing out)."""
    __slots__ = ("params", "nodes", "_results", "parent")

    def __init__(self, param_types: Sequence[Type] = (), param_names: Sequence[str] = ()) -> None:
        names = list(param_names) + [""] * (len(param_types) - len(param_names))
        self.params = [Value(t, n, self, i) for i, (t, n) in enumerate(zip(param_types, names))]
        self.nodes: list[Node] = []
        self._results: list[Value] = []
        self.parent: Node | Graph | None = None

    def add_param(self, type: Type, name: str = "") -> Value:
        value = Value(type, name, self, len(self.params))
        self.params.append(value)
        return value

    def set_params(self, values: Sequence[Value]) -> None:
        """Reorder or replace the parameters with `values` (each owned by this block)."""
        assert all(v.owner is self for v in values), "set_params: a value of another block"
        self.params = list(values)
        for i, param in enumerate(self.params):
            param.index = i

    @property
    def results(self) -> tuple[Value, ...]:
        return tuple(self._results)

    def set_results(self, values: Sequence[Value]) -> None:
        """Set the yielded values (the block's terminator)."""
        for value in self._results:
            value.uses[:] = [u for u in value.uses if u.user is not self]
        self._results = []
        for i, value in enumerate(values):
            assert isinstance(value, Value), f"block result is {value!r}, not a Value"
            value.uses.append(Use(self, i))
            self._results.append(value)

    def erase_param(self, index: int) -> None:
        """Drop parameter `index`, which must be unused; later params shift down."""
        assert not self.params[index].uses, "erased block parameter still has uses"
        self.params.pop(index)
        for i, param in enumerate(self.params):
            param.index = i

    def erase_result(self, index: int) -> None:
        """Drop result `index`; later results shift down one place."""
        old = self._results.pop(index)
        old.uses[:] = [u for u in old.uses if not (u.user is self and u.index == index)]
        _shift_uses(self, self._results, index)

    def set_result(self, index: int, value: Value) -> None:
        old = self._results[index]
        old.uses[:] = [u for u in old.uses if not (u.user is self and u.index == index)]
        self._results[index] = value
        value.uses.append(Use(self, index))

    def insert(self, index: int, node: Node) -> Node:
        assert node.parent is None, f"{node.name} is already in a block"
        node.parent = self
        self.nodes.insert(index, node)
        return node

    def append(self, node: Node) -> Node:
        return self.insert(len(self.nodes), node)

    def remove(self, node: Node) -> None:
        """Detach `node` from this block without touching its uses (to move it elsewhere)."""
        self.nodes.remove(node)
        node.parent = None

    def index(self, node: Node) -> int:
        for i, n in enumerate(self.nodes):
            if n is node:
                return i
        raise ValueError(f"{node!r} is not in this block")

    def walk(self) -> Iterator[Node]:
        """Every node in this block and, recursively, in the blocks they own."""
        for node in list(self.nodes):
            yield from node.walk()

    def drop_all_uses(self) -> None:
        for node in self.nodes:
            node.drop_all_uses()
        self.set_results([])

    @property
    def owner_node(self) -> Node | None:
        return self.parent if isinstance(self.parent, Node) else None

    def __repr__(self) -> str:
        return f"<Block params={len(self.params)} nodes={len(self.nodes)}>"


class Graph:
    """A compiled function: a body block whose params are the inputs and whose results the outputs.

    Facts the runtime needs that are not computation travel as typed fields, printed and
    serialized with the graph: `param_paths` (attribute paths of the leading inputs that are the
    instance's parameters, e.g. `fc.weight`), `input_paths` (argument paths of the other inputs,
    e.g. `0` or `1.key`) and `return_loc` (the user's `return` line, when there is one line).
    """
    __slots__ = ("name", "body", "param_paths", "input_paths", "return_loc")

    def __init__(self, name: str, body: Block | None = None, *,
                 param_paths: Sequence[str] = (), input_paths: Sequence[str] = (),
                 return_loc: Loc | None = None) -> None:
        self.name = name
        self.body = body if body is not None else Block()
        self.body.parent = self
        self.param_paths: tuple[str, ...] = tuple(param_paths)
        self.input_paths: tuple[str, ...] = tuple(input_paths)
        self.return_loc = return_loc

    @property
    def inputs(self) -> list[Value]:
        return self.body.params

    @property
    def outputs(self) -> tuple[Value, ...]:
        return self.body.results

    def walk(self) -> Iterator[Node]:
        return self.body.walk()

    def facts(self) -> dict[str, Any]:
        """The typed facts as the `meta {...}` dict the text and saved forms spell them in."""
        facts: dict[str, Any] = {}
        if self.return_loc is not None:
            loc = self.return_loc
            facts["return_loc"] = (loc.file, loc.line, loc.col, loc.text)
        if self.param_paths:
            facts["params"] = list(self.param_paths)
        if self.input_paths:
            facts["inputs"] = list(self.input_paths)
        return facts

    def set_facts(self, meta: dict[str, Any]) -> None:
        """Inverse of `facts`; raises ValueError on an unknown key."""
        unknown = set(meta) - {"return_loc", "params", "inputs"}
        if unknown:
            raise ValueError(f"unknown graph fact(s): {', '.join(sorted(map(str, unknown)))}")
        loc = meta.get("return_loc")
        self.return_loc = Loc(*loc) if loc is not None else None
        self.param_paths = tuple(meta.get("params", ()))
        self.input_paths = tuple(meta.get("inputs", ()))

    def __repr__(self) -> str:
        return f"<Graph {self.name}>"


def _shift_uses(user: Node | Block, operands: list[Value], start: int) -> None:
    """After an operand was removed at `start`, renumber the uses of the operands that moved
    down."""
    for i in range(start, len(operands)):
        for use in operands[i].uses:
            if use.user is user and use.index == i + 1:
                use.index = i
                break


def try_incoming(node: Node, k: int) -> list[Value]:
    """The values that flow into output `k` of a Try region: outputs below the try block's
    result count merge the try block's and the except block's results; the rest are the
    finally block's, in order."""
    body, handler, final = node.try_body, node.handler, node.finally_
    merged = len(body.results)
    if k < merged:
        return [body.results[k]] + ([handler.results[k]] if handler is not None else [])
    assert final is not None, "a Try region's outputs past the merged ones need a finally"
    return [final.results[k - merged]]


INPLACE_ATTR = "__inplace__"
"""Codegen hint (set by plan_memory): the node may write its result into input k's buffer.
Attributes starting with `__` are hints: the verifier and parser accept them; kernels never
see them."""

INTO_ROW_ATTR = "__into_row__"
"""Codegen hint (set by plan_memory) on an elementwise op whose result one `stack_put` writes
into a stack's row: the op computes straight into that row (`out=stack[row]`), and the
`stack_put` then spells nothing."""

INDEX_TYPE = Scalar(int)
"""The type of a For region's induction variable."""

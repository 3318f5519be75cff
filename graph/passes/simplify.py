"""Algebraic simplification: a table of one-line rewrite rules, each with its identity.

Only rewrites that keep results bit-identical for finite inputs (so `x + 0 -> x` only for
integers: `-0.0 + 0` is `+0.0`), and only when the replacement has exactly the node's type. A
rule that would return an existing array (or a new view of one) where the node made a fresh
array applies only where both are merely read, so no caller, `setitem` or in-place op can
observe the aliasing; for the kept array that means every array it may share memory with
(`analysis.unwritten`: an If may have merged it with an array written later).
"""
from __future__ import annotations

from typing import Callable

import numpy as np

from ...ops import OpDef
from ...ops import binary
from ...ops import elementwise as ew
from ...ops import python as pyops
from ...ops import shaping
from ..analysis import NOT_CONSTANT, constant_of, only_read, repeats_one_value, unwritten
from ..builder import Builder, InsertPoint
from ..ir import INPLACE_ATTR, INTO_ROW_ATTR, Block, Graph, Node, Value
from ..rewriter import Rewriter
from ..types import Scalar, Tensor

Rule = Callable[[Node, Block], "Value | None"]
"""`rule(node, scratch) -> value | None`: the simpler value `node` computes, or None. New nodes
go into the detached block `scratch`; they join the graph only if the rule's value is taken."""


def _is(value: Value, number: float) -> bool:
    """`value` is a compile-time scalar or array every element of which equals `number`, sign
    of zero included (`x - 0.0` is `x`, but `x - -0.0` is `x + 0.0`, which turns -0.0 into
    +0.0). (A rule using it applies only where the result keeps the node's type, so an array
    of ones never broadcasts the other operand.)"""
    c = constant_of(value)
    if c is NOT_CONSTANT or isinstance(c, bool) or not np.size(c) or \
            np.asarray(c).dtype.kind not in "biuf":
        return False
    c = np.asarray(c)
    return bool(np.all(c == number)) and bool(np.all(np.signbit(c) == np.signbit(number)))


def _integer(node: Node) -> bool:
    t = node.output.type
    return (isinstance(t, Scalar) and t.kind is int) or \
        (isinstance(t, Tensor) and np.issubdtype(t.dtype, np.integer))


def _keep(i: int, j: int, number: float, integer_only: bool = False) -> Rule:
    """Input `i` is the result when input `j` is the constant `number`."""
    def rule(node: Node, scratch: Block) -> Value | None:
        if _is(node.inputs[j], number) and (_integer(node) or not integer_only):
            return node.inputs[i]
        return None
    return rule


def _involution(node: Node, scratch: Block) -> Value | None:
    inner = node.inputs[0].producer
    return inner.inputs[0] if inner is not None and inner.op is node.op else None


def _square(node: Node, scratch: Block) -> Value | None:
    x, t = node.inputs[0], node.output.type
    if not _is(node.inputs[1], 2) or not (_integer(node) or isinstance(t, Tensor) and t.rank):
        return None  # NOTE: NumPy computes array ** 2 as square(x), bit-equal to x * x
    return _build(node, scratch, "mul", x, x)


def _not_not(node: Node, scratch: Block) -> Value | None:
    inner = node.inputs[0].producer
    if inner is None or inner.op is not pyops.not_:
        return None
    b = inner.inputs[0]
    return b if b.type == Scalar(bool) else _build(node, scratch, "bool", b)


def _transpose_twice(node: Node, scratch: Block) -> Value | None:
    inner = node.inputs[0].producer
    if inner is None or inner.op is not shaping.transpose or \
            not isinstance(node.output.type, Tensor):
        return None
    x = inner.inputs[0]
    rank = node.output.type.rank
    first = inner.attrs["perm"] or tuple(reversed(range(rank)))
    second = node.attrs["perm"] or tuple(reversed(range(rank)))
    perm = tuple(first[i] for i in second)
    return x if perm == tuple(range(rank)) else _build(node, scratch, "transpose", x, perm=perm)


def _reshape_twice(node: Node, scratch: Block) -> Value | None:
    inner = node.inputs[0].producer
    if inner is None or inner.op is not shaping.reshape or len(node.inputs) > 1 or \
            len(inner.inputs) > 1:
        return None
    return _build(node, scratch, "reshape", inner.inputs[0], shape=node.attrs["shape"])


def _same_dtype_cast(node: Node, scratch: Block) -> Value | None:
    return node.inputs[0] if node.inputs[0].type == node.output.type else None


def _constant_select(node: Node, scratch: Block) -> Value | None:
    c = constant_of(node.inputs[0])
    if c is NOT_CONSTANT or np.size(c) != 1:
        return None
    return node.inputs[1] if bool(np.asarray(c).reshape(())) else node.inputs[2]


def _item_of_tuple(node: Node, scratch: Block) -> Value | None:
    inner, index = node.inputs[0].producer, node.attrs["index"]
    if inner is None or inner.op is not pyops.make_tuple or not isinstance(index, int):
        return None  # NOTE: a slice index makes a tuple, not one of the items
    return inner.inputs[index] if -len(inner.inputs) <= index < len(inner.inputs) else None


def _uniform_operand(j: int) -> Rule:
    """Input `j`, a constant array of one repeated value in the result's dtype, becomes that
    value as a 0-d array when the other input alone has the result's type: the same numbers
    without reading (or keeping) the whole array, e.g. a mean's gradient `g * full(1/n)`."""
    def rule(node: Node, scratch: Block) -> Value | None:
        c, other, t = constant_of(node.inputs[j]), node.inputs[1 - j], node.output.type
        if not isinstance(c, np.ndarray) or c.size < 2 or other.type != t or \
                not isinstance(t, Tensor) or c.dtype != t.dtype or not repeats_one_value(c):
            return None
        scalar = Builder(InsertPoint.at_end(scratch), node.loc).op(
            "constant", value=np.array(c.flat[0]))
        inputs = (other, scalar) if j == 1 else (scalar, other)
        return _build(node, scratch, node.op.name, *inputs, **node.attrs)
    return rule


def _lone_depend(node: Node, scratch: Block) -> Value | None:
    return node.inputs[0] if len(node.inputs) == 1 else None


UNIFORM = (_uniform_operand(1), _uniform_operand(0))

RULES: dict[OpDef, tuple[Rule, ...]] = {
    binary.add: (_keep(0, 1, 0, integer_only=True),   # x + 0 -> x   (integers only)
                 _keep(1, 0, 0, integer_only=True),   # 0 + x -> x   (integers only)
                 _keep(0, 1, -0.0),                   # x + -0.0 -> x
                 _keep(1, 0, -0.0),                   # -0.0 + x -> x
                 *UNIFORM),                           # x + full(c) -> x + c
    binary.sub: (_keep(0, 1, 0), *UNIFORM),           # x - 0 -> x   (+0 only: x - -0.0 is x + 0)
    binary.mul: (_keep(0, 1, 1), _keep(1, 0, 1),      # x * 1 -> x,  1 * x -> x
                 *UNIFORM),                           # x * full(c) -> x * c
    binary.div: (_keep(0, 1, 1), *UNIFORM),           # x / 1 -> x
    binary.pow_: (_keep(0, 1, 1), _square),           # x ** 1 -> x,  x ** 2 -> x * x
    ew.neg: (_involution,),                           # -(-x) -> x
    ew.invert: (_involution,),                        # ~~x -> x
    ew.logical_not: (_involution,),                   # logical_not(logical_not(b)) -> b (bools)
    pyops.not_: (_not_not,),                      # not not b -> bool(b)
    shaping.transpose: (_transpose_twice,),       # x.transpose(p).transpose(q) -> x.transpose(p[q])
    shaping.reshape: (_reshape_twice,),           # reshape(reshape(x, s), t) -> reshape(x, t)
    shaping.cast: (_same_dtype_cast,),            # cast(x, x.dtype) -> x
    binary.select: (_constant_select,),               # select(true, a, b) -> a
    pyops.tuple_getitem: (_item_of_tuple,),       # (a, b)[0] -> a
    pyops.depend: (_lone_depend,),                # depend(x) -> x  (ordered after nothing)
}

SAME_MEMORY = (_item_of_tuple, _transpose_twice, _lone_depend)
"""Rules whose result shares memory exactly as the node's did (the item itself; transposes are
always views), so the aliasing guard does not apply to them."""


def run(graph: Graph, rw: Rewriter) -> bool:
    """Apply the first matching rule of `RULES` to each op node; True if any applied."""
    for node in list(graph.walk()):
        if node.parent is None or node.is_region or INPLACE_ATTR in node.attrs or \
                INTO_ROW_ATTR in node.attrs:
            continue  # NOTE: plan_memory placed its result: the buffer plan counts on it
        for rule in RULES.get(node.op, ()):
            scratch = Block()
            new = rule(node, scratch)
            if new is not None and _acceptable(node, new, rule):
                for built in list(scratch.nodes):
                    rw.move(built, InsertPoint.before(node))
                rw.replace(node, [new])
                break
            scratch.drop_all_uses()  # NOTE: a turned-down rule's new nodes never join the graph
    return rw.changed


def _acceptable(node: Node, new: Value, rule: Rule) -> bool:
    """Same type, and no array that did not share memory with another now does, where someone
    could write through one of them or keep it (a rule's new view of `x` counts as `x`)."""
    if new.type != node.output.type:
        return False
    built = new.producer is not None and not new.uses
    if rule in SAME_MEMORY or isinstance(new.type, Scalar) or (built and new.producer.op.fresh):
        return True
    shared = new.producer.inputs if built else (new,)
    return only_read(node.output) and all(unwritten(v) for v in shared)


def _build(node: Node, scratch: Block, op: str, *inputs: Value, **attrs) -> Value:
    return Builder(InsertPoint.at_end(scratch), node.loc).op(op, *inputs, name=node.output.name,
                                                             **attrs)

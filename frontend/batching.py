"""`vmap(fn, in_axes, out_axes)` compiled in place: the forward is inlined into the body of a
compiled loop over the examples, each iteration reading one example of every batched argument
(unbatched ones, and a Cell's Parameters, are shared), and the outputs are stacked along
`out_axes`. Each example takes its own branches and trip counts, so every op and every control
flow form is batched exactly; an effect that reaches outside one example (printing, random
draws, writing a Parameter or an argument) is refused at its line.

The loop is then rewritten on the whole batch where graph/batching.py can (batching rules per
op, both arms of a per-example If); where it cannot, the loop stays.
"""
from __future__ import annotations

from typing import Any

from ..graph import Builder, InsertPoint, Tensor, Value
from ..graph.analysis import within_block
from ..graph.batching import vectorize
from ..graph.ir import FOR, INDEX_TYPE, Block, Node
from ..graph.jacobian import TransformRequest, tuple_leaves
from ..graph.types import ListType, TupleType
from ..ops import Dyn
from ..ops import python as pyops
from .context import Frame
from .gradients import _error
from .values import PyList


def call_vmap(f: Frame, callee: Any, request: TransformRequest, args: list[Any]) -> Any:
    """The outputs of `callee` over the examples of `args`, stacked."""
    axes = _spread(f, request.in_axes, len(args), "in_axes")
    b = f.builder
    batched: list[tuple[Value, int]] = []
    args = [_bind(f, a, axis, batched) for a, axis in zip(args, axes)]
    if not batched:
        raise f.error("vmap: no argument is batched (every in_axes is None)",
                      "give the batch axis of at least one argument")
    size = _batch_size(f, b, batched)
    body = Block()
    index = body.add_param(INDEX_TYPE, "i")
    outer = b.ip
    b.ip = InsertPoint.at_end(body)
    try:
        sliced = [_slice(f, a, index) for a in args]
        out = f.materialise(f.call(callee, sliced, {}))
        leaves = tuple_leaves(b, out)
        rows = [body.add_param(ListType(leaf.type), "outs") for leaf in leaves]
        body.set_results([b.op("list_append", r, leaf, name="outs")
                          for r, leaf in zip(rows, leaves)])
    finally:
        b.ip = outer
    _refuse_outer_effects(f, body)
    out_axes = _spread(f, request.out_axes, len(leaves), "out_axes") \
        if isinstance(out.type, TupleType) else [request.out_axes]
    loop = Node(FOR, [], {}, [r.type for r in rows], ["outs"] * len(rows), [body], loc=b.loc)
    whole = vectorize(b, loop, size)
    if whole is not None:
        stacked = [_batch_axis_to(b, v, axis) for v, axis in zip(whole, out_axes)]
        return _rebuild(b, out.type, iter(stacked))
    empties = [b.op("list_new", name="outs") for _ in leaves]
    zero, one = b.constant(0), b.constant(1)
    for v in (zero, size, one, *empties):
        loop._append_input(v)
    loop.control_inputs.extend(e.producer for e in empties)
    b.insert(loop)
    stacked = [b.op("stack", o, axis=axis) for o, axis in zip(loop.outputs, out_axes)]
    return _rebuild(b, out.type, iter(stacked))


def _batch_axis_to(b: Builder, v: Value, axis: int) -> Value:
    """`v` (batch axis first) with the batch axis at `axis`, as `stack(..., axis)` puts it."""
    rank = v.type.rank
    axis = axis % rank
    if axis == 0:
        return v
    perm = list(range(1, rank))
    perm.insert(axis, 0)
    return b.op("transpose", v, perm=tuple(perm))


def _spread(f: Frame, axes: Any, count: int, what: str) -> list[Any]:
    if isinstance(axes, tuple | list):
        if len(axes) != count:
            raise f.error(f"vmap: {what} has {len(axes)} entries for {count} value(s)",
                          "give one entry per value, or one int for all")
        return list(axes)
    return [axes] * count


def _bind(f: Frame, a: Any, axis: Any, batched: list) -> Any:
    """`a` with each batched array marked (value, axis), nested like in_axes."""
    if axis is None:
        return a
    if isinstance(a, tuple | PyList) and not isinstance(axis, int):
        items = list(a.items if isinstance(a, PyList) else a)
        return tuple(_bind(f, x, ax, batched) for x, ax in zip(items, _spread(
            f, axis, len(items), "in_axes")))
    if isinstance(a, tuple | PyList):
        return tuple(_bind(f, x, axis, batched) for x in (a.items if isinstance(a, PyList)
                                                          else a))
    if not isinstance(axis, int) or isinstance(axis, bool):
        raise f.error(f"vmap: in_axes entry {axis!r} is not an int or None")
    v = f.materialise(a)
    if not isinstance(v.type, Tensor) or v.type.rank == 0:
        raise f.error(f"vmap: a batched argument must be an array with a batch axis, got "
                      f"{v.type}", "give it in_axes None")
    if not -v.type.rank <= axis < v.type.rank:
        raise f.error(f"vmap: in_axes {axis} is out of range for {v.type}")
    marked = _Batched(v, axis % v.type.rank)
    batched.append((marked.value, marked.axis))
    return marked


class _Batched:
    """A batched argument: its value and batch axis."""

    def __init__(self, value: Value, axis: int) -> None:
        self.value, self.axis = value, axis


def _batch_size(f: Frame, b: Builder, batched: list[tuple[Value, int]]) -> Value:
    sizes = {v.type.shape[axis] for v, axis in batched}
    known = {s for s in sizes if isinstance(s, int)}
    if len(known) > 1:
        raise f.error(f"vmap: the batched arguments have different batch sizes {sorted(known)}")
    if known:
        return b.constant(known.pop())
    v, axis = batched[0]
    return b.op("tuple_getitem", b.op("shape", v), index=axis, name="batch")


def _slice(f: Frame, a: Any, index: Value) -> Any:
    if isinstance(a, _Batched):
        where = (slice(None),) * a.axis + (Dyn(0),)
        return f.builder.op("getitem", a.value, index, index=where, name=a.value.name)
    if isinstance(a, tuple):
        return tuple(_slice(f, x, index) for x in a)
    return a


def _rebuild(b: Builder, t: Any, stacked: Any) -> Any:
    if isinstance(t, TupleType):
        parts = [_rebuild(b, e, stacked) for e in t.elements]
        return tuple(parts)
    return next(stacked)


def _refuse_outer_effects(f: Frame, body: Block) -> None:
    """An effect of one example that reaches outside it (printing, random draws, a write into
    a value made outside the loop) is refused at its line."""
    for node in body.walk():
        if node.is_region or not node.effectful or node.op is pyops.list_new:
            continue
        written = node.op.writes
        if written is not None and within_block(node.inputs[written], body):
            continue
        raise _error(f, f"vmap: `{node.name}` has an effect outside one example (printing, a "
                        "random draw, or writing a value made outside the function)",
                     node.loc, "move it out of the vmapped function")

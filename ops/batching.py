"""Batching rules shared by op families (vmap, graph/batching.py): each returns the op applied
to a whole batch, batched inputs carrying the batch axis first, or None to let vmap loop over
the examples. One-op rules sit beside their op."""
from __future__ import annotations

from typing import Any

from .opdef import BatchContext, Dyn
from .types import Tensor, TupleType


def _rank(t: Any) -> int | None:
    return t.rank if isinstance(t, Tensor) else None


def broadcast_batch(bc: BatchContext) -> Any:
    """Elementwise ops under NumPy broadcasting: a batched input of lower rank than the result
    gains unit axes after its batch axis, so the batch axes line up and every other axis
    broadcasts as it does for one example; unbatched inputs broadcast from the right."""
    rank = _rank(bc.out_type)
    if rank is None:
        return None
    inputs = []
    for v, batched, t in zip(bc.inputs, bc.batched, bc.types):
        if batched:
            own = _rank(t)
            if own is None:
                return None
            if own < rank:
                v = bc.op("expand_dims", v, axis=tuple(range(1, 1 + rank - own)))
        inputs.append(v)
    return bc.apply(*inputs)


def _shift_axis(axis: Any, rank: int) -> Any:
    """An axis (None, int or tuple) of one example as an axis of the batch."""
    if axis is None:
        return tuple(range(1, rank + 1))
    if isinstance(axis, tuple):
        return tuple(_shift_axis(a, rank) for a in axis)
    return axis + 1 if axis >= 0 else axis


def reduce_batch(bc: BatchContext) -> Any:
    """Reductions over `axis` (None: every axis of the example, never the batch axis)."""
    rank = _rank(bc.types[0])
    if rank is None or not bc.batched[0]:
        return None
    axis = bc.attrs["axis"]
    if axis is None and rank == 0:
        return None  # NOTE: axis=() reduces nothing but changes some dtypes (int sum)
    return bc.apply(bc.inputs[0], axis=_shift_axis(axis, rank))


def expand_dims_batch(bc: BatchContext) -> Any:
    """New unit axes of one example, past the batch axis (negative ones count from the end)."""
    return bc.apply(bc.inputs[0], axis=_shift_axis(bc.attrs["axis"], 0))


def transpose_batch(bc: BatchContext) -> Any:
    rank = _rank(bc.types[0])
    if rank is None:
        return None
    perm = bc.attrs["perm"]
    perm = tuple(range(rank - 1, -1, -1)) if perm is None else perm
    return bc.apply(bc.inputs[0], perm=(0, *((p % rank) + 1 for p in perm)))


def matmul_batch(bc: BatchContext) -> Any:
    """`@` broadcasts the axes before the last two from the right, so the batch axis lines up
    when the batched operand has at least the other's rank (a 1-d operand is contracted
    away); both batched, when they have one rank. Other mixes loop."""
    (x, y), (bx, by) = bc.inputs, bc.batched
    rx, ry = _rank(bc.types[0]), _rank(bc.types[1])
    if rx is None or ry is None or not (rx and ry) or bc.attrs.get("turned"):
        return None
    if bx and by:
        fits = rx == ry >= 2
    elif bx:
        fits = ry == 1 or rx >= ry or (rx == 1 and ry == 2)
    else:
        fits = rx == 1 and ry >= 2 or ry >= rx >= 2
    if not fits:
        return None
    t, out = bc.types[0], bc.out_type
    if bx and by and rx == ry == 2 and _contracts_one(bc):
        return _outer_product(bc)
    if bx and not by and ry == 2 and rx >= 2 and not bc.attrs["transpose_a"] \
            and bc.static_size is not None and isinstance(out, Tensor) \
            and all(type(d) is int for d in (*t.shape, *out.shape)):
        rows = bc.op("reshape", x, shape=(-1, t.shape[-1]))  # NOTE: one product, see dense
        return bc.op("reshape", bc.apply(rows, y), shape=(bc.static_size, *out.shape))
    return bc.apply(x, y)


def _contracts_one(bc: BatchContext) -> bool:
    """True if the matrix product sums over an axis of static size 1 (an outer product)."""
    x = bc.types[0]
    return (x.shape[-2] if bc.attrs["transpose_a"] else x.shape[-1]) == 1


def _outer_product(bc: BatchContext) -> Any:
    """A batch of outer products as one broadcast multiply (NumPy's matmul runs one tiny
    product per example): (B, n, 1) * (B, 1, m)."""
    x, y = bc.inputs
    if bc.attrs["transpose_a"]:
        x = bc.op("transpose", x, perm=(0, 2, 1))
    if bc.attrs["transpose_b"]:
        y = bc.op("transpose", y, perm=(0, 2, 1))
    return bc.op("mul", x, y)


def _batched_shape(bc: BatchContext, first: int) -> tuple[tuple[Any, ...], tuple] | None:
    """(dims inputs, shape attr) of a shape op's target (`shape` attr, run-time dims from
    input `first` on) with the batch size in front; None if a dim is batched."""
    if any(bc.batched[first:]):
        return None
    shape, dims = bc.attrs["shape"], bc.inputs[first:]
    whole = bc.types[first] if len(shape) == 1 and isinstance(shape[0], Dyn) else None
    if isinstance(whole, TupleType):  # NOTE: the whole shape is one run-time tuple
        dims = tuple(bc.op("tuple_getitem", dims[0], index=k)
                     for k in range(len(whole.elements)))
        shape = tuple(Dyn(k) for k in range(len(dims)))
    if bc.static_size is not None:  # NOTE: a literal size keeps the types static
        return tuple(dims), (bc.static_size, *shape)
    return (*dims, bc.size), (Dyn(len(dims)), *shape)


def reshape_batch(bc: BatchContext) -> Any:
    """reshape(x, shape): the batch size goes in front of the example's shape."""
    target = _batched_shape(bc, 1)
    if target is None or not bc.batched[0]:
        return None
    return bc.apply(bc.inputs[0], *target[0], shape=target[1])


def first_only_batch(bc: BatchContext) -> Any:
    """Ops that treat every leading axis of their first input alike (dense: `x @ W.T + b`),
    when only that input is batched. With static example shapes the batch is folded into the
    rows first: one matrix product, not one per example (NumPy loops over stacked matrices)."""
    if not bc.batched[0] or any(bc.batched[1:]) or not _rank(bc.types[0]):
        return None
    x, out = bc.types[0], bc.out_type
    if bc.static_size is None or not isinstance(out, Tensor) or not all(
            type(d) is int for d in (*x.shape, *out.shape)):
        return bc.apply(*bc.inputs)
    rows = bc.op("reshape", bc.inputs[0], shape=(-1, x.shape[-1]))
    return bc.op("reshape", bc.apply(rows, *bc.inputs[1:]), shape=(bc.static_size, *out.shape))


def broadcast_like(bc: BatchContext, v: Any, like: Any, rank: int) -> Any:
    """`v` broadcast to the run-time shape of `like` (of rank `rank`)."""
    shape = bc.op("shape", like)
    dims = [bc.op("tuple_getitem", shape, index=k) for k in range(rank)]
    return bc.op("broadcast_to", v, *dims, shape=tuple(Dyn(k) for k in range(rank)))


def per_sample_axes(bc: BatchContext) -> tuple[int, ...] | None:
    """The axes of the per-sample loss of one example, shifted past the batch axis."""
    labels = bc.types[1]
    if not isinstance(labels, Tensor):
        return None
    rank = labels.rank if bc.attrs.get("sparse", True) else labels.rank - 1
    return tuple(range(1, rank + 1))


def axis_batch(bc: BatchContext) -> Any:
    """Ops along `axis` of one example (softmax, squeeze): the same axes past the batch axis;
    None (every axis) is left to the loop, as the batch axis would be one of them."""
    axis = bc.attrs["axis"]
    if axis is None or not bc.batched[0]:
        return None
    return bc.apply(bc.inputs[0], axis=_shift_axis(axis, 0))


def broadcast_to_batch(bc: BatchContext) -> Any:
    """broadcast_to(x, shape): x gains unit axes past its batch axis up to the target's rank,
    and the batch size goes in front of the shape."""
    target, own = _batched_shape(bc, 1), _rank(bc.types[0])
    if target is None or own is None:
        return None
    dims, shape = target
    x = bc.inputs[0]
    if own < len(shape) - 1:
        x = bc.op("expand_dims", x, axis=tuple(range(1, len(shape) - own)))
    return bc.apply(x, *dims, shape=shape)


def sum_to_batch(bc: BatchContext) -> Any:
    """sum_to(g, shape) with static shapes: the axes it sums are known, so a keepdims sum
    over them (past the batch axis) and a reshape."""
    g, shape = bc.types[0], bc.attrs["shape"]
    if not (isinstance(g, Tensor) and bc.batched[0]) or len(bc.inputs) > 1 or not all(
            type(d) is int for d in (*g.shape, *shape)):
        return None
    lead = g.rank - len(shape)
    axes = (*range(lead), *(lead + i for i, d in enumerate(shape)
                            if d == 1 and g.shape[lead + i] != 1))
    summed = bc.op("sum", bc.inputs[0], axis=_shift_axis(axes, 0), keepdims=True) if axes \
        else bc.inputs[0]
    if bc.static_size is not None:
        return bc.op("reshape", summed, shape=(bc.static_size, *shape))
    return bc.op("reshape", summed, bc.size, shape=(Dyn(0), *shape))

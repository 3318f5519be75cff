"""Batching rules shared by op families (vmap, graph/batching.py): each returns the op applied
to a whole batch, batched inputs carrying the batch axis first, or None to let vmap loop over
the examples. One-op rules sit beside their op."""
from __future__ import annotations

from typing import Any

from .opdef import BatchContext, Dyn
from .types import Tensor


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
    """`@` broadcasts leading axes, so the batch axis is one more when both operands are
    matrices (or stacks) of one rank, or the other operand is an unbatched matrix on the right
    or, for a batched matrix, a matrix or vector on the left; other mixes loop."""
    (x, y), (bx, by) = bc.inputs, bc.batched
    rx, ry = _rank(bc.types[0]), _rank(bc.types[1])
    if rx is None or ry is None:
        return None
    if bx and by and rx == ry >= 2:
        return bc.apply(x, y)
    if bx and not by and ry == 2:
        return bc.apply(x, y)
    if by and not bx and ry == 2 and rx in (1, 2):
        return bc.apply(x, y)
    return None


def reshape_batch(bc: BatchContext) -> Any:
    """reshape(x, shape): the batch size goes in front of the example's shape."""
    shape = bc.attrs["shape"]
    if not bc.batched[0] or any(bc.batched[1:]) or (len(shape) == 1 and isinstance(shape[0], Dyn)):
        return None  # NOTE: (Dyn(0),) may be a whole run-time shape
    dims = bc.inputs[1:]
    return bc.apply(bc.inputs[0], *dims, bc.size, shape=(Dyn(len(dims)), *shape))


def first_only_batch(bc: BatchContext) -> Any:
    """Ops that treat every leading axis of their first input alike (dense: `x @ W.T + b`),
    when only that input is batched."""
    if not bc.batched[0] or any(bc.batched[1:]) or not _rank(bc.types[0]):
        return None
    return bc.apply(*bc.inputs)


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

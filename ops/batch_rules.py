"""More batching rules (vmap, graph/batching.py), for the op families ops/batching.py does not
cover: axis ops, indexing and gathers, windowed nn ops (the batch folded into N), losses; and
the named per-example loop (`looped`) of the ops that have no batched form."""
from __future__ import annotations

from typing import Any, Callable

from .batching import _rank, _shift_axis, broadcast_batch
from .opdef import BatchContext, Dyn
from .types import Tensor

LOOP_REASONS = {
    "effect": "an effect (printing, raising, a random draw, writing state): vmap refuses it, or "
              "keeps the loop over the examples, since it must run once per example in order",
    "python": "its result is a Python value (a number, a tuple, a list, a dict), not an array "
              "to stack",
    "shape": "its result's shape comes from run-time values, so examples may differ in shape",
    "across": "it combines every item of its input (a batch statistic, a weight gradient "
              "summed over the images, a scatter into a list), which is one example's whole",
    "sequence": "it takes a tuple or list of arrays, which vmap does not batch",
    "inputless": "it has no array inputs (a constant, a compile-time size), so no batched value "
                 "reaches it",
}


def looped(reason: str) -> Callable[[BatchContext], Any]:
    """The explicit rule of an op with no batched form: it runs in a compiled loop over the
    examples (graph/batching.py's fallback); `reason` is a key of LOOP_REASONS, for the docs."""
    def per_example_loop(bc: BatchContext) -> Any:
        return None
    per_example_loop.loop_reason = reason  # type: ignore[attr-defined]
    return per_example_loop


LOOP_EFFECT, LOOP_PYTHON, LOOP_SHAPE, LOOP_ACROSS, LOOP_SEQUENCE, LOOP_INPUTLESS = (
    looped(r) for r in ("effect", "python", "shape", "across", "sequence", "inputless"))


def _only_first(bc: BatchContext) -> bool:
    return bool(bc.batched[0]) and not any(bc.batched[1:]) and bool(_rank(bc.types[0]))


def whole_batch(bc: BatchContext) -> Any:
    """Ops that treat every axis of their first input alike (copy, asarray, embedding's ids):
    the same op on the batch, other inputs unbatched."""
    if not bc.batched[0] or any(bc.batched[1:]) or _rank(bc.types[0]) is None:
        return None
    return bc.apply(*bc.inputs)


def first_input_batch(bc: BatchContext) -> Any:
    """depend(x, *after): x itself (the ordering inputs order nothing on the batch)."""
    return bc.inputs[0] if bc.batched[0] else None


def along_axis_batch(bc: BatchContext) -> Any:
    """Ops along `axis` of their first input (sort, cumsum, argmax, one_hot, l2_normalize, repeat):
    the axis moves past the batch axis; None (the flattened input) stays a loop."""
    axis = bc.attrs["axis"]
    if axis is None or not _only_first(bc):
        return None
    return bc.apply(*bc.inputs, axis=_shift_axis(axis, 0))


def flip_batch(bc: BatchContext) -> Any:
    """flip(x, axis): None flips every axis of the example, never the batch axis."""
    rank = _rank(bc.types[0])
    if rank is None or not bc.batched[0]:
        return None
    return bc.apply(bc.inputs[0], axis=_shift_axis(bc.attrs["axis"], rank))


def flatten_batch(bc: BatchContext) -> Any:
    """flatten(x, start_dim, end_dim) of one example: both dims past the batch axis."""
    if not _only_first(bc):
        return None
    start, end = bc.attrs["start_dim"], bc.attrs["end_dim"]
    return bc.apply(bc.inputs[0], start_dim=_shift_axis(start, 0), end_dim=_shift_axis(end, 0))


def tile_batch(bc: BatchContext) -> Any:
    """tile(x, reps): the example gains the leading unit axes NumPy would give it, then the
    batch axis is repeated once."""
    rank, reps = _rank(bc.types[0]), bc.attrs["reps"]
    reps = (reps,) if isinstance(reps, int) else tuple(reps)
    if rank is None or not bc.batched[0]:
        return None
    x = bc.inputs[0]
    if len(reps) > rank:
        x = bc.op("expand_dims", x, axis=tuple(range(1, 1 + len(reps) - rank)))
    return bc.apply(x, reps=(1,) * (1 + max(rank - len(reps), 0)) + reps)


def pad_batch(bc: BatchContext) -> Any:
    """pad(x, paddings): no padding on the batch axis (only per-axis pairs are taken)."""
    paddings, rank = bc.attrs["paddings"], _rank(bc.types[0])
    if not bc.batched[0] or rank is None or not (
            isinstance(paddings, tuple | list) and len(paddings) == rank
            and all(isinstance(p, tuple | list) and len(p) == 2 for p in paddings)):
        return None
    return bc.apply(bc.inputs[0], paddings=((0, 0), *(tuple(p) for p in paddings)))


def _basic_index(bc: BatchContext, first: int) -> bool:
    """True if `index` has no array in it (only slices, ints, None, ...), so a leading `:` keeps
    the batch axis first: with an array index NumPy may move the indexed axes to the front."""
    return not any(bc.batched[first:]) and all(
        not isinstance(t, Tensor) or t.rank == 0 and t.dtype.kind in "iu"
        for t in bc.types[first:])


def indexed(first_index: int) -> Callable[[BatchContext], Any]:
    """A rule for ops reading or writing `x[index]` of their batched first input with basic
    indexing (getitem, and the backward's index_add, index_add_into, index_zero): the same op
    at x[:, index]; a value to add may be batched (its example shape is x[index]'s) or shared
    (it broadcasts from the right). The index inputs start at `first_index`."""
    def index_rule(bc: BatchContext) -> Any:
        index = bc.attrs["index"]
        if not (bc.batched[0] and isinstance(index, tuple) and isinstance(bc.types[0], Tensor)
                and _basic_index(bc, first_index)):
            return None
        return bc.apply(*bc.inputs, index=(slice(None), *index))
    return index_rule


def gather_batch(bc: BatchContext) -> Any:
    """gather(params, indices, axis): params batched, the axis moves past the batch axis;
    indices batched into shared params along axis 0, the result already has the batch first."""
    (bp, bi), rank = bc.batched, _rank(bc.types[0])
    axis = bc.attrs["axis"]
    if rank is None or bp and bi:
        return None
    if bp:
        return bc.apply(*bc.inputs, axis=_shift_axis(axis, 0))
    return bc.apply(*bc.inputs) if axis % rank == 0 else None


def gather_nd_batch(bc: BatchContext) -> Any:
    """gather_nd(params, indices) into shared params: the indices' leading axes lead the
    result, the batch axis first among them."""
    if bc.batched[0] or not bc.batched[1] or (_rank(bc.types[1]) or 0) < 1:
        return None
    return bc.apply(*bc.inputs)


def dot_batch(bc: BatchContext) -> Any:
    """np.dot(x, y) with x batched (an example of rank >= 1) and y shared: it contracts x's last
    axis, so the batch axis stays first."""
    rx, ry = _rank(bc.types[0]), _rank(bc.types[1])
    if not (bc.batched[0] and not bc.batched[1] and rx and ry):
        return None
    return bc.apply(*bc.inputs)


def layer_norm_batch(bc: BatchContext) -> Any:
    """layer_norm normalizes trailing axes: shift non-negative begin axes past the batch."""
    if not _only_first(bc):
        return None
    return bc.apply(*bc.inputs, begin_norm_axis=_shift_axis(bc.attrs["begin_norm_axis"], 0),
                    begin_params_axis=_shift_axis(bc.attrs["begin_params_axis"], 0))


def _static(t: Any) -> bool:
    return isinstance(t, Tensor) and all(type(d) is int for d in t.shape)


def folded(inputs: tuple[int, ...] = (0,), shape_attr: str | None = None
           ) -> Callable[[BatchContext], Any]:
    """A rule for ops on a batch of images (N first: conv, pool, batch_norm in inference,
    resize): the batch axis is folded into N, `inputs` reshaped to (B*N, ...), the op run once
    and the result unfolded; `shape_attr` (an input shape, N first) is scaled the same way.
    The other inputs must be shared; examples of static shape only."""
    def fold_rule(bc: BatchContext) -> Any:
        if not all(bc.batched[k] for k in inputs) or any(
                b for k, b in enumerate(bc.batched) if k not in inputs):
            return None
        out = bc.out_type
        if not (all(_static(bc.types[k]) for k in inputs) and _static(out)) or not out.shape:
            return None
        rows = [bc.op("reshape", bc.inputs[k], shape=(-1, *bc.types[k].shape[1:]))
                if k in inputs else v for k, v in enumerate(bc.inputs)]
        attrs = {}
        if shape_attr is not None:
            shape = tuple(bc.attrs[shape_attr])
            if bc.static_size is None:
                return None
            attrs[shape_attr] = (bc.static_size * shape[0], *shape[1:])
        result = bc.apply(*rows, **attrs)
        if bc.static_size is not None:
            return bc.op("reshape", result, shape=(bc.static_size, *out.shape))
        return bc.op("reshape", result, bc.size, shape=(Dyn(0), *out.shape))
    return fold_rule


def mse_loss_batch(bc: BatchContext) -> Any:
    """Each example's squared errors over the batch, then its own reduction."""
    rank = _rank(bc.out_type if bc.attrs["reduction"] == "none" else None)
    if bc.attrs["reduction"] == "none":
        return broadcast_batch(bc) if rank is not None else None
    ranks = [_rank(t) for t in bc.types]
    if None in ranks or len(set(ranks)) != 1 or not ranks[0]:
        return None  # NOTE: the errors' rank is one example's, every axis of it reduced
    errors = bc.apply(*bc.inputs, reduction="none")
    return bc.op(bc.attrs["reduction"], errors, axis=tuple(range(1, ranks[0] + 1)))


def nll_loss_batch(bc: BatchContext) -> Any:
    """nll_loss per sample ('none') with the batch folded into the samples, then summed per
    example for 'sum'; 'mean' divides by each example's own weight total, so it stays a loop."""
    reduction, (logp, target) = bc.attrs["reduction"], bc.types[:2]
    if reduction == "mean" or any(bc.batched[2:]) or not (bc.batched[0] and bc.batched[1]) \
            or not (_static(logp) and _static(target)) or bc.static_size is None:
        return None
    flat_logp = bc.op("reshape", bc.inputs[0], shape=(-1, logp.shape[-1]))
    flat_target = bc.op("reshape", bc.inputs[1], shape=(-1,))
    losses = bc.apply(flat_logp, flat_target, *bc.inputs[2:], reduction="none")
    losses = bc.op("reshape", losses, shape=(bc.static_size, *target.shape))
    if reduction == "none" or not target.shape:
        return losses
    return bc.op("sum", losses, axis=tuple(range(1, target.rank + 1)))

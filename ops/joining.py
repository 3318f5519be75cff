"""Joining, splitting and repeating arrays: concat, stack, split, tile, pad, flip, repeat. Each
op with its shape rule, gradient rule and spellings."""
from __future__ import annotations

from typing import Any

import numpy as np

from . import onnx as ox
from .batch_rules import (LOOP_PYTHON, LOOP_SEQUENCE, along_axis_batch, flip_batch, pad_batch,
                          tile_batch)
from .elementwise import as_tensor, np_call, primitive, spell
from .opdef import REQUIRED, Dyn, GradContext
from .shaping import (dim_product, format_dims, listed_axis, normalize_axes, normalize_axis,
                      shape_op, shaped_like)
from .types import (UNKNOWN, AnyType, Dim, ListType, Tensor, TupleType, Type, dim_add,
                    dim_floordiv, dim_mul)


def _same_dim(name: str, dims: list[Dim], shown: str) -> Dim:
    """Dims that must agree: the known size, a shared symbol, or "?"."""
    known = {d for d in dims if isinstance(d, int)}
    if len(known) > 1:
        raise ValueError(f"{name}: sizes {format_dims(dims)} do not match in {shown}")
    if known:
        return known.pop()
    return dims[0] if len(set(dims)) == 1 else UNKNOWN


def _members(name: str, xs: Type) -> tuple[list[Tensor], bool]:
    """The tensors of a tuple (exact) or list (one representative, count unknown)."""
    if isinstance(xs, TupleType):
        if not xs.elements:
            raise ValueError(f"{name}: need at least one array")
        return [as_tensor(name, e) for e in xs.elements], True
    if isinstance(xs, ListType):
        if isinstance(xs.element, AnyType):  # NOTE: a list no item ever went into
            raise ValueError(f"{name}: need at least one array")
        return [as_tensor(name, xs.element)], False
    raise TypeError(f"{name}: expected a tuple or list of tensors, got {xs}")


def _concat_infer(xs: Type, *, axis: int) -> Tensor:
    ts, exact = _members("concat", xs)
    if ts[0].rank == 0 or len({t.rank for t in ts}) != 1:
        raise ValueError(f"concat: tensors need one rank >= 1, got {xs}")
    ax = normalize_axis("concat", axis, ts[0].rank, xs)
    dims: list[Dim] = [_same_dim("concat", [t.shape[i] for t in ts], str(xs)) if i != ax else 0
                       for i in range(ts[0].rank)]
    dims[ax] = dim_add(*(t.shape[ax] for t in ts)) if exact else UNKNOWN
    return Tensor(tuple(dims), np.result_type(*(t.dtype for t in ts)))


def _pieces(ad: GradContext, axis: int) -> list[tuple[Any, Any]]:
    """(start, stop) of each tuple member along `axis` of the joined result: ints where the
    sizes are, else run-time ints (a symbolic size's `dim`, or the member's shape)."""
    spans: list[tuple[Any, Any]] = []
    start: Any = 0
    for k, t in enumerate(ad.types[0].elements):
        n: Any = t.shape[axis]
        if n == UNKNOWN:
            member = ad.op("tuple_getitem", ad.input(0), index=k)
            n = ad.op("tuple_getitem", ad.op("shape", member), index=axis)
        elif not isinstance(n, int):
            n = ad.op("dim", value=n)
        stop = start + n if isinstance(start, int) and isinstance(n, int) else \
            ad.op("add", start, n)
        spans.append((start, stop))
        start = stop
    return spans


def _piece(ad: GradContext, lead: tuple[slice, ...], start: Any, stop: Any) -> Any:
    """`g[..., start:stop]` along the joined axis, bounds literal or run-time."""
    bounds, dyn = [], []
    for b in (start, stop):
        if isinstance(b, int):
            bounds.append(b)
        else:
            bounds.append(Dyn(len(dyn)))
            dyn.append(b)
    return ad.op("getitem", ad.g, *dyn, index=(*lead, slice(*bounds)))


def _concat_grad(ad: GradContext) -> tuple[Any, ...]:
    xs = ad.types[0]
    rank = as_tensor("concat", ad.out_type).rank
    ax = normalize_axis("concat", ad.attrs["axis"], rank, ad.out_type)
    if isinstance(xs, ListType):
        return (ad.op("split_like", ad.g, ad.input(0), axis=ax),)
    lead = (slice(None),) * ax
    return ([_piece(ad, lead, a, b) for a, b in _pieces(ad, ax)],)


concat = shape_op("concat", ("xs",), lambda xs, axis: np.concatenate(xs, axis=axis), _concat_infer,
             "np.concatenate(xs, axis=axis)", {"axis": 0}, fresh=True, grad=_concat_grad,
             onnx=ox.join(stack=False), batch=LOOP_SEQUENCE)


def _stack_infer(xs: Type, *, axis: int) -> Tensor:
    ts, exact = _members("stack", xs)
    if len({t.rank for t in ts}) != 1:
        raise ValueError(f"stack: tensors need one shape, got {xs}")
    ax = normalize_axis("stack", axis, ts[0].rank + 1, xs)
    dims = [_same_dim("stack", [t.shape[i] for t in ts], str(xs)) for i in range(ts[0].rank)]
    dims.insert(ax, len(ts) if exact else UNKNOWN)
    return Tensor(tuple(dims), np.result_type(*(t.dtype for t in ts)))


def _stack_grad(ad: GradContext) -> tuple[Any, ...]:
    xs = ad.types[0]
    rank = as_tensor("stack", ad.out_type).rank
    ax = normalize_axis("stack", ad.attrs["axis"], rank, ad.out_type)
    if isinstance(xs, ListType):
        return (ad.op("unstack", ad.g, axis=ax),)
    lead = (slice(None),) * ax
    return ([ad.op("getitem", ad.g, index=(*lead, i)) for i in range(len(xs.elements))],)


stack = shape_op("stack", ("xs",), lambda xs, axis: np.stack(xs, axis=axis), _stack_infer,
            "np.stack(xs, axis=axis)", {"axis": 0}, fresh=True, grad=_stack_grad,
            onnx=ox.join(stack=True), batch=LOOP_SEQUENCE)


def _split(x: Any, *, axis: int, sections: Any, sizes: Any) -> tuple[Any, ...]:
    return tuple(np.split(x, _cuts(sections, sizes, x.shape[axis]), axis=axis))


def _cuts(sections: Any, sizes: Any, n: int) -> Any:
    if sizes is None:
        return sections
    if isinstance(sizes, int):
        return range(sizes, n, sizes)
    if sum(sizes) != n:
        raise ValueError(f"split: sizes {sizes} do not add up to the axis size {n}")
    return tuple(np.cumsum(sizes[:-1]).tolist())


def _split_emit(attrs: dict[str, Any]) -> str:
    sizes = attrs["sizes"]
    if isinstance(sizes, int):
        cuts = "range(sizes, x.shape[axis], sizes)"
    else:
        cuts = "sections" if sizes is None else repr(_cuts(None, sizes, sum(sizes)))
    return f"tuple(np.split(x, {cuts}, axis=axis))"


def _split_infer(x: Type, *, axis: int, sections: Any, sizes: Any) -> TupleType:
    t = as_tensor("split", x)
    ax = normalize_axis("split", axis, t.rank, t)
    pieces = _piece_sizes(t, t.shape[ax], sections, sizes)
    return TupleType(tuple(Tensor(t.shape[:ax] + (p,) + t.shape[ax + 1:], t.dtype)
                           for p in pieces))


def _piece_sizes(t: Tensor, n: Dim, sections: Any, sizes: Any) -> list[Dim]:
    if (sections is None) == (sizes is None):
        raise TypeError("split: give exactly one of sections and sizes")
    if isinstance(sections, int):
        if sections <= 0 or (isinstance(n, int) and n % sections):
            raise ValueError(f"split: {t} does not split into {sections} equal parts")
        return [dim_floordiv(n, sections)] * sections  # NOTE: exact whenever np.split succeeds
    if sections is not None:
        bounds = (0, *sections, None)
        return [len(range(n)[a:b]) if isinstance(n, int) else UNKNOWN
                for a, b in zip(bounds, bounds[1:])]
    if isinstance(sizes, int):
        if sizes <= 0 or not isinstance(n, int):
            raise ValueError(f"split: chunks of {sizes} need a positive size and a static dim, "
                             f"got {t}")
        return [len(range(n)[i:i + sizes]) for i in range(0, max(n, 1), sizes)]
    if isinstance(n, int) and sum(sizes) != n:
        raise ValueError(f"split: sizes {sizes} do not add up to the axis size of {t}")
    return list(sizes)


def _split_grad(ad: GradContext) -> tuple[Any, ...]:
    pieces = []
    for g, t in zip(ad.gs, ad.out_type.elements):
        if g is None:
            if not t.is_static:
                raise NotImplementedError("the gradient of split pieces of run-time sizes")
            g = ad.op("zeros", shape=t.shape, dtype=t.dtype)
        pieces.append(g)
    return (ad.op("concat", ad.op("make_tuple", *pieces), axis=ad.attrs["axis"]),)


split = shape_op("split", ("x",), _split, _split_infer, _split_emit,
            {"axis": 0, "sections": None, "sizes": None}, grad=_split_grad, batch=LOOP_PYTHON)
"""A tuple of pieces: `sections` as NumPy's (a count of equal parts, or cut indices), or
`sizes` as MindSpore's (a chunk size, or the size of each piece)."""


def _ms_split(values: dict[str, Any]) -> dict[str, Any]:
    chunks = values.pop("split_size_or_sections")
    values["sizes"] = chunks if isinstance(chunks, int) else tuple(chunks)
    values["sections"] = None
    return values


def _np_split(values: dict[str, Any]) -> dict[str, Any]:
    s = values["sections"]
    values["sections"] = s if isinstance(s, int) else tuple(s)
    return values


def _tile_infer(x: Type, *, reps: tuple[int, ...]) -> Tensor:
    t = as_tensor("tile", x)
    if any(type(r) is not int or r < 0 for r in reps):
        raise ValueError(f"tile: reps {reps} must be non-negative ints")
    n = max(len(reps), t.rank)
    shape = (1,) * (n - t.rank) + t.shape
    reps = (1,) * (n - len(reps)) + reps
    return Tensor(tuple(_times(d, r) for d, r in zip(shape, reps)), t.dtype)


def _times(d: Dim, r: int) -> Dim:
    return dim_mul(d, r)


def _reps_tuple(values: dict[str, Any]) -> dict[str, Any]:
    reps = values["reps"]
    values["reps"] = (reps,) if isinstance(reps, int) else tuple(reps)
    return values


def _tile_grad(ad: GradContext) -> tuple[Any, ...]:
    t = as_tensor("tile", ad.types[0])
    reps = ad.attrs["reps"]
    n = max(len(reps), t.rank)
    shape = (1,) * (n - t.rank) + t.shape
    reps = (1,) * (n - len(reps)) + tuple(reps)
    if not all(isinstance(d, int) for d in shape):
        raise NotImplementedError("the gradient of tiling an array of run-time shape")
    split = tuple(x for r, d in zip(reps, shape) for x in (r, d))
    summed = ad.op("sum", ad.op("reshape", ad.g, shape=split), axis=tuple(range(0, 2 * n, 2)))
    return (shaped_like(ad, summed),)


tile = shape_op("tile", ("x",), lambda x, reps: np.tile(x, reps), _tile_infer, "np.tile(x, reps)",
           {"reps": REQUIRED}, fresh=True, grad=_tile_grad, onnx=ox.tile, batch=tile_batch)


PAD_MODES = ("constant", "edge", "reflect", "symmetric", "wrap")


def _pad(x: Any, *, paddings: Any, value: Any, mode: str) -> Any:
    if mode == "constant":
        return np.pad(x, paddings, constant_values=value)
    return np.pad(x, paddings, mode=mode)


def _pad_emit(attrs: dict[str, Any]) -> str:
    if attrs["mode"] != "constant":
        return "np.pad(x, paddings, mode=mode)"
    return "np.pad(x, paddings, constant_values=value)" if attrs["value"] else "np.pad(x, paddings)"


def _pad_infer(x: Type, *, paddings: Any, value: Any, mode: str) -> Tensor:
    if mode not in PAD_MODES:
        raise ValueError(f"pad: mode must be one of {', '.join(PAD_MODES)}, not {mode!r}")
    t = as_tensor("pad", x)
    try:
        widths = np.broadcast_to(np.asarray(paddings), (t.rank, 2)).tolist()
    except ValueError:
        raise ValueError(f"pad: paddings {paddings} do not fit {t}") from None
    if any(type(w) is not int or w < 0 for pair in widths for w in pair):
        raise ValueError(f"pad: paddings {paddings} must be non-negative ints")
    return Tensor(tuple(dim_add(d, a, b) for d, (a, b) in zip(t.shape, widths)), t.dtype)


def _pad_mode(values: dict[str, Any]) -> dict[str, Any]:
    values["mode"] = str(values["mode"]).lower()
    if values["mode"] != "constant" and values["value"] != 0:
        raise ValueError(f"pad: constant_values only goes with mode='constant', not "
                         f"{values['mode']!r}")
    return values


def _pairs(values: dict[str, Any]) -> dict[str, Any]:
    p = values["paddings"]
    values["paddings"] = tuple(tuple(q) if isinstance(q, list | tuple) else q for q in p) \
        if isinstance(p, list | tuple) else p
    return values


def _pad_grad(ad: GradContext) -> tuple[Any, ...]:
    if ad.attrs["mode"] != "constant":
        raise NotImplementedError(f"the gradient of np.pad in mode {ad.attrs['mode']!r}")
    t = as_tensor("pad", ad.types[0])
    widths = np.broadcast_to(np.asarray(ad.attrs["paddings"]), (t.rank, 2)).tolist()
    out = ad.out_type.shape
    index = tuple(slice(a, (n - b) if isinstance(n, int) else (-b or None))
                  for (a, b), n in zip(widths, out))
    return (ad.op("getitem", ad.g, index=index),)


pad = shape_op("pad", ("x",), _pad, _pad_infer, _pad_emit,
          {"paddings": REQUIRED, "value": 0, "mode": "constant"}, fresh=True, grad=_pad_grad,
          onnx=ox.pad, batch=pad_batch)
"""`np.pad` in the modes of `PAD_MODES`; `paddings` is NumPy's `pad_width` (per-dim pairs)."""


def _flip_infer(x: Type, *, axis: Any) -> Tensor:
    t = as_tensor("flip", x)
    normalize_axes("flip", axis, t)
    return t


flip = shape_op("flip", ("x",), lambda x, axis: np.flip(x, axis), _flip_infer,
           np_call("np.flip", "x", axis=None), {"axis": None},
           grad=lambda ad: (ad.op("flip", ad.g, axis=ad.attrs["axis"]),), onnx=ox.flip,
           batch=flip_batch)


def _repeat_infer(x: Type, *, repeats: Any, axis: int | None) -> Tensor:
    t = as_tensor("repeat", x)
    reps = (repeats,) if isinstance(repeats, int) else repeats
    if any(type(r) is not int or r < 0 for r in reps):
        raise ValueError(f"repeat: repeats {repeats} must be non-negative ints")
    if axis is None:
        return Tensor((_repeated("repeat", dim_product(t.shape), reps, t),), t.dtype)
    t = Tensor((1,), t.dtype) if t.rank == 0 else t  # NumPy repeats a 0-d array as 1-d
    ax = normalize_axis("repeat", axis, t.rank, t)
    return Tensor(t.shape[:ax] + (_repeated("repeat", t.shape[ax], reps, t),) +
                  t.shape[ax + 1:], t.dtype)


def _repeated(name: str, n: Dim, reps: tuple[int, ...], t: Tensor) -> Dim:
    if len(reps) == 1:
        return _times(n, reps[0])
    if isinstance(n, int) and len(reps) != n:
        raise ValueError(f"{name}: {len(reps)} repeats do not match {n} items of {t}")
    return sum(reps)


def _repeats_tuple(values: dict[str, Any]) -> dict[str, Any]:
    if isinstance(values["repeats"], list):
        values["repeats"] = tuple(values["repeats"])
    return values


def _repeat_grad(ad: GradContext) -> tuple[Any, ...]:
    repeats, axis = ad.attrs["repeats"], ad.attrs["axis"]
    t = as_tensor("repeat", ad.types[0])
    if not isinstance(repeats, int) and len(repeats) != 1:
        raise NotImplementedError("the gradient of np.repeat with per-item repeats")
    r = repeats if isinstance(repeats, int) else repeats[0]
    if axis is None or t.rank == 0:
        folded = ad.op("reshape", ad.g, shape=(-1, r))
        return (shaped_like(ad, ad.op("sum", folded, axis=1)),)
    ax = normalize_axis("repeat", axis, t.rank, t)
    shape = t.shape[:ax] + (t.shape[ax], r) + t.shape[ax + 1:]
    if shape.count(UNKNOWN) > 1:
        raise NotImplementedError("the gradient of np.repeat of an array of run-time shape")
    folded = ad.op("reshape", ad.g, shape=tuple(-1 if d == UNKNOWN else d for d in shape))
    return (ad.op("sum", folded, axis=ax + 1),)


repeat = shape_op("repeat", ("x",), lambda x, repeats, axis: np.repeat(x, repeats, axis),
             _repeat_infer, np_call("np.repeat", "x, repeats", axis=None),
             {"repeats": REQUIRED, "axis": None}, fresh=True, grad=_repeat_grad,
             batch=along_axis_batch)


OPS = (concat, stack, split, tile, pad, flip, repeat)

FUNCTIONS = (
    spell("concat", concat, "tensors, axis=0", tensors="xs"),
    spell("cat", concat, "tensors, axis=0", tensors="xs"),
    spell("stack", stack, "tensors, axis=0", tensors="xs"),
    spell("split", split, "tensor, split_size_or_sections, axis=0", _ms_split, tensor="x"),
    spell("tile", tile, "input, dims", _reps_tuple, input="x", dims="reps"),
    spell("flip", flip, "input, dims", listed_axis, input="x", dims="axis"),
    spell("repeat_interleave", repeat, "input, repeats, axis=None", _repeats_tuple, input="x"),
    spell("repeat_elements", repeat, "x, rep, axis=0", rep="repeats"),
)
NUMPY = (
    spell("concatenate", concat, "arrays, axis=0", arrays="xs"),
    spell("stack", stack, "arrays, axis=0", arrays="xs"),
    spell("split", split, "ary, indices_or_sections, axis=0", _np_split, ary="x",
          indices_or_sections="sections"),
    spell("tile", tile, "A, reps", _reps_tuple, A="x"),
    spell("pad", pad, "array, pad_width, mode='constant', constant_values=0",
          lambda v: _pairs(_pad_mode(v)), array="x", pad_width="paddings",
          constant_values="value"),
    spell("flip", flip, "m, axis=None", listed_axis, m="x"),
    spell("repeat", repeat, "a, repeats, axis=None", _repeats_tuple, a="x"),
)
METHODS = (
    spell("repeat", repeat, "x, repeats, axis=None", _repeats_tuple),
)
PRIMITIVES = (
    primitive("Concat", concat, "axis=0", "input_x", input_x="xs"),
    primitive("Stack", stack, "axis=0", "input_x", input_x="xs"),
    primitive("Split", split, "axis=0, output_num=1", "input_x", input_x="x",
              output_num="sections"),
    primitive("Tile", tile, call="input_x, multiples", fix=_reps_tuple, input_x="x",
              multiples="reps"),
    primitive("Pad", pad, "paddings", "input_x", _pairs, input_x="x"),
    primitive("ReverseV2", flip, "axis", "input_x", listed_axis, input_x="x"),
)

"""Indexing: `x[i]` (getitem) and `x[i] = v` (setitem) over ints, slices, None, Ellipsis,
integer arrays and boolean masks; plus `split_index`, which turns a subscript into the ops'
`index` attribute and the run-time parts it references as `Dyn(k)` inputs.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from . import onnx as ox
from . import native
from .batch_rules import LOOP_EFFECT, gather_nd_batch, indexed
from .elementwise import as_tensor, checked
from .opdef import REQUIRED, Dyn, GradContext, OpDef, OpFunction, Primitive
from .shaping import IndexOutOfRange, broadcasts_to, format_dims
from .types import (UNKNOWN, Dim, ListType, NoneType, Scalar, Tensor, TupleType, Type,
                    broadcast_shapes, join_types)


def split_index(key: Any) -> tuple[tuple[Any, ...], tuple[Any, ...]]:
    """A subscript key as getitem/setitem's `index` attr plus the run-time values it refers to:
    ints, None, Ellipsis and int slice bounds stay literal; anything else becomes `Dyn(k)`."""
    dyn: list[Any] = []

    def ref(v: Any) -> Any:
        if v is None or v is Ellipsis or type(v) is int:
            return v
        dyn.append(v)
        return Dyn(len(dyn) - 1)

    items = key if isinstance(key, tuple) else (key,)
    index = tuple(slice(ref(i.start), ref(i.stop), ref(i.step)) if isinstance(i, slice)
                  else ref(i) for i in items)
    return index, tuple(dyn)


def index_key(index: tuple[Any, ...], dyn: tuple[Any, ...]) -> Any:
    """The concrete subscript an `index` attr describes, for kernels."""
    def value(v: Any) -> Any:
        return dyn[v.k] if isinstance(v, Dyn) else v
    items = tuple(slice(value(i.start), value(i.stop), value(i.step)) if isinstance(i, slice)
                  else value(i) for i in index)
    return items[0] if len(items) == 1 else items


def index_text(index: tuple[Any, ...]) -> str:
    """The subscript as source text, `idx_k` standing for `Dyn(k)`: `0, 1:, None, ...`."""
    def item(i: Any) -> str:
        if isinstance(i, slice):
            bounds = [("" if b is None else item(b)) for b in (i.start, i.stop, i.step)]
            return ":".join(bounds if i.step is not None else bounds[:2])
        return "..." if i is Ellipsis else f"idx_{i.k}" if isinstance(i, Dyn) else repr(i)
    return ", ".join(item(i) for i in index) if index else "()"


Item = tuple[str, Any]
"""An index item classified: ("int", n|None), ("slice", s), ("new", None), ("ellipsis", None),
("array", shape) or ("mask", shape)."""


def _items(index: tuple[Any, ...], types: tuple[Type, ...]) -> list[Item]:
    if len(index) == 1 and isinstance(index[0], Dyn) and isinstance(types[index[0].k], TupleType):
        return [_classify_type(e) for e in types[index[0].k].elements]  # x[t], t a tuple value
    return [_classify(i, types) for i in index]


def _classify(item: Any, types: tuple[Type, ...]) -> Item:
    if item is None or item is Ellipsis:
        return ("new" if item is None else "ellipsis", None)
    if isinstance(item, bool):
        return ("mask", ())
    if isinstance(item, int):
        return ("int", item)
    if isinstance(item, Dyn):
        return _classify_type(types[item.k])
    if isinstance(item, slice):
        for b in (item.start, item.stop, item.step):
            if isinstance(b, Dyn) and _classify_type(types[b.k]) not in (("int", None),
                                                                           ("new", None)):
                raise TypeError(f"getitem: slice bounds must be ints or None, got {types[b.k]}")
        if item.step == 0:
            raise ValueError("getitem: slice step cannot be zero")
        return ("slice", item)
    raise TypeError(f"getitem: bad index item {item!r}")


def _classify_type(t: Type) -> Item:
    if t == NoneType():
        return ("new", None)
    if t == Scalar(int) or (isinstance(t, Tensor) and t.rank == 0 and t.dtype.kind in "iu"):
        return ("int", None)
    if t == Scalar(bool) or (isinstance(t, Tensor) and t.dtype == np.bool_):
        return ("mask", t.shape if isinstance(t, Tensor) else ())
    if isinstance(t, Tensor) and t.dtype.kind in "iu":
        return ("array", t.shape)
    if isinstance(t, TupleType | ListType):
        kinds = set(t.elements) if isinstance(t, TupleType) else {t.element}
        n = len(t.elements) if isinstance(t, TupleType) else UNKNOWN
        if kinds <= {Scalar(int)} or kinds == {Scalar(bool)}:
            return ("array" if Scalar(int) in kinds or not kinds else "mask", (n,))
    raise TypeError("getitem: only integers, slices, None, ... and integer or boolean arrays "
                    f"are valid indices, got {t}")


def _index_tensor(t: Tensor, items: list[Item]) -> Tensor:
    """NumPy's basic and advanced indexing rules, over possibly symbolic dims."""
    used = sum(len(p) if k == "mask" else 1 for k, p in items if k not in ("new", "ellipsis"))
    ellipses = [i for i, (k, _) in enumerate(items) if k == "ellipsis"]
    if len(ellipses) > 1 or used > t.rank:
        raise IndexOutOfRange(f"getitem: too many indices for {t}" if used > t.rank else
                              "getitem: an index can only have a single ellipsis")
    at = ellipses[0] if ellipses else len(items)
    items = items[:at] + [("slice", slice(None))] * (t.rank - used) + items[at + 1:]
    advanced = any(k in ("array", "mask") for k, _ in items)
    out: list[Dim] = []
    picks: list[tuple[Dim, ...]] = []
    where: list[int] = []
    insert_at, axis = 0, 0
    for pos, (kind, p) in enumerate(items):
        if kind == "new":
            out.append(1)
            continue
        if kind == "slice":
            out.append(_slice_len(p, t.shape[axis]))
        elif kind == "int":
            _check_int(p, axis, t)
        elif kind == "mask":
            _check_mask(p, axis, t)
        if kind in ("array", "mask") or (kind == "int" and advanced):
            insert_at = len(out) if not where else insert_at
            where.append(pos)
            picks.append((UNKNOWN,) if kind == "mask" else p if kind == "array" else ())
        axis += len(p) if kind == "mask" else 1
    if advanced:
        # NOTE: NumPy puts the broadcast index dims first when advanced indices are not adjacent
        at = insert_at if where == list(range(where[0], where[-1] + 1)) else 0
        out[at:at] = _broadcast_indices(picks, t)
    return Tensor(tuple(out), t.dtype)


def _broadcast_indices(shapes: list[tuple[Dim, ...]], t: Tensor) -> tuple[Dim, ...]:
    try:
        return broadcast_shapes(*shapes)
    except ValueError:
        shown = ", ".join(map(format_dims, shapes))
        raise IndexOutOfRange(f"getitem: index arrays of shapes {shown} "
                              f"do not broadcast (indexing {t})") from None


def _slice_len(s: slice, n: Dim) -> Dim:
    if any(isinstance(b, Dyn) for b in (s.start, s.stop, s.step)):
        return UNKNOWN
    if isinstance(n, int):
        return len(range(n)[s])
    whole = s.stop is None and (s.step in (None, 1) and s.start in (None, 0)
                                or s.step == -1 and s.start is None)
    return n if whole else UNKNOWN  # NOTE: other bounds clamp: not affine in n


def _check_int(i: int | None, axis: int, t: Tensor) -> None:
    n = t.shape[axis]
    if i is not None and isinstance(n, int) and not -n <= i < n:
        raise IndexOutOfRange(f"getitem: index {i} is out of bounds for axis {axis} of {t}")


def _check_mask(shape: tuple[Dim, ...], axis: int, t: Tensor) -> None:
    for j, m in enumerate(shape):
        d = t.shape[axis + j]
        if isinstance(m, int) and isinstance(d, int) and m != d:
            raise IndexOutOfRange(f"getitem: boolean index of shape {format_dims(shape)} does "
                                  "not match"
                                  f" {t} at axis {axis}")


def _index_sequence(x: ListType | TupleType, index: tuple[Any, ...], types: tuple[Type, ...]
                    ) -> Type:
    if len(index) != 1:
        raise TypeError(f"getitem: {x} indices must be integers or slices, not tuples")
    item = index[0]
    if isinstance(item, slice):
        _classify(item, types)
        if isinstance(x, ListType):
            return x
        if any(isinstance(b, Dyn) for b in (item.start, item.stop, item.step)):
            raise TypeError(f"getitem: slicing {x} needs static bounds")
        return TupleType(x.elements[item])
    if _classify(item, types) != ("int", None if isinstance(item, Dyn) else item):
        raise TypeError(f"getitem: {x} indices must be integers or slices")
    if isinstance(x, ListType):
        return x.element
    if isinstance(item, Dyn):
        return join_types(list(x.elements))
    if not -len(x.elements) <= item < len(x.elements):
        raise IndexOutOfRange(f"getitem: tuple index {item} is out of range for {x}")
    return x.elements[item]


def _getitem_infer(x: Type, *idx: Type, index: tuple[Any, ...]) -> Type:
    if isinstance(x, ListType | TupleType):
        return _index_sequence(x, index, idx)
    if not isinstance(x, Tensor):
        raise TypeError(f"getitem: {x} is not subscriptable")
    return _index_tensor(x, _items(index, idx))


def _getitem(x: Any, *idx: Any, index: tuple[Any, ...]) -> Any:
    return x[index_key(index, idx)]


def assign_item(x: Any, key: Any, value: Any) -> Any:
    """`x[key] = value` in place, handing `x` on (the IR threads the written array as a value)."""
    x[key] = value
    return x


def _setitem(x: Any, value: Any, *idx: Any, index: tuple[Any, ...]) -> Any:
    return assign_item(x, index_key(index, idx), value)


def _setitem_infer(x: Type, value: Type, *idx: Type, index: tuple[Any, ...]) -> Type:
    if isinstance(x, ListType):
        if isinstance(_index_sequence(x, index, idx), ListType):
            raise TypeError("setitem: slice assignment to a list is not supported")
        return ListType(join_types([x.element, value]))
    if not isinstance(x, Tensor):
        raise TypeError(f"setitem: {x} does not support item assignment")
    target = _index_tensor(x, _items(index, idx)).shape
    dims = as_tensor("setitem", value).shape
    while len(dims) > len(target) and dims[0] == 1:
        dims = dims[1:]  # NumPy drops leading 1s of the value
    if not broadcasts_to(dims, target):
        raise ValueError(f"setitem: cannot assign {value} to x[{index_text(index)}] of shape "
                         f"{format_dims(target)} ({x})")
    return x


# ---- gradients: an adjoint read at `index` goes back to where it was read (ops/adjoint.py) ----

def _dyn(ad: GradContext, first: int) -> tuple[Any, ...]:
    """The run-time index parts (inputs `first`, ...) as the backward reads them."""
    return tuple(ad.input(k) for k in range(first, len(ad.types)))


def _getitem_grad(ad: GradContext) -> tuple[Any, ...]:
    x = ad.types[0]
    if isinstance(x, TupleType):
        (item,) = ad.attrs["index"]
        if type(item) is not int:
            raise NotImplementedError("the gradient of indexing a tuple by a run-time index")
        return (ad.tuple_part(item, ad.g),)
    return (ad.op("index_add", ad.input(0), ad.g, *_dyn(ad, 1), index=ad.attrs["index"]),)


def _setitem_grad(ad: GradContext) -> tuple[Any, ...]:
    if isinstance(ad.types[0], ListType):
        raise NotImplementedError("the gradient of assigning into a list item")
    rest, index = _dyn(ad, 2), ad.attrs["index"]
    kept = ad.op("index_zero", ad.g, *rest, index=index)
    return kept, ad.op("getitem", ad.g, *rest, index=index)


getitem = OpDef("getitem", ("x", "*idx"), kernel=checked("getitem", _getitem, _getitem_infer),
                infer=_getitem_infer, emit=lambda a: f"x[{index_text(a['index'])}]",
                attrs={"index": REQUIRED}, can_raise=True, grad=_getitem_grad,
                numba=native.index_spelling(setting=False), onnx=ox.getitem, batch=indexed(1))
"""`x[index]`; build `index` and the variadic inputs from a subscript with `split_index`."""
setitem = OpDef("setitem", ("x", "value", "*idx"),
                kernel=checked("setitem", _setitem, _setitem_infer), infer=_setitem_infer,
                emit=lambda a: f"assign_item(x, np.s_[{index_text(a['index'])}], value)",
                attrs={"index": REQUIRED}, helpers=(assign_item,), effects=True, can_raise=True,
                writes=0, same_object=True, grad=_setitem_grad,
                numba=native.index_spelling(setting=True), batch=LOOP_EFFECT)
"""`x[index] = value`, in place; returns `x` itself."""



# ---- gather_nd: x[indices[..., 0], indices[..., 1], ...] -------------------------------------

def gather_nd_kernel(x: np.ndarray, indices: np.ndarray) -> np.ndarray:
    """`x` read at the index tuples along the last axis of `indices` (MindSpore's GatherNd)."""
    indices = np.asarray(indices)
    return x[tuple(np.moveaxis(indices, -1, 0))]


def _gather_nd_infer(x: Type, indices: Type) -> Tensor:
    x = as_tensor("gather_nd", x)
    if not isinstance(indices, Tensor) or indices.dtype.kind not in "iu" or not indices.rank:
        raise TypeError(f"gather_nd: indices must be an integer array of rank >= 1, got "
                        f"{indices}")
    depth = indices.shape[-1]
    if not isinstance(depth, int):
        raise ValueError(f"gather_nd: the last dim of indices must be known while compiling, "
                         f"got {indices}")
    if depth > x.rank:
        raise ValueError(f"gather_nd: indices address {depth} dims of {x}, which has {x.rank}")
    return Tensor(indices.shape[:-1] + x.shape[depth:], x.dtype)


def _gather_nd_grad(ad: GradContext) -> tuple[Any, ...]:
    depth = ad.types[1].shape[-1]
    parts = [ad.op("getitem", ad.input(1), index=(Ellipsis, k)) for k in range(depth)]
    index = tuple(Dyn(k) for k in range(depth))
    return ad.op("index_add", ad.input(0), ad.g, *parts, index=index), None


gather_nd = OpDef("gather_nd", ("x", "indices"),
                  kernel=checked("gather_nd", gather_nd_kernel, _gather_nd_infer),
                  infer=_gather_nd_infer, emit="gather_nd_kernel(x, indices)",
                  helpers=(gather_nd_kernel,), can_raise=True, fresh=True, grad=_gather_nd_grad,
                  batch=gather_nd_batch)


# ---- MindSpore's slicing spellings: constant indexes of getitem ----------------------------

def _ints(op: str, name: str, values: Any) -> tuple[int, ...]:
    if not isinstance(values, tuple | list) or not all(
            isinstance(v, int | np.integer) and not isinstance(v, bool) for v in values):
        raise TypeError(f"{op}: {name} must be a tuple of ints known while compiling, got "
                        f"{values!r}")
    return tuple(int(v) for v in values)


def slice_index(begin: Any, size: Any) -> tuple[slice, ...]:
    """`Slice(x, begin, size)` as a subscript: size -1 runs to the end of its axis."""
    begin, size = _ints("slice", "begin", begin), _ints("slice", "size", size)
    if len(begin) != len(size):
        raise ValueError(f"slice: begin {begin} and size {size} differ in length")
    if any(b < 0 for b in begin) or any(s < -1 for s in size):
        raise ValueError(f"slice: begin must be >= 0 and size >= -1, got {begin}, {size}")
    return tuple(slice(b, None if s == -1 else b + s) for b, s in zip(begin, size))


def strided_slice_index(begin: Any, end: Any, strides: Any, begin_mask: int = 0,
                        end_mask: int = 0, ellipsis_mask: int = 0, new_axis_mask: int = 0,
                        shrink_axis_mask: int = 0) -> tuple[Any, ...]:
    """`StridedSlice(x, begin, end, strides)` as a subscript, mask bit i acting on entry i:
    begin/end mask (that bound left out), ellipsis (`...`), shrink (the
    integer `begin[i]`, dropping the axis). new_axis_mask is refused."""
    begin, end = _ints("strided_slice", "begin", begin), _ints("strided_slice", "end", end)
    strides = _ints("strided_slice", "strides", strides)
    if not len(begin) == len(end) == len(strides):
        raise ValueError(f"strided_slice: begin {begin}, end {end} and strides {strides} "
                         f"differ in length")
    if 0 in strides:
        raise ValueError("strided_slice: strides must not be 0")
    if new_axis_mask:
        raise NotImplementedError("strided_slice: new_axis_mask is not supported; add the axis "
                                  "with ops.expand_dims")
    index: list[Any] = []
    for i, (b, e, s) in enumerate(zip(begin, end, strides)):
        bit = 1 << i
        if ellipsis_mask & bit:
            index.append(Ellipsis)
        elif shrink_axis_mask & bit:
            index.append(b)
        else:
            index.append(slice(None if begin_mask & bit else b, None if end_mask & bit else e,
                               None if s == 1 else s))
    return tuple(index)


def _bind_slice(input_x: Any, begin: Any, size: Any) -> tuple[tuple[Any, ...], dict]:
    return (input_x,), {"index": slice_index(begin, size)}


def _bind_strided_slice(input_x: Any, begin: Any, end: Any, strides: Any, begin_mask: int = 0,
                        end_mask: int = 0, ellipsis_mask: int = 0, new_axis_mask: int = 0,
                        shrink_axis_mask: int = 0) -> tuple[tuple[Any, ...], dict]:
    return (input_x,), {"index": strided_slice_index(begin, end, strides, begin_mask, end_mask,
                                                     ellipsis_mask, new_axis_mask,
                                                     shrink_axis_mask)}


class Slice(Primitive):
    """`ops.Slice()(x, begin, size)`."""
    op = getitem

    def binder(self, input_x: Any, begin: Any, size: Any):
        return _bind_slice(input_x, begin, size)


class StridedSlice(Primitive):
    """`ops.StridedSlice(begin_mask=0, end_mask=0, ellipsis_mask=0, new_axis_mask=0,
    shrink_axis_mask=0)(x, begin, end, strides)`."""
    op = getitem

    def __init__(self, begin_mask: int = 0, end_mask: int = 0, ellipsis_mask: int = 0,
                 new_axis_mask: int = 0, shrink_axis_mask: int = 0) -> None:
        self.masks = (begin_mask, end_mask, ellipsis_mask, new_axis_mask, shrink_axis_mask)

    def binder(self, input_x: Any, begin: Any, end: Any, strides: Any):
        return _bind_strided_slice(input_x, begin, end, strides, *self.masks)


class GatherNd(Primitive):
    """`ops.GatherNd()(x, indices)`."""
    op = gather_nd

    def binder(self, input_x: Any, indices: Any):
        return (input_x, indices), {}


OPS = (getitem, setitem, gather_nd)
FUNCTIONS = (
    OpFunction("slice", getitem, _bind_slice),
    OpFunction("strided_slice", getitem, _bind_strided_slice),
    OpFunction("gather_nd", gather_nd, lambda input_x, indices: ((input_x, indices), {})),
)
PRIMITIVES = (Slice, StridedSlice, GatherNd)

"""Ops that exist for gradients: scattering an indexed adjoint back (`index_add`), zeroing what
an item assignment overwrote (`index_zero`), splitting an adjoint back into the pieces that were
joined (`split_like`, `unstack`), and adjoints of lists (`list_zeros_like`, `list_add`,
`sum_to_items`). They are
ordinary ops, so the backward graph stays ordinary IR; rules in the other families name them."""
from __future__ import annotations

from typing import Any

import numpy as np

from .batch_rules import LOOP_PYTHON, indexed
from .batching import sum_to_batch
from .indexing import _getitem_infer, index_key, index_text
from .opdef import NO_GRAD, REQUIRED, Dyn, GradContext, OpDef
from .shaping import normalize_axis
from .types import UNKNOWN, ListType, Scalar, Tensor, Type


def added_at(like: Any, key: Any, value: Any) -> Any:
    """Zeros shaped like `like` (an array, or a list of arrays) with `value` added at
    `like[key]`; repeated integer-array indices add up, as a gradient must."""
    if isinstance(like, list):
        out = [np.zeros_like(e) for e in like]
        if isinstance(key, slice):
            for i, v in zip(range(len(out))[key], value):
                out[i] = out[i] + v
        else:
            out[key] = out[key] + value
        return out
    out = np.zeros_like(like)
    np.add.at(out, key, value)
    return out


def added_into(items: list, key: Any, value: Any) -> list:
    """A new list holding the items of `items`, with `value` added to the one(s) at `key` (a
    list adjoint taking one item's contribution: no array of zeros is made)."""
    out = list(items)
    if isinstance(key, slice):
        for i, v in zip(range(len(out))[key], value):
            out[i] = out[i] + v
    else:
        out[key] = out[key] + value
    return out


def add_at(out: np.ndarray, key: Any, value: Any) -> np.ndarray:
    """`out[key] += value` in place, repeated integer-array indices adding up; returns `out`."""
    if has_index_array(key):
        np.add.at(out, key, value)
    else:
        out[key] += value  # NOTE: basic indexing or a mask: each element once, much faster
    return out


def has_index_array(key: Any) -> bool:
    """The subscript holds an integer array (whose indices may repeat)."""
    return any(isinstance(k, (list, np.ndarray)) and np.asarray(k).dtype.kind != "b"
               for k in (key if isinstance(key, tuple) else (key,)))


def accumulated_at(acc: np.ndarray, key: Any, value: Any) -> np.ndarray:
    """A copy of `acc` with `value` added at `acc[key]` (`acc + index_add(acc, value, key)`
    without the array of zeros)."""
    return add_at(np.array(acc, copy=True), key, value)


def zeroed_at(x: Any, key: Any) -> Any:
    """A copy of `x` with `x[key]` set to zero."""
    out = np.array(x, copy=True)
    out[key] = 0
    return out


def split_pieces(g: np.ndarray, like: list, axis: int) -> list:
    """`g` cut along `axis` into pieces as long as the arrays of `like` (concat's gradient)."""
    cuts = np.cumsum([x.shape[axis] for x in like[:-1]], dtype=np.int64)
    return np.split(g, cuts, axis=axis)


def zeros_like_items(items: list) -> list:
    """Zero arrays shaped like the arrays of `items`."""
    return [np.zeros_like(x) for x in items]


def add_items(a: list, b: list) -> list:
    """Two lists of arrays added item by item."""
    return [x + y for x, y in zip(a, b)]


def summed_to(g: np.ndarray, shape: tuple[int, ...]) -> np.ndarray:
    """`g` summed over the axes broadcasting added to reach it from `shape`, decided by the
    sizes of this call (a symbolic size may turn out to be 1)."""
    shape = tuple(shape)
    lead = g.ndim - len(shape)
    axes = tuple(range(lead)) + tuple(lead + i for i, d in enumerate(shape)
                                      if d == 1 and g.shape[lead + i] != 1)
    return (g.sum(axis=axes, keepdims=True) if axes else g).reshape(shape)


def summed_to_items(g: Any, items: list) -> list:
    """`g` summed back to the shape of each item of `items`, in the item's dtype (the adjoint
    of the items of `sum(items, start)`: each item was broadcast into the whole sum)."""
    g = np.asarray(g)
    return [float(summed_to(g, ())) if isinstance(x, float)
            else summed_to(g, np.shape(x)).astype(np.result_type(x), copy=False) for x in items]


def _sum_to_infer(g: Type, *like: Type, shape: tuple[Any, ...]) -> Type:
    if not isinstance(g, Tensor) or len(shape) > g.rank:
        raise TypeError(f"sum_to: cannot sum {g} to shape {shape}")
    if UNKNOWN in shape and not (len(like) == 1 and isinstance(like[0], Tensor)
                                 and like[0].rank == len(shape)):
        raise TypeError(f"sum_to: a shape {shape} with run-time sizes needs the array of that "
                        f"shape as its second input")
    return Tensor(tuple(shape), g.dtype)


def _sum_to_kernel(g: np.ndarray, *like: np.ndarray, shape: tuple[Any, ...]) -> np.ndarray:
    return summed_to(g, np.shape(like[0]) if like else shape)


def _sum_to_emit(attrs: Any) -> str:
    return "summed_to(g, like_0.shape)" if UNKNOWN in attrs["shape"] else "summed_to(g, shape)"


def _sum_to_grad(ad: GradContext) -> tuple[Any, ...]:
    t = ad.types[0]
    if t.is_symbolic:
        back = ad.op("broadcast_to", ad.g, shape=t.shape)
    else:
        back = ad.op("broadcast_to", ad.g, ad.op("shape", ad.input(0)), shape=(Dyn(0),))
    return (back,) + (None,) * (len(ad.types) - 1)


def _dyn(ad: GradContext, first: int) -> tuple[Any, ...]:
    return tuple(ad.input(k) for k in range(first, len(ad.types)))


def _index_add_infer(like: Type, value: Type, *idx: Type, index: tuple[Any, ...]) -> Type:
    _getitem_infer(like, *idx, index=index)
    return like


def _index_zero_infer(x: Type, *idx: Type, index: tuple[Any, ...]) -> Type:
    _getitem_infer(x, *idx, index=index)
    return x


def _list_like_infer(*lists: Type) -> Type:
    for t in lists:
        if not isinstance(t, ListType):
            raise TypeError(f"expected a list, got {t}")
    return lists[0]


def _sum_to_items_infer(g: Type, items: Type) -> Type:
    if not (isinstance(g, Tensor | Scalar) and isinstance(items, ListType)):
        raise TypeError(f"sum_to_items: expected an adjoint and a list, got {g} and {items}")
    return items


def _sum_to_items_grad(ad: GradContext) -> tuple[Any, ...]:
    """Each item's adjoint broadcast back over the sum's shape and added up."""
    g = ad.input(0)
    start = ad.op("zeros_like", g) if isinstance(ad.types[0], Tensor) else 0.0
    return ad.op("list_sum", ad.g, start), None


def _split_like_infer(g: Type, like: Type, *, axis: int) -> Type:
    if not (isinstance(g, Tensor) and isinstance(like, ListType)):
        raise TypeError(f"split_like: expected a tensor and a list, got {g} and {like}")
    return like


def _unstack_infer(x: Type, *, axis: int) -> Type:
    if not isinstance(x, Tensor) or x.rank == 0:
        raise TypeError(f"unstack: expected a tensor of rank >= 1, got {x}")
    ax = normalize_axis("unstack", axis, x.rank, x)
    return ListType(Tensor(x.shape[:ax] + x.shape[ax + 1:], x.dtype))


index_add = OpDef(
    "index_add", ("like", "value", "*idx"),
    kernel=lambda like, value, *idx, index: added_at(like, index_key(index, idx), value),
    infer=_index_add_infer,
    emit=lambda a: f"added_at(like, np.s_[{index_text(a['index'])}], value)",
    attrs={"index": REQUIRED}, helpers=(added_at,), fresh=True,
    grad=lambda ad: (None, ad.op("getitem", ad.g, *_dyn(ad, 2), index=ad.attrs["index"])),
    batch=indexed(2))
"""Zeros like `like` plus `value` at `like[index]` (getitem's gradient)."""
index_add_into = OpDef(
    "index_add_into", ("acc", "value", "*idx"),
    kernel=lambda acc, value, *idx, index: accumulated_at(acc, index_key(index, idx), value),
    infer=_index_add_infer,
    emit=lambda a: f"accumulated_at(acc, np.s_[{index_text(a['index'])}], value)",
    inplace=lambda a: f"add_at(out, np.s_[{index_text(a['index'])}], value)",
    attrs={"index": REQUIRED}, helpers=(accumulated_at, add_at, has_index_array), fresh=True,
    grad=lambda ad: (ad.g, ad.op("getitem", ad.g, *_dyn(ad, 2), index=ad.attrs["index"])),
    batch=indexed(2))
"""`acc + index_add(acc, value, index)`: an adjoint taking one indexed part's contribution
(`dx[t] += g` in a reverse loop), in place over `acc` when memory planning allows."""
list_add_at = OpDef(
    "list_add_at", ("items", "value", "*idx"),
    kernel=lambda items, value, *idx, index: added_into(items, index_key(index, idx), value),
    infer=_index_add_infer, emit=lambda a: f"added_into(items, np.s_[{index_text(a['index'])}], "
    "value)", attrs={"index": REQUIRED}, helpers=(added_into,),
    grad=lambda ad: (ad.g, ad.op("getitem", ad.g, *_dyn(ad, 2), index=ad.attrs["index"])),
    batch=LOOP_PYTHON)
"""`items + index_add(items, value, index)` for a list adjoint, without the zeros (not fresh:
the other items are the same arrays)."""
index_zero = OpDef(
    "index_zero", ("x", "*idx"),
    kernel=lambda x, *idx, index: zeroed_at(x, index_key(index, idx)),
    infer=_index_zero_infer, emit=lambda a: f"zeroed_at(x, np.s_[{index_text(a['index'])}])",
    attrs={"index": REQUIRED}, helpers=(zeroed_at,), fresh=True,
    grad=lambda ad: (ad.op("index_zero", ad.g, *_dyn(ad, 1), index=ad.attrs["index"]),),
    batch=indexed(1))
"""A copy of `x` with `x[index]` zeroed (setitem's gradient for the overwritten array)."""
split_like = OpDef(
    "split_like", ("g", "like"), kernel=split_pieces, infer=_split_like_infer,
    emit="split_pieces(g, like, axis)", attrs={"axis": REQUIRED}, helpers=(split_pieces,),
    grad=lambda ad: (ad.op("concat", ad.g, axis=ad.attrs["axis"]), None), batch=LOOP_PYTHON)
"""`g` cut into pieces shaped like the arrays of the list `like` (concat's gradient)."""
unstack = OpDef(
    "unstack", ("x",), kernel=lambda x, axis: list(np.moveaxis(x, axis, 0)),
    infer=_unstack_infer, emit="list(np.moveaxis(x, axis, 0))", attrs={"axis": REQUIRED},
    grad=lambda ad: (ad.op("stack", ad.g, axis=ad.attrs["axis"]),), batch=LOOP_PYTHON)
"""The items of `x` along `axis`, as a list (stack's gradient for a list)."""
list_zeros_like = OpDef(
    "list_zeros_like", ("items",), kernel=zeros_like_items, infer=_list_like_infer,
    emit="zeros_like_items(items)", helpers=(zeros_like_items,), fresh=True, grad=NO_GRAD,
    batch=LOOP_PYTHON)
"""A list of zero arrays shaped like `items` (a list's zero adjoint)."""
list_add = OpDef(
    "list_add", ("a", "b"), kernel=add_items, infer=_list_like_infer, emit="add_items(a, b)",
    helpers=(add_items,), fresh=True, grad=lambda ad: (ad.g, ad.g), batch=LOOP_PYTHON)
"""Two lists of arrays added item by item (adjoints of a list add up like this, not by `+`)."""

sum_to_items = OpDef(
    "sum_to_items", ("g", "items"), kernel=summed_to_items, infer=_sum_to_items_infer,
    emit="summed_to_items(g, items)", helpers=(summed_to_items, summed_to),
    grad=_sum_to_items_grad, batch=LOOP_PYTHON)  # NOTE: not fresh: an item may be a view of `g`
"""`g` summed back to each item of the list `items` (the adjoint of a run-time list's `sum`)."""

list_copy = OpDef(
    "list_copy", ("items",), kernel=list, infer=_list_like_infer, emit="list(items)",
    grad=lambda ad: (ad.g,), batch=LOOP_PYTHON)
"""A new list holding the same items (what a list was before later appends)."""

sum_to = OpDef(
    "sum_to", ("g", "*like"), kernel=_sum_to_kernel, infer=_sum_to_infer, emit=_sum_to_emit,
    attrs={"shape": REQUIRED}, helpers=(summed_to,), grad=_sum_to_grad, batch=sum_to_batch)
"""`g` summed back to `shape` (undoing broadcasting) when only run time can tell which axes
broadcasting stretched: a symbolic size in `shape` may be 1. Where `shape` holds run-time
sizes ("?"), the second input is an array of the target shape, read when the code runs. Not
`fresh`: where nothing was stretched the result is a view of `g`."""

OPS = (index_add, index_add_into, list_add_at, index_zero, split_like, unstack, list_zeros_like,
       list_add, sum_to_items, list_copy, sum_to)

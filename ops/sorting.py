"""Sorting: `topk`, the k largest (or smallest) entries along the last axis with their indices
(MindSpore's `TopK` and `ops.topk`); `sort` and `argsort` along one axis (`np.sort`,
`np.argsort`, `x.argsort()`), with NumPy's own algorithm so ties come out in NumPy's order."""
from __future__ import annotations

from typing import Any

import numpy as np

from .batch_rules import LOOP_PYTHON, along_axis_batch
from .elementwise import as_tensor, checked, np_call, spell
from .shaping import normalize_axis
from .opdef import NO_GRAD, GradContext, OpDef, OpFunction, Primitive
from .types import Tensor, TupleType, Type


def topk_kernel(x: np.ndarray, k: int, largest: bool) -> tuple[np.ndarray, np.ndarray]:
    """(values, int32 indices) of the `k` largest entries along the last axis (smallest when
    not `largest`), best first; among equal values the lower index comes first."""
    x = np.asarray(x)
    if not 0 <= k <= x.shape[-1]:
        raise ValueError(f"topk: k={k} is out of range for a last axis of size {x.shape[-1]}")
    keys = -x.astype(np.float64) if largest else x
    order = np.argsort(keys, axis=-1, kind="stable")[..., :k]
    return np.take_along_axis(x, order, axis=-1), order.astype(np.int32)


def _topk_infer(x: Type, *, k: int, largest: bool) -> TupleType:
    t = as_tensor("topk", x)
    if not t.rank:
        raise ValueError(f"topk: needs an array of rank >= 1, got {t}")
    if type(k) is not int or k < 0:
        raise TypeError(f"topk: k must be a non-negative int known while compiling, got {k!r}")
    n = t.shape[-1]
    if isinstance(n, int) and k > n:
        raise ValueError(f"topk: k={k} is larger than the last axis of {t}")
    shape = t.shape[:-1] + (k,)
    return TupleType((Tensor(shape, t.dtype), Tensor(shape, np.dtype(np.int32))))


def _topk_grad(ad: GradContext) -> tuple[Any, ...]:
    g = ad.gs[0]
    if g is None:
        return (None,)
    x = ad.types[0]
    n = x.shape[-1]
    if not isinstance(n, int):
        raise NotImplementedError("the gradient of topk over an axis of run-time size")
    indices = ad.op("tuple_getitem", ad.out, index=1)
    one, zero = x.dtype.type(1), x.dtype.type(0)
    hot = ad.op("one_hot", indices, one, zero, depth=n)          # [..., k, n]
    return (ad.op("sum", ad.op("expand_dims", g, axis=-1) * hot, axis=-2),)


topk = OpDef("topk", ("x",), kernel=checked("topk", topk_kernel, _topk_infer), infer=_topk_infer,
             emit="topk_kernel(x, k, largest)", attrs={"k": 1, "largest": True},
             helpers=(topk_kernel,), fresh=True, grad=_topk_grad, batch=LOOP_PYTHON)
"""(values, indices) of the k largest along the last axis (MindSpore's TopK, sorted)."""


def _bind_topk(input: Any, k: int, dim: Any = None, largest: bool = True,
               sorted: bool = True) -> tuple[tuple[Any, ...], dict[str, Any]]:
    if dim not in (None, -1):
        raise NotImplementedError(f"topk: only the last axis (dim=None or -1) is supported, got "
                                  f"dim={dim!r}; transpose the axis last")
    return (input,), {"k": k, "largest": bool(largest)}


class TopK(Primitive):
    """`ops.TopK(sorted=True)(x, k)`: (values, int32 indices) along the last axis."""
    op = topk

    def __init__(self, sorted: bool = True) -> None:
        self.sorted = sorted

    def binder(self, input_x: Any, k: int):
        return (input_x,), {"k": k, "largest": True}


SORT_KINDS = (None, "quicksort", "mergesort", "heapsort", "stable")


def _sorted_infer(name: str, index: bool) -> Any:
    def infer(x: Type, *, axis: Any, kind: Any) -> Tensor:
        t = as_tensor(name, x)
        if kind not in SORT_KINDS:
            raise ValueError(f"{name}: kind must be one of {SORT_KINDS[1:]}, got {kind!r}")
        if axis is None or not t.rank:
            raise TypeError(f"{name}: axis=None (a flattened sort) and 0-d arrays are not "
                            "supported; reshape to 1-d first")
        normalize_axis(name, axis, t.rank, t)
        return Tensor(t.shape, np.dtype(np.intp)) if index else t
    return infer


def _sort_grad(ad: GradContext) -> tuple[Any, ...]:
    """Each entry's adjoint goes back to where it came from: the permutation is `argsort` of
    the input with the same algorithm, spread by a one-hot over the axis (moved last)."""
    x = ad.types[0]
    axis = ad.attrs["axis"] % x.rank
    n = x.shape[axis]
    if not isinstance(n, int):
        raise NotImplementedError("the gradient of sort along an axis of run-time size")
    last = [*(a for a in range(x.rank) if a != axis), axis]
    back = tuple(int(i) for i in np.argsort(last))

    def moved(v: Any, perm: Any) -> Any:
        return v if axis == x.rank - 1 else ad.op("transpose", v, perm=tuple(perm))
    order = ad.op("argsort", moved(ad.input(0), last), axis=-1, kind=ad.attrs["kind"])
    one, zero = x.dtype.type(1), x.dtype.type(0)
    hot = ad.op("one_hot", order, one, zero, depth=n)             # [..., n (sorted), n]
    spread = ad.op("sum", ad.op("expand_dims", moved(ad.g, last), axis=-1) * hot, axis=-2)
    return (moved(spread, back),)


sort = OpDef("sort", ("x",), kernel=lambda x, axis, kind: np.sort(x, axis=axis, kind=kind),
             infer=_sorted_infer("sort", False), emit=np_call("np.sort", "x", axis=-1, kind=None),
             attrs={"axis": -1, "kind": None}, fresh=True, grad=_sort_grad, batch=along_axis_batch)
"""`np.sort(x, axis, kind)`: a sorted copy."""
argsort = OpDef("argsort", ("x",), kernel=lambda x, axis, kind: np.argsort(x, axis=axis, kind=kind),
                infer=_sorted_infer("argsort", True),
                emit=np_call("np.argsort", "x", axis=-1, kind=None),
                attrs={"axis": -1, "kind": None}, fresh=True, grad=NO_GRAD, batch=along_axis_batch)
"""`np.argsort(x, axis, kind)`: the indices that sort x (NumPy's intp)."""

OPS = (topk, sort, argsort)
NUMPY = (spell("sort", sort, "a, axis=-1, kind=None", a="x"),
         spell("argsort", argsort, "a, axis=-1, kind=None", a="x"))
METHODS = (spell("argsort", argsort, "x, axis=-1, kind=None"),)
FUNCTIONS = (OpFunction("topk", topk, _bind_topk),)
PRIMITIVES = (TopK,)

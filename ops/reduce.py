"""Reductions over axes: sum, mean, max, min, prod, argmax, argmin, all, any; and the running
sum along one axis, cumsum.

`axis` is canonical NumPy: an int, a tuple (`()` reduces nothing) or None (every axis). MindSpore
spellings, where `()` means every axis, are translated by their binders.
"""
from __future__ import annotations

from typing import Any, Callable

import numpy as np

from . import onnx as ox
from .batch_rules import along_axis_batch
from .elementwise import (as_tensor, checked, dtype_or_none, np_call, on_tensor, primitive,
                          probe, spell)
from . import native
from .batching import reduce_batch
from .opdef import NO_GRAD, GradContext, OpDef, Spelling
from .shaping import normalize_axis, normalize_axes
from .types import Tensor, Type, dim_mul

Grad = Callable[[GradContext], tuple[Any, ...]]


def _reduce_infer(name: str, fn: Callable[..., Any], *, nonempty: bool = False,
                  single_axis: bool = False) -> Callable[..., Tensor]:
    """Shape from the axes; dtype from `fn` on a tiny array (NumPy's own accumulator rules:
    int32 sums to int64, int means to float64). `nonempty`: no identity, so a reduced axis of
    size 0 is an error (max, argmax)."""
    def infer(x: Type, *, axis: Any, keepdims: bool, **attrs: Any) -> Tensor:
        t = as_tensor(name, x)
        if single_axis and not (axis is None or type(axis) is int):
            raise TypeError(f"{name}: axis must be an int or None, got {axis!r}")
        axes = normalize_axes(name, axis, t)
        if nonempty and any(t.shape[a] == 0 for a in axes):
            raise ValueError(f"{name}: cannot reduce a zero-size axis of {t}")
        if keepdims:
            shape = tuple(1 if i in axes else d for i, d in enumerate(t.shape))
        else:
            shape = tuple(d for i, d in enumerate(t.shape) if i not in axes)
        out = probe(name, fn, (t,), {"axis": axis, "keepdims": keepdims, **attrs})
        return Tensor(shape, np.result_type(out))
    return infer


def _reduction(name: str, fn: Callable[..., Any], emit: Any, method: Any, *,
               dtype: bool = False, grad: Grad = NO_GRAD, onnx: Any = None,
               rows: bool = False, truth: bool = False, **kw: bool) -> OpDef:
    """`method`: the emit rule as an ndarray method, used on tensors (`x.sum()` skips the
    Python-level dispatch of `np.sum`, half its cost on small arrays). `rows`: see `_sum_rows`;
    `truth`: see `_one_truth`."""
    infer = _reduce_infer(name, fn, **kw)
    attrs = {"axis": None, "keepdims": False, **({"dtype": None} if dtype else {})}
    specialize = _sum_rows(method) if rows else _one_truth(method) if truth else \
        on_tensor(method)
    return OpDef(name, ("x",), kernel=checked(name, fn, infer), infer=infer, emit=emit,
                 attrs=attrs, fresh=True, specialize=specialize, grad=grad,
                 numba=native.reduction_spelling(name), onnx=onnx,
                 batch=along_axis_batch if kw.get("single_axis") else reduce_batch)


def _np_reduce(func: str, grad: Grad = NO_GRAD, onnx: Any = None, **kw: Any) -> OpDef:
    fn = getattr(np, func)
    defaults = {"axis": None, "keepdims": False, **({"dtype": None} if kw.get("dtype") else {})}
    return _reduction(func, fn, np_call(f"np.{func}", "x", **defaults),
                      np_call(f"x.{func}", "", **defaults), grad=grad, onnx=onnx, **kw)


GEMV_MIN_ROWS, GEMV_MAX_COLUMNS = 1024, 256
"""A float sum over every axis but a last one of at most this many columns, over at least
this many rows, is spelled as a vector-matrix product."""


def _sum_rows(method: Callable[[Any], str]) -> Callable[..., Spelling | None]:
    """`x.sum(...)`; a float sum over all axes but a short last one (a bias gradient over NHWC
    images: `sum(axis=(0, 1, 2))`) as `ones @ x.reshape(rows, c)`: NumPy's reduction runs its
    inner loop along the kept axis, 16 floats a call at 16 channels, and took 10x as long
    as BLAS's matrix-vector product on [32768, 16] floats (which also rounds less)."""
    plain = on_tensor(method)

    def specialize(types: tuple[Type, ...], attrs: Any) -> Spelling | None:
        x = types[0]
        if not (isinstance(x, Tensor) and x.rank >= 2 and x.is_symbolic and
                x.dtype in _GEMV_DTYPES) or \
                attrs["keepdims"] or attrs["dtype"] is not None:
            return plain(types, attrs)
        rows, c = dim_mul(*x.shape[:-1]), x.shape[-1]
        if normalize_axes("sum", attrs["axis"], x) != tuple(range(x.rank - 1)) or \
                type(c) is not int or c > GEMV_MAX_COLUMNS or \
                type(rows) is int and rows < GEMV_MIN_ROWS:
            return plain(types, attrs)
        return Spelling("np.ones(rows, dtype) @ x.reshape(rows, c)",
                        {"rows": rows, "c": c, "dtype": x.dtype})
    return specialize


_GEMV_DTYPES = (np.dtype(np.float32), np.dtype(np.float64))


def _one_truth(method: Callable[[Any], str]) -> Callable[..., Spelling | None]:
    """all/any of one bool (a rank-0 bool tensor, over every axis, no kept axes) as
    `np.bool_(x)`: the very value `x.all()` returns, without its trip through a 0-d array and
    NumPy's Python-level `_all` (a train step's finite-loss check: 30 us of 55, cold)."""
    plain = on_tensor(method)

    def specialize(types: tuple[Type, ...], attrs: Any) -> Spelling | None:
        x = types[0]
        if isinstance(x, Tensor) and x.rank == 0 and x.dtype == np.bool_ and \
                attrs["axis"] is None and not attrs["keepdims"]:
            return Spelling("np.bool_(x)", {})
        return plain(types, attrs)
    return specialize


# ---- gradient rules: a reduced adjoint spreads back over the reduced axes ------------------

def _axes(ad: GradContext) -> tuple[int, ...]:
    return normalize_axes("reduce", ad.attrs["axis"], as_tensor("reduce", ad.types[0]))


def _kept(ad: GradContext, reduced: Any) -> Any:
    """`reduced` (a result or its adjoint) with the reduced axes back as size 1."""
    axes = _axes(ad)
    if ad.attrs["keepdims"] or not axes:
        return reduced
    return ad.op("expand_dims", reduced, axis=axes)


def _spread(ad: GradContext, reduced: Any) -> Any:
    """`reduced` broadcast back to the input's shape."""
    kept, t = _kept(ad, reduced), ad.types[0]
    if isinstance(t, Tensor) and t.is_symbolic:
        return ad.op("broadcast_to", kept, shape=t.shape)
    return kept * ad.op("ones_like", ad.input(0))


def _count(ad: GradContext) -> Any:
    """How many elements each result element reduces."""
    t = as_tensor("mean", ad.types[0])
    dims = [t.shape[a] for a in _axes(ad)]
    if all(type(d) is int for d in dims):
        return int(np.prod(dims, dtype=np.int64))
    return ad.op("size", ad.input(0)) / ad.op("size", ad.out)


def _extreme_grad(ad: GradContext) -> tuple[Any, ...]:
    """max/min: the adjoint goes to the extreme elements, shared equally between ties."""
    x = ad.input(0)
    hit = ad.op("cast", x == _kept(ad, ad.out), dtype=as_tensor("reduce", ad.types[0]).dtype)
    share = hit / ad.op("sum", hit, axis=_axes(ad) or None, keepdims=True)
    return share * _kept(ad, ad.g),


SUM_GRAD: Grad = lambda ad: (_spread(ad, ad.g),)
MEAN_GRAD: Grad = lambda ad: (_spread(ad, ad.g / _count(ad)),)
PROD_GRAD: Grad = lambda ad: (_spread(ad, ad.g * ad.out) / ad.input(0),)


def _arg(fn: Callable[..., Any]) -> Callable[..., Any]:
    def kernel(x: Any, *, axis: int | None, keepdims: bool, dtype: np.dtype | None) -> Any:
        out = fn(x, axis=axis, keepdims=keepdims)
        return out if dtype is None else out.astype(dtype)
    return kernel


def _arg_emit(func: str, args: str = "x") -> Callable[[dict[str, Any]], str]:
    call = np_call(func, args, axis=None, keepdims=False)
    return lambda a: call(a) + ("" if a["dtype"] is None else ".astype(dtype)")


sum_ = _np_reduce("sum", dtype=True, grad=SUM_GRAD, onnx=ox.reduce("ReduceSum", axes_input=True),
                  rows=True)
mean = _np_reduce("mean", dtype=True, grad=MEAN_GRAD, onnx=ox.reduce("ReduceMean"))
prod = _np_reduce("prod", dtype=True, grad=PROD_GRAD, onnx=ox.reduce("ReduceProd"))
"""prod's gradient divides by the input: exact wherever no element is zero."""
reduce_max = _reduction("reduce_max", np.max, np_call("np.max", "x", axis=None, keepdims=False),
                        np_call("x.max", "", axis=None, keepdims=False), nonempty=True,
                        grad=_extreme_grad, onnx=ox.reduce("ReduceMax"))
reduce_min = _reduction("reduce_min", np.min, np_call("np.min", "x", axis=None, keepdims=False),
                        np_call("x.min", "", axis=None, keepdims=False), nonempty=True,
                        grad=_extreme_grad, onnx=ox.reduce("ReduceMin"))
"""Named `reduce_max`/`reduce_min`: `max`/`min` are Python's builtins (ops/python.py)."""
argmax = _reduction("argmax", _arg(np.argmax), _arg_emit("np.argmax"), _arg_emit("x.argmax", ""),
                    dtype=True, nonempty=True, single_axis=True, onnx=ox.arg_reduce("ArgMax"))
argmin = _reduction("argmin", _arg(np.argmin), _arg_emit("np.argmin"), _arg_emit("x.argmin", ""),
                    dtype=True, nonempty=True, single_axis=True, onnx=ox.arg_reduce("ArgMin"))
"""Index dtype: NumPy's intp unless `dtype` (MindSpore's `Argmax` primitive gives int32)."""
all_ = _np_reduce("all", onnx=ox.all_any("ReduceMin"), truth=True)
any_ = _np_reduce("any", onnx=ox.all_any("ReduceMax"), truth=True)


# ---- spellings --------------------------------------------------------------------------------

def _np_axis(values: dict[str, Any]) -> dict[str, Any]:
    if values.pop("out", None) is not None:
        raise TypeError("out= is not supported; use the result")
    return dtype_or_none(values) if "dtype" in values else values


def _ms_axis(values: dict[str, Any]) -> dict[str, Any]:
    """MindSpore: `()` (or an empty list) reduces every axis; lists are tuples."""
    axis = values["axis"]
    axis = tuple(axis) if isinstance(axis, list) else axis
    values["axis"] = None if axis == () else axis
    return dtype_or_none(values) if "dtype" in values else values


def _int32_default(values: dict[str, Any]) -> dict[str, Any]:
    values["dtype"] = np.dtype(np.int32 if values["dtype"] is None else values["dtype"])
    return values


def _int32_indices(values: dict[str, Any]) -> dict[str, Any]:
    """MindSpore 2.10's `ops.argmin` gives int32 indices (its `ops.argmax` int64, as NumPy)."""
    return {**values, "dtype": np.dtype(np.int32)}


_REDUCTIONS = (  # op, MindSpore reduce_* name, primitive, functional name(s) and signature
    (sum_, "reduce_sum", "ReduceSum", ("sum",), "input, dim=None, keepdim=False, *, dtype=None"),
    (mean, "reduce_mean", "ReduceMean", ("mean",), "input, axis=None, keep_dims=False"),
    (prod, "reduce_prod", "ReduceProd", ("prod",), "input, axis=None, keep_dims=False"),
    (reduce_max, "reduce_max", "ReduceMax", ("amax",), "input, axis=None, keepdims=False"),
    (reduce_min, "reduce_min", "ReduceMin", ("amin",), "input, axis=None, keepdims=False"),
    (all_, "reduce_all", "ReduceAll", ("all",), "input, axis=None, keep_dims=False"),
    (any_, "reduce_any", "ReduceAny", ("any",), "input, axis=None, keep_dims=False"),
)
_KEEP = {"keep_dims": "keepdims", "keepdim": "keepdims", "dim": "axis", "input": "x"}
_NUMPY = (  # op, NumPy names, NumPy signature after the array
    (sum_, ("sum",), "axis=None, dtype=None, out=None, keepdims=False"),
    (mean, ("mean",), "axis=None, dtype=None, out=None, keepdims=False"),
    (prod, ("prod",), "axis=None, dtype=None, out=None, keepdims=False"),
    (reduce_max, ("max", "amax"), "axis=None, out=None, keepdims=False"),
    (reduce_min, ("min", "amin"), "axis=None, out=None, keepdims=False"),
    (argmax, ("argmax",), "axis=None, out=None, *, keepdims=False"),
    (argmin, ("argmin",), "axis=None, out=None, *, keepdims=False"),
    (all_, ("all",), "axis=None, out=None, keepdims=False"),
    (any_, ("any",), "axis=None, out=None, keepdims=False"),
)

def _cumsum_infer(x: Type, *, axis: Any) -> Tensor:
    """x's shape (flattened for axis=None); NumPy's accumulator dtype (bools and ints narrower
    than the platform int sum as it)."""
    t = as_tensor("cumsum", x)
    dtype = np.cumsum(np.zeros(1, t.dtype)).dtype
    if axis is None:
        return Tensor((dim_mul(*t.shape),), dtype)
    normalize_axis("cumsum", axis, max(t.rank, 1), t)  # NOTE: a 0-d array is summed as (1,)
    return Tensor(t.shape or (1,), dtype)


def _cumsum_grad(ad: GradContext) -> tuple[Any, ...]:
    """The running sum from the other end: each entry feeds every later partial sum."""
    x, axis = ad.types[0], ad.attrs["axis"]
    along = 0 if axis is None else axis
    flipped = ad.op("flip", ad.g, axis=along)
    back = ad.op("flip", ad.op("cumsum", flipped, axis=along), axis=along)
    if axis is None or not x.rank:  # NOTE: the result was flattened (a 0-d input: to (1,))
        if not all(isinstance(d, int) for d in x.shape):
            raise NotImplementedError("the gradient of a flattened cumsum of run-time shape")
        back = ad.op("reshape", back, shape=tuple(x.shape))
    return (back,)


cumsum = OpDef("cumsum", ("x",), kernel=checked("cumsum", lambda x, axis: np.cumsum(x, axis),
                                                _cumsum_infer),
               infer=_cumsum_infer, emit=np_call("np.cumsum", "x", axis=None),
               attrs={"axis": None}, fresh=True, grad=_cumsum_grad, onnx=ox.cumsum,
               batch=along_axis_batch)
"""`np.cumsum(x, axis)`: the running sum (of the flattened array for axis=None)."""

OPS = (sum_, mean, prod, reduce_max, reduce_min, argmax, argmin, all_, any_, cumsum)

FUNCTIONS = (
    *(spell(name, op, "x, axis=(), keep_dims=False", _ms_axis, keep_dims="keepdims")
      for op, name, _, _, _ in _REDUCTIONS),
    *(spell(name, op, params, _ms_axis, **_KEEP)
      for op, _, _, names, params in _REDUCTIONS for name in names),
    spell("argmax", argmax, "input, dim=None, keepdim=False", **_KEEP),
    spell("argmin", argmin, "input, axis=None, keepdims=False", _int32_indices, **_KEEP),
    spell("cumsum", cumsum, "input, axis", input="x"),
)
NUMPY = (*(spell(name, op, f"a, {params}", _np_axis, a="x")
           for op, names, params in _NUMPY for name in names),
         spell("cumsum", cumsum, "a, axis=None", a="x"))
def _method_axis(values: dict[str, Any]) -> dict[str, Any]:
    """An array method: NumPy's arguments, or MindSpore's Tensor keyword `keep_dims`."""
    keep_dims = values.pop("keep_dims")
    if keep_dims is not None:
        values["keepdims"] = keep_dims
    return _np_axis(values)


METHODS = (*(spell(name, op, f"x, {params}{'' if '*' in params else ', *'}, keep_dims=None",
                   _method_axis)
             for op, names, params in _NUMPY for name in names[:1]),
           spell("cumsum", cumsum, "x, axis=None"))
PRIMITIVES = (
    *(primitive(p, op, "keep_dims=False", "x, axis=()", _ms_axis, keep_dims="keepdims")
      for op, _, p, _, _ in _REDUCTIONS),
    primitive("Argmax", argmax, "axis=-1, output_type=None", "x", _int32_default,
              output_type="dtype"),
    primitive("Argmin", argmin, "axis=-1, output_type=None", "x", _int32_default,
              output_type="dtype"),
)

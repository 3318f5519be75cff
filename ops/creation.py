"""Creation ops: zeros, ones, full, their `*_like` forms, arange, eye and one_hot.

NumPy spellings keep NumPy's default dtypes (float64); MindSpore spellings default to float32
where MindSpore does. Shapes may hold run-time dims (`Dyn`, see `shape.split_shape`).
"""
from __future__ import annotations

import math
from typing import Any, Callable

import numpy as np

from . import onnx as ox
from . import native
from .batch_rules import LOOP_INPUTLESS, LOOP_SHAPE, along_axis_batch, whole_batch
from .batching import broadcast_batch
from .elementwise import as_tensor, checked, dtype_or_none, np_call, primitive, probe, spell
from .opdef import NO_GRAD, REQUIRED, Dyn, GradContext, OpDef
from .shaping import (broadcasts_to, normalize_axis, resolve_shape, route_shape, shape_dims,
                    shape_text)
from .symbolic import Sym
from .types import UNKNOWN, Dim, Scalar, Tensor, Type

FLOAT64 = np.dtype(np.float64)
FLOAT32 = np.dtype(np.float32)


def _target(name: str, shape: tuple, dims: tuple[Type, ...]) -> tuple[Dim, ...]:
    target = shape_dims(name, shape, dims)
    if any(isinstance(d, int) and d < 0 for d in target):
        raise ValueError(f"{name}: negative dimensions in shape {target}")
    return target


def _fits(name: str, fill: Type, target: tuple[Dim, ...]) -> Tensor:
    """The fill value as a tensor; ValueError unless it broadcasts to `target`."""
    t = as_tensor(name, fill)
    if not broadcasts_to(t.shape, target):
        raise ValueError(f"{name}: fill value {t} does not broadcast to shape {target}")
    return t


def _dtype_kw(default: np.dtype | None) -> Callable[[dict[str, Any]], str]:
    # NOTE: `np.dtype("float64") == None` holds, so None is compared by identity
    def text(a: dict[str, Any]) -> str:
        same = a["dtype"] is None if default is None else a["dtype"] == default
        return "" if same else ", dtype=dtype"
    return text


# ---- zeros, ones, full ------------------------------------------------------------------------

def _constant(name: str, fn: Callable[..., Any]) -> OpDef:
    def kernel(*dims: Any, shape: tuple, dtype: np.dtype) -> Any:
        return fn(resolve_shape(shape, dims), dtype)

    def infer(*dims: Type, shape: tuple, dtype: np.dtype) -> Tensor:
        return Tensor(_target(name, shape, dims), dtype)

    def emit(a: dict[str, Any]) -> str:
        return f"np.{name}({shape_text(a['shape'], 'dims')}{_dtype_kw(FLOAT64)(a)})"
    return OpDef(name, ("*dims",), kernel=checked(name, kernel, infer), infer=infer, emit=emit,
                 attrs={"shape": REQUIRED, "dtype": FLOAT64}, fresh=True, grad=NO_GRAD,
                 numba=native.filled_spelling(name), onnx=ox.filled(float(fn((), np.int64))),
                 batch=LOOP_SHAPE)


def _full(fill_value: Any, *dims: Any, shape: tuple, dtype: np.dtype | None) -> Any:
    return np.full(resolve_shape(shape, dims), fill_value, dtype)


def _full_infer(fill_value: Type, *dims: Type, shape: tuple, dtype: np.dtype | None) -> Tensor:
    target = _target("full", shape, dims)
    fill = _fits("full", fill_value, target)
    return Tensor(target, fill.dtype if dtype is None else dtype)


def _like_infer(name: str) -> Callable[..., Tensor]:
    def infer(x: Type, *fill: Type, dtype: np.dtype | None) -> Tensor:
        t = as_tensor(name, x)
        if fill:
            _fits(name, fill[0], t.shape)
        return Tensor(t.shape, t.dtype if dtype is None else dtype)
    return infer


def _like(name: str, fn: Callable[..., Any], inputs: tuple[str, ...]) -> OpDef:
    """`x`'s values never matter, only its shape; a fill value's adjoint is the sum of the
    result's."""
    infer = _like_infer(name)
    return OpDef(name, inputs, kernel=checked(name, lambda *a, dtype: fn(*a, dtype=dtype), infer),
                 infer=infer, emit=np_call(f"np.{name}", ", ".join(inputs), dtype=None),
                 attrs={"dtype": None}, fresh=True,
                 grad=(lambda ad: (None, ad.g)) if len(inputs) == 2 else NO_GRAD,
                 batch=broadcast_batch if len(inputs) == 1 else whole_batch,
                 numba=native.filled_spelling(name),
                 onnx=ox.filled_like(None if len(inputs) == 2 else float(fn(np.zeros(())))))


# ---- arange, eye, one_hot ---------------------------------------------------------------------

def _bound(v: Any, dyn: tuple[Any, ...]) -> Any:
    return dyn[v.k] if isinstance(v, Dyn) else v


def _arange(*bounds: Any, start: Any, stop: Any, step: Any, dtype: np.dtype | None) -> Any:
    return np.arange(_bound(start, bounds), _bound(stop, bounds), _bound(step, bounds),
                     dtype=dtype)


def _arange_emit(a: dict[str, Any]) -> str:
    def text(v: Any) -> str:
        return f"bounds_{v.k}" if isinstance(v, Dyn) else repr(v)
    start, stop, step = a["start"], a["stop"], a["step"]
    args = [text(stop)] if start == 0 and type(start) is int else [text(start), text(stop)]
    if not (step == 1 and type(step) is int):
        args = [text(start), text(stop), text(step)]
    return f"np.arange({', '.join(args)}{_dtype_kw(None)(a)})"


def _arange_infer(*bounds: Type, start: Any, stop: Any, step: Any, dtype: np.dtype | None
                  ) -> Tensor:
    values = (start, stop, step)
    types = tuple(bounds[v.k] if isinstance(v, Dyn) else Scalar(type(v)) for v in values)
    for t in types:
        if not (isinstance(t, Scalar) or (isinstance(t, Tensor) and t.rank == 0)):
            raise TypeError(f"arange: bounds must be numbers, got {t}")
    if step == 0:
        raise ValueError("arange: step cannot be zero")
    out = probe("arange", lambda *s: np.arange(*s, dtype=dtype), types, {})
    if any(isinstance(v, Dyn) for v in values):
        return Tensor((UNKNOWN,), out.dtype)
    if all(type(v) is int for v in values):
        return Tensor((len(range(start, stop, step)),), out.dtype)
    return Tensor((max(0, math.ceil((stop - start) / step)),), out.dtype)


def _eye_infer(*, n: int, m: int | None, k: int, dtype: np.dtype) -> Tensor:
    for v in (n, k) + (() if m is None else (m,)):
        if type(v) is not int:
            raise TypeError(f"eye: n, m and k must be ints, got {v!r}")
    if n < 0 or (m is not None and m < 0):
        raise ValueError(f"eye: negative size ({n}, {m})")
    return Tensor((n, n if m is None else m), dtype)


def _eye_emit(a: dict[str, Any]) -> str:
    extra = ("" if a["m"] is None else ", m") + ("" if a["k"] == 0 else ", k=k")
    return f"np.eye(n{extra}{_dtype_kw(FLOAT64)(a)})"


def one_hot_encode(indices: Any, on_value: Any, off_value: Any, depth: int, axis: int) -> Any:
    """One-hot vectors of length `depth` along `axis`; the dtype is `on_value`'s."""
    indices = np.asarray(indices)
    if indices.dtype.kind not in "iu":
        raise TypeError(f"one_hot: indices must be integers, got {indices.dtype}")
    if not -indices.ndim - 1 <= axis <= indices.ndim:
        raise ValueError(f"one_hot: axis {axis} is out of range for indices of shape "
                         f"{indices.shape}")
    axis = axis % (indices.ndim + 1)
    classes = np.arange(depth).reshape((depth,) + (1,) * (indices.ndim - axis))
    hot = np.expand_dims(indices, axis) == classes
    return np.where(hot, on_value, off_value).astype(np.asarray(on_value).dtype)


def _one_hot_infer(indices: Type, on_value: Type, off_value: Type, *, depth: int, axis: int
                   ) -> Tensor:
    t = as_tensor("one_hot", indices)
    if t.dtype.kind not in "iu":
        raise TypeError(f"one_hot: indices must be integers, got {t}")
    if not (type(depth) is int and depth >= 0 or isinstance(depth, Sym)):
        raise ValueError(f"one_hot: depth must be a non-negative int, got {depth!r}")
    on, off = as_tensor("one_hot", on_value), as_tensor("one_hot", off_value)
    if on.rank or off.rank:
        raise ValueError(f"one_hot: on_value and off_value must be scalars, got {on}, {off}")
    at = normalize_axis("one_hot", axis, t.rank + 1, t)
    return Tensor(t.shape[:at] + (depth,) + t.shape[at:], on.dtype)


zeros = _constant("zeros", np.zeros)
ones = _constant("ones", np.ones)
full = OpDef("full", ("fill_value", "*dims"), kernel=checked("full", _full, _full_infer),
             infer=_full_infer, attrs={"shape": REQUIRED, "dtype": None}, fresh=True,
             emit=lambda a: f"np.full({shape_text(a['shape'], 'dims')}, fill_value"
                            f"{_dtype_kw(None)(a)})", grad=lambda ad: (ad.g,),
             numba=native.filled_spelling("full"), onnx=ox.full, batch=LOOP_SHAPE)
zeros_like = _like("zeros_like", np.zeros_like, ("x",))
ones_like = _like("ones_like", np.ones_like, ("x",))
full_like = _like("full_like", np.full_like, ("x", "fill_value"))
arange = OpDef("arange", ("*bounds",), kernel=checked("arange", _arange, _arange_infer),
               infer=_arange_infer, emit=_arange_emit,
               attrs={"start": 0, "stop": REQUIRED, "step": 1, "dtype": None}, fresh=True,
               grad=NO_GRAD, batch=LOOP_SHAPE)
"""`start`, `stop`, `step` are numbers, or `Dyn` for run-time bounds (then the length is "?")."""
eye = OpDef("eye", (), kernel=checked("eye", lambda n, m, k, dtype: np.eye(n, m, k, dtype),
                                      _eye_infer),
            infer=_eye_infer, emit=_eye_emit,
            attrs={"n": REQUIRED, "m": None, "k": 0, "dtype": FLOAT64}, fresh=True,
            grad=NO_GRAD, batch=LOOP_INPUTLESS)
def _one_hot_grad(ad: GradContext) -> tuple[Any, ...]:
    """The on value's adjoint sums the adjoint where it was written; the off value's the rest."""
    hot = ad.op("one_hot", ad.input(0), 1.0, 0.0, depth=ad.attrs["depth"], axis=ad.attrs["axis"])
    on = ad.op("sum", ad.g * hot)
    return None, on, ad.op("sum", ad.g) - on


one_hot = OpDef("one_hot", ("indices", "on_value", "off_value"),
                kernel=checked("one_hot", one_hot_encode, _one_hot_infer),
                infer=_one_hot_infer,
                emit="one_hot_encode(indices, on_value, off_value, depth, axis)",
                attrs={"depth": REQUIRED, "axis": -1}, helpers=(one_hot_encode,), fresh=True,
                grad=_one_hot_grad, batch=along_axis_batch)


# ---- spellings --------------------------------------------------------------------------------

def _np_dtype(values: dict[str, Any]) -> dict[str, Any]:
    return route_shape(dtype_or_none(values)) if "shape" in values else dtype_or_none(values)


def _ms_float32(values: dict[str, Any]) -> dict[str, Any]:
    values["dtype"] = FLOAT32 if values["dtype"] is None else values["dtype"]
    return _np_dtype(values)


def _ms_full(values: dict[str, Any]) -> dict[str, Any]:
    # MindSpore makes a Python float fill float32, where NumPy makes it float64
    if values["dtype"] is None and type(values["fill_value"]) is float:
        values["dtype"] = FLOAT32
    return _np_dtype(values)


def _bounds(values: dict[str, Any], start: Any, stop: Any, step: Any) -> dict[str, Any]:
    dyn: list[Any] = []
    for key, v in (("start", start), ("stop", stop), ("step", step)):
        if type(v) not in (int, float):
            dyn.append(v)
            v = Dyn(len(dyn) - 1)
        values[key] = v
    values["bounds"] = tuple(dyn)
    return dtype_or_none(values)


def _np_arange(values: dict[str, Any]) -> dict[str, Any]:
    args = values.pop("args")
    if not 1 <= len(args) <= 3:
        raise TypeError(f"arange: expected 1 to 3 bounds, got {len(args)}")
    start, stop, step = (0, args[0], 1) if len(args) == 1 else (*args, 1)[:3]
    return _bounds(values, start, stop, step)


def _ms_arange(values: dict[str, Any]) -> dict[str, Any]:
    start, end, step = values.pop("start"), values.pop("end"), values.pop("step")
    start, end = (0, start) if end is None else (start, end)
    if values["dtype"] is None and float in {type(start), type(end), type(step)}:
        values["dtype"] = FLOAT32  # MindSpore: float bounds make float32
    return _bounds(values, start, end, step)


def _mnp_arange(values: dict[str, Any]) -> dict[str, Any]:
    start, stop, step = values.pop("start"), values.pop("stop"), values.pop("step")
    start, stop = (0, start) if stop is None else (start, stop)
    step = 1 if step is None else step
    if values["dtype"] is None and all(type(v) is int for v in (start, stop, step)):
        values["dtype"] = np.dtype(np.int32)  # mindspore.numpy: int bounds make int32
    values["start"], values["end"], values["step"] = start, stop, step
    return _ms_arange(values)


def _ms_hot_values(values: dict[str, Any]) -> dict[str, Any]:
    """MindSpore makes Python float on/off values float32 (NumPy would make float64)."""
    for key in ("on_value", "off_value"):
        if type(values[key]) is float:
            values[key] = np.float32(values[key])
    return values


def _copy_infer(x: Type) -> Type:
    if not isinstance(x, Tensor):
        raise TypeError(f"copy: expected an array, got {x}")
    return x


copy = OpDef("copy", ("x",), kernel=lambda x: x.copy(), infer=_copy_infer, emit="x.copy()",
             fresh=True, grad=lambda ad: (ad.g,), numba=native.copy_spelling, onnx=ox.identity,
             batch=whole_batch)
"""A copy of an array (`x.copy()`: a NumPy scalar stays a scalar)."""


def _array_infer(x: Type, *, dtype: np.dtype | None) -> Tensor:
    t = as_tensor("array", x)
    return Tensor(t.shape, t.dtype if dtype is None else dtype)


def _array_grad(ad: GradContext) -> tuple[Any, ...]:
    x = ad.types[0]
    if isinstance(x, Tensor) and x.dtype != ad.out_type.dtype:
        return (ad.op("cast", ad.g, dtype=x.dtype),)
    return (ad.g,)


array = OpDef("array", ("x",), kernel=lambda x, dtype: np.array(x, dtype=dtype),
              infer=_array_infer, emit=np_call("np.array", "x", dtype=None),
              attrs={"dtype": None}, fresh=True, grad=_array_grad, onnx=ox.as_array,
              batch=whole_batch)
"""`np.array(x, dtype)`: a new array (0-d for a number or a NumPy scalar)."""
asarray = OpDef("asarray", ("x",), kernel=lambda x, dtype: np.asarray(x, dtype=dtype),
                infer=_array_infer, emit=np_call("np.asarray", "x", dtype=None),
                attrs={"dtype": None}, grad=_array_grad, onnx=ox.as_array, batch=whole_batch)
"""`np.asarray(x, dtype)`: `x` itself when it is an array of that dtype, else a new array."""

OPS = (zeros, ones, full, zeros_like, ones_like, full_like, arange, eye, one_hot, copy, array,
       asarray)
METHODS = (spell("copy", copy, "x"),)

FUNCTIONS = (
    spell("zeros", zeros, "size, dtype=None", _ms_float32, size="shape"),
    spell("ones", ones, "size, dtype=None", _ms_float32, size="shape"),
    spell("full", full, "size, fill_value, *, dtype=None", _ms_full, size="shape"),
    spell("zeros_like", zeros_like, "input, *, dtype=None", dtype_or_none, input="x"),
    spell("ones_like", ones_like, "input, *, dtype=None", dtype_or_none, input="x"),
    spell("full_like", full_like, "input, fill_value, *, dtype=None", dtype_or_none, input="x"),
    spell("arange", arange, "start=0, end=None, step=1, *, dtype=None", _ms_arange),
    spell("eye", eye, "n, m=None, dtype=None", _ms_float32),
    spell("one_hot", one_hot, "indices, depth, on_value=1, off_value=0, axis=-1",
          _ms_hot_values),
)
NUMPY = (
    spell("zeros", zeros, "shape, dtype=float", _np_dtype),
    spell("ones", ones, "shape, dtype=float", _np_dtype),
    spell("full", full, "shape, fill_value, dtype=None", _np_dtype),
    spell("zeros_like", zeros_like, "a, dtype=None", dtype_or_none, a="x"),
    spell("ones_like", ones_like, "a, dtype=None", dtype_or_none, a="x"),
    spell("full_like", full_like, "a, fill_value, dtype=None", dtype_or_none, a="x"),
    spell("arange", arange, "*args, dtype=None", _np_arange),
    spell("eye", eye, "N, M=None, k=0, dtype=float", dtype_or_none, N="n", M="m"),
)
MNP = (
    spell("zeros", zeros, "shape, dtype=np.float32", _np_dtype),
    spell("ones", ones, "shape, dtype=np.float32", _np_dtype),
    spell("full", full, "shape, fill_value, dtype=None", _ms_full),
    spell("arange", arange, "start, stop=None, step=None, dtype=None", _mnp_arange),
    spell("eye", eye, "N, M=None, k=0, dtype=np.float32", dtype_or_none, N="n", M="m"),
    spell("zeros_like", zeros_like, "a, dtype=None", dtype_or_none, a="x"),
    spell("ones_like", ones_like, "a, dtype=None", dtype_or_none, a="x"),
    spell("full_like", full_like, "a, fill_value, dtype=None", dtype_or_none, a="x"),
)
"""`mindspore.numpy` (`amber.numpy`) creation functions: NumPy's signatures with MindSpore's
float32 defaults; its other functions are the NumPy spellings."""
PRIMITIVES = (
    primitive("Zeros", zeros, call="size, type", fix=_ms_float32, size="shape", type="dtype"),
    primitive("Ones", ones, call="shape, type", fix=_ms_float32, type="dtype"),
    primitive("Fill", full, call="type, shape, value", fix=_np_dtype, type="dtype",
              value="fill_value"),
    primitive("ZerosLike", zeros_like, call="input_x", input_x="x"),
    primitive("OnesLike", ones_like, call="input_x", input_x="x"),
    primitive("Eye", eye, call="n, m, t", fix=_ms_float32, t="dtype"),
    primitive("OneHot", one_hot, "axis=-1", "indices, depth, on_value, off_value",
              _ms_hot_values),
)

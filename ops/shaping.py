"""Shape ops: reshape, transpose, expand/squeeze/flatten, broadcast_to, cast and the run-time shape
queries; plus the axis and shape helpers other families use (indexing is in `indexing.py`).

Parts of a shape or an index known only at run time are `Dyn(k)` references to variadic inputs.
"""
from __future__ import annotations

import math
from typing import Any, Callable

import numpy as np

from . import onnx as ox
from . import native
from .batch_rules import LOOP_INPUTLESS, LOOP_PYTHON, flatten_batch
from .batching import (axis_batch, broadcast_batch, broadcast_to_batch, expand_dims_batch,
                       reshape_batch, transpose_batch)
from .elementwise import as_tensor, checked, dtype_or_none, np_call, on_tensor, primitive, spell
from .opdef import NO_GRAD, REQUIRED, Dyn, GradContext, OpDef
from .symbolic import Sym
from .types import UNKNOWN, Dim, Scalar, Tensor, TupleType, Type, dim_divide, dim_mul

Grad = Callable[[GradContext], tuple[Any, ...]]


class IndexOutOfRange(IndexError, ValueError):
    """A static index outside a static dim: an IndexError as in Python, a ValueError as every
    infer failure."""


# ---- axes ----------------------------------------------------------------------------------

def normalize_axis(name: str, axis: Any, rank: int, t: Type) -> int:
    """`axis` in `[-rank, rank)` as a non-negative int; ValueError naming the op otherwise."""
    if type(axis) is not int:
        raise TypeError(f"{name}: axis must be an int, got {axis!r}")
    if not -rank <= axis < rank:
        raise ValueError(f"{name}: axis {axis} is out of range for {t}")
    return axis % rank


def normalize_axes(name: str, axis: Any, t: Tensor, rank: int | None = None) -> tuple[int, ...]:
    """`axis` (int, tuple, or None for all) as sorted non-negative axes, without repeats."""
    rank = t.rank if rank is None else rank
    if axis is None:
        return tuple(range(rank))
    axes = [normalize_axis(name, a, rank, t) for a in (axis if isinstance(axis, tuple) else
                                                        (axis,))]
    if len(set(axes)) != len(axes):
        raise ValueError(f"{name}: repeated axis in {axis} for {t}")
    return tuple(sorted(axes))


def listed_axis(values: dict[str, Any], key: str = "axis") -> dict[str, Any]:
    if isinstance(values.get(key), list):
        values[key] = tuple(values[key])
    return values


def format_dims(dims: Any) -> str:
    dims = tuple(dims)
    return "(" + ", ".join(map(str, dims)) + ("," if len(dims) == 1 else "") + ")"


# ---- shapes that may hold run-time dims ------------------------------------------------------

def split_shape(shape: Any) -> tuple[tuple[int | Dyn, ...], tuple[Any, ...]]:
    """A user's shape argument as a static attr plus the run-time values it refers to: Python
    ints stay literal, any other dim is `Dyn(k)`; a shape that is itself a run-time value is
    `(Dyn(0),)`."""
    if type(shape) is int:
        return (shape,), ()
    if not isinstance(shape, tuple | list):
        return (Dyn(0),), (shape,)
    dims: list[int | Dyn] = []
    dyn: list[Any] = []
    for d in shape:
        if type(d) is int:
            dims.append(d)
        else:
            dims.append(Dyn(len(dyn)))
            dyn.append(d)
    return tuple(dims), tuple(dyn)


def _whole(shape: tuple[Any, ...]) -> bool:
    return len(shape) == 1 and isinstance(shape[0], Dyn)


def resolve_shape(shape: tuple[int | Dyn, ...], dyn: tuple[Any, ...]) -> Any:
    """The concrete shape argument, for kernels."""
    if _whole(shape):
        return dyn[shape[0].k]
    return tuple(dyn[d.k] if isinstance(d, Dyn) else d for d in shape)


def shape_text(shape: tuple[int | Dyn, ...], var: str) -> str:
    """The shape as an expression in an emit template (`dims_k` for `Dyn(k)`)."""
    if _whole(shape):
        return f"{var}_{shape[0].k}"
    return format_dims(f"{var}_{d.k}" if isinstance(d, Dyn) else repr(d) for d in shape)


def _reshape_args(shape: tuple[int | Dyn, ...]) -> str:
    """The shape as the arguments of `x.reshape(...)`: `2, 3`, or one tuple value."""
    text = shape_text(shape, "dims")
    return text if _whole(shape) or not shape else text[1:-1].rstrip(",")


def shape_dims(name: str, shape: tuple[int | Dyn, ...], types: tuple[Type, ...]
               ) -> tuple[Dim, ...]:
    """The dims a shape attr describes, "?" where only run time knows them."""
    if _whole(shape) and isinstance(types[shape[0].k], TupleType):
        whole = types[shape[0].k]
        for e in whole.elements:
            _check_dim(name, e)
        return (UNKNOWN,) * len(whole.elements)
    dims: list[Dim] = []
    for d in shape:
        if isinstance(d, Dyn):
            _check_dim(name, types[d.k])
        dims.append(UNKNOWN if isinstance(d, Dyn) else d)
    return tuple(dims)


def _check_dim(name: str, t: Type) -> None:
    if not (t == Scalar(int) or (isinstance(t, Tensor) and t.rank == 0 and t.dtype.kind in "iu")):
        raise TypeError(f"{name}: a shape entry must be an int, got {t}")


def route_shape(values: dict[str, Any]) -> dict[str, Any]:
    """Binder fix: the `shape` argument as a static attr plus the run-time `dims` inputs."""
    values["shape"], values["dims"] = split_shape(values["shape"])
    return values


def _shape_args(values: dict[str, Any]) -> dict[str, Any]:
    # x.reshape(2, 3) and x.reshape((2, 3)) are the same call
    shape = values["shape"]
    values["shape"] = shape[0] if len(shape) == 1 and not isinstance(shape[0], int) else shape
    return route_shape(values)


def broadcasts_to(src: tuple[Dim, ...], dst: tuple[Dim, ...]) -> bool:
    """Whether an array of shape `src` broadcasts to `dst` (unknown dims are given the benefit
    of the doubt)."""
    return len(src) <= len(dst) and all(
        not (isinstance(s, int) and isinstance(d, int)) or s in (1, d)
        for s, d in zip(src[::-1], dst[::-1]))


# ---- reshape, transpose, axes in and out ------------------------------------------------------

def _reshape(x: Any, *dims: Any, shape: tuple) -> Any:
    return np.reshape(x, resolve_shape(shape, dims))


def _reshape_infer(x: Type, *dims: Type, shape: tuple) -> Tensor:
    t = as_tensor("reshape", x)
    target = list(shape_dims("reshape", shape, dims))
    if target.count(-1) > 1 or any(isinstance(d, int) and d < -1 for d in target):
        raise ValueError(f"reshape: bad target shape {format_dims(target)} for {t}")
    known = dim_mul(*(d for d in target if d != -1))
    size = dim_mul(*t.shape)
    if -1 in target:
        target[target.index(-1)] = _missing_dim(t, target, known, size)
    elif isinstance(size, int) and isinstance(known, int) and known != size:
        raise ValueError(f"reshape: cannot reshape {t} (size {size}) into shape "
                         f"{format_dims(target)}")
    return Tensor(tuple(target), t.dtype)


def _missing_dim(t: Tensor, target: list[Dim], known: Dim, size: Dim) -> Dim:
    """The size `-1` stands for: exact when it divides for every value of the symbols
    (`400*N` into `(N, -1)` gives 400), else "?" (the run-time reshape checks it)."""
    if isinstance(size, int) and isinstance(known, int):
        if known == 0 or size % known:
            raise ValueError(f"reshape: cannot reshape {t} (size {size}) into shape "
                             f"{format_dims(target)}")
        return size // known
    quotient = dim_divide(size, known)
    return UNKNOWN if quotient is None else quotient


def _transpose_infer(x: Type, *, perm: tuple[int, ...] | None) -> Tensor:
    t = as_tensor("transpose", x)
    if perm is None:
        return Tensor(t.shape[::-1], t.dtype)
    if not isinstance(perm, tuple) or len(perm) != t.rank:
        raise ValueError(f"transpose: perm {perm} does not match the rank of {t}")
    axes = [normalize_axis("transpose", a, t.rank, t) for a in perm]
    if sorted(axes) != list(range(t.rank)):
        raise ValueError(f"transpose: perm {perm} is not a permutation of the axes of {t}")
    return Tensor(tuple(t.shape[a] for a in axes), t.dtype)


def _expand_dims_infer(x: Type, *, axis: int | tuple[int, ...]) -> Tensor:
    t = as_tensor("expand_dims", x)
    n = len(axis) if isinstance(axis, tuple) else 1
    axes = normalize_axes("expand_dims", axis, t, t.rank + n)
    dims = iter(t.shape)
    return Tensor(tuple(1 if i in axes else next(dims) for i in range(t.rank + n)), t.dtype)


def _squeeze_infer(x: Type, *, axis: int | tuple[int, ...] | None) -> Tensor:
    t = as_tensor("squeeze", x)
    if axis is None:
        if not t.is_static:
            raise ValueError(f"squeeze: cannot tell which dims of {t} are 1; pass axis")
        return Tensor(tuple(d for d in t.shape if d != 1), t.dtype)
    if t.rank == 0 and axis in (0, -1, (0,), (-1,)):
        return t  # NOTE: NumPy lets a 0-d array squeeze its (missing) axis 0
    axes = normalize_axes("squeeze", axis, t)
    if any(isinstance(t.shape[a], int) and t.shape[a] != 1 for a in axes):
        raise ValueError(f"squeeze: axis {axis} of {t} does not have size 1")
    return Tensor(tuple(d for i, d in enumerate(t.shape) if i not in axes), t.dtype)


def _ms_squeeze_axis(values: dict[str, Any]) -> dict[str, Any]:
    values = listed_axis(values)
    values["axis"] = None if values["axis"] == () else values["axis"]
    return values


def _flatten(x: Any, *, start_dim: int, end_dim: int) -> Any:
    if start_dim == 0 and end_dim == -1:
        return x.flatten()  # a copy, as ndarray.flatten() makes
    if start_dim == 1 and end_dim == -1:
        return x.reshape(x.shape[0], -1)
    tail = x.shape[end_dim + 1:] if end_dim != -1 else ()
    return x.reshape(x.shape[:start_dim] + (-1,) + tail)


def _flatten_emit(attrs: dict[str, Any]) -> str:
    start, end = attrs["start_dim"], attrs["end_dim"]
    if start == 0 and end == -1:
        return "x.flatten()"
    if start == 1 and end == -1:
        return "x.reshape(x.shape[0], -1)"
    tail = f" + x.shape[{end + 1}:]" if end != -1 else ""
    return f"x.reshape(x.shape[:{start}] + (-1,){tail})"


def _flatten_infer(x: Type, *, start_dim: int, end_dim: int) -> Tensor:
    if not isinstance(x, Tensor):
        raise TypeError(f"flatten: expected a tensor, got {x}")
    t = x
    if start_dim == 0 and end_dim == -1:
        return Tensor((dim_product(t.shape),), t.dtype)
    if t.rank == 0:
        raise ValueError(f"flatten: cannot flatten {t} from start_dim {start_dim}")
    start = start_dim + t.rank if start_dim < 0 else start_dim
    end = normalize_axis("flatten", end_dim, t.rank, t)
    if not 0 <= start <= end + 1:
        raise ValueError(f"flatten: start_dim {start_dim} and end_dim {end_dim} do not fit {t}")
    middle = dim_product(t.shape[start:end + 1])
    return Tensor(t.shape[:start] + (middle,) + t.shape[end + 1:], t.dtype)


def dim_product(dims: tuple[Dim, ...]) -> Dim:
    """The size of a flattened run of dims (symbolic while affine: `(N, 4)` gives `4*N`)."""
    return dim_mul(*dims)


# ---- sequences of tensors ---------------------------------------------------------------------























# ---- tile, broadcast, pad, flip, repeat -------------------------------------------------------







def _broadcast_to(x: Any, *dims: Any, shape: tuple) -> Any:
    target = resolve_shape(shape, dims)
    if isinstance(target, tuple) and -1 in shape:  # MindSpore: -1 keeps the input's dim
        target = tuple(np.shape(x)[i - len(target)] if d == -1 else d
                       for i, d in enumerate(target))
    return np.broadcast_to(x, target)


def _broadcast_to_emit(attrs: dict[str, Any]) -> str:
    shape = attrs["shape"]
    if _whole(shape) or -1 not in shape:
        return f"np.broadcast_to(x, {shape_text(shape, 'dims')})"
    items = (f"x.shape[{i - len(shape)}]" if d == -1 else
             f"dims_{d.k}" if isinstance(d, Dyn) else repr(d) for i, d in enumerate(shape))
    return f"np.broadcast_to(x, {format_dims(items)})"


def _broadcast_to_infer(x: Type, *dims: Type, shape: tuple) -> Tensor:
    t = as_tensor("broadcast_to", x)
    target = list(shape_dims("broadcast_to", shape, dims))
    if len(target) < t.rank:
        raise ValueError(f"broadcast_to: cannot broadcast {t} to shape {format_dims(target)}")
    for i in range(1, t.rank + 1):
        d, want = t.shape[-i], target[-i]
        if want == -1:
            target[-i] = d
        elif isinstance(want, int) and isinstance(d, int) and d not in (1, want):
            raise ValueError(f"broadcast_to: cannot broadcast {t} to shape {format_dims(target)}")
    if any(isinstance(d, int) and d < 0 for d in target):
        raise ValueError(f"broadcast_to: bad shape {format_dims(target)} for {t}")
    return Tensor(tuple(target), t.dtype)






















# ---- cast and the run-time shape queries ------------------------------------------------------

def _cast_infer(x: Type, *, dtype: np.dtype) -> Tensor:
    return Tensor(as_tensor("cast", x).shape, dtype)


def astype(x: Any, dtype: Any) -> Any:
    """`x.astype(dtype)` (a copy); a Python number becomes a NumPy scalar, as `np.float32(3)`."""
    if isinstance(x, np.ndarray | np.generic):
        return x.astype(dtype)
    return np.dtype(dtype).type(x)


def _shape_infer(x: Type) -> TupleType:
    return TupleType((Scalar(int),) * as_tensor("shape", x).rank)


def _dim_infer(*, value: Dim) -> Scalar:
    if not isinstance(value, int | Sym) or isinstance(value, bool):
        raise TypeError(f"dim: expected a size (an int or a symbolic size), got {value!r}")
    return Scalar(int)


def dim_value(*, value: Dim) -> int:
    """The size as an int; a symbolic one has no value until the sizes of a call are known
    (the interpreter substitutes them into attributes before running kernels)."""
    if isinstance(value, Sym):
        raise ValueError(f"dim: the symbolic size {value} has no value while compiling")
    return value


def _count_infer(name: str):
    def infer(x: Type) -> Scalar:
        as_tensor(name, x)
        return Scalar(int)
    return infer


# ---- ops --------------------------------------------------------------------------------------

def shape_op(name: str, inputs: tuple[str, ...], fn: Any, infer: Any, emit: Any,
        attrs: dict[str, Any] | None = None, fresh: bool = False, specialize: Any = None,
        grad: Any = None, static: Any = None, numba: Any = None, onnx: Any = None,
        batch: Any = None) -> OpDef:
    """`fresh`: the result never shares memory with an input (views and tuples do)."""
    return OpDef(name, inputs, kernel=checked(name, fn, infer), infer=infer, emit=emit,
                 attrs=attrs or {}, fresh=fresh, specialize=specialize, grad=grad,
                 static=static, numba=numba, onnx=onnx, batch=batch)


def _known_shape(x: Type) -> tuple[int, ...] | None:
    """A tensor's shape when every dim is known (a Python number's is ())."""
    if isinstance(x, Scalar):
        return ()
    if isinstance(x, Tensor) and all(isinstance(d, int) for d in x.shape):
        return tuple(x.shape)
    return None


def _known_size(x: Type) -> int | None:
    shape = _known_shape(x)
    return None if shape is None else math.prod(shape)


def _known_rank(x: Type) -> int | None:
    return 0 if isinstance(x, Scalar) else x.rank if isinstance(x, Tensor) else None


# ---- gradient rules: the adjoint reshaped, sliced or summed back to the input --------------

def shaped_like(ad: GradContext, g: Any, k: int = 0) -> Any:
    """`g` reshaped to input k's shape."""
    t = ad.types[k]
    if isinstance(t, Tensor) and t.is_symbolic:
        return ad.op("reshape", g, shape=t.shape)
    return ad.op("reshape", g, ad.op("shape", ad.input(k)), shape=(Dyn(0),))


RESHAPED: Grad = lambda ad: (shaped_like(ad, ad.g),)


def _transpose_grad(ad: GradContext) -> tuple[Any, ...]:
    perm = ad.attrs["perm"]
    if perm is None:
        return (ad.op("transpose", ad.g),)
    rank = as_tensor("transpose", ad.types[0]).rank
    inverse = tuple(int(i) for i in np.argsort([p % rank for p in perm]))
    return (ad.op("transpose", ad.g, perm=inverse),)
















reshape = shape_op("reshape", ("x", "*dims"), _reshape, _reshape_infer,
              lambda a: f"np.reshape(x, {shape_text(a['shape'], 'dims')})", {"shape": REQUIRED},
              specialize=on_tensor(lambda a: f"x.reshape({_reshape_args(a['shape'])})"),
              grad=RESHAPED, onnx=ox.to_result_shape, batch=reshape_batch)
transpose = shape_op("transpose", ("x",), lambda x, perm: np.transpose(x, perm), _transpose_infer,
                lambda a: "np.transpose(x)" if a["perm"] is None else "np.transpose(x, perm)",
                {"perm": None},
                specialize=on_tensor(lambda a: "x.T" if a["perm"] is None else
                                      "x.transpose(perm)"), grad=_transpose_grad,
                batch=transpose_batch,
                numba=native.transpose_spelling, onnx=ox.transpose)
expand_dims = shape_op("expand_dims", ("x",), lambda x, axis: np.expand_dims(x, axis),
                  _expand_dims_infer, "np.expand_dims(x, axis)", {"axis": REQUIRED},
                  grad=RESHAPED, onnx=ox.to_result_shape, batch=expand_dims_batch)
squeeze = shape_op("squeeze", ("x",), lambda x, axis: np.squeeze(x, axis), _squeeze_infer,
              np_call("np.squeeze", "x", axis=None), {"axis": None}, grad=RESHAPED,
              onnx=ox.to_result_shape, batch=axis_batch)
flatten = shape_op("flatten", ("x",), _flatten, _flatten_infer, _flatten_emit,
              {"start_dim": 1, "end_dim": -1}, grad=RESHAPED, onnx=ox.to_result_shape,
              batch=flatten_batch)
"""MindSpore's flatten keeps dim 0 (`start_dim=1`); `x.flatten()` is `start_dim=0` (a copy)."""
broadcast_to = shape_op("broadcast_to", ("x", "*dims"), _broadcast_to, _broadcast_to_infer,
                   _broadcast_to_emit, {"shape": REQUIRED}, grad=lambda ad: (ad.g,),
                   onnx=ox.broadcast_to, batch=broadcast_to_batch)
cast = OpDef("cast", ("x",), kernel=checked("cast", astype, _cast_infer), infer=_cast_infer,
             emit="astype(x, dtype)", attrs={"dtype": REQUIRED}, helpers=(astype,), fresh=True,
             grad=lambda ad: (ad.g,), numba=native.cast_spelling, onnx=ox.to_result_dtype,
             batch=broadcast_batch)
shape_of = shape_op("shape", ("x",), np.shape, _shape_infer, "np.shape(x)", grad=NO_GRAD,
                    static=_known_shape, onnx=ox.shape_of, batch=LOOP_PYTHON)
size_of = shape_op("size", ("x",), np.size, _count_infer("size"), "np.size(x)", grad=NO_GRAD,
                   static=_known_size, batch=LOOP_PYTHON)
ndim_of = shape_op("ndim", ("x",), np.ndim, _count_infer("ndim"), "np.ndim(x)", grad=NO_GRAD,
                   static=_known_rank, batch=LOOP_PYTHON)
dim_of = OpDef("dim", (), kernel=dim_value, infer=_dim_infer, emit="value",
               attrs={"value": REQUIRED}, grad=NO_GRAD, onnx=ox.dim_value, batch=LOOP_INPUTLESS)
"""A size as a run-time int: `x.shape[0]` of a symbolic dim is `dim(value=N)`, which generated
code spells as the variable holding N (read from the arguments at the function's entry)."""


# ---- spellings --------------------------------------------------------------------------------

def _perm(values: dict[str, Any]) -> dict[str, Any]:
    return listed_axis(values, "perm")


def _method_axes(values: dict[str, Any]) -> dict[str, Any]:
    # x.transpose(), x.transpose(1, 0) and x.transpose((1, 0))
    axes = values.pop("axes")
    values["perm"] = axes[0] if len(axes) == 1 and not isinstance(axes[0], int) else \
        (axes or None)
    return _perm(values)


def _c_order(values: dict[str, Any]) -> dict[str, Any]:
    if values.pop("order") != "C":
        raise ValueError("flatten: only order='C' is supported")
    return values


def _flatten_all(values: dict[str, Any]) -> dict[str, Any]:
    return {**_c_order(values), "start_dim": 0, "end_dim": -1}


def _dtype(values: dict[str, Any]) -> dict[str, Any]:
    return dtype_or_none(values)


OPS = (reshape, transpose, expand_dims, squeeze, flatten, broadcast_to, cast, shape_of, size_of,
       ndim_of, dim_of)

FUNCTIONS = (
    spell("reshape", reshape, "input, shape", route_shape, input="x"),
    spell("transpose", transpose, "input, input_perm", _perm, input="x", input_perm="perm"),
    spell("permute", transpose, "input, axis", _perm, input="x", axis="perm"),
    spell("expand_dims", expand_dims, "input_x, axis", listed_axis, input_x="x"),
    spell("unsqueeze", expand_dims, "input, dim", input="x", dim="axis"),
    spell("squeeze", squeeze, "input, axis=None", _ms_squeeze_axis, input="x"),
    spell("flatten", flatten, "input, order='C', *, start_dim=1, end_dim=-1", _c_order,
          input="x"),
    spell("broadcast_to", broadcast_to, "input, shape", route_shape, input="x"),
    spell("cast", cast, "input, dtype", _dtype, input="x"),
    spell("shape", shape_of, "input", input="x"),
    spell("size", size_of, "input", input="x"),
    spell("numel", size_of, "input", input="x"),
    spell("rank", ndim_of, "input", input="x"),
)
NUMPY = (
    spell("reshape", reshape, "a, shape", route_shape, a="x"),
    spell("transpose", transpose, "a, axes=None", _perm, a="x", axes="perm"),
    spell("expand_dims", expand_dims, "a, axis", listed_axis, a="x"),
    spell("squeeze", squeeze, "a, axis=None", listed_axis, a="x"),
    spell("broadcast_to", broadcast_to, "array, shape", route_shape, array="x"),
    spell("shape", shape_of, "a", a="x"),
    spell("size", size_of, "a", a="x"),
    spell("ndim", ndim_of, "a", a="x"),
)
METHODS = (
    spell("reshape", reshape, "x, *shape", _shape_args),
    spell("transpose", transpose, "x, *axes", _method_axes),
    spell("squeeze", squeeze, "x, axis=None", listed_axis),
    spell("flatten", flatten, "x, order='C'", _flatten_all),
    spell("astype", cast, "x, dtype", _dtype),
)
PRIMITIVES = (
    primitive("Reshape", reshape, call="input_x, input_shape", fix=route_shape, input_x="x",
              input_shape="shape"),
    primitive("Transpose", transpose, call="input_x, input_perm", fix=_perm, input_x="x",
              input_perm="perm"),
    primitive("ExpandDims", expand_dims, call="input_x, axis", input_x="x"),
    primitive("Squeeze", squeeze, "axis=()", "input_x", _ms_squeeze_axis, input_x="x"),
    primitive("Flatten", flatten, call="input_x", input_x="x"),
    primitive("BroadcastTo", broadcast_to, "shape", "input_x", route_shape, input_x="x"),
    primitive("Cast", cast, call="input_x, type_", fix=_dtype, input_x="x", type_="dtype"),
    primitive("Shape", shape_of, call="input_x", input_x="x"),
    primitive("Size", size_of, call="input_x", input_x="x"),
    primitive("Rank", ndim_of, call="input_x", input_x="x"),
)

"""NumPy calls the frontend builds from several ops, or checks before the registry's spelling:
`np.array`/`np.asarray`/`np.copy` (of run-time values and of lists holding them), lists and
tuples as array operands (`np.maximum(x, [1, 2])`, `x * (1.0, 2.0)`), `out=` arguments,
`np.pad` with a run-time fill, `np.triu`/`np.tril`, `np.linalg.norm`, `np.meshgrid`, `np.var`/`np.std`,
`np.outer`, `np.swapaxes`/`np.moveaxis`, `np.ravel`, `np.diff`, `np.vstack`/`np.hstack`."""
from __future__ import annotations

from typing import Any, Callable

import numpy as np

from ..graph import Scalar, Tensor, Value
from ..ops import NUMPY
from ..ops.shaping import normalize_axis
from .aliases import SCALAR, is_array_kind, is_mixed_kind, own_array, zero_d_kind
from .context import Frame
from .expressions import shape_of, value_attribute
from .sequences import getitem
from .operators import as_array, binary, is_sequence, to_python
from .values import PyList, describe, has_runtime

NOT_HANDLED: Any = object()
"""What an override returns to leave the call to the registry's spelling."""


# -- np.array, np.asarray, np.copy ----------------------------------------------------------------

def _np_asarray(f: Frame, a: Any, dtype: Any = None, *, copy: bool = False) -> Any:
    """`np.asarray(a, dtype)`: an array of that dtype is returned itself (so writes through
    either name are seen by both), anything else becomes a new array."""
    if has_runtime(dtype) or has_runtime(copy):
        raise f.error("the dtype and copy arguments must be known when compiling")
    dtype = None if dtype is None else np.dtype(dtype)
    if is_sequence(a):
        return as_array(f, a, dtype)
    if not isinstance(a, Value):
        if isinstance(a, np.ndarray) and not copy and (dtype is None or dtype == a.dtype):
            return a
        return as_array(f, a, dtype) if not copy else np.array(to_python(a), dtype=dtype)
    if not isinstance(a.type, Tensor | Scalar):
        raise f.error(f"np.asarray of {describe(a)} is not supported")
    # NOTE: `np.dtype("float64") == None` holds, so None is compared by identity
    same = isinstance(a.type, Tensor) and (dtype is None or dtype == a.type.dtype)
    if same and not copy and (a.type.rank or is_array_kind(zero_d_kind(f, a))):
        return a
    return f.op("array" if copy or zero_d_kind(f, a) == SCALAR else "asarray", a, dtype=dtype)


def _np_array(f: Frame, obj: Any, dtype: Any = None, *, copy: bool = True) -> Any:
    """`np.array(obj, dtype)`: a new array."""
    return _np_asarray(f, obj, dtype, copy=copy is not False)


def _np_copy(f: Frame, a: Any) -> Any:
    return _np_asarray(f, a, copy=True)


# -- out= -----------------------------------------------------------------------------------------

def write_out(f: Frame, result: Any, out: Any) -> Any:
    """`func(..., out=out)`: the result written into `out` in place (NumPy's same-kind casting
    rule), and `out` returned."""
    if isinstance(out, tuple) and len(out) == 1:
        out = out[0]
    if isinstance(out, np.ndarray):
        out = own_array(f, out)
    if not (isinstance(out, Value) and isinstance(out.type, Tensor)):
        raise f.error(f"out= must be an array, got {describe(out)}")
    if not out.type.rank and is_mixed_kind(zero_d_kind(f, out)):
        raise f.error("out= is a 0-d value that is an array on some paths and a NumPy scalar "
                      "on others", "make it an array on every path with np.asarray")
    got = result.type if isinstance(result, Value) else None
    if isinstance(got, Tensor) and got.dtype != out.type.dtype and not np.can_cast(
            got.dtype, out.type.dtype, casting="same_kind"):
        raise f.error(f"cannot write the result ({got.dtype}) into out= ({out.type.dtype}) with "
                      "NumPy's same-kind casting", "cast the result, or use another out array")
    return f.op("setitem", out, f.materialise(result), index=(Ellipsis,))


# -- np.pad with a run-time fill, np.triu, np.tril -----------------------------------------------

def _np_pad(f: Frame, array: Any, pad_width: Any, mode: Any = "constant", **kwargs: Any) -> Any:
    """`np.pad` whose `constant_values` is known only at run time: a full array of the fill,
    the input written into its middle."""
    value = kwargs.get("constant_values", 0)
    if not has_runtime(value) or set(kwargs) - {"constant_values"} or mode != "constant":
        return NOT_HANDLED
    if not (isinstance(array, Value) and isinstance(array.type, Tensor)):
        return NOT_HANDLED
    if isinstance(value, Value) and isinstance(value.type, Tensor) and value.type.rank:
        raise f.error("np.pad: a run-time constant_values must be one number",
                      "pad with 0 and add the border separately")
    t = array.type
    try:
        widths = np.broadcast_to(np.asarray(to_python(pad_width)), (t.rank, 2)).tolist()
    except ValueError:
        raise f.error(f"np.pad: pad_width {to_python(pad_width)} does not fit {t}") from None
    dims = shape_of(f, array)
    shape = tuple(d + a + b if isinstance(d, int) else f.op("add", d, f.constant(a + b))
                  for d, (a, b) in zip(dims, widths))
    full = f.call(NUMPY["full"], [shape, value], {"dtype": t.dtype})
    inner = tuple(slice(a, -b if b else None) for a, b in widths)
    return f.op("setitem", full, array, index=inner)


def _triangle(upper: bool) -> Callable[..., Any]:
    def handler(f: Frame, m: Any, k: Any = 0) -> Any:
        if not (isinstance(m, Value) and isinstance(m.type, Tensor)):
            return NOT_HANDLED
        t = m.type
        if has_runtime(k) or t.rank < 2 or not all(isinstance(d, int) for d in t.shape[-2:]):
            raise f.error(f"np.{'triu' if upper else 'tril'} needs a diagonal known when "
                          "compiling and an array whose last two sizes are known")
        rows, cols = t.shape[-2:]
        keep = np.tri(rows, cols, k - 1 if upper else k, dtype=bool)
        if upper:
            keep = ~keep
        return f.op("select", f.constant(keep), m, f.constant(t.dtype.type(0)))
    return handler


# -- np.linalg.norm ------------------------------------------------------------------------------

def _np_norm(f: Frame, x: Any, ord: Any = None, axis: Any = None, keepdims: Any = False) -> Any:
    """`np.linalg.norm` as the square root of a sum of squares: the 2-norm of vectors (ord
    None or 2, over one axis or a whole 1-d array) and the Frobenius norm (ord None or 'fro').
    Integers are squared as float64, as NumPy does."""
    if has_runtime((ord, axis, keepdims)):
        raise f.error("np.linalg.norm needs ord, axis and keepdims known when compiling")
    if not (isinstance(x, Value) and isinstance(x.type, Tensor)):
        return NOT_HANDLED
    axes = (axis,) if isinstance(axis, int) else tuple(axis) if axis is not None else None
    vector = len(axes) == 1 if axes is not None else x.type.rank == 1
    if not (ord is None or ord == 2 and vector or ord == "fro" and not vector) \
            or np.issubdtype(x.type.dtype, np.complexfloating):
        raise f.error(f"np.linalg.norm with ord={ord!r} of {describe(x)} is not supported "
                      "in compiled code",
                      "write it out, e.g. np.sqrt(np.sum(x * x, axis=...)) for the 2-norm")
    if not np.issubdtype(x.type.dtype, np.inexact):
        x = f.call(np.asarray, [x], {"dtype": np.float64})
    squares = f.call(np.multiply, [x, x], {})
    total = f.call(np.sum, [squares], {"axis": axes, "keepdims": keepdims})
    return f.call(np.sqrt, [total], {})


# -- np.meshgrid ---------------------------------------------------------------------------------

MESHGRID_RESULT = type(np.meshgrid(np.zeros(1)))
"""What np.meshgrid returns: a tuple under NumPy 2, a list under NumPy 1."""


def _np_meshgrid(f: Frame, *xi: Any, copy: Any = True, sparse: Any = False,
                 indexing: Any = "xy") -> Any:
    """`np.meshgrid` as NumPy builds it: each input flattened and reshaped to lie along its own
    axis (the first two swapped for 'xy'), then, unless sparse, broadcast to the full grid, and
    copied unless copy=False (each grid keeps its input's dtype)."""
    if has_runtime((copy, sparse, indexing)):
        raise f.error("np.meshgrid needs copy, sparse and indexing known when compiling")
    if indexing not in ("xy", "ij"):
        raise f.error(f"np.meshgrid: indexing must be 'xy' or 'ij', not {indexing!r}")
    if not copy and not sparse:
        raise f.error("np.meshgrid(..., copy=False) is not supported in compiled code (its "
                      "grids are views of one element each)", "leave copy=True")
    arrays = [x if isinstance(x, Value) else f.materialise(np.asarray(to_python(x)))
              if not is_sequence(x) or not has_runtime(x) else as_array(f, x, None)
              for x in xi]
    if not all(isinstance(x, Value) and isinstance(x.type, Tensor) for x in arrays):
        raise f.error("np.meshgrid takes arrays (or lists of numbers)")
    ndim = len(arrays)
    sizes = [value_attribute(f, x, "size") for x in arrays]
    axes = list(range(ndim))
    if indexing == "xy" and ndim > 1:
        axes[0], axes[1] = 1, 0  # NOTE: the first input runs along columns
    grids = []
    for k, x in enumerate(arrays):
        shape = [1] * ndim
        shape[axes[k]] = -1
        grids.append(f.call(np.reshape, [x, tuple(shape)], {}))
    if not sparse:
        full = [1] * ndim
        for k, size in enumerate(sizes):
            full[axes[k]] = size
        grids = [f.call(np.broadcast_to, [g, tuple(full)], {}) for g in grids]
    if copy:  # NOTE: sparse grids too: reshaped views of the inputs otherwise
        grids = [f.call(np.array, [g], {}) for g in grids]
    return tuple(grids) if MESHGRID_RESULT is tuple else PyList(grids)


# -- statistics and rearrangements written with other ops ----------------------------------------

def _tensor(a: Any) -> bool:
    return isinstance(a, Value) and isinstance(a.type, Tensor)


def _axes(f: Frame, a: Value, axis: Any, what: str) -> tuple[int, ...]:
    """The axes `axis` names (None: all), in the order given, each checked as NumPy checks it
    (in range, not repeated)."""
    if has_runtime(axis):
        raise f.error(f"{what}: the axis must be known when compiling")
    rank = a.type.rank
    if axis is None:
        return tuple(range(rank))
    try:
        axes = tuple(normalize_axis(what, k, rank, a.type)
                     for k in (axis if isinstance(axis, tuple | list) else (axis,)))
    except (TypeError, ValueError) as exc:
        raise f.error(str(exc)) from None
    if len(set(axes)) != len(axes):
        raise f.error(f"{what}: repeated axis in {axis}")
    return axes


def _variance(root: bool) -> Callable[..., Any]:
    """`np.var` / `np.std` (and the methods) as NumPy computes them: the mean kept as an array,
    the squared deviations summed and divided by max(count - ddof, 0); the square root for std.
    Integers and bools are computed in float64, as NumPy does."""
    what = "np.std" if root else "np.var"

    def handler(f: Frame, a: Any, axis: Any = None, dtype: Any = None, out: Any = None,
                ddof: Any = 0, keepdims: Any = False, **rest: Any) -> Any:
        if not _tensor(a):
            return NOT_HANDLED
        if dtype is not None or out is not None or rest or has_runtime((ddof, keepdims)):
            raise f.error(f"{what} takes axis, ddof and keepdims (known when compiling) here",
                          "write the mean and the squared deviations out")
        kind = a.type.dtype.kind
        if kind not in "biuf" or a.type.dtype == np.float16:
            raise f.error(f"{what} of {describe(a)} is not supported in compiled code")
        axes = _axes(f, a, axis, what)
        x = a if kind == "f" else f.call(np.asarray, [a], {"dtype": np.float64})
        mean = f.call(np.mean, [x], {"axis": axes, "keepdims": True})
        deviation = binary(f, "Sub", x, mean)
        squares = binary(f, "Mult", deviation, deviation)
        total = f.call(np.sum, [squares], {"axis": axes, "keepdims": bool(keepdims)})
        dims = shape_of(f, a)
        count: Any = 1
        for k in axes:
            count = binary(f, "Mult", count, dims[k])
        # NOTE: a count of x's float dtype divides alike under both NumPys (a Python int would
        # make NumPy 1 widen a float32 scalar to float64); it is exact below 2**24
        scalar_type = x.type.dtype.type if kind == "f" else np.float64
        if has_runtime(count):
            count = f.call(scalar_type, [f.call(max, [binary(f, "Sub", count, ddof), 0], {})], {})
        else:
            count = scalar_type(max(count - ddof, 0))
        result = binary(f, "Div", total, count)
        return f.call(np.sqrt, [result], {}) if root else result
    return handler


def _np_outer(f: Frame, a: Any, b: Any, out: Any = None) -> Any:
    """`np.outer(a, b)`: the flattened a as a column times the flattened b as a row."""
    if not (_tensor(a) or _tensor(b)) or out is not None:
        return NOT_HANDLED
    column = f.call(np.reshape, [_np_asarray(f, a), (-1, 1)], {})
    return binary(f, "Mult", column, f.call(np.reshape, [_np_asarray(f, b), (1, -1)], {}))


def _permuted(numpy_function: Callable[..., Any]) -> Callable[..., Any]:
    """`np.swapaxes` / `np.moveaxis` as a transpose; NumPy itself computes the order (and its
    errors) on a stand-in array of the same rank whose sizes are the axis numbers."""
    def handler(f: Frame, a: Any, *axes: Any) -> Any:
        if not _tensor(a):
            return NOT_HANDLED
        if has_runtime(axes):
            raise f.error(f"np.{numpy_function.__name__}: the axes must be known when compiling")
        stand_in = np.broadcast_to(0, tuple(range(2, a.type.rank + 2)))
        try:
            order = numpy_function(stand_in, *(to_python(x) for x in axes)).shape
        except (ValueError, IndexError, TypeError) as exc:
            raise f.error(f"np.{numpy_function.__name__}: {exc}") from None
        return f.call(np.transpose, [a, tuple(d - 2 for d in order)], {})
    return handler


def _np_ravel(f: Frame, a: Any, order: Any = "C") -> Any:
    """`np.ravel(a)`: `a.reshape(-1)` (a view where NumPy's is one)."""
    if not _tensor(a):
        return NOT_HANDLED
    if order != "C":
        raise f.error("np.ravel: only order='C' is supported in compiled code")
    return f.call(np.reshape, [a, (-1,)], {})


def _np_diff(f: Frame, a: Any, n: Any = 1, axis: Any = -1) -> Any:
    """`np.diff`: `a[1:] - a[:-1]` along the axis, n times (`!=` for bools, as NumPy)."""
    if not _tensor(a):
        return NOT_HANDLED
    if has_runtime(n) or not isinstance(n, int) or n < 0:
        raise f.error("np.diff: n must be a non-negative int known when compiling")
    (k,) = _axes(f, a, axis, "np.diff")
    head = (slice(None),) * k
    for _ in range(n):
        later = f.op("getitem", a, index=head + (slice(1, None),))
        earlier = f.op("getitem", a, index=head + (slice(None, -1),))
        a = f.call(np.not_equal if a.type.dtype == np.bool_ else np.subtract,
                   [later, earlier], {})
    return a


def _stacked(vertical: bool) -> Callable[..., Any]:
    """`np.vstack` (rows: 1-d items become 1 x n) and `np.hstack` (along axis 1, or 0 for 1-d
    items) as one concatenate."""
    def handler(f: Frame, tup: Any, **kwargs: Any) -> Any:
        items = list(tup) if isinstance(tup, tuple | list) else getattr(tup, "items", None)
        if kwargs or not items or not any(_tensor(v) for v in items):
            return NOT_HANDLED
        arrays = [_np_asarray(f, v) for v in items]
        ranks = [v.type.rank if _tensor(v) else np.ndim(v) for v in arrays]
        if vertical:
            arrays = [f.call(np.reshape, [v, (1, -1)], {}) if r < 2 else v
                      for v, r in zip(arrays, ranks)]
            return f.call(np.concatenate, [arrays], {"axis": 0})
        arrays = [f.call(np.reshape, [v, (1,)], {}) if r == 0 else v for v, r in zip(arrays, ranks)]
        return f.call(np.concatenate, [arrays], {"axis": 0 if ranks[0] <= 1 else 1})
    return handler


def _np_roll(f: Frame, a: Any, shift: Any, axis: Any = None) -> Any:
    """`np.roll` by shifts known when compiling: the two slices of each axis swapped (always a
    new array); axis=None rolls the flattened array."""
    if not _tensor(a):
        return NOT_HANDLED
    if has_runtime((shift, axis)):
        raise f.error("np.roll needs the shift and axis known when compiling")
    if axis is None:
        flat = _np_roll(f, f.call(np.reshape, [a, (-1,)], {}), shift, 0)
        return f.call(np.reshape, [flat, shape_of(f, a)], {})
    shifts, axes = np.broadcast_arrays(np.asarray(shift), np.asarray(axis))
    rolled = f.call(np.copy, [a], {})
    for s, k in zip(shifts.ravel().tolist(), _axes(f, a, tuple(axes.ravel().tolist()), "np.roll")
                    if axes.ndim else _axes(f, a, int(axes), "np.roll")):
        n = a.type.shape[k]
        if not isinstance(n, int):
            raise f.error("np.roll along an axis of run-time size is not supported")
        if n and s % n:
            head = (slice(None),) * k
            tail = f.op("getitem", rolled, index=head + (slice(n - s % n, None),))
            rest = f.op("getitem", rolled, index=head + (slice(None, n - s % n),))
            rolled = f.call(np.concatenate, [[tail, rest]], {"axis": k})
    return rolled


def _at_least(rank: int) -> Callable[..., Any]:
    """`np.atleast_1d/2d/3d(a)`: `a` itself when its rank suffices, else a view reshaped as
    NumPy does (1-d `n` -> `1 x n`, 2-d -> `m x n x 1`)."""
    def handler(f: Frame, *arrays: Any) -> Any:
        if len(arrays) != 1 or not _tensor(arrays[0]):
            return NOT_HANDLED
        (a,) = arrays
        dims = shape_of(f, a)
        if len(dims) >= rank:
            return a
        shape = {0: (1,) * rank, 1: (1, *dims, 1)[:rank] if rank > 1 else dims,
                 2: (*dims, 1)}[len(dims)]
        return f.call(np.reshape, [a, tuple(shape)], {})
    return handler


def _np_count_nonzero(f: Frame, a: Any, axis: Any = None, *, keepdims: Any = False) -> Any:
    """`np.count_nonzero`: the sum of `a != 0` (over the whole array: what the running NumPy
    gives, see `COUNT_IS_INT`)."""
    if not _tensor(a):
        return NOT_HANDLED
    if has_runtime((axis, keepdims)):
        raise f.error("np.count_nonzero needs axis and keepdims known when compiling")
    nonzero = a if a.type.dtype == np.bool_ else f.call(np.not_equal, [a, 0], {})
    total = f.call(np.sum, [nonzero], {"axis": axis, "keepdims": bool(keepdims)})
    whole = axis is None and not keepdims
    return f.call(int, [total], {}) if whole and COUNT_IS_INT else total


COUNT_IS_INT = type(np.count_nonzero(np.ones(1))) is int
"""NumPy 1 counts a whole array as a Python int; NumPy 2 as an np.intp."""


def _np_isclose(f: Frame, a: Any, b: Any, rtol: Any = 1e-05, atol: Any = 1e-08,
                equal_nan: Any = False) -> Any:
    """`np.isclose` as NumPy 2 writes it: |a - b| <= atol + rtol * |b| where b is finite, or
    a == b (equal infinities); NaNs equal when `equal_nan`. `b` is taken as a float array."""
    if not (_tensor(a) or _tensor(b)) or has_runtime((rtol, atol, equal_nan)):
        return NOT_HANDLED
    x, y = (v if isinstance(v, int | float) else _np_asarray(f, v) for v in (a, b))
    if not all(_tensor(v) or isinstance(v, int | float) for v in (x, y)) or not any(
            _tensor(v) and v.type.rank for v in (x, y)):
        return NOT_HANDLED
    if _tensor(y):  # NOTE: a Python number stays one (weak), as in NumPy's own code
        y = f.call(np.asarray, [y], {"dtype": np.result_type(y.type.dtype, 1.0)})
    else:
        y = float(y)
    distance = f.call(np.absolute, [binary(f, "Sub", x, y)], {})
    size = abs(y) if isinstance(y, float) else f.call(np.absolute, [y], {})  # NOTE: stays weak
    tolerance = binary(f, "Add", atol, binary(f, "Mult", rtol, size))
    within = f.call(np.less_equal, [distance, tolerance], {})
    finite = f.call(np.logical_and, [within, f.call(np.isfinite, [y], {})], {})
    result = f.call(np.logical_or, [finite, f.call(np.equal, [x, y], {})], {})
    if equal_nan:
        both = f.call(np.logical_and, [f.call(np.isnan, [x], {}), f.call(np.isnan, [y], {})], {})
        result = f.call(np.logical_or, [result, both], {})
    return result


def _np_allclose(f: Frame, a: Any, b: Any, rtol: Any = 1e-05, atol: Any = 1e-08,
                 equal_nan: Any = False) -> Any:
    """`np.allclose`: a Python bool, every element `np.isclose`."""
    close = _np_isclose(f, a, b, rtol, atol, equal_nan)
    if close is NOT_HANDLED:
        return NOT_HANDLED
    return f.call(bool, [f.call(np.all, [close], {})], {})


def _np_trace(f: Frame, a: Any, offset: Any = 0) -> Any:
    """`np.trace` of a 2-d array of known size: the sum of its (offset) diagonal."""
    if not _tensor(a):
        return NOT_HANDLED
    rows, cols = a.type.shape if a.type.rank == 2 else (None, None)
    if not (isinstance(rows, int) and isinstance(cols, int)) or has_runtime(offset):
        raise f.error("np.trace is supported for 2-d arrays of known size and a known offset")
    first = np.arange(max(0, -offset), min(rows, cols - offset)) if cols - offset > 0 else \
        np.arange(0)
    diagonal = getitem(f, a, (first, first + offset)) if len(first) else None
    if diagonal is None:
        return f.call(np.sum, [f.call(np.zeros, [0], {"dtype": a.type.dtype})], {})
    return f.call(np.sum, [diagonal], {})


def _np_where(f: Frame, condition: Any, *values: Any) -> Any:
    """`np.where(c, x, y)` is the registry's select; `np.where(c)` alone is np.nonzero."""
    if values:
        return NOT_HANDLED
    raise f.error("np.where(condition) with one argument (np.nonzero) is not supported in "
                  "compiled code: how many indices it gives depends on the data",
                  "select with np.where(condition, x, y), or count with np.sum(condition)")


OVERRIDES: dict[int, Callable[..., Any]] = {
    id(np.array): _np_array, id(np.asarray): _np_asarray, id(np.asanyarray): _np_asarray,
    id(np.copy): _np_copy, id(np.pad): _np_pad, id(np.triu): _triangle(True),
    id(np.tril): _triangle(False), id(np.linalg.norm): _np_norm, id(np.meshgrid): _np_meshgrid,
    id(np.var): _variance(False), id(np.std): _variance(True), id(np.outer): _np_outer,
    id(np.swapaxes): _permuted(np.swapaxes), id(np.moveaxis): _permuted(np.moveaxis),
    id(np.ravel): _np_ravel, id(np.diff): _np_diff, id(np.vstack): _stacked(True),
    id(np.hstack): _stacked(False), id(np.where): _np_where, id(np.roll): _np_roll,
    id(np.atleast_1d): _at_least(1), id(np.atleast_2d): _at_least(2),
    id(np.atleast_3d): _at_least(3), id(np.count_nonzero): _np_count_nonzero,
    id(np.isclose): _np_isclose, id(np.allclose): _np_allclose, id(np.trace): _np_trace,
}
"""id(np.<function>) -> handler(frame, *args, **kwargs); NOT_HANDLED leaves the call to the
registry's spelling (or to compile-time evaluation)."""


def numpy_override(f: Frame, func: Any, args: list[Any], kwargs: dict[str, Any]) -> Any:
    """The call handled here, or NOT_HANDLED."""
    handler = OVERRIDES.get(id(func))
    if handler is None or not (has_runtime(args) or has_runtime(kwargs)):
        return NOT_HANDLED
    try:
        return handler(f, *args, **kwargs)
    except TypeError as exc:
        if "argument" not in str(exc):
            raise
        raise f.error(f"np.{func.__name__}(): {exc}".replace("handler() ", "")) from None

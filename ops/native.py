"""The Numba spellings ops declare (`OpDef.numba`): element templates for elementwise ops (`R`
is the result's scalar type, `T` the inputs' common type; see codegen/native/elements.py) and
whole-value spellings for reductions, products, indexing, creation and shaping, calling the
Numba-compatible helpers of ops/native_kernels.py.
"""
from __future__ import annotations

from typing import Any, Callable, Mapping

import numpy as np

from .native_kernels import (SMALL_PRODUCT, all_true, any_true, argmax_all, argmin_all,
                             checked_index, flat_2d, flat_3d, int_floordiv, int_mod, matmul_2d,
                             matvec, max_all, maximum_, min_all, minimum_, pairwise_sum,
                             prod_all, py_add, py_floordiv, py_int, py_max, py_min, py_mod, py_mul,
                             py_sub, py_truediv, scalar_power, set_item, sign_, sum_block, sum_ints,
                             tanh_f32, vecdot, vecmat)
from .opdef import Dyn, Spelling
from .types import NoneType, Scalar, Tensor, Type

__all__ = ["int_floordiv", "int_mod", "py_add", "py_floordiv", "py_mod", "py_mul", "py_sub",
           "py_truediv"]

# ---- elementwise ---------------------------------------------------------------------------------

Spell = Callable[[tuple[Type, ...], Mapping[str, Any]], Spelling | None]


def fixed(spelling: Spelling) -> Spell:
    """The same spelling (with its helpers) for any input types."""
    return lambda types, attrs: Spelling(spelling.template, attrs, spelling.helpers)


MAXIMUM = Spelling("maximum_(R(x), R(y))", {}, (maximum_,))
MINIMUM = Spelling("minimum_(R(x), R(y))", {}, (minimum_,))
RELU = Spelling("maximum_(R(x), R(0))", {}, (maximum_,))
SIGN = Spelling("sign_(R(x), R(0), R(1))", {}, (sign_,))


def floats_only(template: str, helpers: tuple = ()) -> Spell:
    """A spelling for float inputs only (NumPy's integer loops differ, or the formula's integer
    intermediates would)."""
    def spell(types: tuple[Type, ...], attrs: Mapping[str, Any]) -> Spelling | None:
        ok = all(isinstance(t, Tensor) and t.dtype.kind == "f" or t == Scalar(float)
                 for t in types if t != NoneType())
        return Spelling(template, attrs, helpers) if ok else None
    return spell


def python_checked(template: str, helper: Callable[..., Any]) -> Spell:
    """`template` on NumPy values; on Python numbers only, `helper(R(x), R(y))`, which raises
    where Python does (division by zero; an int leaving 64 bits, which Python keeps exact)."""
    def spell(types: tuple[Type, ...], attrs: Mapping[str, Any]) -> Spelling | None:
        if all(isinstance(t, Scalar) for t in types):
            return Spelling(f"{helper.__name__}(R(x), R(y))", attrs, (helper,))
        return Spelling(template, attrs)
    return spell


def int_division(helper: Callable[..., Any], python: Callable[..., Any]) -> Spell:
    """`//` and `%` on integers: NumPy's (0 for a zero divisor) on NumPy values, Python's
    (ZeroDivisionError) on Python ints; floats have no spelling."""
    def spell(types: tuple[Type, ...], attrs: Mapping[str, Any]) -> Spelling | None:
        if not all(isinstance(t, Scalar) and t.kind in (int, bool)
                   or isinstance(t, Tensor) and t.dtype.kind in "iub" for t in types):
            return None
        if all(isinstance(t, Scalar) for t in types):
            return Spelling(f"{python.__name__}(x, y)", attrs, (python,))
        return Spelling(f"{helper.__name__}(R(x), R(y))", attrs, (helper,))
    return spell


def power(types: tuple[Type, ...], attrs: Mapping[str, Any]) -> Spelling | None:
    """Float `x ** y`; a scalar exponent takes NumPy's fast paths (see `scalar_power`)."""
    if not all(isinstance(t, Tensor) and t.dtype.kind == "f" for t in types):
        return None
    if types[1].rank == 0 and types[0].rank > 0:  # NOTE: NumPy scalars have no fast paths
        return Spelling("scalar_power(R(x), R(y), R(1))", attrs, (scalar_power,))
    return Spelling("R(x) ** R(y)", attrs)


def round_spelling(types: tuple[Type, ...], attrs: Mapping[str, Any]) -> Spelling | None:
    """`np.round(x)` (to even, as `rint`); other decimals have no spelling."""
    if attrs["decimals"] or not isinstance(types[0], Tensor):
        return None
    return Spelling("np.rint(R(x))" if types[0].dtype.kind == "f" else "R(x)", attrs)


def invert_spelling(types: tuple[Type, ...], attrs: Mapping[str, Any]) -> Spelling | None:
    """`~x`: logical not on booleans, bitwise on integers."""
    t = types[0]
    is_bool = t == Scalar(bool) or isinstance(t, Tensor) and t.dtype == np.bool_
    return Spelling("not x" if is_bool else "~R(x)", attrs)


def clip_spelling(types: tuple[Type, ...], attrs: Mapping[str, Any]) -> Spelling | None:
    """`np.clip(x, lo, hi)` as NumPy computes it: `minimum(maximum(x, lo), hi)` (NaN wins); a
    bound of None is left out."""
    expr = "R(x)"
    if types[1] != NoneType():
        expr = f"maximum_({expr}, R(lo))"
    if types[2] != NoneType():
        expr = f"minimum_({expr}, R(hi))"
    return Spelling(expr, attrs, (maximum_, minimum_))


def tanh_spelling(types: tuple[Type, ...], attrs: Mapping[str, Any]) -> Spelling | None:
    """`np.tanh`: float32 through `tanh_f32` (a rational function within 1 ulp of the correctly
    rounded tanh, which a kernel vectorizes, where Numba's `np.tanh` calls the C library per
    element); other types through `np.tanh`."""
    x = types[0]
    if isinstance(x, Tensor) and x.dtype == np.float32:
        return Spelling("tanh_f32(x)", attrs, (tanh_f32,))
    return Spelling("np.tanh(R(x))", attrs)


# ---- Python builtins ---------------------------------------------------------------------------








def to_int_spelling(types: tuple[Type, ...], attrs: Mapping[str, Any]) -> Spelling | None:
    t = types[0]
    if not _is_number(t):
        return None
    floating = t == Scalar(float) or isinstance(t, Tensor) and t.dtype.kind == "f"
    return Spelling("py_int(x)", attrs, (py_int,)) if floating else Spelling("int(x)", attrs)


def extreme_spelling(helper: Callable[..., Any]) -> Spell:
    """Python's `min`/`max` of numbers of one type, pairwise from the left."""
    def spell(types: tuple[Type, ...], attrs: Mapping[str, Any]) -> Spelling | None:
        if len(types) < 2 or len(set(types)) != 1 or not _is_number(types[0]):
            return None
        expr = "xs_0"
        for k in range(1, len(types)):
            expr = f"{helper.__name__}({expr}, xs_{k})"
        return Spelling(expr, attrs, (helper,))
    return spell


def numbers_only(template: str) -> Spell:
    """`template` when every input is a number (a Python number or a rank-0 tensor)."""
    def spell(types: tuple[Type, ...], attrs: Mapping[str, Any]) -> Spelling | None:
        return Spelling(template, attrs) if all(map(_is_number, types)) else None
    return spell


def _is_number(t: Type) -> bool:
    return isinstance(t, Scalar) or isinstance(t, Tensor) and t.rank == 0


def _static(t: Type, rank: int | None = None) -> bool:
    return isinstance(t, Tensor) and t.is_static and t.rank > 0 and (rank is None or
                                                                     t.rank == rank)


# ---- reductions --------------------------------------------------------------------------------

MEAN_MAX_ELEMENTS = 8192
"""NumPy sums an integer array for `mean` in float64 chunks of this many elements; up to it the
kernel's one pairwise sum is NumPy's."""


def reduction_spelling(kind: str) -> Spell:
    """A reduction over every axis of a static array (no `keepdims`, no other dtype), in NumPy's
    order for a C-contiguous array (floats summed pairwise)."""
    def spell(types: tuple[Type, ...], attrs: Mapping[str, Any]) -> Spelling | None:
        x = types[0]
        if not _static(x) or x.rank > 3 or attrs.get("keepdims") \
                or attrs.get("dtype") is not None:
            return None
        axis = attrs.get("axis")
        if axis is not None and sorted(a % x.rank for a in (
                axis if isinstance(axis, tuple) else (axis,))) != list(range(x.rank)):
            return None
        size = int(np.prod(x.shape))
        flat, helpers = _flat(x, size)
        floating = x.dtype.kind == "f"
        fields: dict[str, Any] = {}
        if kind in ("sum", "mean"):
            if kind == "mean" and not floating:
                if size > MEAN_MAX_ELEMENTS:
                    return None
                flat = f"({flat}).astype(np.float64)"
            if floating or kind == "mean":
                dtype = x.dtype if floating else np.dtype(np.float64)
                total = "sum_block" if size <= 128 else "pairwise_sum"
                expr = f"zero + {total}({flat}, 0, {size}, zero)"
                helpers += (sum_block,) + ((pairwise_sum,) if size > 128 else ())
                fields["zero"] = dtype.type(0)
                if kind == "mean":
                    expr = f"({expr}) / n"
                    fields["n"] = dtype.type(size)
                return Spelling(expr, fields, helpers)
            out = np.dtype(np.uint64 if x.dtype.kind == "u" else np.int64)
            return Spelling(f"sum_ints({flat}, zero)", {"zero": out.type(0)},
                            helpers + (sum_ints,))
        if kind == "prod":
            if not floating:
                return None
            return Spelling(f"prod_all({flat}, one)", {"one": x.dtype.type(1)},
                            helpers + (prod_all,))
        helper = {"reduce_max": max_all, "reduce_min": min_all, "argmax": argmax_all,
                  "argmin": argmin_all, "all": all_true, "any": any_true}[kind]
        return Spelling(f"{helper.__name__}({flat})", fields, helpers + (helper,))
    return spell


def _flat(x: Tensor, size: int) -> tuple[str, tuple]:
    """An expression of `x`'s elements as a 1-d array in C order (x itself when 1-d)."""
    if x.rank == 1:
        return "x", ()
    helper = flat_2d if x.rank == 2 else flat_3d
    dtype = "np.bool_" if x.dtype == np.bool_ else f"np.{x.dtype.name}"
    return f"{helper.__name__}(x, np.empty({size}, {dtype}))", (helper,)


# ---- products ----------------------------------------------------------------------------------


def matmul_spelling(types: tuple[Type, ...], attrs: Mapping[str, Any]) -> Spelling | None:
    """`x @ y` of 1-d and 2-d arrays of one dtype: loops for small products, BLAS (`np.dot`)
    for large float ones."""
    if attrs.get("transpose_a") or attrs.get("transpose_b") or attrs.get("turned"):
        return None
    return _product("x", "y", types[0], types[1])


def dot_spelling(types: tuple[Type, ...], attrs: Mapping[str, Any]) -> Spelling | None:
    return _product("x", "y", types[0], types[1])


def dense_spelling(types: tuple[Type, ...], attrs: Mapping[str, Any]) -> Spelling | None:
    """`x @ weight.T (+ bias)`."""
    x, w = types[0], types[1]
    if not _static(w, 2):
        return None
    product = _product("x", "weight.T", x, Tensor(w.shape[::-1], w.dtype))
    if product is None or not attrs.get("has_bias"):
        return product
    b = types[2]
    if not _static(b) or b.dtype != w.dtype or b.rank > 1:
        return None
    return Spelling(f"{product.template} + bias_0", product.attrs, product.helpers)


def _product(a: str, b: str, x: Type, y: Type) -> Spelling | None:
    if not (_static(x) and _static(y) and x.rank <= 2 and y.rank <= 2 and x.dtype == y.dtype
            and x.dtype.kind in "fi"):
        return None
    m = x.shape[0] if x.rank == 2 else 1
    k = x.shape[-1]
    n = y.shape[1] if y.rank == 2 else 1
    if (y.shape[0] if y.rank == 2 else y.shape[0]) != k:
        return None
    dtype = x.dtype
    if x.dtype.kind == "f" and m * k * n > SMALL_PRODUCT:
        return Spelling(f"np.dot({a}, {b})", {})
    if x.rank == 2 and y.rank == 2:
        return Spelling(f"matmul_2d({a}, {b}, np.empty(shape, dtype))",
                        {"shape": (m, n), "dtype": dtype.type}, (matmul_2d,))
    if x.rank == 2:
        return Spelling(f"matvec({a}, {b}, np.empty(shape, dtype), zero)",
                        {"shape": (m,), "dtype": dtype.type, "zero": dtype.type(0)}, (matvec,))
    if y.rank == 2:
        return Spelling(f"vecmat({a}, {b}, np.empty(shape, dtype))",
                        {"shape": (n,), "dtype": dtype.type}, (vecmat,))
    return Spelling(f"vecdot({a}, {b}, zero)", {"zero": dtype.type(0)}, (vecdot,))


# ---- shaping and creation ----------------------------------------------------------------------


def transpose_spelling(types: tuple[Type, ...], attrs: Mapping[str, Any]) -> Spelling | None:
    """`x.T` of a 2-d array (a view, as NumPy's)."""
    x = types[0]
    if _static(x, 2) and attrs.get("perm") in (None, (1, 0)):
        return Spelling("x.T", {})
    return None


def cast_spelling(types: tuple[Type, ...], attrs: Mapping[str, Any]) -> Spelling | None:
    """`x.astype(dtype)` (a copy) of an array; a number becomes a NumPy scalar."""
    x, dtype = types[0], np.dtype(attrs["dtype"])
    if not (_static(x) or _is_number(x)) or dtype.kind not in "biuf" or dtype.itemsize < 4 \
            and dtype.kind == "f":
        return None
    if _is_number(x):
        return Spelling("dtype(x)", {"dtype": dtype.type})
    return Spelling("x.astype(dtype)", {"dtype": dtype.type})


def copy_spelling(types: tuple[Type, ...], attrs: Mapping[str, Any]) -> Spelling | None:
    return Spelling("x.copy()", {}) if _static(types[0]) else None


def filled_spelling(kind: str) -> Spell:
    """`np.zeros`/`np.ones`/`np.full` and their `_like` forms, of a static shape."""
    def spell(types: tuple[Type, ...], attrs: Mapping[str, Any]) -> Spelling | None:
        if kind.endswith("_like"):
            x = types[0]
            if not _static(x):
                return None
            shape = x.shape
            dtype = np.dtype(attrs["dtype"] if attrs.get("dtype") is not None else x.dtype)
            fill = types[1] if kind == "full_like" else None
        else:
            shape = attrs["shape"]
            if not isinstance(shape, tuple) or not all(type(d) is int for d in shape) \
                    or not shape or kind == "full" and attrs.get("dtype") is None:
                return None
            dtype = np.dtype(attrs["dtype"])
            fill = types[0] if kind == "full" else None
        if dtype.kind not in "biuf" or 0 in shape:
            return None
        base = kind.removesuffix("_like")
        fields = {"shape": tuple(shape), "dtype": dtype.type}
        if base == "full":
            if not _is_number(fill):
                return None
            value = "fill_value"
            return Spelling(f"np.full(shape, dtype({value}), dtype)", fields)
        return Spelling(f"np.{base}(shape, dtype)", fields)
    return spell


# ---- indexing ----------------------------------------------------------------------------------




def index_spelling(setting: bool) -> Spell:
    """`x[...]` and `x[...] = value` by ints (a run-time int checked against the axis) and
    slices, on a static array; other subscripts have no spelling."""
    def spell(types: tuple[Type, ...], attrs: Mapping[str, Any]) -> Spelling | None:
        x = types[0]
        if not _static(x):
            return None
        dyn = types[2:] if setting else types[1:]
        index = attrs["index"]
        if len(index) > x.rank:
            return None
        items, shown = [], []
        for axis, item in enumerate(index):
            if type(item) is int:
                items.append(repr(item))
                shown.append(repr(item))
            elif isinstance(item, Dyn):
                t = dyn[item.k]
                if not (t == Scalar(int) or isinstance(t, Tensor) and t.rank == 0
                        and t.dtype.kind in "iu"):
                    return None
                items.append(f"checked_index(idx_{item.k}, {x.shape[axis]}, {axis})")
                shown.append(items[-1])
            elif isinstance(item, slice):
                parts = []
                for bound in (item.start, item.stop, item.step):
                    if bound is None or type(bound) is int:
                        parts.append(repr(bound))
                    elif isinstance(bound, Dyn) and dyn[bound.k] == Scalar(int):
                        parts.append(f"idx_{bound.k}")
                    else:
                        return None
                items.append(f"slice({', '.join(parts)})")
                colon = ["" if p == "None" else p for p in parts]
                shown.append(":".join(colon if colon[2] else colon[:2]))
            else:
                return None
        if not items:
            return None
        key = "(" + ", ".join(items) + ("," if len(items) == 1 else "") + ")"
        if setting:
            value = types[1]
            if not (_is_number(value) or isinstance(value, Tensor) and value.dtype == x.dtype
                    and value.is_static):
                return None
            return Spelling(f"set_item(x, {key}, value)", {}, (set_item, checked_index))
        return Spelling(f"x[{', '.join(shown)}]", {}, (checked_index,))
    return spell

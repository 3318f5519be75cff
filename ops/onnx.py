"""The ONNX spellings ops declare (`OpDef.onnx`): small rules over an `OnnxEmitter`, which
codegen/onnx implements with the `onnx` package's helpers. This module imports only NumPy, so
declaring a spelling never imports onnx.

A rule is `rule(e, *inputs)`: `inputs` are ONNX value names (a tuple of them for a tuple input,
None for a None input); it returns the result's name. NumPy's dtype rules are written out as
casts: ONNX operators want operands of one type, NumPy promotes (`e.out_type` is the result's
type, amber's shape rule having decided it).
"""
from __future__ import annotations

from typing import Any, Callable, Mapping, Protocol, Sequence

import numpy as np

from .types import Scalar, Tensor, TupleType, Type

Rule = Callable[..., Any]


class OnnxEmitter(Protocol):
    """What a rule sees: the node's input types, result type and attributes, and node builders
    (codegen/onnx/emitter.py implements it)."""
    types: tuple[Type, ...]
    out_type: Type
    attrs: Mapping[str, Any]

    def node(self, op_type: str, *inputs: str, outputs: int = 1, **attrs: Any) -> Any:
        """One ONNX node; its output's name (a list of names when `outputs` > 1)."""

    def const(self, value: Any, dtype: Any = None) -> str:
        """A constant tensor (NumPy's array of `value`, of `dtype` when given)."""

    def cast(self, x: str, dtype: Any) -> str:
        """`x` as `dtype` (`x` itself when it already is)."""

    def shape(self, dims: Sequence[Any]) -> str:
        """A 1-d int64 tensor of sizes: ints, symbolic sizes and int value names."""

    def size(self, d: Any) -> str:
        """An int64 0-d tensor of a size: an int, a symbolic size or an int value's name."""

    def refuse(self, why: str) -> Any:
        """Stop: a CompileError at the node's line naming the op and `why`."""


def dtype_of(t: Type) -> np.dtype:
    """The NumPy dtype an ONNX tensor of amber type `t` has (a Python scalar is 0-d)."""
    if isinstance(t, Tensor):
        return t.dtype
    if isinstance(t, Scalar):
        return np.dtype({bool: np.bool_, int: np.int64, float: np.float64}[t.kind])
    raise TypeError(f"no ONNX tensor type for {t}")


_CATEGORY = {"b": 0, "i": 1, "u": 1, "f": 2}
_SCALAR_CATEGORY = {bool: 0, int: 1, float: 2}


def operand_dtype(types: Sequence[Type]) -> np.dtype:
    """The dtype NumPy compares or combines operands of `types` in: Python numbers are weak
    (a float32 array compared with 0.1 compares in float32), unless their kind is above the
    arrays' (an int array and 0.5 meet in float64)."""
    arrays = [t.dtype for t in types if isinstance(t, Tensor)]
    scalars = [t.kind for t in types if isinstance(t, Scalar)]
    if not arrays:
        return np.result_type(*(dtype_of(Scalar(k)) for k in scalars))
    common = np.result_type(*arrays)
    above = [k for k in scalars if _SCALAR_CATEGORY[k] > _CATEGORY.get(common.kind, 3)]
    return np.result_type(common, *(dtype_of(Scalar(k)) for k in above)) if above else common


def is_value(t: Type) -> bool:
    """A tensor or a Python scalar: one ONNX tensor."""
    return isinstance(t, Tensor | Scalar)


def same(op_type: str, **fixed: Any) -> Rule:
    """The ONNX operator `op_type` on the inputs cast to the result's dtype."""
    def rule(e: OnnxEmitter, *xs: str) -> str:
        dtype = dtype_of(e.out_type)
        return e.node(op_type, *(e.cast(x, dtype) for x in xs), **fixed)
    return rule


def compare(op_type: str, negate: bool = False) -> Rule:
    """A comparison: operands cast to their common dtype, a bool result (`Not` after when
    `negate`)."""
    def rule(e: OnnxEmitter, x: str, y: str) -> str:
        dtype = operand_dtype(e.types)
        out = e.node(op_type, e.cast(x, dtype), e.cast(y, dtype))
        return e.node("Not", out) if negate else out
    return rule


def logical(op_type: str) -> Rule:
    """A logical operator on the operands' truth values."""
    def rule(e: OnnxEmitter, *xs: str) -> str:
        return e.node(op_type, *(e.cast(x, np.bool_) for x in xs))
    return rule


def floats(op_type: str) -> Rule:
    """`op_type` (defined on floats only) on a float result; refused for integer results."""
    inner = same(op_type)

    def rule(e: OnnxEmitter, *xs: str) -> str:
        if dtype_of(e.out_type).kind != "f":
            return e.refuse(f"ONNX's {op_type} takes floats, the result here is "
                            f"{dtype_of(e.out_type)}")
        return inner(e, *xs)
    return rule


def formula(build: Callable[..., str]) -> Rule:
    """A rule written as ONNX nodes over the inputs cast to the result's dtype; `build(e, one,
    *xs)` gets `one`, a constant 1 of that dtype, to make constants from (`e.const(0.5, dt)`)."""
    def rule(e: OnnxEmitter, *xs: str) -> str:
        dtype = dtype_of(e.out_type)
        return build(e, dtype, *(e.cast(x, dtype) for x in xs))
    return rule


def identity(e: OnnxEmitter, x: Any, *rest: Any) -> Any:
    """The input itself (stop_gradient, depend, unary plus)."""
    return x


def to_result_dtype(e: OnnxEmitter, x: str, *rest: Any) -> str:
    """`x` cast to the result's dtype (astype, int(), float(), np.asarray of an array)."""
    if not is_value(e.types[0]):
        return e.refuse(f"a {e.types[0]} operand has no ONNX form here")
    return e.cast(x, dtype_of(e.out_type))


def to_result_shape(e: OnnxEmitter, x: str, *rest: Any) -> str:
    """`x` reshaped to the result's shape (reshape, flatten, squeeze, expand_dims)."""
    return e.node("Reshape", x, e.shape(e.out_type.shape), allowzero=1)


def expand_to_result(e: OnnxEmitter, value: str) -> str:
    """`value` (0-d) cast and broadcast to the result's shape and dtype."""
    out = e.out_type
    return e.node("Expand", e.cast(value, out.dtype), e.shape(out.shape))


def filled(fill: float) -> Rule:
    """zeros/ones(shape): the constant broadcast to the result's shape."""
    def rule(e: OnnxEmitter, *dims: str) -> str:
        return expand_to_result(e, e.const(fill, e.out_type.dtype))
    return rule


def filled_like(fill: float | None) -> Rule:
    """zeros_like/ones_like(x) (`fill`), full_like(x, v) (None: the second input)."""
    def rule(e: OnnxEmitter, x: str, *value: str) -> str:
        out = e.out_type
        v = e.const(fill, out.dtype) if fill is not None else e.cast(value[0], out.dtype)
        return e.node("Expand", v, e.shape(out.shape))
    return rule


def axes_of(axis: Any, rank: int) -> list[int]:
    """An `axis` attribute (None, an int or a tuple) as a list of non-negative axes."""
    if axis is None:
        return list(range(rank))
    items = axis if isinstance(axis, tuple | list) else (axis,)
    return [a % rank if rank else 0 for a in items]


def reduce(op_type: str, axes_input: bool = False, through: Any = None) -> Rule:
    """A reduction over `axis` (None: all) with `keepdims`: the input cast to the result's
    dtype first (or to `through`, then the result's dtype after: all/any over bools).
    `axes_input`: the operator takes its axes as an input (ReduceSum at opset 13+)."""
    def rule(e: OnnxEmitter, x: str) -> str:
        t = e.types[0]
        if not isinstance(t, Tensor):
            return e.refuse("a reduction over a Python number")
        rank, out = t.rank, dtype_of(e.out_type)
        axes = axes_of(e.attrs.get("axis"), rank)
        keep = int(bool(e.attrs.get("keepdims", False)))
        x = e.cast(x, through if through is not None else out)
        if rank == 0 or not axes:
            return e.cast(x, out)
        if axes_input:
            y = e.node(op_type, x, e.const(np.array(axes, np.int64)), keepdims=keep)
        else:
            y = e.node(op_type, x, axes=axes, keepdims=keep)
        return e.cast(y, out)
    return rule


def arg_reduce(op_type: str) -> Rule:
    """argmax/argmin: first index of the extreme, over the flattened array when axis is None."""
    def rule(e: OnnxEmitter, x: str) -> str:
        t, axis = e.types[0], e.attrs.get("axis")
        keep = int(bool(e.attrs.get("keepdims", False)))
        if axis is None:
            if keep and t.rank != 1:
                return e.refuse("argmax/argmin with axis=None and keepdims=True")
            x, axis = e.node("Reshape", x, e.const(np.array([-1], np.int64))), 0
        y = e.node(op_type, x, axis=int(axis), keepdims=keep, select_last_index=0)
        return e.cast(y, dtype_of(e.out_type))
    return rule


def join(stack: bool) -> Rule:
    """concat (stack=False) or stack of a tuple of arrays along `axis`."""
    def rule(e: OnnxEmitter, xs: Any) -> str:
        if not isinstance(xs, tuple) or not all(isinstance(x, str) for x in xs):
            return e.refuse("only a tuple of arrays known at compile time")
        out = e.out_type
        axis = e.attrs["axis"] % out.rank
        parts = [e.cast(x, out.dtype) for x in xs]
        if stack:
            where = e.const(np.array([axis], np.int64))
            parts = [e.node("Unsqueeze", p, where) for p in parts]
        return e.node("Concat", *parts, axis=axis)
    return rule


def python_minmax(op_type: str) -> Rule:
    """Builtin min/max of two or more values: elementwise Min/Max in the result's dtype."""
    inner = same(op_type)

    def rule(e: OnnxEmitter, *xs: Any) -> str:
        if len(xs) < 2 or not all(is_value(t) for t in e.types):
            return e.refuse("min/max of one sequence (pass two or more values)")
        return inner(e, *xs)
    return rule


def tuple_type(t: Type) -> bool:
    return isinstance(t, TupleType)


# ---- op-specific rules ---------------------------------------------------------------------

ORT_ARITHMETIC = frozenset(map(np.dtype, (np.float32, np.float64, np.int32, np.int64)))
"""Dtypes onnxruntime has arithmetic kernels for (its Add/Mul/... lack int8, uint8, float16 ...)."""
BOOL_ARITHMETIC = {"Add": "Or", "Mul": "And", "Max": "Or", "Min": "And"}
"""NumPy's arithmetic on bools as ONNX logic (True + True is True for bool arrays)."""


def arithmetic(op_type: str) -> Rule:
    """`op_type` in the result's dtype: bools through logic, dtypes without onnxruntime
    kernels refused."""
    def rule(e: OnnxEmitter, *xs: Any) -> str:
        dtype = dtype_of(e.out_type)
        if not all(isinstance(x, str) for x in xs):
            return e.refuse("an operand that is not an array or a number")
        if dtype == np.bool_ and op_type in BOOL_ARITHMETIC:
            return e.node(BOOL_ARITHMETIC[op_type], *(e.cast(x, dtype) for x in xs))
        if dtype not in ORT_ARITHMETIC:
            return e.refuse(f"onnxruntime has no {op_type} for {dtype}")
        return e.node(op_type, *(e.cast(x, dtype) for x in xs))
    return rule


def compare_numbers(op_type: str, negate: bool = False) -> Rule:
    """`compare` on numbers onnxruntime compares (bools as int32)."""
    inner = compare(op_type, negate)

    def rule(e: OnnxEmitter, x: Any, y: Any) -> str:
        if not (isinstance(x, str) and isinstance(y, str)):
            return e.refuse("a comparison of values that are not arrays or numbers")
        dtype = operand_dtype(e.types)
        if dtype == np.bool_ and op_type == "Equal":
            x, y = e.cast(x, np.int32), e.cast(y, np.int32)
        elif dtype not in ORT_ARITHMETIC:
            return e.refuse(f"onnxruntime has no {op_type} for {dtype}")
        return inner(e, x, y)
    return rule


def float_formula(build: Callable[..., str]) -> Rule:
    """`formula` for float results only (the others are refused)."""
    def rule(e: OnnxEmitter, *xs: str) -> str:
        dtype = dtype_of(e.out_type)
        if dtype not in (np.float32, np.float64):
            return e.refuse(f"only for float32/float64 results here, not {dtype}")
        return build(e, dtype, *(e.cast(x, dtype) for x in xs))
    return rule


def _safe_divisor(e: OnnxEmitter, dtype: np.dtype, y: str) -> tuple[str, str]:
    """(y with zeros replaced by 1, y == 0): integer division by zero traps in onnxruntime,
    where NumPy gives 0 (with a warning)."""
    zero = e.node("Equal", y, e.const(0, dtype))
    return e.node("Where", zero, e.const(1, dtype), y), zero


def floor_divide(e: OnnxEmitter, x: str, y: str) -> str:
    """`x // y`: floor of the quotient for floats; for integers the truncated quotient,
    corrected where the remainder's sign differs from the divisor's, and 0 for y == 0."""
    dtype = dtype_of(e.out_type)
    x, y = e.cast(x, dtype), e.cast(y, dtype)
    if dtype.kind == "f":
        return e.node("Floor", e.node("Div", x, y))
    if dtype not in ORT_ARITHMETIC:
        return e.refuse(f"onnxruntime has no integer division for {dtype}")
    safe, zero = _safe_divisor(e, dtype, y)
    q = e.node("Div", x, safe)
    r = e.node("Sub", x, e.node("Mul", q, safe))
    zero_r = e.const(0, dtype)
    off = e.node("And", e.node("Not", e.node("Equal", r, zero_r)),
                 e.node("Xor", e.node("Less", r, zero_r), e.node("Less", safe, zero_r)))
    q = e.node("Sub", q, e.cast(off, dtype))
    return e.node("Where", zero, zero_r, q)


def remainder(e: OnnxEmitter, x: str, y: str) -> str:
    """`x % y` with the divisor's sign (Python's and NumPy's): x - floor(x / y) * y for
    floats, ONNX's Mod for integers (0 for y == 0, as NumPy)."""
    dtype = dtype_of(e.out_type)
    x, y = e.cast(x, dtype), e.cast(y, dtype)
    if dtype.kind == "f":
        return e.node("Sub", x, e.node("Mul", e.node("Floor", e.node("Div", x, y)), y))
    if dtype not in ORT_ARITHMETIC:
        return e.refuse(f"onnxruntime has no integer remainder for {dtype}")
    safe, zero = _safe_divisor(e, dtype, y)
    return e.node("Where", zero, e.const(0, dtype), e.node("Mod", x, safe, fmod=0))


def power(e: OnnxEmitter, x: str, y: str) -> str:
    """`x ** y` in the result's dtype (float, or integers with a non-negative exponent)."""
    dtype = dtype_of(e.out_type)
    if dtype not in ORT_ARITHMETIC:
        return e.refuse(f"onnxruntime has no Pow for {dtype}")
    return e.node("Pow", e.cast(x, dtype), e.cast(y, dtype))


def select(e: OnnxEmitter, cond: str, x: str, y: str) -> str:
    """np.where(cond, x, y)."""
    dtype = dtype_of(e.out_type)
    if dtype == np.bool_:  # NOTE: onnxruntime has no Where for bools: chosen as uint8
        picked = e.node("Where", e.cast(cond, np.bool_), e.cast(e.cast(x, dtype), np.uint8),
                        e.cast(e.cast(y, dtype), np.uint8))
        return e.cast(picked, np.bool_)
    if dtype not in ORT_ARITHMETIC and dtype != np.uint8:
        return e.refuse(f"onnxruntime has no Where for {dtype}")
    return e.node("Where", e.cast(cond, np.bool_), e.cast(x, dtype), e.cast(y, dtype))


def clip(e: OnnxEmitter, x: str, lo: Any, hi: Any) -> str:
    """np.clip(x, lo, hi) (either bound None) as Max then Min (both broadcast, as NumPy's)."""
    dtype = dtype_of(e.out_type)
    if dtype not in ORT_ARITHMETIC:
        return e.refuse(f"onnxruntime has no Max/Min for {dtype}")
    y = e.cast(x, dtype)
    if lo is not None:
        y = e.node("Max", y, e.cast(lo, dtype))
    if hi is not None:
        y = e.node("Min", y, e.cast(hi, dtype))
    return y


def round_half_even(e: OnnxEmitter, x: str) -> str:
    """np.round(x, decimals): ONNX's Round rounds halves to even, as NumPy does."""
    dtype = dtype_of(e.out_type)
    if dtype.kind != "f":
        return e.cast(x, dtype)
    decimals = e.attrs.get("decimals", 0)
    x = e.cast(x, dtype)
    if decimals == 0:
        return e.node("Round", x)
    scale = e.const(10.0 ** decimals, dtype)
    return e.node("Div", e.node("Round", e.node("Mul", x, scale)), scale)


def float_test(op_type: str, negate: bool = False) -> Rule:
    """isnan/isinf (isfinite with `negate` over both): False for integer inputs."""
    def rule(e: OnnxEmitter, x: str) -> str:
        t = e.types[0]
        if dtype_of(t).kind != "f":
            return e.node("Expand", e.const(negate), e.shape(getattr(t, "shape", ())))
        x = e.cast(x, dtype_of(t)) if dtype_of(t) != np.float16 else e.cast(x, np.float32)
        if op_type == "finite":
            bad = e.node("Or", e.node("IsNaN", x), e.node("IsInf", x))
            return e.node("Not", bad)
        return e.node(op_type, x)
    return rule


def to_python(e: OnnxEmitter, x: str) -> str:
    """int(x), float(x), bool(x), not x of a number or a one-element array: a 0-d value."""
    t = e.types[0]
    if not is_value(t):
        return e.refuse(f"converting a {t} has no ONNX form")
    if isinstance(t, Tensor) and t.rank:
        x = e.node("Reshape", x, e.const(np.array([], np.int64)))
    if e.out_type == Scalar(bool) or dtype_of(e.out_type) == np.bool_:
        return e.cast(x, np.bool_)
    return e.cast(x, dtype_of(e.out_type))


def logical_not_python(e: OnnxEmitter, x: str) -> str:
    """`not x`."""
    return e.node("Not", to_python(e, x))


def transpose(e: OnnxEmitter, x: str) -> str:
    perm = e.attrs.get("perm")
    rank = e.types[0].rank
    perm = list(range(rank))[::-1] if perm is None else [p % rank for p in perm]
    return e.node("Transpose", x, perm=perm)


def broadcast_to(e: OnnxEmitter, x: str, *dims: Any) -> str:
    return e.node("Expand", x, e.shape(e.out_type.shape))


def shape_of(e: OnnxEmitter, x: str) -> tuple[str, ...]:
    """x.shape: a tuple of int sizes (known ones as constants)."""
    t = e.types[0]
    if not isinstance(t, Tensor):
        return ()
    dims = []
    for axis, d in enumerate(t.shape):
        if isinstance(d, int):
            dims.append(e.const(d, np.int64))
        else:
            dims.append(e.node("Squeeze", e.node("Shape", x, start=axis, end=axis + 1),
                               e.const(np.array([0], np.int64))))
    return tuple(dims)


def dim_value(e: OnnxEmitter) -> str:
    """A symbolic size as an int, read at the graph's entry."""
    return e.size(e.attrs["value"])


def full(e: OnnxEmitter, fill: str, *dims: Any) -> str:
    return expand_to_result(e, fill)


def as_array(e: OnnxEmitter, x: Any) -> str:
    """np.array / np.asarray of an array, a number or a (nested) tuple of them."""
    out = e.out_type
    if isinstance(x, str):
        return e.node("Reshape", e.cast(x, out.dtype), e.shape(out.shape), allowzero=1) \
            if isinstance(e.types[0], Scalar) or e.types[0].shape != out.shape \
            else e.cast(x, out.dtype)
    items = list(_flat(x))
    if not items or any(i is None for i in items):
        return e.refuse("an array of this Python value")
    flat = e.node("Concat", *(e.node("Reshape", e.cast(i, out.dtype), e.const(
        np.array([-1], np.int64))) for i in items), axis=0)
    return e.node("Reshape", flat, e.shape(out.shape), allowzero=1)


def _flat(x: Any) -> Any:
    if isinstance(x, tuple):
        for item in x:
            yield from _flat(item)
    else:
        yield x


def flip(e: OnnxEmitter, x: str) -> str:
    rank = e.types[0].rank
    axes = axes_of(e.attrs.get("axis"), rank)
    n = len(axes)
    big = np.iinfo(np.int64).max
    return e.node("Slice", x, e.const(np.full(n, -1, np.int64)),
                  e.const(np.full(n, -big, np.int64)), e.const(np.array(axes, np.int64)),
                  e.const(np.full(n, -1, np.int64)))


def cumsum(e: OnnxEmitter, x: str) -> str:
    dtype = dtype_of(e.out_type)
    axis = e.attrs.get("axis")
    x = e.cast(x, dtype)
    if axis is None or isinstance(e.types[0], Scalar) or e.types[0].rank == 0:
        x, axis = e.node("Reshape", x, e.const(np.array([-1], np.int64))), 0
    return e.node("CumSum", x, e.const(int(axis), np.int64))


def all_any(op_type: str) -> Rule:
    """all (ReduceMin) / any (ReduceMax) of truth values, reduced as int32."""
    def rule(e: OnnxEmitter, x: str) -> str:
        t = e.types[0]
        truth = e.cast(e.cast(x, np.bool_), np.int32)
        axes = axes_of(e.attrs.get("axis"), t.rank if isinstance(t, Tensor) else 0)
        if not axes:
            return e.cast(truth, np.bool_)
        keep = int(bool(e.attrs.get("keepdims", False)))
        return e.cast(e.node(op_type, truth, axes=axes, keepdims=keep), np.bool_)
    return rule


def relu6(e: OnnxEmitter, x: str) -> str:
    return clip(e, x, e.const(0, dtype_of(e.out_type)), e.const(6, dtype_of(e.out_type)))


def leaky_relu(e: OnnxEmitter, x: str) -> str:
    dtype = dtype_of(e.out_type)
    x = e.cast(x, dtype)
    alpha = e.const(e.attrs["alpha"], dtype)
    return e.node("Where", e.node("Greater", x, e.const(0, dtype)), x, e.node("Mul", x, alpha))


def gelu(e: OnnxEmitter, dtype: np.dtype, x: str) -> str:
    """0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))), the tanh approximation amber's gelu
    computes."""
    c = lambda v: e.const(v, dtype)
    cube = e.node("Mul", e.node("Mul", x, x), x)
    inner = e.node("Mul", c(0.7978845608028654), e.node("Add", x, e.node("Mul", c(0.044715),
                                                                          cube)))
    return e.node("Mul", e.node("Mul", c(0.5), x), e.node("Add", c(1.0), e.node("Tanh", inner)))


# ---- float formulas (the inputs already cast to the result's float dtype `dt`) -----------------

true_divide = float_formula(lambda e, dt, x, y: e.node("Div", x, y))
rsqrt = float_formula(lambda e, dt, x: e.node("Reciprocal", e.node("Sqrt", x)))
log1p = float_formula(lambda e, dt, x: e.node("Log", e.node("Add", x, e.const(1, dt))))
expm1 = float_formula(lambda e, dt, x: e.node("Sub", e.node("Exp", x), e.const(1, dt)))
square = formula(lambda e, dt, x: e.node("Mul", x, x))


def _trunc(e: OnnxEmitter, dt: np.dtype, x: str) -> str:
    """Toward zero: ceil below zero, floor above (opset 17 has no Trunc)."""
    below = e.node("Less", x, e.const(0, dt))
    return e.node("Where", below, e.node("Ceil", x), e.node("Floor", x))


def _hypot(e: OnnxEmitter, dt: np.dtype, x: str, y: str) -> str:
    return e.node("Sqrt", e.node("Add", e.node("Mul", x, x), e.node("Mul", y, y)))


trunc = float_formula(_trunc)
hypot = float_formula(_hypot)


# NOTE: the rules of layers and indexing live in onnx_layers.py (size); the family files reach
# them as `ox.<rule>` through these names.
from .onnx_layers import (avg_pool2d, batch_norm, conv2d, conv2d_grad_input, dense, dot,  # noqa
                          dropout, embedding, gather, getitem, layer_norm, matmul, max_pool2d,
                          pad, softmax, tile)

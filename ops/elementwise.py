"""Elementwise ops: unary Python operators, NumPy ufuncs and activations (the binary family and
select/clip are in ops/binary.py), with NumPy broadcasting.

Also the machinery every family shares: dtype probes, named-error kernels, spelling binders.
Ops with an `operator` run the `operator` function and emit the operator itself, so Python scalars
keep Python semantics (`7 / 2 == 3.5`) and arrays get NumPy's, exactly as eager code does.
"""
from __future__ import annotations

import inspect
import math
import operator as pyop
import warnings
from typing import Any, Callable, Mapping

import numpy as np

from . import onnx as ox
from . import native
from .batching import broadcast_batch
from .opdef import NO_GRAD, REQUIRED, GradContext, OpDef, OpFunction, Primitive, Spelling
from .types import (KNOWN_VALUES, NOT_KNOWN, VALUE_BASED_CASTING, ListType, NoneType, Scalar,
                    Tensor, TupleType, Type, broadcast_shapes, type_of)

Infer = Callable[..., Type]
Fix = Callable[[dict[str, Any]], dict[str, Any]]


# ---- shared machinery: dtype probes, named errors, spellings --------------------------------

def sample(t: Type) -> Any:
    """A tiny concrete value of type `t` (ones, so no op divides by zero or overflows); of
    shape (), a NumPy scalar, as run-time 0-d values mostly are (`x.sum()`, `x[i]`; NumPy 1.24
    promotes them differently from 0-d arrays in a few operators)."""
    if isinstance(t, Tensor):
        return np.ones((1,) * t.rank, t.dtype)[()] if t.rank == 0 else np.ones((1,) * t.rank,
                                                                                t.dtype)
    if isinstance(t, Scalar):
        return t.kind(1)
    if isinstance(t, NoneType):
        return None
    if isinstance(t, TupleType):
        return tuple(sample(e) for e in t.elements)
    if isinstance(t, ListType):
        return [sample(t.element)]
    raise TypeError(f"expected a tensor or a Python scalar, got {t}")


def probe(name: str, fn: Callable[..., Any], types: tuple[Type, ...], attrs: Mapping[str, Any],
          samples: tuple[Any, ...] | None = None) -> Any:
    """Run `fn` on samples of `types` (or on `samples`): NumPy itself decides the result dtype
    or scalar kind."""
    try:
        with np.errstate(all="ignore"), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return fn(*(samples or tuple(sample(t) for t in types)), **attrs)
    except (TypeError, ValueError, OverflowError) as err:
        shown = ", ".join(str(t) for t in types)
        raise TypeError(f"{name}: unsupported operand type(s) {shown}: {err}") from None


def as_tensor(name: str, t: Type) -> Tensor:
    """`t` as a tensor: a Python scalar is the 0-d array NumPy would make of it."""
    if isinstance(t, Tensor):
        return t
    if isinstance(t, Scalar):
        return Tensor((), np.asarray(t.kind(0)).dtype)
    raise TypeError(f"{name}: expected a tensor, got {t}")


def checked(name: str, fn: Callable[..., Any], infer: Infer) -> Callable[..., Any]:
    """`fn` whose failures name the op: infer's message when infer rejects the arguments' types
    (it names the shapes), else NumPy's message prefixed with the op name."""
    def kernel(*args: Any, **attrs: Any) -> Any:
        try:
            return fn(*args, **attrs)
        except (ValueError, TypeError, IndexError, ZeroDivisionError) as err:
            raise _explained(name, infer, args, attrs, err) from err
    kernel.__name__ = kernel.__qualname__ = f"{name}_kernel"
    kernel.__doc__ = fn.__doc__
    return kernel


def _explained(name: str, infer: Infer, args: tuple[Any, ...], attrs: Mapping[str, Any],
               err: Exception) -> Exception:
    try:
        types = [type_of(a) for a in args]
    except TypeError:
        types = None
    if types is not None:
        try:
            infer(*types, **attrs)
        except (ValueError, TypeError, IndexError) as named:
            return named
    kind = next((k for k in (ValueError, IndexError, TypeError) if isinstance(err, k)),
                ZeroDivisionError)
    return kind(f"{name}: {err}")


def _signature(params: str) -> inspect.Signature:
    # NOTE: a spelling's parameters are written as the Python signature users know it by.
    return inspect.signature(eval(f"lambda {params}: None", {"np": np}))


def _bound(spelling: str, sig: inspect.Signature, args: tuple, kwargs: dict) -> dict[str, Any]:
    try:
        bound = sig.bind(*args, **kwargs)
    except TypeError as err:
        raise TypeError(f"{spelling}: {err}") from None
    bound.apply_defaults()
    return dict(bound.arguments)


def _route(op: OpDef, values: dict[str, Any], fix: Fix | None, rename: Mapping[str, str]
           ) -> tuple[tuple[Any, ...], dict[str, Any]]:
    values = {rename.get(k, k): v for k, v in values.items()}
    if fix is not None:
        values = fix(values)
    inputs: list[Any] = []
    for name in op.inputs:
        if name.startswith("*"):
            inputs.extend(values.pop(name[1:]))
        else:
            inputs.append(values.pop(name))
    return tuple(inputs), values


def spell(name: str, op: OpDef, params: str, fix: Fix | None = None, **rename: str
          ) -> OpFunction:
    """The functional spelling `name(params)` of `op`: arguments reach the op's inputs and attrs
    by name after `rename` (spelling name -> op name) and `fix` (canonical attr values)."""
    sig = _signature(params)

    def binder(*args: Any, **kwargs: Any) -> tuple[tuple[Any, ...], dict[str, Any]]:
        return _route(op, _bound(name, sig, args, kwargs), fix, rename)
    return OpFunction(name, op, binder)


def primitive(name: str, op: OpDef, init: str = "", call: str = "x", fix: Fix | None = None,
              **rename: str) -> type[Primitive]:
    """MindSpore's `Name(init)(call)` spelling of `op`, as a `Primitive` subclass."""
    init_sig, call_sig = _signature(init), _signature(call)

    def __init__(self: Primitive, *args: Any, **kwargs: Any) -> None:
        self.params = _bound(name, init_sig, args, kwargs)

    def binder(self: Primitive, *args: Any, **kwargs: Any) -> tuple[tuple, dict[str, Any]]:
        return _route(op, {**self.params, **_bound(name, call_sig, args, kwargs)}, fix, rename)

    def __repr__(self: Primitive) -> str:
        return f"{name}({', '.join(f'{k}={v!r}' for k, v in self.params.items())})"
    body = {"op": op, "__init__": __init__, "binder": binder, "__repr__": __repr__,
            "__doc__": f"MindSpore's `ops.{name}({init})({call})`.", "__module__": "amber.ops",
            "__qualname__": name}
    return type(name, (Primitive,), body)


def np_call(func: str, args: str, **defaults: Any) -> Callable[[Mapping[str, Any]], str]:
    """An emit `func(args, k=k, ...)` naming only the attributes that differ from `defaults`."""
    def emit(attrs: Mapping[str, Any]) -> str:
        kws = [f"{k}={k}" for k, d in defaults.items() if not _same(attrs[k], d)]
        return f"{func}({', '.join(a for a in [args, *kws] if a)})"
    return emit


def on_tensor(method: Callable[[Mapping[str, Any]], str]) -> Callable[..., Spelling | None]:
    """A `specialize` rule: when the first input is a tensor, the ndarray method spelling
    `method(attrs)` (`x.sum()`: no Python-level `np.*` wrapper, half the cost on small arrays);
    Python scalars keep the function."""
    def specialize(types: tuple[Type, ...], attrs: Mapping[str, Any]) -> Spelling | None:
        return Spelling(method(attrs), attrs) if isinstance(types[0], Tensor) else None
    return specialize


def _same(a: Any, b: Any) -> bool:
    return a is b or (type(a) is type(b) and a == b)


def dtype_or_none(values: dict[str, Any], key: str = "dtype") -> dict[str, Any]:
    """Canonical dtype attr: an `np.dtype` (or None); accepts `np.float32`, `"float32"`, `float`."""
    if values.get(key) is not None:
        values[key] = np.dtype(values[key])
    return values


def helper_call(helper: Callable[..., Any], args: str,
          defaults: Mapping[str, Any]) -> Callable[[Mapping[str, Any]], str]:
    """An emit rule `helper(args, name=name, ...)` that leaves out attributes at their default."""
    def emit(attrs: Mapping[str, Any]) -> str:
        kws = [f"{k}={k}" for k, d in defaults.items() if d is REQUIRED or attrs.get(k, d) != d]
        return f"{helper.__name__}({', '.join([args, *kws])})"
    return emit


def unsupported(op: str, **flags: Any) -> None:
    """Refuse MindSpore arguments amber does not implement (set to a non-default value)."""
    for name, value in flags.items():
        if value:
            raise NotImplementedError(f"{op}: {name}={value!r} is not supported")


def optional(*inputs: Any) -> tuple[Any, ...]:
    """The inputs given (an optional bias left out when None)."""
    return tuple(v for v in inputs if v is not None)


# ---- elementwise shape and dtype rule ---------------------------------------------------------

def elementwise_infer(name: str, fn: Callable[..., Any], nullable: bool = False,
                      numeric: bool = False) -> Infer:
    """Broadcast shape of the tensor operands; the dtype (or Python scalar kind) is what `fn`
    gives on samples, which reproduces NumPy 2 promotion and Python's scalar rules exactly.
    `nullable`: inputs after the first may be None (clip bounds)."""
    def infer(*types: Type, **attrs: Any) -> Type:
        for i, t in enumerate(types):
            if not (isinstance(t, Tensor | Scalar) or (nullable and i and t == NoneType())):
                shown = ", ".join(str(t) for t in types)
                raise TypeError(f"{name}: expected tensors or Python scalars, got {shown}")
            if numeric and _is_bool(t):
                raise TypeError(f"{name}: expected a numeric tensor, got {t}")
        try:
            shape = broadcast_shapes(*(t.shape for t in types if isinstance(t, Tensor)))
        except ValueError as err:
            raise ValueError(f"{name}: {err}") from None
        values = KNOWN_VALUES.get()
        _refuse_value_dependent(name, fn, types, values)
        # NOTE: NumPy 1 promotes by value; `**` picks its ufunc by the exponent's value under
        # both NumPys (`mask ** 2` is int8, `mask ** 3` int64)
        by_value = VALUE_BASED_CASTING or name == "pow"
        out = type_of(_probe_known_values(name, fn, types, attrs, values) if by_value
                      else probe(name, fn, types, attrs))
        return Tensor(shape, out.dtype) if isinstance(out, Tensor) else out
    return infer


def _scalar_like(t: Type) -> bool:
    return isinstance(t, Scalar) or isinstance(t, Tensor) and t.rank == 0


def _probe_known_values(name: str, fn: Callable[..., Any], types: tuple[Type, ...],
                        attrs: Mapping[str, Any], values: tuple[Any, ...] | None) -> Any:
    """`probe` with the values of compile-time constants (`KNOWN_VALUES`) as the samples of
    Python scalar and 0-d operands mixed with arrays, where their value decides the dtype."""
    if values is None or len(values) != len(types) or not any(
            isinstance(t, Tensor) and t.rank > 0 for t in types):
        return probe(name, fn, types, attrs)
    samples = tuple(np.asarray(v) if isinstance(t, Tensor) and v is not NOT_KNOWN
                    else v if _scalar_like(t) and v is not NOT_KNOWN else sample(t)
                    for t, v in zip(types, values))
    try:
        return probe(name, fn, types, attrs, samples)
    except TypeError:  # NOTE: e.g. a Python int beyond int64: let the usual rule report it
        return probe(name, fn, types, attrs)


def _refuse_value_dependent(name: str, fn: Callable[..., Any], types: tuple[Type, ...],
                            values: tuple[Any, ...] | None) -> None:
    """Refuse an op whose result dtype NumPy decides by the value of an operand that is known
    only at run time: under NumPy 1 a narrow array meeting a run-time number (value-based
    casting); and `**`, which NumPy computes by another ufunc for some exponents. `values`: the
    operands' values where they are compile-time constants (None: none is known)."""
    known = values if values is not None and len(values) == len(types) else None
    why = _power_depends_on_value(fn, types, known) if name == "pow" else None
    if why is None and VALUE_BASED_CASTING and known is not None:
        why = _casting_depends_on_value(types, known)
    if why is not None:
        raise TypeError(
            f"{name}: under NumPy {np.__version__}, {why}, and that value is computed at run "
            "time, so the dtype is not known when compiling; cast one side explicitly (e.g. "
            "`x.astype(np.int64)`, `mask.astype(np.int32)`)")


POWER_PROBES = (-1, 0, 0.5, 1, 2, 2.5, 3)
"""Exponents that reveal NumPy's power fast paths: an array raised to -1, 0, 0.5, 1 or 2 is
computed by reciprocal, ones_like, sqrt, positive or square (NumPy 1: for any scalar or 0-d
exponent; NumPy 2: for a Python int 2), whose dtype can differ from power's (`mask ** 2` is
int8); 2.5 and 3 take power itself."""


def _power_depends_on_value(fn: Callable[..., Any], types: tuple[Type, ...],
                            values: tuple[Any, ...] | None) -> str | None:
    """Why the dtype of `base ** exponent` depends on a run-time exponent's value, or None.
    A 0-d base is probed as a 0-d array and as a NumPy scalar (it may be either at run time)."""
    base, exponent = types
    if values is not None and values[1] is not NOT_KNOWN:
        return None
    if not isinstance(base, Tensor) or not _scalar_like(exponent) or _is_bool(exponent):
        return None
    array = np.ones((1,) * base.rank, base.dtype)
    exponents = [e for e in (_exponent_of(exponent, v) for v in POWER_PROBES) if e is not None]
    for b in (array, array[()]) if base.rank == 0 else (array,):
        dtypes = set()
        for e in exponents:
            try:
                with np.errstate(all="ignore"), warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    dtypes.add(np.result_type(fn(b, e)))
            except (TypeError, ValueError, OverflowError, ZeroDivisionError):
                continue  # NOTE: not an exponent this base takes (int ** -1): no dtype to compare
        if len(dtypes) > 1:
            shown = ", ".join(sorted(str(d) for d in dtypes))
            return (f"a {base.dtype} base raised to a {exponent} exponent is {shown} depending "
                    "on the exponent's value (NumPy computes `** 2` as a square, `** 0.5` as a "
                    "square root, ...)")
    return None


def _exponent_of(t: Type, value: float) -> Any:
    """`value` as an operand of type `t` (a Python number, or a NumPy scalar of t's dtype);
    None where `t` cannot hold it."""
    if isinstance(t, Scalar):
        return None if t.kind is int and value != int(value) else t.kind(value)
    if t.dtype.kind in "iu" and (value != int(value) or value < 0 and t.dtype.kind == "u"):
        return None
    return np.array(value, t.dtype)[()]


def _casting_depends_on_value(types: tuple[Type, ...], values: tuple[Any, ...]) -> str | None:
    """NumPy 1: why a narrow array combined with a run-time number has a value-dependent dtype
    (int8 + 300 is int16; uint8 + -1 is int16; float16 * 1e5 and float16 + 300 are float32),
    or None. NOTE: run-time numbers are taken as small (an int32 array plus 2**40 is int64, a
    float32 array plus 70000 float64: amber assumes neither)."""
    arrays = [t.dtype for t in types if isinstance(t, Tensor) and t.rank > 0]
    for t, v in zip(types, values):
        if v is not NOT_KNOWN or not _scalar_like(t):
            continue
        dtype = t.dtype if isinstance(t, Tensor) else np.asarray(t.kind(0)).dtype
        for array in arrays:
            narrow_int = (array.kind in "iu" and dtype.kind in "iu"
                          and not np.can_cast(dtype, array)
                          and (array.itemsize < 4 or array.kind == "u"))
            narrow_float = array == np.float16 and (  # NOTE: float16 + 300 is float32
                dtype.kind == "f" and dtype.itemsize > 2
                or dtype.kind in "iu" and not np.can_cast(dtype, array))
            if narrow_int or narrow_float:
                return (f"the dtype of a {array} array combined with a {dtype} value depends "
                        "on that value (value-based casting)")
    return None


def _is_bool(t: Type) -> bool:
    return t == Scalar(bool) or (isinstance(t, Tensor) and t.dtype == np.bool_)


def elementwise_op(name: str, inputs: tuple[str, ...], fn: Callable[..., Any], emit: Any, *,
        operator: str | None = None, wrap: bool = True, nullable: bool = False,
        numeric: bool = False, commutative: bool = False, inplace: str | None = None,
        attrs: Mapping[str, Any] | None = None, can_raise: bool = False,
        grad: Callable[[GradContext], tuple[Any, ...]] | None = None,
        numba: Any = None, onnx: Any = None) -> OpDef:
    infer = elementwise_infer(name, fn, nullable, numeric)
    kernel = checked(name, fn, infer) if wrap and operator is None else fn
    return OpDef(name, inputs, kernel=kernel, infer=infer, emit=emit, attrs=dict(attrs or {}),
                 operator=operator, commutative=commutative, elementwise=True, fresh=True,
                 inplace=inplace, can_raise=can_raise, grad=grad, numba=numba,
                 onnx=onnx, batch=broadcast_batch)


def _unary(name: str, fn: Callable[..., Any], emit: str, ufunc: str | None = None, **kw: Any
           ) -> OpDef:
    """`ufunc`: the NumPy ufunc computing the op on arrays, for the in-place form."""
    inplace = f"np.{ufunc}(x, out=out)" if ufunc else kw.pop("inplace", None)
    return elementwise_op(name, ("x",), fn, emit, inplace=inplace, **kw)


def binary_op(name: str, fn: Callable[..., Any], emit: str, ufunc: str | None = None, **kw: Any
            ) -> OpDef:
    return elementwise_op(name, ("x", "y"), fn, emit,
                          inplace=ufunc and f"np.{ufunc}(x, y, out=out)", **kw)


def ufunc_op(name: str, fn: np.ufunc, in_place: bool = True, **kw: Any) -> OpDef:
    """`in_place=False` where no input can have the result's dtype (isnan: float -> bool)."""
    args = "x" if fn.nin == 1 else "x, y"
    return elementwise_op(name, ("x",) if fn.nin == 1 else ("x", "y"), fn,
                          f"np.{fn.__name__}({args})",
                          inplace=f"np.{fn.__name__}({args}, out=out)" if in_place else None, **kw)


def _rsqrt(x: Any) -> Any:
    return 1 / np.sqrt(x)


def _sigmoid(x: Any) -> Any:
    return 1 / (1 + np.exp(-x))


def _relu(x: Any) -> Any:
    return np.maximum(x, 0)


def _gelu(x: Any) -> Any:
    """GELU, tanh approximation (MindSpore's default `approximate=True`); 0.79788... is
    sqrt(2 / pi)."""
    return 0.5 * x * (1 + np.tanh(0.7978845608028654 * (x + 0.044715 * x ** 3)))


def _round(x: Any, decimals: int) -> Any:
    return np.round(x, decimals)


# ---- gradient rules: d(input) from the result's adjoint `ad.g` ---------------------------------

def _gelu_grad(ad: GradContext) -> tuple[Any, ...]:
    x = ad.input(0)
    inner = 0.7978845608028654 * (x + 0.044715 * x * x * x)
    t = ad.op("tanh", inner)
    slope = 0.7978845608028654 * (1 + 0.134145 * x * x)  # d inner / dx; 0.134145 = 3 * 0.044715
    return ad.g * (0.5 * (1 + t) + 0.5 * x * (1 - t * t) * slope),


# ---- ops --------------------------------------------------------------------------------------

neg = _unary("neg", pyop.neg, "-x", "negative", operator="USub", grad=lambda ad: (-ad.g,),
             numba="-R(x)", onnx=ox.arithmetic("Neg"))
pos = _unary("pos", pyop.pos, "+x", "positive", operator="UAdd", grad=lambda ad: (ad.g,),
             numba="+R(x)", onnx=ox.identity)
absolute = _unary("abs", abs, "abs(x)", "absolute", wrap=False,  # abs(-2) stays a Python int
                  grad=lambda ad: (ad.g * ad.op("sign", ad.input(0)),), numba="abs(R(x))",
                  onnx=ox.arithmetic("Abs"))
exp = ufunc_op("exp", np.exp, grad=lambda ad: (ad.g * ad.out,), numba="np.exp(R(x))",
             onnx=ox.floats("Exp"))
log = ufunc_op("log", np.log, grad=lambda ad: (ad.g / ad.input(0),), numba="np.log(R(x))",
             onnx=ox.floats("Log"))
sqrt = ufunc_op("sqrt", np.sqrt, grad=lambda ad: (ad.g / (ad.out * 2),), numba="np.sqrt(R(x))",
              onnx=ox.floats("Sqrt"))
rsqrt = _unary("rsqrt", _rsqrt, "1 / np.sqrt(x)",
               inplace="np.divide(1, np.sqrt(x, out=out), out=out)",
               grad=lambda ad: (ad.g * -0.5 * ad.out * ad.out * ad.out,),
               numba=native.floats_only("R(1) / np.sqrt(R(x))"), onnx=ox.rsqrt)
square = ufunc_op("square", np.square, grad=lambda ad: (ad.g * (ad.input(0) * 2),),
                numba="R(x) * R(x)", onnx=ox.square)
reciprocal = ufunc_op("reciprocal", np.reciprocal,  # NOTE: NumPy's: integer 1/x for ints
                    grad=lambda ad: (-ad.g * ad.out * ad.out,), numba=native.floats_only("R(1) / R(x)"),
                    onnx=ox.floats("Reciprocal"))
tanh = ufunc_op("tanh", np.tanh, grad=lambda ad: (ad.g * (1 - ad.out * ad.out),),
              numba=native.tanh_spelling, onnx=ox.floats("Tanh"))
sigmoid = _unary("sigmoid", _sigmoid, "1 / (1 + np.exp(-x))", inplace="np.divide(1, np.add("
                 "1, np.exp(np.negative(x, out=out), out=out), out=out), out=out)",
                 grad=lambda ad: (ad.g * ad.out * (1 - ad.out),),
                 numba=native.floats_only("R(1) / (R(1) + np.exp(-R(x)))"),
                 onnx=ox.floats("Sigmoid"))
relu = _unary("relu", _relu, "np.maximum(x, 0)", numeric=True,
              inplace="np.maximum(x, 0, out=out)", grad=lambda ad: (ad.g * (ad.out > 0),),
              numba=native.fixed(native.RELU), onnx=ox.arithmetic("Relu"))
gelu = _unary("gelu", _gelu,
              "0.5 * x * (1 + np.tanh(0.7978845608028654 * (x + 0.044715 * x ** 3)))",
              grad=_gelu_grad, numba=native.floats_only(
                  "R(0.5) * R(x) * (R(1) + np.tanh(R(0.7978845608028654) * (R(x) + R(0.044715)"
                  " * R(x) ** R(3))))"), onnx=ox.float_formula(ox.gelu))
floor = ufunc_op("floor", np.floor, grad=NO_GRAD, numba="np.floor(R(x))", onnx=ox.floats("Floor"))
ceil = ufunc_op("ceil", np.ceil, grad=NO_GRAD, numba="np.ceil(R(x))", onnx=ox.floats("Ceil"))
round_ = _unary("round", _round, lambda a: "np.round(x, decimals)" if a["decimals"] else
                "np.round(x)", inplace="np.round(x, decimals, out=out)", attrs={"decimals": 0},
                grad=NO_GRAD, numba=native.round_spelling, onnx=ox.round_half_even)
sign = ufunc_op("sign", np.sign, grad=NO_GRAD, numba=native.fixed(native.SIGN),
              onnx=ox.arithmetic("Sign"))
sin = ufunc_op("sin", np.sin, grad=lambda ad: (ad.g * ad.op("cos", ad.input(0)),),
             numba="np.sin(R(x))", onnx=ox.floats("Sin"))
cos = ufunc_op("cos", np.cos, grad=lambda ad: (-ad.g * ad.op("sin", ad.input(0)),),
             numba="np.cos(R(x))", onnx=ox.floats("Cos"))
log1p = ufunc_op("log1p", np.log1p, grad=lambda ad: (ad.g / (ad.input(0) + 1),),
               numba="np.log1p(R(x))", onnx=ox.log1p)
expm1 = ufunc_op("expm1", np.expm1, grad=lambda ad: (ad.g * (ad.out + 1),), numba="np.expm1(R(x))",
               onnx=ox.expm1)
log2 = ufunc_op("log2", np.log2, grad=lambda ad: (ad.g / (ad.input(0) * math.log(2)),),
              numba="np.log2(R(x))")
log10 = ufunc_op("log10", np.log10, grad=lambda ad: (ad.g / (ad.input(0) * math.log(10)),),
               numba="np.log10(R(x))")
exp2 = ufunc_op("exp2", np.exp2, grad=lambda ad: (ad.g * ad.out * math.log(2),),
              numba="np.exp2(R(x))")
tan = ufunc_op("tan", np.tan, grad=lambda ad: (ad.g * (ad.out * ad.out + 1),), numba="np.tan(R(x))",
             onnx=ox.floats("Tan"))
arctan = ufunc_op("arctan", np.arctan, grad=lambda ad: (ad.g / (ad.input(0) * ad.input(0) + 1),),
                numba="np.arctan(R(x))", onnx=ox.floats("Atan"))
sinh = ufunc_op("sinh", np.sinh, grad=lambda ad: (ad.g * ad.op("cosh", ad.input(0)),),
              numba="np.sinh(R(x))", onnx=ox.floats("Sinh"))
cosh = ufunc_op("cosh", np.cosh, grad=lambda ad: (ad.g * ad.op("sinh", ad.input(0)),),
              numba="np.cosh(R(x))", onnx=ox.floats("Cosh"))
trunc = ufunc_op("trunc", np.trunc, grad=NO_GRAD, numba="np.trunc(R(x))", onnx=ox.trunc)
rint = ufunc_op("rint", np.rint, grad=NO_GRAD, numba="np.rint(R(x))", onnx=ox.round_half_even)
isinf = ufunc_op("isinf", np.isinf, in_place=False, grad=NO_GRAD,
               numba=native.floats_only("np.isinf(x)"), onnx=ox.float_test("IsInf"))
logical_not = ufunc_op("logical_not", np.logical_not, grad=NO_GRAD, numba="not T(x)",
                     onnx=ox.logical("Not"))
isnan = ufunc_op("isnan", np.isnan, in_place=False, grad=NO_GRAD, numba=native.floats_only("np.isnan(x)"),
               onnx=ox.float_test("IsNaN"))
isfinite = ufunc_op("isfinite", np.isfinite, in_place=False, grad=NO_GRAD,
                  numba=native.floats_only("np.isfinite(x)"),
                  onnx=ox.float_test("finite", negate=True))
invert = _unary("invert", pyop.invert, "~x", "invert", operator="Invert", grad=NO_GRAD,
                numba=native.invert_spelling)

# ---- spellings --------------------------------------------------------------------------------

def _gelu_mode(values: dict[str, Any]) -> dict[str, Any]:
    if values.pop("approximate") not in ("tanh", True):
        raise ValueError("gelu: only the tanh approximation is implemented (approximate='tanh')")
    return values


_UNARY = (  # op, MindSpore functions, NumPy functions, MindSpore primitive
    (neg, ("neg", "negative"), ("negative",), "Neg"),
    (pos, (), ("positive",), None),
    (absolute, ("abs", "absolute"), ("abs", "absolute"), "Abs"),
    (exp, ("exp",), ("exp",), "Exp"),
    (log, ("log",), ("log",), "Log"),
    (sqrt, ("sqrt",), ("sqrt",), "Sqrt"),
    (rsqrt, ("rsqrt",), (), "Rsqrt"),
    (square, ("square",), ("square",), "Square"),
    (reciprocal, ("reciprocal",), ("reciprocal",), "Reciprocal"),
    (tanh, ("tanh",), ("tanh",), "Tanh"),
    (sigmoid, ("sigmoid",), (), "Sigmoid"),
    (relu, ("relu",), (), "ReLU"),
    (gelu, (), (), "GeLU"),
    (floor, ("floor",), ("floor",), "Floor"),
    (ceil, ("ceil",), ("ceil",), "Ceil"),
    (round_, (), (), None),
    (sign, ("sign",), ("sign",), "Sign"),
    (sin, ("sin",), ("sin",), "Sin"),
    (cos, ("cos",), ("cos",), "Cos"),
    (log1p, ("log1p",), ("log1p",), "Log1p"),
    (expm1, ("expm1",), ("expm1",), "Expm1"),
    (log2, ("log2",), ("log2",), None),
    (log10, ("log10",), ("log10",), None),
    (exp2, ("exp2",), ("exp2",), None),
    (tan, ("tan",), ("tan",), "Tan"),
    (arctan, ("atan", "arctan"), ("arctan",), "Atan"),
    (sinh, ("sinh",), ("sinh",), "Sinh"),
    (cosh, ("cosh",), ("cosh",), "Cosh"),
    (trunc, ("trunc",), ("trunc", "fix"), None),
    (rint, ("rint",), ("rint",), "Rint"),
    (isinf, ("isinf",), ("isinf",), "IsInf"),
    (logical_not, ("logical_not",), ("logical_not",), "LogicalNot"),
    (isnan, ("isnan",), ("isnan",), "IsNan"),
    (isfinite, ("isfinite",), ("isfinite",), "IsFinite"),
    (invert, ("invert", "bitwise_not"), ("invert", "bitwise_not", "bitwise_invert"), "Invert"),
)

OPS = (neg, pos, absolute, exp, log, sqrt, rsqrt, square, reciprocal, tanh, sigmoid, relu, gelu,
       floor, ceil, round_, sign, sin, cos, log1p, expm1, log2, log10, exp2, tan, arctan, sinh,
       cosh, trunc, rint, isinf, logical_not, isnan, isfinite, invert)

FUNCTIONS = (
    *(spell(n, op, "input", input="x") for op, names, _, _ in _UNARY for n in names),
    spell("gelu", gelu, "input, approximate='tanh'", _gelu_mode, input="x"),
    spell("round", round_, "input, *, decimals=0", input="x"),
)
NUMPY = (
    *(spell(n, op, "x, /") for op, _, names, _ in _UNARY for n in names),
    spell("round", round_, "a, decimals=0", a="x"),
)
METHODS = (
    spell("round", round_, "x, decimals=0"),
)
PRIMITIVES = (
    *(primitive(p, op) for op, _, _, p in _UNARY if p),
    primitive("Round", round_, call="x, decimals=0"),
)

"""Elementwise ops: Python operators, NumPy ufuncs and activations, with NumPy broadcasting.

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


def _op(name: str, inputs: tuple[str, ...], fn: Callable[..., Any], emit: Any, *,
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
                 onnx=onnx)


def _unary(name: str, fn: Callable[..., Any], emit: str, ufunc: str | None = None, **kw: Any
           ) -> OpDef:
    """`ufunc`: the NumPy ufunc computing the op on arrays, for the in-place form."""
    inplace = f"np.{ufunc}(x, out=out)" if ufunc else kw.pop("inplace", None)
    return _op(name, ("x",), fn, emit, inplace=inplace, **kw)


def _binary(name: str, fn: Callable[..., Any], emit: str, ufunc: str | None = None, **kw: Any
            ) -> OpDef:
    return _op(name, ("x", "y"), fn, emit, inplace=ufunc and f"np.{ufunc}(x, y, out=out)", **kw)


def _ufunc(name: str, fn: np.ufunc, in_place: bool = True, **kw: Any) -> OpDef:
    """`in_place=False` where no input can have the result's dtype (isnan: float -> bool)."""
    args = "x" if fn.nin == 1 else "x, y"
    return _op(name, ("x",) if fn.nin == 1 else ("x", "y"), fn, f"np.{fn.__name__}({args})",
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


def _mod_grad(ad: GradContext) -> tuple[Any, ...]:  # x % y == x - floor(x / y) * y
    return ad.g, -ad.g * ad.op("floor", ad.input(0) / ad.input(1))


def _pow_grad(ad: GradContext) -> tuple[Any, ...]:
    x, y = ad.input(0), ad.input(1)
    dy = ad.g * ad.out * ad.op("log", x) if ad.wants(1) else None
    known = ad.constant(1)
    # NOTE: `y - 1` as a node would be an exponent known only at run time, whose result dtype
    # NumPy 1 decides by value; a Python-number exponent stays one (as eager's `x ** 3` is)
    if known is not None:
        return ad.g * known * x ** (known - 1), dy
    return ad.g * y * x ** (y - 1), dy


def _select_grad(ad: GradContext) -> tuple[Any, ...]:
    cond = ad.input(0)
    return None, ad.op("select", cond, ad.g, 0), ad.op("select", cond, 0, ad.g)


def _clip_grad(ad: GradContext) -> tuple[Any, ...]:
    x, lo, hi = ad.input(0), ad.types[1], ad.types[2]
    inside = ad.g
    below = above = None
    if lo != NoneType():
        inside = inside * (x >= ad.input(1))
        below = ad.g * (x < ad.input(1))
    if hi != NoneType():
        inside = inside * (x <= ad.input(2))
        above = ad.g * (x > ad.input(2))
    return inside, below, above


# ---- ops --------------------------------------------------------------------------------------

neg = _unary("neg", pyop.neg, "-x", "negative", operator="USub", grad=lambda ad: (-ad.g,),
             numba="-R(x)", onnx=ox.arithmetic("Neg"))
pos = _unary("pos", pyop.pos, "+x", "positive", operator="UAdd", grad=lambda ad: (ad.g,),
             numba="+R(x)", onnx=ox.identity)
absolute = _unary("abs", abs, "abs(x)", "absolute", wrap=False,  # abs(-2) stays a Python int
                  grad=lambda ad: (ad.g * ad.op("sign", ad.input(0)),), numba="abs(R(x))",
                  onnx=ox.arithmetic("Abs"))
exp = _ufunc("exp", np.exp, grad=lambda ad: (ad.g * ad.out,), numba="np.exp(R(x))",
             onnx=ox.floats("Exp"))
log = _ufunc("log", np.log, grad=lambda ad: (ad.g / ad.input(0),), numba="np.log(R(x))",
             onnx=ox.floats("Log"))
sqrt = _ufunc("sqrt", np.sqrt, grad=lambda ad: (ad.g / (ad.out * 2),), numba="np.sqrt(R(x))",
              onnx=ox.floats("Sqrt"))
rsqrt = _unary("rsqrt", _rsqrt, "1 / np.sqrt(x)",
               inplace="np.divide(1, np.sqrt(x, out=out), out=out)",
               grad=lambda ad: (ad.g * -0.5 * ad.out * ad.out * ad.out,),
               numba=native.floats_only("R(1) / np.sqrt(R(x))"), onnx=ox.rsqrt)
square = _ufunc("square", np.square, grad=lambda ad: (ad.g * (ad.input(0) * 2),),
                numba="R(x) * R(x)", onnx=ox.square)
reciprocal = _ufunc("reciprocal", np.reciprocal,  # NOTE: NumPy's: integer 1/x for ints
                    grad=lambda ad: (-ad.g * ad.out * ad.out,), numba=native.floats_only("R(1) / R(x)"),
                    onnx=ox.floats("Reciprocal"))
tanh = _ufunc("tanh", np.tanh, grad=lambda ad: (ad.g * (1 - ad.out * ad.out),),
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
floor = _ufunc("floor", np.floor, grad=NO_GRAD, numba="np.floor(R(x))", onnx=ox.floats("Floor"))
ceil = _ufunc("ceil", np.ceil, grad=NO_GRAD, numba="np.ceil(R(x))", onnx=ox.floats("Ceil"))
round_ = _unary("round", _round, lambda a: "np.round(x, decimals)" if a["decimals"] else
                "np.round(x)", inplace="np.round(x, decimals, out=out)", attrs={"decimals": 0},
                grad=NO_GRAD, numba=native.round_spelling, onnx=ox.round_half_even)
sign = _ufunc("sign", np.sign, grad=NO_GRAD, numba=native.fixed(native.SIGN),
              onnx=ox.arithmetic("Sign"))
sin = _ufunc("sin", np.sin, grad=lambda ad: (ad.g * ad.op("cos", ad.input(0)),),
             numba="np.sin(R(x))", onnx=ox.floats("Sin"))
cos = _ufunc("cos", np.cos, grad=lambda ad: (-ad.g * ad.op("sin", ad.input(0)),),
             numba="np.cos(R(x))", onnx=ox.floats("Cos"))
log1p = _ufunc("log1p", np.log1p, grad=lambda ad: (ad.g / (ad.input(0) + 1),),
               numba="np.log1p(R(x))", onnx=ox.log1p)
expm1 = _ufunc("expm1", np.expm1, grad=lambda ad: (ad.g * (ad.out + 1),), numba="np.expm1(R(x))",
               onnx=ox.expm1)
log2 = _ufunc("log2", np.log2, grad=lambda ad: (ad.g / (ad.input(0) * math.log(2)),),
              numba="np.log2(R(x))")
log10 = _ufunc("log10", np.log10, grad=lambda ad: (ad.g / (ad.input(0) * math.log(10)),),
               numba="np.log10(R(x))")
exp2 = _ufunc("exp2", np.exp2, grad=lambda ad: (ad.g * ad.out * math.log(2),),
              numba="np.exp2(R(x))")
tan = _ufunc("tan", np.tan, grad=lambda ad: (ad.g * (ad.out * ad.out + 1),), numba="np.tan(R(x))",
             onnx=ox.floats("Tan"))
arctan = _ufunc("arctan", np.arctan, grad=lambda ad: (ad.g / (ad.input(0) * ad.input(0) + 1),),
                numba="np.arctan(R(x))", onnx=ox.floats("Atan"))
sinh = _ufunc("sinh", np.sinh, grad=lambda ad: (ad.g * ad.op("cosh", ad.input(0)),),
              numba="np.sinh(R(x))", onnx=ox.floats("Sinh"))
cosh = _ufunc("cosh", np.cosh, grad=lambda ad: (ad.g * ad.op("sinh", ad.input(0)),),
              numba="np.cosh(R(x))", onnx=ox.floats("Cosh"))
trunc = _ufunc("trunc", np.trunc, grad=NO_GRAD, numba="np.trunc(R(x))", onnx=ox.trunc)
rint = _ufunc("rint", np.rint, grad=NO_GRAD, numba="np.rint(R(x))", onnx=ox.round_half_even)
isinf = _ufunc("isinf", np.isinf, in_place=False, grad=NO_GRAD,
               numba=native.floats_only("np.isinf(x)"), onnx=ox.float_test("IsInf"))
logical_not = _ufunc("logical_not", np.logical_not, grad=NO_GRAD, numba="not T(x)",
                     onnx=ox.logical("Not"))
isnan = _ufunc("isnan", np.isnan, in_place=False, grad=NO_GRAD, numba=native.floats_only("np.isnan(x)"),
               onnx=ox.float_test("IsNaN"))
isfinite = _ufunc("isfinite", np.isfinite, in_place=False, grad=NO_GRAD,
                  numba=native.floats_only("np.isfinite(x)"),
                  onnx=ox.float_test("finite", negate=True))
invert = _unary("invert", pyop.invert, "~x", "invert", operator="Invert", grad=NO_GRAD,
                numba=native.invert_spelling)

add = _binary("add", pyop.add, "x + y", "add", operator="Add", commutative=True,
              grad=lambda ad: (ad.g, ad.g), numba=native.python_checked("R(x) + R(y)", native.py_add),
              onnx=ox.arithmetic("Add"))
sub = _binary("sub", pyop.sub, "x - y", "subtract", operator="Sub",
              grad=lambda ad: (ad.g, -ad.g), numba=native.python_checked("R(x) - R(y)", native.py_sub),
              onnx=ox.arithmetic("Sub"))
mul = _binary("mul", pyop.mul, "x * y", "multiply", operator="Mult", commutative=True,
              grad=lambda ad: (ad.g * ad.input(1), ad.g * ad.input(0)),
              numba=native.python_checked("R(x) * R(y)", native.py_mul), onnx=ox.arithmetic("Mul"))
# NOTE: Python scalars raise ZeroDivisionError/OverflowError, integer arrays raise on
# negative powers: these may raise on well-typed inputs
div = _binary("div", pyop.truediv, "x / y", "true_divide", operator="Div", can_raise=True,
              grad=lambda ad: (ad.g / ad.input(1), -ad.g * ad.out / ad.input(1)),
              numba=native.python_checked("R(x) / R(y)", native.py_truediv), onnx=ox.true_divide)
floordiv = _binary("floordiv", pyop.floordiv, "x // y", "floor_divide", operator="FloorDiv",
                   can_raise=True, grad=NO_GRAD,
                   numba=native.int_division(native.int_floordiv, native.py_floordiv),
                   onnx=ox.floor_divide)
mod = _binary("mod", pyop.mod, "x % y", "remainder", operator="Mod", can_raise=True,
              grad=_mod_grad, numba=native.int_division(native.int_mod, native.py_mod),
              onnx=ox.remainder)
pow_ = _binary("pow", pyop.pow, "x ** y", operator="Pow", can_raise=True, grad=_pow_grad,
               numba=native.power, onnx=ox.power)
"""No in-place form: `x ** 2` and `x ** 0.5` take NumPy fast paths `np.power` does not."""
maximum = _ufunc("maximum", np.maximum, commutative=True, grad=lambda ad: (
    ad.g * (ad.input(0) >= ad.input(1)), ad.g * (ad.input(0) < ad.input(1))),
    numba=native.fixed(native.MAXIMUM), onnx=ox.arithmetic("Max"))
minimum = _ufunc("minimum", np.minimum, commutative=True, grad=lambda ad: (
    ad.g * (ad.input(0) <= ad.input(1)), ad.g * (ad.input(0) > ad.input(1))),
    numba=native.fixed(native.MINIMUM), onnx=ox.arithmetic("Min"))
def _arctan2_grad(ad: GradContext) -> tuple[Any, ...]:
    y, x = ad.input(0), ad.input(1)
    squared = y * y + x * x
    return ad.g * x / squared, -ad.g * y / squared


arctan2 = _ufunc("arctan2", np.arctan2, grad=_arctan2_grad, numba="np.arctan2(R(x), R(y))")
hypot = _ufunc("hypot", np.hypot, commutative=True, grad=lambda ad: (
    ad.g * ad.input(0) / ad.out, ad.g * ad.input(1) / ad.out), numba="np.hypot(R(x), R(y))",
    onnx=ox.hypot)
fmod = _ufunc("fmod", np.fmod, grad=lambda ad: (  # NOTE: x - trunc(x / y) * y
    ad.g, -ad.g * ad.op("trunc", ad.input(0) / ad.input(1))))
logaddexp = _ufunc("logaddexp", np.logaddexp, commutative=True, grad=lambda ad: (
    ad.g * ad.op("exp", ad.input(0) - ad.out), ad.g * ad.op("exp", ad.input(1) - ad.out)),
    numba="np.logaddexp(R(x), R(y))")
eq = _binary("eq", pyop.eq, "x == y", "equal", operator="Eq", commutative=True, grad=NO_GRAD,
             numba="T(x) == T(y)", onnx=ox.compare_numbers("Equal"))
ne = _binary("ne", pyop.ne, "x != y", "not_equal", operator="NotEq", commutative=True,
             grad=NO_GRAD, numba="T(x) != T(y)", onnx=ox.compare_numbers("Equal", negate=True))
lt = _binary("lt", pyop.lt, "x < y", "less", operator="Lt", grad=NO_GRAD, numba="T(x) < T(y)",
             onnx=ox.compare_numbers("Less"))
le = _binary("le", pyop.le, "x <= y", "less_equal", operator="LtE", grad=NO_GRAD,
             numba="T(x) <= T(y)", onnx=ox.compare_numbers("LessOrEqual"))
gt = _binary("gt", pyop.gt, "x > y", "greater", operator="Gt", grad=NO_GRAD, numba="T(x) > T(y)",
             onnx=ox.compare_numbers("Greater"))
ge = _binary("ge", pyop.ge, "x >= y", "greater_equal", operator="GtE", grad=NO_GRAD,
             numba="T(x) >= T(y)", onnx=ox.compare_numbers("GreaterOrEqual"))
logical_and = _ufunc("logical_and", np.logical_and, commutative=True, grad=NO_GRAD,
                     numba="T(x) != T(0) and T(y) != T(0)", onnx=ox.logical("And"))
logical_or = _ufunc("logical_or", np.logical_or, commutative=True, grad=NO_GRAD,
                    numba="T(x) != T(0) or T(y) != T(0)", onnx=ox.logical("Or"))
logical_xor = _ufunc("logical_xor", np.logical_xor, commutative=True, grad=NO_GRAD,
                     numba="(T(x) != T(0)) != (T(y) != T(0))", onnx=ox.logical("Xor"))
bitwise_and = _binary("bitwise_and", pyop.and_, "x & y", "bitwise_and", operator="BitAnd",
                      commutative=True, grad=NO_GRAD, numba="R(x) & R(y)")
bitwise_or = _binary("bitwise_or", pyop.or_, "x | y", "bitwise_or", operator="BitOr",
                     commutative=True, grad=NO_GRAD, numba="R(x) | R(y)")
left_shift = _binary("left_shift", pyop.lshift, "x << y", "left_shift", operator="LShift",
                     grad=NO_GRAD)
right_shift = _binary("right_shift", pyop.rshift, "x >> y", "right_shift", operator="RShift",
                      grad=NO_GRAD)
bitwise_xor = _binary("bitwise_xor", pyop.xor, "x ^ y", "bitwise_xor", operator="BitXor",
                      commutative=True, grad=NO_GRAD, numba="R(x) ^ R(y)")
select = _op("select", ("cond", "x", "y"), np.where, "np.where(cond, x, y)", grad=_select_grad,
             numba="R(x) if cond else R(y)", onnx=ox.select)
clip = _op("clip", ("x", "lo", "hi"), np.clip, "np.clip(x, lo, hi)", nullable=True,
           inplace="np.clip(x, lo, hi, out=out)", grad=_clip_grad, numba=native.clip_spelling,
           onnx=ox.clip)
"""`lo`/`hi` are inputs (tensors, scalars, or None for no bound), as in NumPy."""


# ---- spellings --------------------------------------------------------------------------------

def _gelu_mode(values: dict[str, Any]) -> dict[str, Any]:
    if values.pop("approximate") not in ("tanh", True):
        raise ValueError("gelu: only the tanh approximation is implemented (approximate='tanh')")
    return values


def _clip_bounds(values: dict[str, Any]) -> dict[str, Any]:
    # np.clip(a, a_min, a_max) or np.clip(a, min=..., max=...)
    lo, hi = values.pop("min"), values.pop("max")
    values["lo"] = values["lo"] if lo is None else lo
    values["hi"] = values["hi"] if hi is None else hi
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
_BINARY = (
    (add, ("add",), ("add",), "Add"),
    (sub, ("sub", "subtract"), ("subtract",), "Sub"),
    (mul, ("mul", "multiply"), ("multiply",), "Mul"),
    (div, (), ("divide", "true_divide"), None),
    (floordiv, ("floor_div", "floor_divide"), ("floor_divide",), "FloorDiv"),
    (mod, ("floor_mod", "remainder"), ("mod", "remainder"), "FloorMod"),
    (pow_, ("pow",), ("power", "pow"), "Pow"),
    (maximum, ("maximum",), ("maximum",), "Maximum"),
    (arctan2, ("atan2", "arctan2"), ("arctan2",), "Atan2"),
    (hypot, ("hypot",), ("hypot",), None),
    (fmod, ("fmod",), ("fmod",), None),
    (logaddexp, ("logaddexp",), ("logaddexp",), None),
    (minimum, ("minimum",), ("minimum",), "Minimum"),
    (eq, ("equal", "eq"), ("equal",), "Equal"),
    (ne, ("not_equal", "ne"), ("not_equal",), "NotEqual"),
    (lt, ("less", "lt"), ("less",), "Less"),
    (le, ("less_equal", "le"), ("less_equal",), "LessEqual"),
    (gt, ("greater", "gt"), ("greater",), "Greater"),
    (ge, ("greater_equal", "ge"), ("greater_equal",), "GreaterEqual"),
    (logical_and, ("logical_and",), ("logical_and",), "LogicalAnd"),
    (logical_or, ("logical_or",), ("logical_or",), "LogicalOr"),
    (logical_xor, ("logical_xor",), ("logical_xor",), "LogicalXor"),
    (bitwise_and, ("bitwise_and",), ("bitwise_and",), "BitwiseAnd"),
    (bitwise_or, ("bitwise_or",), ("bitwise_or",), "BitwiseOr"),
    (bitwise_xor, ("bitwise_xor",), ("bitwise_xor",), "BitwiseXor"),
    (left_shift, ("left_shift",), ("left_shift",), "LeftShift"),
    (right_shift, ("right_shift",), ("right_shift",), "RightShift"),
)

OPS = (neg, pos, absolute, exp, log, sqrt, rsqrt, square, reciprocal, tanh, sigmoid, relu, gelu,
       floor, ceil, round_, sign, sin, cos, log1p, expm1, log2, log10, exp2, tan, arctan, sinh,
       cosh, trunc, rint, isinf, logical_not, isnan, isfinite, invert,
       add, sub, mul, div, floordiv, mod, pow_, maximum, minimum, arctan2, hypot, fmod, logaddexp,
       eq, ne, lt, le, gt, ge, logical_and, logical_or, logical_xor, bitwise_and, bitwise_or, bitwise_xor, left_shift,
       right_shift, select, clip)

FUNCTIONS = (
    *(spell(n, op, "input", input="x") for op, names, _, _ in _UNARY for n in names),
    *(spell(n, op, "input, other", input="x", other="y")
      for op, names, _, _ in _BINARY for n in names),
    spell("gelu", gelu, "input, approximate='tanh'", _gelu_mode, input="x"),
    spell("round", round_, "input, *, decimals=0", input="x"),
    spell("select", select, "cond, x, y"),
    spell("where", select, "condition, input, other", condition="cond", input="x", other="y"),
    spell("clip_by_value", clip, "x, clip_value_min=None, clip_value_max=None",
          clip_value_min="lo", clip_value_max="hi"),
    spell("clamp", clip, "input, min=None, max=None", input="x", min="lo", max="hi"),
    spell("clip", clip, "input, min=None, max=None", input="x", min="lo", max="hi"),
)
NUMPY = (
    *(spell(n, op, "x, /") for op, _, names, _ in _UNARY for n in names),
    *(spell(n, op, "x1, x2, /", x1="x", x2="y") for op, _, names, _ in _BINARY for n in names),
    spell("round", round_, "a, decimals=0", a="x"),
    spell("where", select, "condition, x, y, /", condition="cond"),
    spell("clip", clip, "a, a_min=None, a_max=None, *, min=None, max=None", _clip_bounds, a="x",
          a_min="lo", a_max="hi"),
)
METHODS = (
    spell("clip", clip, "x, min=None, max=None", min="lo", max="hi"),
    spell("round", round_, "x, decimals=0"),
)
PRIMITIVES = (
    *(primitive(p, op) for op, _, _, p in _UNARY if p),
    *(primitive(p, op, call="x, y") for op, _, _, p in _BINARY if p),

    primitive("Select", select, call="cond, x, y"),
    primitive("Round", round_, call="x, decimals=0"),
)

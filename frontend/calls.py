"""Calls: amber ops (functional and primitive spellings), supported `np.*` functions, ndarray
methods, Python builtins, list methods, sub-cells and Python helpers (inlined: compiled
recursively in a new frame, so one model is one graph)."""
from __future__ import annotations

import inspect
import types
from typing import Any, Callable

import gast
import numpy as np

from ..graph import Scalar, Value
from ..graph.types import is_namedtuple_class, type_of
from ..nn.cell import Cell
from ..common.tensor import Tensor
from ..ops import METHODS, NUMPY, Dyn, OpDef, OpFunction, Primitive, lookup
from ..ops.composite import PUBLIC as COMPOSITE
from ..ops.primitive import CONSTEXPR_FLAG
from ..ops.randomness import global_random_function
from . import aliases, gradients, instances, namedtuples
from . import transforms
from .arrays import NOT_HANDLED, numpy_override, write_out
from .closures import call_closure
from .containers import dict_method, list_method
from .context import Frame, NeedsUnrolling, call_identity
from .errors import CompileError, CompileTypeError, arity_message, kind_for
from .control import choose, short_circuit
from .expressions import NUMPY_FUNCTION_METHODS, elements, evaluate, shape_of
from .inlining import inline
from .operators import compare, format_at_run_time, operand, python_result, to_python
from .pybuiltins import BUILTINS
from .scope import bind_arguments
from .values import (BoundMethod, Choice, Closure, DictMethod, ListMethod, PyList, Ref, TensorMethod,
                     describe, has_runtime, jit_wrapped, python_name)

COMPOSITE_CLASSES = frozenset(v for v in COMPOSITE.values() if isinstance(v, type))
"""MindSpore API classes built from ops (`ops.DType()`): created while compiling."""
FOLD_ITEMS = 64
"""Op calls on at most this many compile-time numbers are computed while compiling."""


def _numpy_table() -> dict[int, OpFunction]:
    """id(np.<name>) -> the registry spelling (matched by identity, as `np.tanh` is)."""
    table = {}
    for name, spelling in NUMPY.items():
        obj = getattr(np, name, None)
        if obj is not None:
            table[id(obj)] = spelling
    return table


NUMPY_BY_ID = _numpy_table()


def call(f: Frame, node: gast.Call) -> Any:
    """The value of call expression `node`."""
    func = evaluate(f, node.func)
    args = elements(f, node.args)
    kwargs: dict[str, Any] = {}
    for kw in node.keywords:
        value = evaluate(f, kw.value)
        if kw.arg is not None:
            kwargs[kw.arg] = value
        elif isinstance(value, dict):
            kwargs.update(value)
        else:
            raise f.error(f"`**` needs a dict, got {describe(value)}", node=kw.value)
    return call_value(f, func, args, kwargs)


def call_value(f: Frame, func: Any, args: list[Any], kwargs: dict[str, Any]) -> Any:
    """`func(*args, **kwargs)` for any callable the frontend knows."""
    if gradients.is_gradient_function(func):
        return gradients.call_gradient(f, func, args, kwargs)
    if transforms.is_transform_function(func):
        return transforms.call_transform(f, func, args, kwargs)
    if transforms.is_transform_call(func):
        return transforms.call_direct(f, func, args, kwargs)
    if gradients.makes_gradient_functions(func):
        return gradients.call_at_compile_time(f, func, args, kwargs)
    if isinstance(func, TensorMethod):
        if func.function == "item":
            return _item(f, func.value, args, kwargs)
        if isinstance(func.function, str):
            return _tensor_only_method(f, func, args, kwargs)
        return apply_op(f, func.function, [func.value, *args], kwargs)
    if isinstance(func, BoundMethod):
        return inline(f, func.function, [func.receiver, *args], kwargs, method=True)
    if isinstance(func, ListMethod):
        return list_method(f, func, args, kwargs)
    if isinstance(func, DictMethod):
        return dict_method(f, func, args, kwargs)
    if isinstance(func, Closure):
        return call_closure(f, func, args, kwargs)
    if isinstance(func, Ref):
        return _call_object(f, func, args, kwargs)
    if isinstance(func, Choice):
        return _call_choice(f, func, args, kwargs)
    if isinstance(func, OpFunction | Primitive):
        return apply_op(f, func, args, kwargs)
    if isinstance(func, type) and (issubclass(func, Primitive) or func in COMPOSITE_CLASSES):
        return _python_call(f, func, args, kwargs, "creating a primitive")
    if getattr(func, CONSTEXPR_FLAG, False):
        name = getattr(func, "__qualname__", "function")
        return _python_call(f, func, args, kwargs, f"the @constexpr function {name}")
    if func is Tensor:
        return _tensor_constant(f, args, kwargs)
    if type(func) in COMPOSITE_CLASSES:
        return inline(f, type(func).__call__, [func, *args], kwargs, method=True)
    handler = _lookup(BUILTINS, func)
    if handler is not None:
        try:
            inspect.signature(handler).bind(f, *args, **kwargs)
        except TypeError as exc:
            raise f.error(f"{func.__name__}(): {exc}", "pass the arguments Python's "
                          f"{func.__name__} takes", kind=CompileTypeError) from None
        return handler(f, *args, **kwargs)
    found = numpy_override(f, func, args, kwargs)
    if found is not NOT_HANDLED:
        return found
    spelling = NUMPY_BY_ID.get(id(func))
    if spelling is not None:
        if _numbers_only(args, kwargs):  # NOTE: NumPy's own result: np.abs(1) is np.int64(1)
            return _python_call(f, func, args, kwargs, f"calling {describe(func)}")
        args = _numpy_scalars(f, args)
        if "out" not in kwargs:
            return apply_op(f, spelling, args, kwargs)
        out = kwargs.pop("out")
        return write_out(f, apply_op(f, spelling, args, kwargs), out)
    if _is_numpy(func):
        return _numpy_call(f, func, args, kwargs)
    if global_random_function(func) is not None:
        return _global_random(f, global_random_function(func), args, kwargs)
    if isinstance(func, types.FunctionType):
        return inline(f, func, args, kwargs)
    if namedtuples.pure_method(func):
        return namedtuples.call_pure_method(f, func, args, kwargs)
    if isinstance(func, types.MethodType) and isinstance(func.__func__, types.FunctionType):
        return inline(f, func.__func__, [func.__self__, *args], kwargs, method=True)
    if isinstance(func, Cell):
        return _call_object(f, Ref(func, f.compiler.path_of(func)), args, kwargs)
    if jit_wrapped(func) is not None:
        return call_value(f, jit_wrapped(func), args, kwargs)
    if _is_pure_builtin(func):
        if getattr(func, "__name__", "") == "format" and isinstance(
                getattr(func, "__self__", None), str) and has_runtime(args) and not kwargs:
            return format_at_run_time(f, func.__self__, list(args))
        return _python_call(f, func, args, kwargs, f"calling {describe(func)}")
    if is_namedtuple_class(func):
        return namedtuples.build(f, func, args, kwargs)
    if instances.plain_class(func):
        return instances.build(f, func, args, kwargs)
    raise f.error(f"cannot compile a call to {describe(func)}",
                  "call amber ops, supported numpy functions, layers, or Python functions "
                  "defined with def")


def _tensor_constant(f: Frame, args: list[Any], kwargs: dict[str, Any]) -> Any:
    """`Tensor(data, dtype)` inside compiled code: of compile-time data, a constant array (as
    MindSpore makes it); of a run-time array, a copy (cast to `dtype` when given)."""
    if not has_runtime(args) and not has_runtime(kwargs):
        value = _python_call(f, Tensor, args, kwargs, "building a Tensor")
        return value.view(np.ndarray) if isinstance(value, np.ndarray) else value
    try:
        bound = inspect.signature(Tensor.__new__).bind(Tensor, *args, **kwargs)
    except TypeError as exc:
        raise f.error(f"Tensor(): {exc}", "pass Tensor(data, dtype)") from None
    data, dtype = bound.arguments.get("input_data"), bound.arguments.get("dtype")
    if set(bound.arguments) - {"cls", "input_data", "dtype"} or not isinstance(data, Value):
        raise f.error("Tensor() of run-time values takes one array and an optional dtype",
                      "build constant tensors from compile-time data, or use ops.cast")
    # NOTE: a new Tensor (an array even of a NumPy scalar: `Tensor(x.sum())` is 0-d)
    made = f.op("array", data, dtype=None if dtype is None else np.dtype(to_python(dtype)))
    return aliases.note_tensor(f.compiler.memory, made, Tensor)


def _tensor_only_method(f: Frame, method: TensorMethod, args: list[Any],
                        kwargs: dict[str, Any]) -> Any:
    """MindSpore's Tensor methods that ndarrays lack: `value()`, `view(*shape)`, `dim()`;
    `x.tolist()`; and the array methods written as their NumPy function (`x.var()` is
    `np.var(x)`)."""
    name, value = method.function, method.value
    if name in NUMPY_FUNCTION_METHODS:
        return call_value(f, getattr(np, name), [value, *args], kwargs)
    if name == "tolist":
        return _tolist(f, value, args, kwargs)
    if name == "view":
        dims = args[0] if len(args) == 1 and isinstance(args[0], tuple | list) else tuple(args)
        if kwargs or not dims or not all(isinstance(d, int | Value) for d in dims):
            raise f.error("x.view() takes the new shape (`x.view(-1)`, `x.view(2, 3)`)",
                          "MindSpore's view reshapes; use x.astype(dtype) to change the dtype")
        return apply_op(f, METHODS["reshape"], [value, *dims], {})
    if name == "expand_as":  # MindSpore's: broadcast to the other array's shape
        if len(args) != 1 or kwargs or not isinstance(args[0], Value | np.ndarray):
            raise f.error("x.expand_as() takes one array, whose shape x is broadcast to")
        other = args[0]
        shape = other.shape if isinstance(other, np.ndarray) else shape_of(f, other)
        return call_value(f, np.broadcast_to, [value, tuple(shape)], {})
    if name == "expand_dims":  # MindSpore's: np.expand_dims(x, axis)
        return call_value(f, np.expand_dims, [value, *args], kwargs)
    if name == "asnumpy":  # MindSpore's: the values as a NumPy array (a copy)
        if args or kwargs:
            raise f.error("x.asnumpy() takes no arguments")
        return call_value(f, np.array, [value], {})
    if args or kwargs:
        raise f.error(f"x.{name}() takes no arguments")
    return value if name == "value" else value.type.rank


def _tolist(f: Frame, value: Value, args: list[Any], kwargs: dict[str, Any]) -> Any:
    """`x.tolist()` of an array of known shape: nested lists of Python numbers (a 0-d array
    gives the number itself), each item read as `x.item()` reads it."""
    shape = value.type.shape
    if args or kwargs or not all(isinstance(d, int) for d in shape):
        raise f.error("x.tolist() is supported without arguments on arrays of known shape")

    def build(v: Value, rank: int) -> Any:
        if rank == 0:
            return _item(f, v, [], {})
        return PyList([build(f.op("getitem", v, index=(i,)), rank - 1)
                       for i in range(v.type.shape[0])])
    return build(value, len(shape))


def _item(f: Frame, value: Value, args: list[Any], kwargs: dict[str, Any]) -> Value:
    """`x.item()`: the one element as a Python scalar of the array's kind."""
    if args or kwargs:
        raise f.error("x.item() with arguments is not supported", "index first: x[i].item()")
    kind = value.type.dtype.kind
    if value.type.rank:
        value = f.op("reshape", value, shape=())  # NOTE: int() of a 1-d array fails in NumPy 2
    return f.op("bool" if kind == "b" else "int" if kind in "iu" else "float", value)


def _lookup(table: dict[Any, Any], key: Any) -> Any:
    try:
        return table.get(key)
    except TypeError:  # an unhashable callee
        return None


def _is_numpy(func: Any) -> bool:
    """A NumPy function or scalar type (never np.random: random numbers are not constants)."""
    module = getattr(func, "__module__", None) or ""
    if module.startswith("numpy.random") or isinstance(
            getattr(func, "__self__", None), np.random.RandomState | np.random.Generator):
        return False
    return (isinstance(func, np.ufunc) or module == "numpy" or module.startswith("numpy.")
            or isinstance(func, type) and issubclass(func, np.generic | np.dtype))


DICT_MUTATORS = ("update", "pop", "popitem", "setdefault", "clear")
PURE_MODULES = ("math", "cmath", "operator", "_operator")
PURE_RECEIVERS = (str, bytes, tuple, dict, int, float, complex, bool, frozenset, range, np.dtype)


def _is_pure_builtin(func: Any) -> bool:
    """C functions without side effects (math.sqrt, str.format, dict.get): run when compiling.
    Not random.random, time.time or open, whose results are not constants."""
    owner = getattr(func, "__self__", None)
    if isinstance(owner, dict) and func.__name__ in DICT_MUTATORS:
        return False
    if isinstance(func, types.BuiltinFunctionType | types.MethodWrapperType):
        if owner is None or isinstance(owner, types.ModuleType):
            return (getattr(func, "__module__", None) or getattr(owner, "__name__", "")) in \
                PURE_MODULES
        return isinstance(owner, PURE_RECEIVERS)
    if isinstance(func, types.MethodDescriptorType):
        return issubclass(func.__objclass__, PURE_RECEIVERS)
    return False


def _numpy_call(f: Frame, func: Any, args: list[Any], kwargs: dict[str, Any]) -> Any:
    """A numpy function outside the registry: computed while compiling (constants only), or
    a cast for `np.float32(x)`."""
    if not has_runtime(args) and not has_runtime(kwargs):
        return _python_call(f, func, args, kwargs, f"calling {describe(func)}")
    if isinstance(func, type) and issubclass(func, np.generic) and len(args) == 1 and not kwargs:
        return f.op("cast", f.materialise(args[0]), dtype=np.dtype(func))
    raise f.error(f"{python_name(func)} is not supported on run-time values",
                  "use an amber op or a supported numpy function (the names in "
                  "amber.ops.NUMPY)")


def _global_random(f: Frame, name: str, args: list[Any], kwargs: dict[str, Any]) -> Any:
    """`np.random.<name>(...)` on NumPy's global generator: the same call, made at run time in
    program order (so a seeded program draws what it draws eagerly)."""
    def plain(a: Any) -> bool:  # NOTE: what generated code can write as a literal
        return isinstance(a, bool | int | float | str | type(None) | np.dtype) or isinstance(
            a, type) and issubclass(a, np.generic)

    arguments = [*args, *kwargs.values()]
    if has_runtime(arguments) or not all(
            plain(a) or isinstance(a, tuple) and all(map(plain, a)) for a in arguments):
        raise f.error(f"np.random.{name} in compiled code takes numbers, strings and tuples "
                      "of them known when compiling",
                      "draw with constant arguments and scale the result "
                      "(loc + scale * np.random.standard_normal(size))")
    return f.op("global_random", function=name, args=tuple(args),
                keywords=tuple(kwargs.items()))


def _unroll_if_looping(f: Frame) -> type[CompileError]:
    """Inside a loop being built, a value needed at compile time may be run-time only because
    the loop carries it (a sequence growing each iteration): NeedsUnrolling lets an enclosing
    `for` over a short constant range unroll, as MindSpore's graph mode does; anywhere else
    (or if unrolling does not help) it is the same CompileError."""
    return NeedsUnrolling if f.compiler.loop_seeds else CompileError


def _python_call(f: Frame, func: Any, args: list[Any], kwargs: dict[str, Any], what: str
                 ) -> Any:
    """Run `func` while compiling on compile-time arguments."""
    if has_runtime(args) or has_runtime(kwargs):
        raise f.error(f"{what} needs compile-time arguments, got run-time values",
                      "compute it from compile-time values (shapes, attributes, constants)",
                      kind=_unroll_if_looping(f))
    try:
        result = func(*(to_python(a) for a in args), **{k: to_python(v)
                                                          for k, v in kwargs.items()})
    except Exception as exc:  # NOTE: the user's code would raise this at run time
        f.raise_at_runtime(type(exc), str(exc))
    return python_result(f, result, (args, kwargs))


# -- ops ----------------------------------------------------------------------------------

def apply_op(f: Frame, spelling: OpFunction | Primitive, args: list[Any],
             kwargs: dict[str, Any]) -> Any:
    """A call of an op spelling: bind to (inputs, attrs), then one node (or, for a few
    numbers known at compile time, the value itself)."""
    name = spelling.name if isinstance(spelling, OpFunction) else type(spelling).__name__
    py_args = [_unwrap(a) for a in args]
    py_kwargs = {k: _unwrap(v) for k, v in kwargs.items()}
    try:
        inputs, attrs = spelling.bind(*py_args, **py_kwargs)
    except (TypeError, ValueError) as exc:
        raise f.error(str(exc), f"check the arguments of {name}", kind=kind_for(exc)) from exc
    inputs, attrs = symbolic_shape(spelling.op, inputs, attrs)
    for key, value in attrs.items():
        if _holds_runtime(value):
            raise f.error(f"{name}: argument `{key}` must be a compile-time constant, but "
                          f"{_runtime_part(value)}",
                          "compute it from shapes (x.shape, ops.shape(x)), attributes of self or "
                          "constants, not from array data", kind=_unroll_if_looping(f))
    inputs = _array_operands(f, spelling.op, inputs)
    folded = _fold(spelling, inputs, attrs)
    if folded is not None:
        return folded
    known = _static_result(spelling.op, inputs, attrs)
    if known is not None:
        return known
    values = [_input(f, x) for x in inputs]
    return f.op(spelling.op, *values, **attrs)


_DIM = lookup("dim")


def symbolic_shape(op: OpDef, inputs: tuple, attrs: dict[str, Any]) -> tuple[tuple, dict]:
    """A `shape` attribute's run-time entries that are symbolic sizes (`x.shape[0]` of an
    f32[N,...] array is `dim(value=N)`) become the size itself, so the result's type says N
    rather than "?" and generated code spells the size as the variable read at entry."""
    shape = attrs.get("shape")
    if not (isinstance(shape, tuple) and op.inputs and op.inputs[-1] == "*dims"):
        return inputs, attrs
    first = len(op.inputs) - 1
    dims = inputs[first:]
    sizes = [v.producer.attrs["value"] if isinstance(v, Value) and v.producer is not None
             and v.producer.op is _DIM else None for v in dims]
    if not any(isinstance(d, Dyn) and sizes[d.k] is not None for d in shape) or \
            len(shape) == 1 and isinstance(shape[0], Dyn) and sizes[shape[0].k] is None:
        return inputs, attrs
    kept: list[Any] = []
    entries = []
    for d in shape:
        if isinstance(d, Dyn) and sizes[d.k] is not None:
            entries.append(sizes[d.k])
        elif isinstance(d, Dyn):
            entries.append(Dyn(len(kept)))
            kept.append(dims[d.k])
        else:
            entries.append(d)
    return (*inputs[:first], *kept), {**attrs, "shape": tuple(entries)}


NOT_ARRAYS = ("xs", "items", "more", "args", "dims", "idx", "bounds", "after", "generator")
"""Op inputs that take a sequence (or Python values) as it is; a list or tuple anywhere else
is an array operand, converted as NumPy converts it (`np.maximum(x, [1, 2])`)."""


def _array_operands(f: Frame, op: Any, inputs: tuple) -> tuple:
    """Lists and tuples where the op takes an array made arrays, as NumPy does; in a sequence
    of arrays (`np.concatenate([x, [1.0, 2.0]])`), its items."""
    names = [n for n in op.inputs]
    out = []
    for k, x in enumerate(inputs):
        name = names[min(k, len(names) - 1)] if names else "*"
        if isinstance(x, list | tuple):
            if name.lstrip("*") not in NOT_ARRAYS:
                x = operand(f, tuple(x))
            elif name == "xs":
                x = tuple(operand(f, tuple(i)) if isinstance(i, list | tuple) else i for i in x)
        out.append(x)
    return tuple(out)


def _unwrap(v: Any) -> Any:
    """An argument as a binder expects it: plain lists and tuples (items may be IR values)."""
    if isinstance(v, PyList):
        return [_unwrap(x) for x in v.items]
    if isinstance(v, tuple):
        return tuple(_unwrap(x) for x in v)
    return v


def _holds_runtime(v: Any) -> bool:
    if isinstance(v, slice):
        return any(_holds_runtime(b) for b in (v.start, v.stop, v.step))
    if isinstance(v, list):
        return any(_holds_runtime(x) for x in v)
    return has_runtime(v) or isinstance(v, Ref | PyList)


def _runtime_part(value: Any, where: str = "it") -> str:
    """Which part of an attribute is a run-time value, and what computes it."""
    if isinstance(value, tuple | list):
        for i, item in enumerate(value):
            if _holds_runtime(item):
                return _runtime_part(item, f"item {i} of it")
    if isinstance(value, Value):
        producer = value.producer
        by = f" by `{producer.op.name}`" if producer is not None and \
            hasattr(producer.op, "name") else ""
        return f"{where} is {describe(value)} computed{by} at run time"
    return f"{where} is {describe(value)}, not a constant value"


def _static_result(op: Any, inputs: tuple, attrs: dict[str, Any]) -> Any:
    """The op's result decided by its input types alone (`ops.shape(x)` of a static shape)."""
    if op.static is None:
        return None
    try:
        types_ = [x.type if isinstance(x, Value) else type_of(x) for x in inputs]
        return op.static(*types_, **attrs)
    except (TypeError, ValueError):
        return None


def _input(f: Frame, x: Any) -> Value:
    if isinstance(x, list):
        x = tuple(x)
    return f.materialise(x)


def _scalar_like(x: Any) -> bool:
    if isinstance(x, tuple | list):
        return len(x) <= FOLD_ITEMS and all(_scalar_like(e) for e in x)
    return isinstance(x, bool | int | float | np.generic)


def _numbers_only(args: list[Any], kwargs: dict[str, Any]) -> bool:
    """A NumPy call on compile-time numbers only (settings such as dtype= or axis=None aside),
    which NumPy itself can compute while compiling."""
    settings = [v for v in kwargs.values() if not isinstance(v, str | type | np.dtype)
                and v is not None]
    return bool(args) and "out" not in kwargs and all(_scalar_like(a) for a in [*args, *settings])


def _numpy_scalars(f: Frame, args: list[Any]) -> list[Any]:
    """NumPy turns Python numbers into NumPy scalars of their default dtype when no array is
    among the operands (`np.abs(i)` of an int `i` is an np.int64): run-time Python numbers are
    cast so the op's result is the NumPy scalar eager code gets."""
    scalars = [isinstance(a, Value) and isinstance(a.type, Scalar) for a in args]
    if not any(scalars) or not all(s or _scalar_like(a) and not isinstance(a, tuple | list)
                                   for s, a in zip(scalars, args)):
        return args
    return [f.op("cast", a, dtype=np.asarray(a.type.kind(0)).dtype) if s else
            np.asarray(a)[()] for s, a in zip(scalars, args)]


def _fold(spelling: Any, inputs: tuple, attrs: dict[str, Any]) -> Any:
    """The op computed now, when it reads only a few numbers and yields no array."""
    if spelling.op.effects or not inputs or not all(_scalar_like(x) for x in inputs):
        return None
    if "shape" in attrs or "size" in attrs:
        return None
    try:
        result = spelling.op.kernel(*inputs, **attrs)
    except Exception:  # NOTE: not folded; the node reports the problem the usual way
        return None
    return None if isinstance(result, np.ndarray) else result


# -- cells and Python functions -----------------------------------------------------------

def _call_choice(f: Frame, choice: Choice, args: list[Any], kwargs: dict[str, Any],
                 k: int = 0) -> Any:
    """`layers[i](...)` for a run-time `i`: item k when `i` is k or k - len (Python's negative
    index), else the next; IndexError past the last (an If per item)."""
    n = len(choice.items)
    if k == n:
        f.raise_at_runtime(IndexError, f"{choice.what} index out of range")
    picked = short_circuit(f, "Or", compare(f, "Eq", choice.index, k),
                           lambda: compare(f, "Eq", choice.index, k - n))
    return choose(f, picked, lambda: call_value(f, choice.items[k], list(args), dict(kwargs)),
                  lambda: _call_choice(f, choice, args, kwargs, k + 1))


def _call_object(f: Frame, ref: Ref, args: list[Any], kwargs: dict[str, Any]) -> Any:
    obj = ref.obj
    if jit_wrapped(obj) is not None:  # e.g. `self.step = amber.jit(step)`
        return call_value(f, jit_wrapped(obj), args, kwargs)
    if isinstance(obj, Cell):
        try:
            obj.check_inputs(*(_typed(a) for a in args), **{k: _typed(v)
                                                            for k, v in kwargs.items()})
        except (TypeError, ValueError) as exc:
            raise f.error(str(exc), f"check the input of {type(obj).__name__}",
                          kind=kind_for(exc)) from exc
        construct = type(obj).construct
        return inline(f, jit_wrapped(construct) or construct, [ref, *args], kwargs,
                      method=True)
    method = getattr(type(obj), "__call__", None)
    if isinstance(method, types.FunctionType):
        return inline(f, method, [ref, *args], kwargs, method=True)
    raise f.error(f"cannot compile a call to {describe(ref)}")


def _typed(v: Any) -> Any:
    """What a layer's `check_inputs` sees: tensor types for run-time values."""
    if isinstance(v, Value):
        return v.type
    if isinstance(v, tuple):
        return tuple(_typed(x) for x in v)
    return to_python(v)


HANDLERS: dict[type, Callable[[Frame, Any], Any]] = {gast.Call: call}
"""Expression handlers this module adds to `expressions.HANDLERS`."""

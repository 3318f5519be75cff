"""Python builtins in compiled code: decided while compiling where their arguments allow
(`len` of a tuple, `range(3)`, `isinstance`), else nodes (`int(x)`, `print`) or run-time
iteration (`enumerate(x)` over a tensor)."""
from __future__ import annotations

import builtins
from typing import Any, Callable

import numpy as np

from ..graph import ListType, NoneType, Scalar, StrType, Tensor, TupleType, Value
from ..ops import METHODS
from .aliases import ARRAY, MIXED, SCALAR, zero_d_kind
from .containers import dict_builtin
from .context import Frame, tuple_items
from .control import short_circuit
from .errors import CompileError
from .expressions import attribute
from .operators import binary, evaluate_python, format_at_run_time, to_python
from .sequences import as_sequence, counted, first_dim, is_compile_time_sequence
from .values import (IndexedIter, Instance, PyList, Ref, RuntimeRange, SuperRef, describe,
                     has_runtime, truth)


def _len(f: Frame, x: Any) -> Any:
    if isinstance(x, Value):
        f.number_facts(x, "len()")
        if isinstance(x.type, TupleType):
            return len(x.type.elements)
        if isinstance(x.type, Tensor | ListType):
            return first_dim(f, x)
        raise f.error(f"len() of {describe(x)}")
    if isinstance(x, IndexedIter) and all(isinstance(b, int) for b in (x.start, x.stop, x.step)):
        return len(range(x.start, x.stop, x.step))
    if isinstance(x, PyList | Ref | tuple):
        return len(as_sequence(f, x))
    return evaluate_python(f, len, x)


def _range(f: Frame, *args: Any) -> Any:
    if not has_runtime(args):
        return evaluate_python(f, range, *args)
    for a in args:
        if isinstance(a, Value) and not _int_like(a):
            raise f.error(f"range() needs integers, got {describe(a)}")
    if len(args) == 1:
        return RuntimeRange(0, args[0], 1)
    if len(args) in (2, 3):
        return RuntimeRange(args[0], args[1], args[2] if len(args) == 3 else 1)
    raise f.error(f"range expected 1 to 3 arguments, got {len(args)}")


def _int_like(v: Value) -> bool:
    t = v.type
    return t in (Scalar(int), Scalar(bool)) or (
        isinstance(t, Tensor) and t.rank == 0 and t.dtype.kind in "biu")


def _enumerate(f: Frame, seq: Any, start: Any = 0) -> Any:
    if is_compile_time_sequence(seq):
        return tuple((_offset(f, i, start), item) for i, item in enumerate(as_sequence(f, seq)))
    it = counted(f, seq)
    return IndexedIter(0, it.stop, 1, lambda i: (_offset(f, i, start), it.element(i)))


def _offset(f: Frame, i: Any, start: Any) -> Any:
    """The count enumerate gives at index `i`."""
    if not has_runtime(start) and start == 0:
        return i
    return binary(f, "Add", i, start)


def _zip(f: Frame, *seqs: Any) -> Any:
    if not seqs:
        return ()
    if any(is_compile_time_sequence(s) for s in seqs):
        return tuple(zip(*(as_sequence(f, s) for s in seqs)))
    its = [counted(f, s) for s in seqs]
    stops = [it.stop for it in its]
    n = min(stops) if not has_runtime(stops) else f.op(
        "min", *(f.materialise(s) for s in stops))
    return IndexedIter(0, n, 1, lambda i: tuple(it.element(i) for it in its))


def _map(f: Frame, func: Any, *seqs: Any) -> Any:
    """`map(func, *seqs)`: the calls in order (a tuple for compile-time sequences; over run-time
    data, each call is made where the loop reads the element, as lazily as Python's)."""
    if not seqs:
        raise f.error("map() must have at least two arguments")
    pairs = _zip(f, *seqs)
    if isinstance(pairs, tuple):
        return tuple(f.call(func, list(items), {}) for items in pairs)
    return IndexedIter(pairs.start, pairs.stop, pairs.step,
                       lambda i: f.call(func, list(pairs.element(i)), {}))


def _filter(f: Frame, func: Any, seq: Any) -> Any:
    """`filter(func, seq)` over a compile-time sequence whose kept items are known when
    compiling."""
    if not is_compile_time_sequence(seq):
        raise f.error("filter() over run-time data is not supported",
                      "loop and append the items you keep to a list")
    kept = []
    for item in as_sequence(f, seq):
        keep = truth(item if func is None else f.call(func, [item], {}))
        if keep is None:
            raise f.error("filter() needs to know which items it keeps when compiling",
                          "loop and append the items you keep to a list")
        if keep:
            kept.append(item)
    return tuple(kept)


def _reversed(f: Frame, seq: Any) -> Any:
    if isinstance(seq, range):
        return seq[::-1]
    if is_compile_time_sequence(seq):
        return tuple(reversed(as_sequence(f, seq)))
    it = counted(f, seq) if not isinstance(seq, RuntimeRange) else None
    if it is None:
        raise f.error("reversed() of a range with run-time bounds is not supported",
                      "write the range backwards: range(n - 1, -1, -1)")
    return IndexedIter(binary(f, "Sub", it.stop, 1), -1, -1, it.element)


def _extreme(name: str, fn: Callable[..., Any]) -> Callable[..., Any]:
    def handler(f: Frame, *args: Any, **kwargs: Any) -> Any:
        if kwargs:
            if has_runtime(args):
                raise f.error(f"{name}() with key= or default= needs compile-time values")
            return evaluate_python(f, lambda *a: fn(*a, **kwargs), *args)
        if len(args) == 1 and isinstance(args[0], Value) and isinstance(args[0].type, ListType):
            return f.op(name, args[0])  # NOTE: a run-time list: only run time has its items
        items = list(args)
        if len(args) == 1 and not (isinstance(args[0], Value) and isinstance(args[0].type,
                                                                             Tensor)):
            items = as_sequence(f, args[0])
            if len(items) == 1:
                return items[0]  # NOTE: `max([s])` is s itself (the op of one input iterates)
        if not has_runtime(items):
            return evaluate_python(f, fn, *items) if len(items) > 1 else evaluate_python(
                f, fn, tuple(items))
        return f.op(name, *(f.materialise(x) for x in items))
    return handler


def _abs(f: Frame, x: Any) -> Any:
    if has_runtime(x):
        return f.op("abs", f.materialise(x))
    return evaluate_python(f, abs, x)


def _round(f: Frame, x: Any, ndigits: Any = None) -> Any:
    """round(): Python's for compile-time numbers; at run time NumPy's (both round half to
    even), giving an int without `ndigits` as Python does."""
    if not has_runtime(x):
        return evaluate_python(f, round, x, ndigits)
    if has_runtime(ndigits):
        raise f.error("round() needs ndigits known when compiling")
    rounded = f.op("round", f.materialise(x), decimals=ndigits or 0)
    if ndigits is None:
        return f.op("int", rounded)
    return f.op("float", rounded) if x.type == Scalar(float) else rounded


def _convert(kind: type) -> Callable[..., Any]:
    def handler(f: Frame, *args: Any) -> Any:
        if not args:
            return kind()
        x = args[0]
        if len(args) > 1 or not isinstance(x, Value):
            return evaluate_python(f, kind, *args)
        if kind is bool:
            known = truth(x)
            if known is not None:
                return known
        return f.op(kind.__name__, x)
    return handler


def _isinstance(f: Frame, obj: Any, cls: Any) -> bool:
    if has_runtime(cls):
        raise f.error("isinstance() needs a class known when compiling")
    if isinstance(obj, Value):
        f.number_facts(obj, "isinstance()")
        answers = {isinstance(sample, to_python(cls)) for sample in _samples(f, obj)}
        if len(answers) != 1:
            raise f.error(f"isinstance() of {describe(obj)} cannot be decided when compiling",
                          "it is a 0-d array on some paths and a NumPy scalar on others"
                          if answers else "")
        return answers.pop()
    if isinstance(obj, Instance):  # NOTE: an object made in compiled code: its class decides
        return evaluate_python(f, issubclass, obj.cls, cls)
    return evaluate_python(f, isinstance, obj, cls)


_NO_SAMPLE = object()


def _samples(f: Frame, v: Value) -> list[Any]:
    """Python objects of the classes `v` may have at run time: a 0-d value is an ndarray (an
    argument, `np.array(3)`), a NumPy scalar (`x.sum()`) or, path by path, either."""
    t = v.type
    if isinstance(t, Tensor) and t.rank == 0:
        kind = zero_d_kind(f, v)
        return [s for k, s in ((ARRAY, np.zeros((), t.dtype)), (SCALAR, t.dtype.type(0)))
                if kind in (k, MIXED)]
    sample = _sample(t)
    return [] if sample is _NO_SAMPLE else [sample]


def _sample(t: Any) -> Any:
    """A Python object of the class a value of type `t` has at run time."""
    if isinstance(t, Tensor):
        # NOTE: 0-d results of NumPy operations are NumPy scalars, as in eager code.
        return np.zeros((0,) * t.rank, t.dtype) if t.rank else t.dtype.type(0)
    if isinstance(t, Scalar):
        return t.kind()
    if isinstance(t, TupleType):
        return tuple(_sample(e) for e in t.elements)
    if isinstance(t, ListType):
        return []
    if isinstance(t, NoneType):
        return None
    if isinstance(t, StrType):
        return ""
    return _NO_SAMPLE


def _print(f: Frame, *args: Any, sep: Any = " ", end: Any = "\n", file: Any = None,
           flush: Any = False) -> None:
    if file is not None or has_runtime((sep, end)):
        raise f.error("print() supports only sep= and end= (with constant strings)")
    values = [_printable(f, a) for a in args]
    f.op("print", *values, sep=sep, end=end)
    return None


def _printable(f: Frame, v: Any) -> Value:
    try:
        return f.materialise(v)
    except Exception:  # NOTE: a compile-time object prints as its text, as eagerly
        if has_runtime(v):
            raise
        return f.constant(str(to_python(v)))


def _tuple(f: Frame, seq: Any = ()) -> tuple[Any, ...]:
    if isinstance(seq, Value) and isinstance(seq.type, TupleType):
        return tuple_items(f, seq)
    return tuple(as_sequence(f, seq))


def _list(f: Frame, seq: Any = ()) -> PyList:
    return PyList(list(as_sequence(f, seq)))


def _sorted(f: Frame, seq: Any, **kwargs: Any) -> PyList:
    """sorted() of items known when compiling: a dict's keys, a tuple of constants."""
    items = list(as_sequence(f, seq))
    if has_runtime(items) or has_runtime(kwargs):
        raise f.error("sorted() of run-time values is not supported in compiled code",
                      "sort an array with np.sort")
    return PyList(sorted(items, **{k: to_python(v) for k, v in kwargs.items()}))


def _sum(f: Frame, seq: Any, start: Any = 0) -> Any:
    if isinstance(seq, Value) and isinstance(seq.type, Tensor):
        return binary(f, "Add", start, f.op("sum", seq, axis=0))
    if isinstance(seq, Value) and isinstance(seq.type, ListType):
        return _runtime_list_sum(f, seq, start)
    total = start
    for item in as_sequence(f, seq):
        total = binary(f, "Add", total, item)
    return total


def _runtime_list_sum(f: Frame, items: Value, start: Any) -> Value:
    """`sum(items, start)` over a list built at run time: one node, since only run time knows
    how many items there are."""
    first = f.materialise(start)
    if isinstance(first.type, ListType | TupleType):
        raise f.error("sum() of a run-time list with a list or tuple start is not supported",
                      "concatenate the lists with + or extend() instead")
    try:
        total = f.op("list_sum", items, first)
    except CompileError as err:
        raise f.error(err.message, "give sum() a start of the type the sum has: `sum(items, "
                      "0.0)` for Python floats, `sum(items, np.zeros_like(x))` for arrays like x",
                      kind=type(err)) from None
    others = f.number_types([first], total.type)
    if others is not None:
        f.compiler.numbers[total] = others  # NOTE: the list may be empty: then it is `start`
    return total


def _getattr(f: Frame, obj: Any, name: Any, *default: Any) -> Any:
    if has_runtime(name) or not isinstance(name, str):
        raise f.error("getattr() needs an attribute name known when compiling")
    if default and not _hasattr(f, obj, name):
        return default[0]
    return attribute(f, obj, name)


def _hasattr(f: Frame, obj: Any, name: Any) -> bool:
    if has_runtime(name) or not isinstance(name, str):
        raise f.error("hasattr() needs an attribute name known when compiling")
    if isinstance(obj, Value):
        return isinstance(obj.type, Tensor) and (
            name in ("shape", "ndim", "dtype", "size", "T") or name in METHODS)
    if isinstance(obj, Instance):
        return name in obj.fields or hasattr(obj.cls, name)
    return hasattr(to_python(obj), name)


def _super(f: Frame, *args: Any) -> SuperRef:
    """`super()` / `super(Class, self)` in a method: the parent's attributes of self."""
    if args:
        if len(args) != 2 or has_runtime(args):
            raise f.error("super() takes a class and an object known when compiling")
        return SuperRef(args[0], args[1])
    cells = dict(zip(f.func.__code__.co_freevars, f.func.__closure__ or ()))
    params = f.fdef.args.args
    if "__class__" not in cells or not params:
        raise f.error("super() without arguments works only inside a method",
                      "call the parent's method explicitly: Parent.method(self, x)")
    return SuperRef(cells["__class__"].cell_contents, f.scope.get(params[0].id))


def _any_all(name: str) -> Callable[..., Any]:
    """any()/all() over a sequence known when compiling; its items may be run-time bools."""
    def handler(f: Frame, seq: Any) -> Any:
        found = name == "any"  # what ends the scan early
        rest = []
        for item in as_sequence(f, seq):
            known = truth(item)
            if known is None:
                rest.append(f.op("bool", f.materialise(item)))
            elif known is found:
                return found
        if not rest:
            return not found
        return _chain(f, "Or" if found else "And", rest)
    return handler


def _chain(f: Frame, kind: str, values: list[Any]) -> Any:
    if len(values) == 1:
        return values[0]
    return short_circuit(f, kind, values[0], lambda: _chain(f, kind, values[1:]))


def _unsupported(name: str, hint: str) -> Callable[..., Any]:
    def handler(f: Frame, *args: Any, **kwargs: Any) -> Any:
        raise f.error(f"{name}() is not supported in compiled code", hint)
    return handler


def _text(conversion: str, fn: Callable[..., Any]) -> Callable[..., Any]:
    """`str(v)` / `repr(v)`: of a run-time value, formatted where it runs (`"{!s}".format(v)`
    is `str(v)`, for arrays and NumPy scalars too)."""
    compile_time = _iter_python(fn.__name__, fn)

    def handler(f: Frame, *args: Any, **kwargs: Any) -> Any:
        if len(args) == 1 and not kwargs and isinstance(args[0], Value) and isinstance(
                args[0].type, Tensor | Scalar | StrType):
            return format_at_run_time(f, "{!" + conversion + "}", [args[0]])
        return compile_time(f, *args, **kwargs)
    return handler


def _iter_python(name: str, fn: Callable[..., Any]) -> Callable[..., Any]:
    """A builtin that only makes sense on compile-time values (str, type, round, ...)."""
    def handler(f: Frame, *args: Any, **kwargs: Any) -> Any:
        if has_runtime(args) or has_runtime(kwargs):
            raise f.error(f"{name}() of a run-time value is not supported in compiled code")
        return evaluate_python(f, lambda *a: fn(*a, **{k: to_python(v)
                                                        for k, v in kwargs.items()}), *args)
    return handler


BUILTINS: dict[Any, Callable[..., Any]] = {
    len: _len, range: _range, enumerate: _enumerate, zip: _zip, reversed: _reversed,
    map: _map, filter: _filter,
    min: _extreme("min", builtins.min), max: _extreme("max", builtins.max), abs: _abs,
    int: _convert(int), float: _convert(float), bool: _convert(bool),
    isinstance: _isinstance, print: _print, tuple: _tuple, list: _list, sum: _sum,
    sorted: _sorted,
    getattr: _getattr, hasattr: _hasattr,
    super: _super, any: _any_all("any"), all: _any_all("all"),
    iter: _unsupported("iter", "loop with for instead"),
    next: _unsupported("next", "loop with for instead"),
    slice: lambda f, *args: slice(*args),
    round: _round,
    dict: dict_builtin,
    str: _text("s", str), repr: _text("r", repr),
    **{fn: _iter_python(fn.__name__, fn) for fn in (type, divmod, pow, format, hash, callable,
                                                       ord, chr)},
}
"""builtin -> handler(frame, *args, **kwargs)."""


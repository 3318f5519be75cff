"""Python operators (`+`, `<`, `not`, `is`, `in`, ...): computed in Python when both operands
are compile-time values (exactly Python's result), else an op node from the registry."""
from __future__ import annotations

import operator as pyop
from typing import Any, Callable

import numpy as np

from ..graph import AnyType, ListType, NoneType, Scalar, StrType, Tensor, TupleType, Value
from ..graph.types import same_tuple_kind
from ..ops import OPERATORS, OPS, lookup
from .aliases import SCALAR, zero_d_kind
from .context import Frame, tuple_items
from .values import (PENDING, Instance, PyList, Ref, describe, has_runtime, holds_instance,
                     truth)

PYTHON: dict[str, Callable[..., Any]] = {
    "Add": pyop.add, "Sub": pyop.sub, "Mult": pyop.mul, "Div": pyop.truediv,
    "FloorDiv": pyop.floordiv, "Mod": pyop.mod, "Pow": pyop.pow, "MatMult": pyop.matmul,
    "LShift": pyop.lshift, "RShift": pyop.rshift, "BitAnd": pyop.and_, "BitOr": pyop.or_,
    "BitXor": pyop.xor, "USub": pyop.neg, "UAdd": pyop.pos, "Invert": pyop.invert,
    "Not": pyop.not_, "Eq": pyop.eq, "NotEq": pyop.ne, "Lt": pyop.lt, "LtE": pyop.le,
    "Gt": pyop.gt, "GtE": pyop.ge, "In": lambda a, b: a in b,
    "NotIn": lambda a, b: a not in b,
}
SYMBOLS = {"Add": "+", "Sub": "-", "Mult": "*", "Div": "/", "FloorDiv": "//", "Mod": "%",
           "Pow": "**", "MatMult": "@", "LShift": "<<", "RShift": ">>", "BitAnd": "&",
           "BitOr": "|", "BitXor": "^", "USub": "-", "UAdd": "+", "Invert": "~", "Not": "not",
           "Eq": "==", "NotEq": "!=", "Lt": "<", "LtE": "<=", "Gt": ">", "GtE": ">=",
           "In": "in", "NotIn": "not in", "Is": "is", "IsNot": "is not"}


def to_python(v: Any) -> Any:
    """A compile-time value as the plain Python object eager code would hold."""
    if isinstance(v, PyList):
        return [to_python(x) for x in v.items]
    if isinstance(v, tuple):
        return same_tuple_kind(v, [to_python(x) for x in v])
    if isinstance(v, Ref):
        return v.obj
    if v is PENDING:
        return None
    return v


ITERATORS = (type({}.items()), type({}.keys()), type({}.values()), map, filter, zip,
             enumerate, reversed, type(iter(())), type(iter([])), type(x for x in ()))


def from_python(v: Any) -> Any:
    """A Python result back as a compile-time value: lists become compile-time lists,
    iterators and dict views tuples (what a `for` can unroll)."""
    if isinstance(v, list):
        return PyList(v)
    if isinstance(v, ITERATORS):
        return tuple(v)
    return v


_WHOLE_OBJECT = ("an object made in compiled code is used here as a whole (printed, compared, "
                 "hashed, iterated, ...); compiled code only reads its attributes and calls its "
                 "methods")


def evaluate_python(f: Frame, fn: Callable[..., Any], *args: Any) -> Any:
    """`fn(*args)` at compile time; an exception is compiled as a run-time raise, since Python
    would raise only when this code runs."""
    if any(isinstance(a, Instance) for a in args):
        raise f.error(_WHOLE_OBJECT, "use its attributes and methods")
    try:
        result = fn(*(to_python(a) for a in args))
    except Exception as exc:  # NOTE: any Python error, re-raised by the compiled code
        if holds_instance(args):  # NOTE: Python's message would name the stand-in's class
            raise f.error(_WHOLE_OBJECT, "use its attributes and methods") from None
        f.raise_at_runtime(type(exc), *_constant_args(exc))
    return python_result(f, result, args)


def python_result(f: Frame, result: Any, inputs: Any) -> Any:
    """A result Python computed while compiling, as the frontend holds it: lists become
    compile-time lists, iterators tuples; a new array becomes a run-time copy of it, so that a
    write through any of its names (in a loop, a branch or a helper) is tracked like every
    other array's; a view of an array the caller owns (a global) stays the caller's."""
    if isinstance(result, np.ndarray) and result.dtype.kind in "biufc":
        for owner in _arrays_in(inputs):
            if np.may_share_memory(owner, result):
                found = f.compiler.foreign.get(id(owner))
                return f.compiler.mark_foreign(result, found[1] if found else "a global")
        return f.op("copy", f.constant(result))
    return from_python(result)


def _arrays_in(v: Any) -> list[np.ndarray]:
    if isinstance(v, np.ndarray):
        return [v]
    if isinstance(v, dict):
        v = tuple(v.values())
    if isinstance(v, PyList):
        v = v.items
    return [a for x in v for a in _arrays_in(x)] if isinstance(v, tuple | list) else []


def _constant_args(exc: Exception) -> tuple[Any, ...]:
    args = tuple(exc.args)
    if all(isinstance(a, bool | int | float | str | type(None)) for a in args):
        return args
    return (str(exc),)


# -- NumPy's conversion of lists and tuples to arrays ---------------------------------------------

def is_sequence(v: Any) -> bool:
    """A Python list or tuple (as NumPy sees one where it wants an array)."""
    return isinstance(v, tuple | list | PyList) or isinstance(v, Value) and isinstance(
        v.type, TupleType | ListType)


def as_array(f: Frame, v: Any, dtype: Any = None) -> Any:
    """`np.asarray(v, dtype)` for a list or tuple, nested, whose items may be run-time values:
    a compile-time array when every item is known, else the items (as arrays) stacked."""
    if not has_runtime(v):
        try:
            return np.asarray(to_python(v), dtype=dtype)
        except Exception as exc:  # NOTE: NumPy's own complaint, at run time as eagerly
            f.raise_at_runtime(type(exc), str(exc))
    if isinstance(v, Value) and isinstance(v.type, ListType):
        return _runtime_list_array(f, v, dtype)
    items = [as_array(f, x) if is_sequence(x) else x for x in _items(f, v)]
    parts = tuple(x if isinstance(x, Value) and isinstance(x.type, Tensor) else
                  f.op("asarray", f.materialise(x)) for x in items)
    stacked = f.op("stack", f.op("make_tuple", *parts), axis=0)
    if dtype is not None and np.dtype(dtype) != stacked.type.dtype:
        return f.op("cast", stacked, dtype=np.dtype(dtype))
    return stacked


def _runtime_list_array(f: Frame, v: Value, dtype: Any) -> Value:
    """`np.array(lst, dtype)` of a list of numbers built at run time: shape (len(lst),), also
    when it is empty. Stacking the items with one more (then dropping it) keeps the empty case
    out of np.stack; the dtype must not depend on emptiness (an empty list gives float64)."""
    item = v.type.element
    number = isinstance(item, Scalar) or isinstance(item, Tensor) and item.rank == 0
    dtype = None if dtype is None else np.dtype(dtype)
    if not number:
        raise f.error("a list of arrays built at run time cannot be turned into an array (an "
                      "empty one would have another rank)", "stack the items with np.stack")
    natural = np.asarray(item.kind(0)).dtype if isinstance(item, Scalar) else item.dtype
    if dtype is None and natural != np.float64:
        raise f.error(f"np.array of a list of {item} built at run time is {natural} if it has "
                      "items and float64 if it is empty", "pass the dtype: np.array(lst, "
                      f"dtype=np.{natural})")
    spare = f.op("list_new", f.materialise(natural.type(0)))
    padded = f.op("stack", f.op("list_concat", v, spare), axis=0)
    items = f.op("getitem", padded, index=(slice(None, -1),))
    # NOTE: a run-time item may be a Python number where its type says a NumPy dtype (`s = 0`
    # before a loop that may not run), so the conversion is always made
    return items if dtype is None else f.op("asarray", items, dtype=dtype)


def operand(f: Frame, v: Any) -> Any:
    """An operand of an arithmetic operator or a NumPy function: lists and tuples become
    arrays, as NumPy converts them."""
    return as_array(f, v) if is_sequence(v) else v


def _items(f: Frame, v: Any) -> list[Any]:
    if isinstance(v, PyList):
        return list(v.items)
    return list(tuple_items(f, v) if isinstance(v, Value) else v)


# -- operators ----------------------------------------------------------------------------------

def format_at_run_time(f: Frame, template: str, values: list[Any]) -> Any:
    """`template.format(*values)` with run-time values: a `format` node."""
    if "format" not in OPS:
        raise f.error("formatting a run-time value into a string is not supported yet",
                      "pass the values to print separately: print('loss', loss)")
    return f.op("format", *(f.materialise(v) for v in values), template=template)


def _is_text(v: Any) -> bool:
    return isinstance(v, str) or isinstance(v, Value) and isinstance(v.type, StrType)


def binary(f: Frame, opname: str, a: Any, b: Any) -> Any:
    """`a <op> b` for a binary arithmetic operator (AST class name, e.g. "Add")."""
    seq = _sequence_op(f, opname, a, b)
    if seq is not None:
        return seq
    if opname == "Add" and _is_text(a) and _is_text(b) and (has_runtime(a) or has_runtime(b)):
        # NOTE: strings made at run time (`"sum " + str(s)`) join where they are formatted
        return format_at_run_time(f, "{}{}", [a, b])
    if not has_runtime(a) and not has_runtime(b):
        return evaluate_python(f, PYTHON[opname], a, b)
    if opname == "Pow":
        _check_power_of_a_0d_array(f, a, b)
    return _node(f, opname, a, b)


def _check_power_of_a_0d_array(f: Frame, base: Any, exponent: Any) -> None:
    """Refuse `b ** e` (e known) where NumPy's dtype differs for a 0-d array and a NumPy scalar
    `b` (a fast path: a 0-d bool array squared is int8, a bool scalar's power int64; under
    NumPy 1 a float32 0-d array squared stays float32) and `b` may be an array: types follow
    the NumPy scalar."""
    if not (isinstance(base, Value) and isinstance(base.type, Tensor) and base.type.rank == 0) \
            or has_runtime(exponent):
        return
    sample, power = np.ones((), base.type.dtype), to_python(exponent)
    try:
        with np.errstate(all="ignore"):
            as_array, as_scalar = (np.result_type(s ** power) for s in (sample, sample[()]))
    except (TypeError, ValueError, ZeroDivisionError, OverflowError):
        return  # NOTE: the op's own rule reports what NumPy refuses
    if as_array != as_scalar and zero_d_kind(f, base) != SCALAR:
        raise f.error(f"`** {power!r}` of this 0-d {base.type.dtype} value is {as_array} when it "
                      f"is a 0-d array (NumPy takes a fast path) but {as_scalar} when it is a "
                      "NumPy scalar, and amber types 0-d values as NumPy scalars",
                      "take a NumPy scalar first (`b[()] ** 2`), or cast the base explicitly")


def _sequence_op(f: Frame, opname: str, a: Any, b: Any) -> Any:
    """Tuple/list concatenation and repetition, which never need a node."""
    if isinstance(a, Value) and isinstance(a.type, TupleType) and isinstance(b, tuple):
        a = tuple_items(f, a)
    if isinstance(b, Value) and isinstance(b.type, TupleType) and isinstance(a, tuple):
        b = tuple_items(f, b)
    if opname == "Add":
        if isinstance(a, tuple) and isinstance(b, tuple):
            return a + b
        if isinstance(a, PyList) and isinstance(b, PyList):
            return PyList(a.items + b.items)
        if _is_list(a) and _is_list(b):  # NOTE: one of them is built at run time
            return f.op("list_concat", f.materialise(a), f.materialise(b))
    if opname == "Mult":
        if isinstance(b, tuple | PyList):
            a, b = b, a
        if isinstance(a, tuple | PyList) and isinstance(b, int) and not isinstance(b, bool):
            return a * b if isinstance(a, tuple) else PyList(a.items * b)
    return None


def _is_array(v: Any) -> bool:
    return isinstance(v, np.ndarray) or isinstance(v, Value) and isinstance(v.type, Tensor)


def _is_list(v: Any) -> bool:
    return isinstance(v, PyList) or isinstance(v, Value) and isinstance(v.type, ListType)


def _node(f: Frame, opname: str, a: Any, b: Any) -> Value:
    if _is_array(a) and is_sequence(b) or _is_array(b) and is_sequence(a):
        a, b = operand(f, a), operand(f, b)  # NOTE: `x * (1.0, 2.0)`, as NumPy converts it
    op = OPERATORS.get(opname)
    if op is None:
        raise f.error(f"the operator `{SYMBOLS.get(opname, opname)}` is not supported on "
                      f"run-time values ({describe(a)} and {describe(b)})")
    return f.op(op, f.materialise(a), f.materialise(b))


def unary(f: Frame, opname: str, v: Any) -> Any:
    """`<op> v` for `-`, `+`, `~` and `not`."""
    if opname == "Not":
        known = truth(v)
        if known is not None:
            return not known
        return f.op("not", condition_value(f, v, at_run_time=True))
    if not has_runtime(v):
        return evaluate_python(f, PYTHON[opname], v)
    op = OPERATORS.get(opname)
    if op is None:
        raise f.error(f"the operator `{SYMBOLS[opname]}` is not supported on {describe(v)}")
    return f.op(op, f.materialise(v))


_DIM = lookup("dim")


def compare(f: Frame, opname: str, a: Any, b: Any) -> Any:
    """One comparison `a <op> b` (chains are split by the caller)."""
    if opname in ("Is", "IsNot"):
        same = identity(f, a, b)
        if isinstance(same, Value):
            return same if opname == "Is" else f.op("not", same)
        return same if opname == "Is" else not same
    if opname in ("In", "NotIn"):
        if isinstance(b, dict) and not has_runtime(a):
            # NOTE: a dict's keys are known while compiling, whatever its values are
            return evaluate_python(f, lambda key, d: key in d, a, dict.fromkeys(b)) == (
                opname == "In")
        found = _contains(f, a, b) if has_runtime(a) or has_runtime(b) else None
        if found is not None:
            return found if opname == "In" else f.op("not", found)
        if has_runtime(a) or has_runtime(b):
            raise f.error(f"`{SYMBOLS[opname]}` needs compile-time values, got {describe(a)} "
                          f"and {describe(b)}",
                          "compare the elements explicitly, e.g. with ==, any() or np.isin")
        return evaluate_python(f, PYTHON[opname], a, b)
    if not has_runtime(a) and not has_runtime(b):
        return evaluate_python(f, PYTHON[opname], a, b)
    if opname in ("Eq", "NotEq") and _tuple_like(a) and _tuple_like(b):
        same = _tuples_equal(f, *(tuple_items(f, v) if isinstance(v, Value) else v
                                  for v in (a, b)))
        return same if opname == "Eq" else not same if isinstance(same, bool) else \
            f.op("not", same)
    return _node(f, opname, a, b)


def _contains(f: Frame, a: Any, b: Any) -> Value | None:
    """`a in b` at run time where Python's meaning is plain: an array holds a number when any
    element equals it (`(b == a).any()`), a tuple of numbers when one of them equals it. None
    for anything else (a list's `in` compares item by item, arrays or not)."""
    number = _is_number(a)
    if number and (isinstance(b, np.ndarray) and b.ndim or isinstance(b, Value) and isinstance(
            b.type, Tensor) and b.type.rank):
        return f.op("bool", f.op("any", _node(f, "Eq", b, a)))
    if number and isinstance(b, tuple | PyList) and has_runtime(a):
        items = b.items if isinstance(b, PyList) else b
        if items and all(isinstance(e, bool | int | float | np.generic) for e in items):
            found = f.op("bool", _node(f, "Eq", a, items[0]))
            for e in items[1:]:
                found = _node(f, "BitOr", found, f.op("bool", _node(f, "Eq", a, e)))
            return found
    return None


def _is_number(v: Any) -> bool:
    """A number, compile-time or run-time (a Python or NumPy scalar, a 0-d array)."""
    if isinstance(v, Value):
        return isinstance(v.type, Scalar) or isinstance(v.type, Tensor) and v.type.rank == 0
    return isinstance(v, bool | int | float | np.generic)


def _tuple_like(v: Any) -> bool:
    return isinstance(v, tuple) or isinstance(v, Value) and isinstance(v.type, TupleType)


def _tuples_equal(f: Frame, a: tuple, b: tuple) -> bool | Value:
    """`a == b` of compile-time tuples holding run-time items (`x.shape == y.shape` with a
    symbolic size): item by item, decided while compiling where it can be (equal constants,
    one value, one symbolic size), the rest compared at run time."""
    if len(a) != len(b):
        return False
    result: Any = True
    for x, y in zip(a, b):
        same = _same_item(x, y)
        if same is None:
            same = compare(f, "Eq", x, y)
        if same is False:
            return False
        if same is not True:
            same = same if same.type == Scalar(bool) else f.op("bool", same)
            result = same if result is True else _node(f, "BitAnd", result, same)
    return result


def _same_item(x: Any, y: Any) -> bool | None:
    """True if two items of compared tuples are surely equal (one run-time value, or one
    symbolic size: `dim` nodes of the same size); None when only run time can tell."""
    if x is y and isinstance(x, Value):
        return True
    sizes = [v.producer.attrs["value"] if isinstance(v, Value) and v.producer is not None
             and v.producer.op is _DIM else None for v in (x, y)]
    return True if sizes[0] is not None and sizes[0] == sizes[1] else None


def identity(f: Frame, a: Any, b: Any) -> bool | Value:
    """`a is b`, decided at compile time (a run-time value only against None, or a Python
    bool against True/False)."""
    if isinstance(a, Value) or isinstance(b, Value):
        value, other = (a, b) if isinstance(a, Value) else (b, a)
        if isinstance(other, Value):
            if other is value:
                return True
            raise f.error("`is` between two run-time values cannot be decided when compiling",
                          "use `is` only to test for None; compare arrays with ==")
        if isinstance(value.type, AnyType):
            raise f.error("this value may or may not be None depending on the path taken, "
                          "so `is` cannot be decided when compiling",
                          "give the variable the same kind of value on every path")
        if isinstance(other, bool) and value.type == Scalar(bool):
            return f.op("eq", value, f.constant(other))  # Python's bools are singletons
        if isinstance(other, int | float) and not isinstance(other, bool) and \
                value.type in (Scalar(int), Scalar(float)):
            # NOTE: CPython shares small int objects (`x.shape[0] is 1` is True for a size 1),
            # so identity of a run-time number depends on its value and the interpreter
            raise f.error(f"`is` between a run-time {value.type} and the constant {other!r} "
                          "depends on how Python caches number objects, so it cannot be "
                          "decided when compiling", "compare numbers with == or !=")
        return other is None and isinstance(value.type, NoneType)
    if isinstance(a, Ref) and isinstance(b, Ref):
        return a.obj is b.obj
    if isinstance(a, Instance) or isinstance(b, Instance):  # NOTE: any version of one object
        return isinstance(a, Instance) and isinstance(b, Instance) and a.ident is b.ident
    return to_python(a) is to_python(b)


AMBIGUOUS = ("The truth value of an array with more than one element is ambiguous. Use a.any() "
             "or a.all()")


def condition_value(f: Frame, v: Any, at_run_time: bool = False) -> Value:
    """A run-time value usable as a condition (Python truthiness); CompileError otherwise, or,
    `at_run_time`, for an array whose truth is ambiguous, NumPy's ValueError raised when this
    point runs (a branch that never runs may hold such a test, as in Python)."""
    t = v.type
    if isinstance(t, Tensor):
        ambiguous = all(isinstance(d, int) for d in t.shape) and _size(t.shape) > 1 or any(
            isinstance(d, int) and d != 1 for d in t.shape)
        if ambiguous and at_run_time:
            f.raise_at_runtime(ValueError, AMBIGUOUS)
        if all(isinstance(d, int) for d in t.shape) and _size(t.shape) > 1:
            raise f.error(f"the truth value of an array with more than one element is ambiguous"
                          f" ({t})", "use .any() or .all()")
        if any(isinstance(d, int) and d != 1 for d in t.shape):
            raise f.error(f"the truth value of {t} is ambiguous", "use .any() or .all()")
        return v
    if isinstance(t, Scalar):
        return v
    if isinstance(t, ListType | StrType):
        return f.op("len", v)
    raise f.error(f"{describe(v)} cannot be used as a condition",
                  "give the value the same kind on every path")


def _size(shape: tuple) -> int:
    n = 1
    for d in shape:
        n *= d
    return n

"""Python operators (`+`, `<`, `not`, `is`, `in`, ...): computed in Python when both operands
are compile-time values (exactly Python's result), else an op node from the registry."""
from __future__ import annotations

import operator as pyop
from typing import Any, Callable

from ..graph import AnyType, ListType, NoneType, Scalar, StrType, Tensor, TupleType, Value
from ..ops import OPERATORS
from .context import Frame, tuple_items
from .values import PENDING, PyList, Ref, describe, has_runtime, truth

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
        return tuple(to_python(x) for x in v)
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


def evaluate_python(f: Frame, fn: Callable[..., Any], *args: Any) -> Any:
    """`fn(*args)` at compile time; an exception is compiled as a run-time raise, since Python
    would raise only when this code runs."""
    try:
        return from_python(fn(*(to_python(a) for a in args)))
    except Exception as exc:  # NOTE: any Python error, re-raised by the compiled code
        f.raise_at_runtime(type(exc), *_constant_args(exc))


def _constant_args(exc: Exception) -> tuple[Any, ...]:
    args = tuple(exc.args)
    if all(isinstance(a, bool | int | float | str | type(None)) for a in args):
        return args
    return (str(exc),)


def binary(f: Frame, opname: str, a: Any, b: Any) -> Any:
    """`a <op> b` for a binary arithmetic operator (AST class name, e.g. "Add")."""
    seq = _sequence_op(f, opname, a, b)
    if seq is not None:
        return seq
    if not has_runtime(a) and not has_runtime(b):
        return evaluate_python(f, PYTHON[opname], a, b)
    return _node(f, opname, a, b)


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
    if opname == "Mult":
        if isinstance(b, tuple | PyList):
            a, b = b, a
        if isinstance(a, tuple | PyList) and isinstance(b, int) and not isinstance(b, bool):
            return a * b if isinstance(a, tuple) else PyList(a.items * b)
    return None


def _node(f: Frame, opname: str, a: Any, b: Any) -> Value:
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
        return f.op("not", condition_value(f, v))
    if not has_runtime(v):
        return evaluate_python(f, PYTHON[opname], v)
    op = OPERATORS.get(opname)
    if op is None:
        raise f.error(f"the operator `{SYMBOLS[opname]}` is not supported on {describe(v)}")
    return f.op(op, f.materialise(v))


def compare(f: Frame, opname: str, a: Any, b: Any) -> Any:
    """One comparison `a <op> b` (chains are split by the caller)."""
    if opname in ("Is", "IsNot"):
        same = identity(f, a, b)
        if isinstance(same, Value):
            return same if opname == "Is" else f.op("not", same)
        return same if opname == "Is" else not same
    if opname in ("In", "NotIn"):
        if has_runtime(a) or has_runtime(b):
            raise f.error(f"`{SYMBOLS[opname]}` needs compile-time values, got {describe(a)} "
                          f"and {describe(b)}",
                          "compare the elements explicitly, e.g. with ==, any() or np.isin")
        return evaluate_python(f, PYTHON[opname], a, b)
    if not has_runtime(a) and not has_runtime(b):
        return evaluate_python(f, PYTHON[opname], a, b)
    return _node(f, opname, a, b)


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
        return other is None and isinstance(value.type, NoneType)
    if isinstance(a, Ref) and isinstance(b, Ref):
        return a.obj is b.obj
    return to_python(a) is to_python(b)


def condition_value(f: Frame, v: Any) -> Value:
    """A run-time value usable as a condition (Python truthiness); CompileError otherwise."""
    t = v.type
    if isinstance(t, Tensor):
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

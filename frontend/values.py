"""What a name is bound to while building: an IR `Value` (known at run time) or a compile-time
Python object. This module holds the few wrappers the frontend adds to plain Python objects
and the questions asked about any bound thing (is it run-time, its truth, its static type)."""
from __future__ import annotations

from dataclasses import dataclass, field
from types import BuiltinFunctionType, FunctionType, MethodType, ModuleType
from typing import Any, Callable

import numpy as np

from ..graph import (AnyType, Block, ListType, NoneType, Scalar, StrType, Tensor, TupleType, Type,
                     Value, join_types)
from ..graph.types import tuple_class, type_of
from ..ops import OpFunction
from ..ops import python as pyops


@dataclass(frozen=True, eq=False)
class ArgRoot:
    """An object passed to the compiled function (a cell): its input path and its parameter
    name (for value names)."""
    obj: Any
    path: str
    hint: str


@dataclass(eq=False)
class Ref:
    """A Python object reached from the compiled instance (a cell, a config object) with its
    attribute path from the root ("" is the root; None when not reachable from `self`). Under
    an argument (`arg`), `path` is an input path instead: `1.fc` is `fc` of argument 1."""
    obj: Any
    path: str | None
    arg: ArgRoot | None = None

    def child(self, name: str) -> str | None:
        """The path of attribute or item `name` under this object."""
        if self.path is None:
            return None
        return f"{self.path}.{name}" if self.path else name


@dataclass(eq=False)
class BoundMethod:
    """`receiver.method` for a Python function compiled by inlining with self = receiver."""
    function: FunctionType
    receiver: Any


@dataclass(eq=False)
class Closure:
    """A function defined inside compiled code (`lambda`, nested `def`): its AST as a def,
    the node it was defined by (its identity), the frame that defined it (whose variables it
    reads when called) and its default values."""
    node: Any
    key: Any
    outer: Any
    defaults: dict[str, Any]

    @property
    def name(self) -> str:
        return self.node.name


@dataclass(eq=False)
class SuperRef:
    """`super()` inside a method of `cls` called on `receiver` (a `Ref`)."""
    cls: type
    receiver: Any


@dataclass(eq=False)
class TensorMethod:
    """`x.sum` on a run-time value: a registry ndarray method (or "item") waiting for its
    arguments."""
    value: Value
    function: OpFunction | str


@dataclass(eq=False)
class Choice:
    """`layers[i]` for a compile-time sequence of cells or functions and a run-time integer
    `i` (MindSpore's switch_layer): calling it calls the item `i` picks (an If per item)."""
    items: tuple[Any, ...]
    index: Value
    what: str
    """The sequence, for messages (`CellList`, `tuple`)."""


@dataclass(eq=False)
class PyList:
    """A Python list built at compile time; its items are run-time or compile-time values."""
    items: list[Any] = field(default_factory=list)


@dataclass(eq=False)
class Instance:
    """An object of a plain user class made in compiled code, held while compiling: its class,
    its attributes, and what identifies the object. An attribute write makes a new version
    (see `aliases.replace_object`), as for a dict; every version of one object shares `ident`,
    and compares and hashes by it, as the object compares and hashes by identity."""
    cls: type
    fields: dict[str, Any]
    ident: object = field(default_factory=object)

    def with_fields(self, fields: dict[str, Any]) -> Instance:
        """A new version of this object holding `fields`."""
        return Instance(self.cls, fields, self.ident)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Instance) and other.ident is self.ident

    def __hash__(self) -> int:
        return id(self.ident)

    def __repr__(self) -> str:
        # NOTE: Python code run while compiling must not print this stand-in for the object
        raise TypeError("an object made in compiled code has no text while compiling")


@dataclass(eq=False)
class ListMethod:
    """`items.append` and friends on a compile-time list or a run-time list value."""
    target: PyList | Value
    name: str


@dataclass(eq=False)
class DictMethod:
    """`d.update` and friends on a compile-time dict."""
    target: dict
    name: str


@dataclass(eq=False)
class RuntimeRange:
    """`range(a, b, c)` with a bound known only at run time: only a `for` can iterate it."""
    start: Any
    stop: Any
    step: Any


@dataclass(eq=False)
class IndexedIter:
    """What a `for` over run-time data iterates: the indices range(start, stop, step) and,
    built inside the loop body, the element at an index."""
    start: Any
    stop: Any
    step: Any
    element: Callable[[Any], Any]


@dataclass(frozen=True)
class Unusable:
    """Bound to a name whose value cannot be used here; reading it reports `message`."""
    message: str
    hint: str = ""


class _Missing:
    """A name with no binding on this path (Python would raise UnboundLocalError)."""

    def __repr__(self) -> str:
        return "MISSING"


MISSING: Any = _Missing()


class Pending:
    """The return value before any `return` ran: None if the function ends here, but merged
    like an unbound name when no path can end with it (see statements.returns_none)."""

    def __repr__(self) -> str:
        return "PENDING"


PENDING: Any = Pending()


JIT_MODULE = __name__.rsplit(".", 2)[0] + ".runtime.jit"
"""Where `amber.jit`'s wrappers are defined (the frontend may not import the runtime)."""


def jit_wrapped(func: Any) -> Any:
    """What an `amber.jit` wrapper runs eagerly (its function or cell), else None: a jit
    function called from compiled code is inlined like any other."""
    if type(func).__module__ != JIT_MODULE:
        return None
    return getattr(func, "__wrapped__", None)


def has_runtime(v: Any) -> bool:
    """True if `v` is or holds (in a tuple, list or dict) an IR value."""
    # NOTE: an object made in compiled code counts as run-time: nothing evaluates it in Python
    return _holds(v, (Value, RuntimeRange, IndexedIter, TensorMethod, ListMethod, DictMethod,
                      Instance))


def holds_instance(v: Any) -> bool:
    """True if `v` is, or holds in a compile-time container, an object made in compiled code."""
    return _holds(v, Instance)


def _holds(v: Any, kinds: Any) -> bool:
    """True if `v` is an instance of `kinds` or holds one in tuples, lists and dicts."""
    if isinstance(v, kinds):
        return True
    if isinstance(v, tuple | list):
        return any(_holds(x, kinds) for x in v)
    if isinstance(v, PyList):
        return any(_holds(x, kinds) for x in v.items)
    return isinstance(v, dict) and any(_holds(x, kinds) for x in v.values())


def absent(v: Any, pending_is_none: bool) -> bool:
    """No value on this path yet: never bound (`MISSING`), or the return-value placeholder of a
    function none of whose paths returns None (`PENDING`)."""
    return v is MISSING or (v is PENDING and not pending_is_none)


def is_undefined(v: Any) -> bool:
    """True for the result of an `undefined` node (a name unbound on some path)."""
    return isinstance(v, Value) and v.producer is not None and v.producer.op is pyops.undefined


def may_be_unbound(v: Value, seen: set[Value] | None = None) -> bool:
    """True for a value some path leaves unbound: an `undefined` merged by an If or carried by
    a loop (a variable bound in one branch, or only in a loop body that may not run)."""
    seen = set() if seen is None else seen
    if v in seen:
        return False
    seen.add(v)
    owner = v.owner
    if owner is None:
        return False
    if isinstance(owner, Block):
        region = owner.owner_node
        slot = None if region is None else region.slot_of(v)
        return slot is not None and any(may_be_unbound(x, seen) for x in region.incoming(slot))
    if owner.is_region:
        return any(may_be_unbound(x, seen) for x in owner.incoming(v.index))
    return owner.op is pyops.undefined


def truth(v: Any) -> bool | None:
    """Python's truth value of `v` when known at compile time, else None."""
    if isinstance(v, Value):
        t = v.type
        if isinstance(t, TupleType):
            return bool(t.elements)
        if isinstance(t, NoneType):
            return False
        return None
    if isinstance(v, PyList):
        return bool(v.items)
    if isinstance(v, Ref):
        return bool(v.obj)
    if v is PENDING:
        return False
    return bool(v)


CONSTANT_TYPES = (bool, int, float, complex, str, type(None), np.ndarray, np.generic)


def static_type(v: Any) -> Type:
    """The IR type `v` has as a run-time value; TypeError if it cannot be one."""
    if isinstance(v, Value):
        return v.type
    if isinstance(v, tuple):
        return TupleType(tuple(static_type(x) for x in v), tuple_class(v))
    if isinstance(v, PyList):
        return ListType(widen_all([static_type(x) for x in v.items]))
    if v is PENDING:
        return NoneType()
    if isinstance(v, CONSTANT_TYPES):
        return type_of(v)
    raise TypeError(f"a {describe(v)} cannot be a run-time value")


def widen(a: Type, b: Type) -> Type:
    """The join of two types for merges and loop-carried values; an empty list's element type
    (any) is the bottom. TypeError when the kinds do not join."""
    if a == b:
        return a
    if isinstance(a, AnyType) or isinstance(b, AnyType):
        return AnyType()
    if isinstance(a, ListType) and isinstance(b, ListType):
        if isinstance(a.element, AnyType):
            return b
        if isinstance(b.element, AnyType):
            return a
        return ListType(widen(a.element, b.element))
    if isinstance(a, TupleType) and isinstance(b, TupleType) and len(a.elements) == len(
            b.elements) and a.cls is b.cls:
        return TupleType(tuple(widen(x, y) for x, y in zip(a.elements, b.elements)), a.cls)
    return join_types([a, b])


def widen_all(types: list[Type]) -> Type:
    """`widen` over a list; an empty list gives any."""
    if not types:
        return AnyType()
    out = types[0]
    for t in types[1:]:
        out = widen(out, t)
    return out


def kind_name(t: Type) -> str:
    """A short phrase for a type in error messages: `a tensor f32[2,3]`, `None`."""
    if isinstance(t, Tensor):
        return f"a tensor {t}"
    if isinstance(t, Scalar):
        return f"a Python {t}"
    if isinstance(t, NoneType):
        return "None"
    if isinstance(t, StrType):
        return "a string"
    if isinstance(t, TupleType):
        return f"a tuple {t}" if t.cls is tuple else f"a {t.cls.__name__} {t}"
    if isinstance(t, ListType):
        return f"a list {t}"
    return "a value of unknown kind"


def describe(v: Any) -> str:
    """What `v` is, for error messages: `tensor f32[2,3]`, `Dense cell`, `function helper`."""
    if isinstance(v, Value):
        return kind_name(v.type)
    if isinstance(v, Ref):
        where = f" (self.{v.path})" if v.arg is None else f" (argument {v.path})"
        return f"{type(v.obj).__name__} object" + (where if v.path else "")
    if isinstance(v, BoundMethod):
        return f"method {v.function.__qualname__}"
    if isinstance(v, Closure):
        return f"function {v.name}"
    if isinstance(v, PyList):
        return "list"
    if isinstance(v, Instance):
        return f"{v.cls.__name__} object made in compiled code"
    if isinstance(v, Choice):
        return f"item of a {v.what} picked by a run-time index"
    if isinstance(v, IndexedIter | RuntimeRange):
        return "run-time iterator (only a for loop can use it)"
    if isinstance(v, TensorMethod):
        return f"array method {v.function if isinstance(v.function, str) else v.function.name}"
    if isinstance(v, FunctionType):
        return f"function {v.__qualname__}"
    if isinstance(v, type):
        return f"class {v.__qualname__}"
    if isinstance(v, ModuleType):  # NOTE: not its repr, which holds an absolute path
        return f"module {python_name(v)}"
    if isinstance(v, BuiltinFunctionType | MethodType | np.ufunc):
        return python_name(v)
    try:
        return f"{type(v).__name__} {v!r}"[:120]
    except TypeError:  # NOTE: it holds an object made in compiled code (no text)
        return type(v).__name__


def python_name(v: Any) -> str:
    """How user code spells a module or a library function: `np.linalg`, `np.linalg.svd`,
    `math.sqrt`, `np.random.normal` (a method of NumPy's global random state)."""
    if isinstance(v, ModuleType):
        return _short_module(v.__name__)
    name = getattr(v, "__name__", type(v).__name__)
    owner = getattr(v, "__self__", None)
    if isinstance(owner, np.random.RandomState):
        return f"np.random.{name}"
    if owner is not None and not isinstance(owner, ModuleType):
        return f"{type(owner).__name__}.{name}"
    module = getattr(v, "__module__", None) or getattr(owner, "__name__", None) or ""
    return f"{_short_module(module)}.{name}" if module and module != "builtins" else name


def _short_module(name: str) -> str:
    """`numpy.linalg` -> `np.linalg` (NumPy's private modules as their public one)."""
    if name == "numpy" or name.startswith("numpy."):
        public = [p for p in name.split(".") if not p.startswith("_")]
        return ".".join(["np", *public[1:]])
    return name

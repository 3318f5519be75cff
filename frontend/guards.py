"""Guards: the compile-time facts a graph was built on (an attribute of `self`, a global, a
closure value), each with a side-effect-free reader the runtime calls to re-check it."""
from __future__ import annotations

import inspect
import os
import sys
from dataclasses import dataclass, field
from types import BuiltinFunctionType, FunctionType, MethodType, ModuleType
from typing import Any, Callable

import numpy as np

from ..common.markers import COMPILE_TIME_ATTR, GRADIENT_ATTR, TRANSFORM_ATTR
from ..ops import OpFunction, Primitive
from ..ops.types import same_tuple_kind

FUNCTION_TYPES = (FunctionType, BuiltinFunctionType, MethodType, OpFunction, np.ufunc)
VALUE_TYPES = (bool, int, float, complex, str, bytes, type(None), type(Ellipsis), np.dtype,
               np.generic)
"""Python objects compared by value (same type and `==`); everything else by identity."""


@dataclass(frozen=True)
class Guard:
    """A compile-time value the graph depends on: it holds when `read(instance)` is the same
    value as `expected` (same type and equal for plain values, identical for other objects)."""
    description: str
    read: Callable[[Any], Any]
    expected: Any

    def holds(self, instance: Any) -> bool:
        """Re-read the value from `instance` (the compiled cell, or None) and compare."""
        try:
            current = self.read(instance)
        except (AttributeError, LookupError, TypeError, ValueError):
            return False
        return same_value(current, self.expected)


def same_value(current: Any, expected: Any) -> bool:
    """Guard equality: plain values by type and value, containers item by item, else identity."""
    if current is expected:
        return True
    if type(current) is not type(expected):
        return False
    if isinstance(expected, tuple | list):
        return len(current) == len(expected) and all(map(same_value, current, expected))
    if isinstance(expected, dict):
        return current.keys() == expected.keys() and all(
            same_value(current[k], v) for k, v in expected.items())
    if isinstance(expected, VALUE_TYPES):
        return bool(current == expected) or (current != current and expected != expected)
    return False


def path_step(obj: Any, part: str) -> tuple[str, Any]:
    """One step of a dotted path: how it reads ("index" into a tuple or list for a numeric part,
    "key" of a dict, else "attr"ibute) and the object found there."""
    if part.isdigit() and isinstance(obj, tuple | list):
        return "index", obj[int(part)]
    if isinstance(obj, dict):
        return "key", obj[part]
    if not part:
        raise ValueError("an attribute path has an empty part")
    return "attr", getattr(obj, part)


def resolve_path(root: Any, path: str) -> Any:
    """The object at dotted attribute `path` under `root` ("" is `root` itself), read step by
    step as `path_step` does (`layers.0.weight`, `heads.mean.bias`)."""
    obj = root
    for part in path.split(".") if path else ():
        obj = path_step(obj, part)[1]
    return obj


def structure(value: Any) -> Any:
    """What compiled code assumed about an attribute: plain values themselves, containers item
    by item, arrays only as arrays (their data is passed in), any other object by its type."""
    if isinstance(value, np.ndarray | np.generic):
        return "<array>"
    if isinstance(value, np.random.Generator):
        return "<generator>"
    if isinstance(value, VALUE_TYPES):
        return value
    if isinstance(value, tuple):  # NOTE: a namedtuple's class is part of what was assumed
        return same_tuple_kind(value, [structure(v) for v in value])
    if isinstance(value, list):
        return tuple(structure(v) for v in value)
    if isinstance(value, dict):
        return tuple((k, structure(v)) for k, v in value.items())
    if isinstance(value, type | ModuleType):
        return value
    if isinstance(value, Primitive):  # its constructor arguments are compile-time attrs
        return (type(value), structure(vars(value)))
    if isinstance(value, FUNCTION_TYPES) or hasattr(type(value), GRADIENT_ATTR) or \
            hasattr(type(value), TRANSFORM_ATTR) or \
            getattr(type(value), COMPILE_TIME_ATTR, False) is True:
        return value  # functions, op spellings, bound methods, gradient functions: identity
    return type(value)  # cells and other objects: the attributes read are guarded one by one


@dataclass(frozen=True)
class AttrReader:
    """Reads `structure(self.<path>)` from the compiled instance."""
    path: str

    def __call__(self, instance: Any) -> Any:
        return structure(resolve_path(instance, self.path))


@dataclass(frozen=True)
class MethodReader:
    """Reads method `name` of the class of `self.<path>` and the code it runs: code that
    inlined it is stale once the class attribute is replaced (`MyNet.construct = f`,
    `nn.Dense.construct = g`) or the function's `__code__` is."""
    path: str
    name: str

    def __call__(self, instance: Any) -> tuple[Any, Any]:
        # NOTE: `__class__`, not type(): an `amber.jit(cell)` wrapper answers with its cell's
        # class, whose method the compiler inlined
        method = getattr(resolve_path(instance, self.path).__class__, self.name)
        return method, code_of(method)


@dataclass(frozen=True)
class CodeReader:
    """Reads the code an inlined function runs now (replacing `helper.__code__` makes code
    that inlined it stale). Checked in memory only: the disk cache checks the source text."""
    function: Any = field(compare=False)
    memory_only = True

    def __call__(self, instance: Any) -> Any:
        return self.function.__code__


@dataclass(frozen=True)
class PlaceReader:
    """Reads where the function bound to `module.qualname` is defined now (file, first line):
    the disk cache's check that an inlined helper is still the one compiled, which its source
    text alone cannot tell when a file defines the name twice or rebinds it."""
    module: str
    qualname: str

    def __call__(self, instance: Any) -> Any:
        return function_place(self.module, self.qualname)


def bound_function(module: str, qualname: str) -> Any:
    """The object bound to `module.qualname` now (through `amber.jit` wrappers); None if none."""
    obj: Any = sys.modules.get(module)
    for part in qualname.split("."):
        obj = getattr(obj, part, None)
    return None if obj is None else inspect.unwrap(obj)


def function_place(module: str, qualname: str) -> tuple[str, int] | None:
    """(file, first line) of the function bound to `module.qualname`; None if there is none."""
    code = getattr(bound_function(module, qualname), "__code__", None)
    if code is None:
        return None
    return os.path.abspath(code.co_filename), code.co_firstlineno


_JIT_MODULE = __name__.rsplit(".", 2)[0] + ".runtime.jit"


def code_of(method: Any) -> Any:
    """The code object a class attribute runs (through an `amber.jit` wrapper), else None."""
    if type(method).__module__ == _JIT_MODULE:
        method = getattr(method, "__wrapped__", method)
    return getattr(method, "__code__", None)


@dataclass(frozen=True)
class SameObjectReader:
    """Reads whether `self.<path>` is the very object at `self.<first>` (one array reached by
    two paths, compiled as one graph input)."""
    path: str
    first: str

    def __call__(self, instance: Any) -> bool:
        return resolve_path(instance, self.path) is resolve_path(instance, self.first)


@dataclass(frozen=True)
class ArgReader:
    """Reads `structure` of the value at `path` under an object passed as an argument (of its
    items, with `items`); arrays by shape and dtype, as they are graph inputs. The compiled code
    is specialized on that object's identity, so the reader keeps the object itself."""
    obj: Any = field(compare=False)
    path: str
    items: bool = False

    def __call__(self, instance: Any) -> Any:
        value = resolve_path(self.obj, self.path)
        if self.items:
            return structure(tuple(value))
        if isinstance(value, np.ndarray):
            return ("<array>", value.shape, value.dtype)
        return structure(value)


@dataclass(frozen=True)
class ItemsReader:
    """Reads the structure of the items of an iterable attribute (a CellList's cells)."""
    path: str

    def __call__(self, instance: Any) -> Any:
        return structure(tuple(resolve_path(instance, self.path)))


@dataclass(frozen=True)
class NamespaceReader:
    """Reads `structure(namespace[name])` (a module global, or a closure cell's contents when
    `is_cell`); with `raw`, the object itself (a module-level array baked in as a constant)."""
    namespace: Any = field(compare=False)
    name: str
    is_cell: bool = False
    raw: bool = False

    def __call__(self, instance: Any) -> Any:
        value = self.namespace.cell_contents if self.is_cell else self.namespace[self.name]
        return value if self.raw else structure(value)


@dataclass(frozen=True)
class FixedCellReader(NamespaceReader):
    """Reads the closure cell of one of amber's own call wrappers (FIXED_CLOSURE_ATTR): checked
    in memory only; on disk the entry's first key names what the wrapper calls."""
    memory_only = True


@dataclass(frozen=True)
class TypeReader:
    """Reads the type of what `reader` reads: a number compiled code itself writes (a global it
    declares, an attribute it assigns) is read when the code runs, so only its type is assumed."""
    reader: Any

    def __call__(self, instance: Any) -> type:
        return type(self.reader(instance))


@dataclass(frozen=True)
class ItemKindsReader:
    """Reads the kinds of the items of a list compiled code holds as a run-time list (see
    effects.live_list): `self.<path>`, or global `name` of `namespace`. How many items it has
    and their values are read when the code runs, so a list the code appends to every call
    does not make it compile again."""
    path: str = ""
    namespace: Any = field(default=None, compare=False)
    name: str = ""

    def __call__(self, instance: Any) -> Any:
        found = resolve_path(instance, self.path) if self.namespace is None else \
            self.namespace[self.name]
        return item_kinds(found)


def item_kinds(value: Any) -> tuple[tuple[str, ...], ...] | None:
    """The distinct kinds of the items of list `value`, in a fixed order: Python numbers by
    type, NumPy scalars by dtype; None if it is not a list of such items."""
    if type(value) is not list:
        return None
    kinds: set[tuple[str, ...]] = set()
    for item in value:
        if type(item) in (bool, int, float):
            kinds.add((type(item).__name__,))
        elif isinstance(item, np.generic) and item.dtype.kind in "biuf":
            kinds.add(("scalar", item.dtype.str))
        else:
            return None
    return tuple(sorted(kinds))

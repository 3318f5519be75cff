"""Namedtuples in compiled code: building one (`Pair(a=1, b=x)`), reading its fields and
methods, `_replace` and `_asdict`. A namedtuple is a compile-time tuple of the user's class whose
items are what the frontend holds (run-time values, constants, lists), like a tuple display;
where it becomes a run-time value it is `make_namedtuple`, so it keeps its class."""
from __future__ import annotations

import inspect
import types
from typing import Any

from ..graph.types import is_namedtuple_class
from .context import Frame
from .operators import from_python, to_python

PURE_METHODS = ("_replace", "_asdict")
"""Methods `collections.namedtuple` defines that only regroup the items: run while compiling,
on the objects the frontend holds."""


def is_namedtuple(v: Any) -> bool:
    """A compile-time instance of a namedtuple class."""
    return isinstance(v, tuple) and is_namedtuple_class(type(v))


def buildable(cls: type) -> bool:
    """A namedtuple class whose instances are made by namedtuple's own `__new__` (no subclass
    overrides `__new__` or `__init__`), so building one only stores the arguments."""
    made_by = next((k for k in cls.__mro__ if "_make" in vars(k)), None)
    return made_by is not None and cls.__new__ is made_by.__new__ \
        and cls.__init__ is tuple.__init__


def build(f: Frame, cls: type, args: list[Any], kwargs: dict[str, Any]) -> Any:
    """`cls(*args, **kwargs)`: the instance, holding the arguments themselves. NOTE: Python
    raises a wrong call's TypeError where the call runs, so the compiled code does too."""
    if not buildable(cls):
        raise f.error(f"cannot build {cls.__name__} in compiled code: it overrides __new__ or "
                      "__init__", "build it outside compiled code, or use a plain namedtuple")
    try:
        return cls(*args, **kwargs)
    except TypeError as exc:
        f.raise_at_runtime(TypeError, str(exc))


def attribute(f: Frame, base: tuple, name: str) -> Any:
    """`base.<name>`: a field is that item itself; a method is bound to `base`; a property
    runs its getter compiled, on `base`."""
    cls = type(base)
    if name in cls._fields:
        return base[cls._fields.index(name)]
    try:
        found = inspect.getattr_static(base, name)
    except AttributeError:
        raise f.error(f"{cls.__name__} has no attribute '{name}'",
                      f"its fields: {', '.join(cls._fields)}") from None
    if isinstance(found, property) and found.fget is not None:
        return f.call(found.fget, [base], {})
    if isinstance(found, BUILTIN_METHODS):  # NOTE: tuple's own `count`/`index`, as for tuples
        return from_python(getattr(to_python(base), name))
    if isinstance(found, types.FunctionType | staticmethod | classmethod) or not hasattr(
            type(found), "__get__"):
        return from_python(getattr(base, name))
    raise f.error(f"cannot read {cls.__name__}.{name} in compiled code: it is a "
                  f"{type(found).__name__}", "read fields, methods and properties")


BUILTIN_METHODS = (types.MethodDescriptorType, types.WrapperDescriptorType,
                   types.BuiltinFunctionType)


def pure_method(func: Any) -> bool:
    """`nt._replace` or `nt._asdict` of a namedtuple instance."""
    return isinstance(func, types.MethodType) and is_namedtuple(func.__self__) and \
        func.__name__ in PURE_METHODS and func.__func__ is getattr(
            next(k for k in type(func.__self__).__mro__ if "_make" in vars(k)), func.__name__)


def call_pure_method(f: Frame, func: types.MethodType, args: list[Any],
                     kwargs: dict[str, Any]) -> Any:
    """`_replace(**changes)` or `_asdict()`, run while compiling (as Python would, its errors
    raised where the call runs)."""
    try:
        return from_python(func(*args, **kwargs))
    except (TypeError, ValueError) as exc:
        f.raise_at_runtime(type(exc), str(exc))

"""Objects of plain user classes made in compiled code (`box = Box(x)`): an `Instance` held while
compiling, its `__init__` and methods inlined, its attributes read and written like the items
of a dict (merged by branches, carried by loops, each write a new version every name sees).
Only classes whose objects behave like records qualify (no special methods but `__init__`, no
metaclass, no slots, no builtin base); such an object exists only while compiling, so one that
would leave compiled code (returned, printed, stored at run time) is refused."""
from __future__ import annotations

import inspect
import types
from typing import Any

from . import names
from .aliases import replace_object
from .context import Frame
from .operators import from_python
from .values import MISSING, Instance, describe

RECORD_DUNDERS = frozenset({"__module__", "__qualname__", "__doc__", "__dict__", "__weakref__",
                            "__init__", "__annotations__", "__firstlineno__",
                            "__static_attributes__", "__type_params__",
                            "__enter__", "__exit__"})
"""The special names a plain class may define: none changes how its objects behave (a `with`
statement calls `__enter__`/`__exit__` like other methods, see `contexts`)."""
CONSTANTS = (bool, int, float, complex, str, bytes, type(None))


def plain_class(cls: Any) -> bool:
    """A user class whose objects are records: made by object.__new__, attributes in a
    `__dict__`, compared and hashed by identity, no operators (so an object is its
    attributes and its class's methods)."""
    if not isinstance(cls, type) or type(cls) is not type or cls.__module__ == "builtins":
        return False
    for k in cls.__mro__[:-1]:
        if k.__module__ == "builtins" or "__slots__" in vars(k):
            return False
        if any(n.startswith("__") and n.endswith("__") and n not in RECORD_DUNDERS
               for n in vars(k)):
            return False
        if "__init__" in vars(k) and not isinstance(vars(k)["__init__"], types.FunctionType):
            return False
    return cls.__mro__[-1] is object


def build(f: Frame, cls: type, args: list[Any], kwargs: dict[str, Any]) -> Instance:
    """`cls(*args, **kwargs)`: a new object, `__init__` inlined on it."""
    made = Instance(cls, {})
    if cls.__init__ is object.__init__:
        if args or kwargs:
            f.raise_at_runtime(TypeError, f"{cls.__name__}() takes no arguments")
        return made
    slot = names.SYNTHETIC_PREFIX + f"new:{id(made.ident)}"
    f.scope.bind(slot, made)  # NOTE: so the caller sees what __init__ writes (aliases.leave)
    try:
        result = f.call(cls.__init__, [made, *args], kwargs)
        made = f.scope.get(slot)
    finally:
        f.scope.unbind(slot)
    if result is not None:
        raise f.error(f"{cls.__name__}.__init__ returns {describe(result)}, and Python raises "
                      "TypeError when __init__ returns anything but None", "return nothing")
    assert isinstance(made, Instance) and made.cls is cls, f"{slot} lost its object"
    return made


def attribute(f: Frame, obj: Instance, name: str) -> Any:
    """`obj.<name>`: its own attribute, else its class's method (bound to it), property (run
    on it), or constant."""
    if name in obj.fields:
        return obj.fields[name]
    try:
        found = inspect.getattr_static(obj.cls, name)
    except AttributeError:
        f.raise_at_runtime(AttributeError,
                           f"'{obj.cls.__name__}' object has no attribute '{name}'")
    if isinstance(found, types.FunctionType):
        return types.MethodType(found, obj)
    if isinstance(found, property) and found.fget is not None:
        return f.call(found.fget, [obj], {})
    if isinstance(found, staticmethod):
        return found.__func__
    if isinstance(found, classmethod):
        return types.MethodType(found.__func__, obj.cls)
    if isinstance(found, CONSTANTS) or isinstance(found, tuple) and all(
            isinstance(x, CONSTANTS) for x in found) or isinstance(found, type):
        return from_python(found)
    raise f.error(f"cannot read {obj.cls.__name__}.{name} ({type(found).__name__}) of an "
                  "object made in compiled code", "read its attributes, methods, properties "
                  "and constant class attributes")


def set_attribute(f: Frame, obj: Instance, name: str, value: Any) -> None:
    """`obj.<name> = value`: a new version of the object, which every name holding it holds."""
    found = inspect.getattr_static(obj.cls, name, MISSING)
    if found is not MISSING and hasattr(type(found), "__set__"):
        raise f.error(f"assigning {obj.cls.__name__}.{name} runs its setter "
                      f"({type(found).__name__}), which compiled code does not",
                      "assign a plain attribute")
    replace_object(f, obj, obj.with_fields({**obj.fields, name: value}))

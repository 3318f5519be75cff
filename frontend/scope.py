"""Name resolution: locals, then closure values, globals and builtins of the function being
built; and attributes of `self` and the objects under it. Arrays found on the instance become
graph inputs (by attribute path); every other compile-time value read is recorded as a guard."""
from __future__ import annotations

import builtins
import inspect
import types
from types import ModuleType
from typing import Any

import numpy as np

from ..common.markers import FIXED_CLOSURE_ATTR
from ..graph import AnyType, Value
from ..graph.types import same_tuple_kind, type_of
from ..nn.cell import Cell
from ..ops import OpFunction, Primitive
from . import effects
from .aliases import current, note_input
from .context import Frame
from .guards import (ArgReader, AttrReader, FixedCellReader, ItemKindsReader, ItemsReader,
                     NamespaceReader, structure)
from .values import (MISSING, ArgRoot, BoundMethod, PyList, Ref, Unusable, jit_wrapped,
                     may_be_unbound)

UNBOUND_MESSAGE = "cannot access local variable '{}' where it is not associated with a value"
ARRAY_TYPES = (np.ndarray, np.generic, np.random.Generator)


def lookup(f: Frame, name: str) -> Any:
    """The value of `name` read at the current point of `f`."""
    value = f.scope.get(name)
    if value is not MISSING:
        if isinstance(value, Unusable):
            raise f.read_unusable(value)
        if isinstance(value, Value) and may_be_unbound(value):
            f.op("check_bound", value)  # NOTE: raises where unbound even if the read is unused
        return value
    if name in f.locals:
        # NOTE: Python raises only when this path runs, so the error is compiled, not reported.
        f.raise_at_runtime(UnboundLocalError, UNBOUND_MESSAGE.format(name))
    if f.outer is not None:  # a function defined in compiled code: the enclosing one's names
        return lookup(f.outer, name)
    cells = dict(zip(f.func.__code__.co_freevars, f.func.__closure__ or ()))
    if name in cells:
        return _closure_value(f, name, cells[name])
    if name in f.parsed.globals:
        return _global_value(f, name)
    if hasattr(builtins, name):
        return getattr(builtins, name)
    raise f.error(f"name '{name}' is not defined",
                  "define it before this line, or import it at module level")


def _closure_value(f: Frame, name: str, cell: Any) -> Any:
    try:
        value = cell.cell_contents
    except ValueError:
        raise f.error(f"free variable '{name}' is referenced before it is assigned in the "
                      "enclosing function", "assign it before calling the compiled function")
    fixed = getattr(f.func, FIXED_CLOSURE_ATTR, False)
    reader = (FixedCellReader if fixed else NamespaceReader)(cell, name, True)
    return outside_value(f, value, f"closure {name}", reader)


def _global_value(f: Frame, name: str) -> Any:
    effects.check_global_read(f, name)
    return global_value(f, name)


def global_value(f: Frame, name: str) -> Any:
    """The module global `name` as the frontend holds it (guarded)."""
    value = f.parsed.globals[name]
    return outside_value(f, value, f"global {name}", NamespaceReader(f.parsed.globals, name))


def outside_value(f: Frame, value: Any, description: str, reader: Any) -> Any:
    """A global or closure value as the frontend holds it, guarded unless it is a module."""
    if isinstance(value, ModuleType):
        return value
    if isinstance(value, np.ndarray) and f.compiler.path_of(value) is not None:
        # NOTE: a Parameter of the compiled root (a function compiled with its cells as
        # root, see runtime/roots.py) is read like self's, as a graph input
        return wrap(f, value, f.compiler.path_of(value), None)
    if isinstance(value, np.ndarray) or jit_wrapped(value) is not None:
        # NOTE: a module-level array is baked in as a constant and a jit function's wrapped
        # code is inlined, so their identity is guarded.
        raw = type(reader)(reader.namespace, reader.name, reader.is_cell, raw=True)
        f.compiler.guard(description, raw, value)
        return f.compiler.mark_foreign(value, description)
    if isinstance(value, np.generic):
        # NOTE: a NumPy scalar is baked in as a constant, so its value is guarded
        # (structure() says only "<array>", which let a changed global run stale code)
        raw = type(reader)(reader.namespace, reader.name, reader.is_cell, raw=True)
        f.compiler.guard(description, raw, value)
        return value
    module = effects.module_of(f)
    if type(value) is list and module is not None and not reader.is_cell and \
            reader.namespace is f.parsed.globals:
        live = effects.live_list(f, value, reader.name, effects.Owner(
            value, description, "global", reader.name, module),
            ItemKindsReader(namespace=reader.namespace, name=reader.name))
        if live is not MISSING:
            return live
    f.compiler.guard(description, reader, structure(value))
    if isinstance(value, Cell):
        return Ref(value, None)
    if isinstance(value, tuple | list) and _rooted(f, value):
        # e.g. a global list of the model's weights (a namedtuple keeps its class)
        return wrap(f, value if isinstance(value, tuple) else tuple(value), None, None)
    if isinstance(value, list):
        # NOTE: a compile-time list the frontend changes while compiling; the module's own
        # list is changed too when the code runs (effects.py), any other writes are refused
        return _own_global(f, f.compiler.mark_foreign(PyList(list(value)), description),
                           value, description, reader)
    if isinstance(value, dict):
        return _own_global(f, f.compiler.mark_foreign(value, description), value, description,
                           reader)
    return value


def _own_global(f: Frame, model: Any, value: Any, description: str, reader: Any) -> Any:
    """A global list or dict of the function's own module is written through (effects.py)."""
    module = effects.module_of(f)
    if module is None or reader.is_cell or reader.namespace is not f.parsed.globals:
        return model
    return effects.own(f, model, effects.Owner(value, description, "global", reader.name,
                                               module))


def _rooted(f: Frame, value: tuple | list) -> bool:
    """True if the sequence holds arrays, each a Parameter of the compiled root."""
    arrays = [v for v in value if isinstance(v, np.ndarray)]
    return bool(arrays) and all(f.compiler.path_of(v) is not None for v in arrays)


def ref_attribute(f: Frame, ref: Ref, name: str) -> Any:
    """`ref.<name>`: a bound method, a graph input for an array, or a guarded compile-time
    value (sub-cells and other objects stay `Ref`s with their path)."""
    obj = ref.obj
    stored = effects.read_attribute(f, ref, name)
    if stored is not MISSING:  # NOTE: compiled code writes it (effects.py)
        return stored
    try:
        value = getattr(obj, name)
    except AttributeError:
        raise f.error(f"'{type(obj).__name__}' object has no attribute '{name}'",
                      "set the attribute in __init__") from None
    if inspect.ismethod(value) and value.__self__ is obj:
        return BoundMethod(value.__func__, ref)
    if inspect.ismethod(value) and value.__self__ is type(obj):
        return BoundMethod(value.__func__, type(obj))  # a classmethod
    path = ref.child(name)
    if path is not None and ref.arg is None and type(value) is list:
        live = effects.live_list(f, value, name, effects.Owner(value, f"self.{path}", "self", path),
                                 ItemKindsReader(path))
        if live is not MISSING:
            return live
    if path is not None and not isinstance(value, ARRAY_TYPES):
        _guard(f, ref.arg, path, value)
    return wrap(f, value, path, ref)


def _guard(f: Frame, arg: ArgRoot | None, path: str, value: Any, items: bool = False) -> None:
    """Guard the object at `path` under self, or under argument `arg` (then `path` is an
    input path: its reader starts at the argument object)."""
    if arg is None:
        reader = ItemsReader(path) if items else AttrReader(path)
        expected = structure(tuple(value) if items else value)
        where = f"self.{path}"
    else:
        reader = ArgReader(arg.obj, path[len(arg.path) + 1:], items)
        expected, where = reader(None), f"argument {path}"
    f.compiler.guard(f"list({where})" if items else where, reader, expected)


def array_input(f: Frame, arg: ArgRoot | None, path: str, value: Any) -> Value:
    """The current version of the graph input carrying the array (or generator) `value` at
    `path` under self, or under argument `arg` (then `path` is its input path)."""
    if arg is None:
        return current(f, path, f.compiler.param(path, value))
    for known, found in f.compiler.inputs:
        if known == path:
            return current(f, f"argument {path}", found)
    t = AnyType() if isinstance(value, np.random.Generator) else type_of(value)
    found = f.compiler.graph.body.add_param(t, arg.hint + path[len(arg.path):])
    note_input(f.compiler.memory, found, value)
    f.compiler.inputs.append((path, found))
    return current(f, f"argument {path}", found)


def wrap(f: Frame, value: Any, path: str | None, parent: Ref | None) -> Any:
    """An object read from the instance at `path`, as the frontend holds it."""
    if path is None and isinstance(value, Cell | np.ndarray):
        path = f.compiler.path_of(value)  # e.g. a layer of a sliced SequentialCell
    if isinstance(value, ARRAY_TYPES):
        if path is None:
            owner = type(parent.obj).__name__ if parent is not None else "object"
            raise f.error(f"an array attribute of a {owner} that is not an attribute of the "
                          "compiled cell cannot be read",
                          "make the layer an attribute of self (in __init__)")
        arg = parent.arg if parent is not None else None
        if arg is None:
            f.compiler.guard(f"self.{path} is an array", AttrReader(path), structure(value))
        else:
            _guard(f, arg, path, value)
        return array_input(f, arg, path, value)
    if isinstance(value, tuple | list):
        items = [wrap(f, v, _item_path(value, i, v, path, parent), parent)
                 for i, v in enumerate(value)]
        if isinstance(value, tuple):
            return same_tuple_kind(value, items)
        # NOTE: a list stays a list (`self.sizes + [3]`, returned as a list), and the caller's
        return _own_attribute(f, f.compiler.mark_foreign(
            PyList(items), f"self.{path}" if path else "an attribute"), value, path, parent)
    if isinstance(value, dict):
        items = {k: wrap(f, v, _key_path(path, k), parent) for k, v in value.items()}
        return _own_attribute(f, f.compiler.mark_foreign(
            items, f"self.{path}" if path else "an attribute"), value, path, parent)
    if isinstance(value, Cell) or _is_plain_object(value):
        return Ref(value, path, parent.arg if parent is not None else None)
    return value


def _own_attribute(f: Frame, model: Any, value: Any, path: str | None, parent: Ref | None
                   ) -> Any:
    """A list or dict attribute of self is written through (effects.py)."""
    if path is None or parent is None or parent.arg is not None:
        return model
    return effects.own(f, model, effects.Owner(value, f"self.{path}", "self", path))


def _key_path(path: str | None, key: Any) -> str | None:
    """The path of a dict attribute's item: `<path>.<key>` for a plain string key."""
    if path is None or not isinstance(key, str) or not key or "." in key or key.isdigit():
        return None
    return f"{path}.{key}"


def _item_path(container: Any, i: int, item: Any, path: str | None, parent: Ref | None
               ) -> str | None:
    """The path of item `i` of a tuple/list attribute: its registered child name when the
    owner cell registered it (a container's `cell_list`), else `<path>.<i>`."""
    if parent is not None and isinstance(parent.obj, Cell) and isinstance(item, Cell):
        for child, cell in parent.obj._cells.items():
            if cell is item:
                return parent.child(child)
    return None if path is None else f"{path}.{i}"


def _is_plain_object(value: Any) -> bool:
    """An instance of a user class (a config object): its attributes are read like self's."""
    if isinstance(value, type | ModuleType | types.FunctionType | types.MethodType
                  | types.BuiltinFunctionType | Primitive | OpFunction | np.ufunc):
        return False
    module = getattr(type(value), "__module__", "builtins")
    return module != "builtins" and not module.startswith("numpy") and hasattr(value, "__dict__")


def container_items(f: Frame, ref: Ref) -> list[Any]:
    """The items of an iterable object under self (a CellList, SequentialCell), each wrapped
    with its path; the sequence's structure is guarded."""
    try:
        items = list(ref.obj)
    except TypeError:
        raise f.error(f"cannot iterate over a {type(ref.obj).__name__} object") from None
    if ref.path is not None:
        _guard(f, ref.arg, ref.path, items, items=True)
    return [wrap(f, item, _item_path(items, i, item, ref.path, ref), ref)
            for i, item in enumerate(items)]


def bind_arguments(f: Frame, func: Any, bound: inspect.BoundArguments) -> dict[str, Any]:
    """The parameters' values (passed, or defaults) as compile-time values: a default list
    becomes a compile-time list; a default list, dict or array is the function's own object,
    shared by every call, so writes into it are refused (see `Frame.writable`)."""
    passed = set(bound.arguments)
    bound.apply_defaults()
    params = bound.signature.parameters
    out = {}
    for name, value in bound.arguments.items():
        shared = name not in passed and params[name].default is value
        if isinstance(value, list) and name not in passed:
            value = PyList(list(value))
        if shared and isinstance(value, PyList | dict | np.ndarray):
            f.compiler.mark_foreign(value, f"the default value of `{name}`")
        out[name] = value
    return out

"""Methods of Python lists and dicts in compiled code. A compile-time list (`PyList`) changes in
place while compiling; a compile-time dict is replaced by an updated copy, seen through every
name holding it (`aliases.replace_object`); a list built at run time (a `ListType` value) gets
nodes that change it in place. Lists and dicts that belong to the caller are never changed
(`Frame.writable`)."""
from __future__ import annotations

from typing import Any

from ..graph import ListType, Scalar, Tensor, Value
from .aliases import replace_object
from .context import Frame, NeedsUnrolling
from .errors import CompileError
from .operators import evaluate_python, to_python
from .sequences import as_sequence, getitem
from .values import DictMethod, ListMethod, PyList, describe, has_runtime

LIST_METHODS = ("append", "extend", "insert", "pop", "reverse", "clear", "index", "count",
                "copy", "remove", "sort")
LIST_MUTATORS = ("append", "extend", "insert", "pop", "reverse", "clear", "remove", "sort")
"""Methods that change the list (a list changed inside a region is made at run time)."""
DICT_METHODS = ("update", "pop", "setdefault", "clear", "popitem", "get", "copy")
RUNTIME_LIST_METHODS = ("append", "extend", "insert", "pop", "copy")


def _sort_list(f: Frame, old: PyList, args: list[Any], kwargs: dict[str, Any]) -> None:
    """`items.sort(key=None, reverse=False)` of a compile-time list whose sort keys are known
    when compiling (a key function is called on each item, as Python does, once)."""
    if args or set(kwargs) - {"key", "reverse"}:
        raise f.error("list.sort() takes only the keyword arguments key and reverse")
    key, reverse = kwargs.get("key"), kwargs.get("reverse", False)
    keys = [item if key is None else f.call(key, [item], {}) for item in old.items]
    if has_runtime(keys) or has_runtime(reverse):
        raise f.error("list.sort() needs the sort keys known when compiling",
                      "sort the values before calling the compiled function")
    f.writable(old)
    try:  # NOTE: Python's own sort on the keys: stable, its TypeError for unorderable keys
        order = sorted(range(len(keys)), key=lambda i: to_python(keys[i]), reverse=reverse)
    except TypeError as exc:
        f.raise_at_runtime(TypeError, str(exc))
    replace_object(f, old, PyList([old.items[i] for i in order]))


def list_method(f: Frame, method: ListMethod, args: list[Any], kwargs: dict[str, Any]) -> Any:
    """`items.<name>(*args)` on a compile-time or run-time list."""
    if kwargs and method.name != "sort":
        raise f.error(f"list.{method.name}() takes no keyword arguments")
    if isinstance(method.target, Value):
        return _runtime_list_method(f, method.target, method.name, args)
    old = method.target
    if method.name == "sort":
        return _sort_list(f, old, args, kwargs)
    if method.name == "copy":
        return PyList(list(old.items))
    if method.name in ("index", "count", "remove") and has_runtime(args):
        raise f.error(f"list.{method.name} needs compile-time values",
                      "compare the items explicitly, e.g. with ==")
    if method.name not in LIST_MUTATORS:
        return evaluate_python(f, lambda items, *a: getattr(items, method.name)(*a),
                               list(old.items), *args)
    f.writable(old)
    # NOTE: like a dict, a changed list is a new list every name holding the old one now
    # holds: a branch or loop body never changes the one bound outside it
    items = list(old.items)
    try:
        if method.name == "extend":
            items.extend(as_sequence(f, args[0]) if len(args) == 1 else args)
            result = None
        else:
            result = getattr(items, method.name)(*args)
    except (IndexError, ValueError, TypeError) as exc:
        f.raise_at_runtime(type(exc), str(exc))
    replace_object(f, old, PyList(items))
    return result


def _runtime_list_method(f: Frame, items: Value, name: str, args: list[Any]) -> Any:
    """A list built at run time: nodes changing it in place (see `aliases.after_write`, which
    gives every name holding the list its new version)."""
    if name not in RUNTIME_LIST_METHODS:
        raise f.error(f"list.{name} is not supported on a list built at run time",
                      f"use {', '.join(RUNTIME_LIST_METHODS)}, or build the list with "
                      "compile-time loops")
    arity = {"append": 1, "extend": 1, "insert": 2, "pop": (0, 1), "copy": 0}[name]
    if len(args) not in (arity if isinstance(arity, tuple) else (arity,)):
        raise f.error(f"list.{name}() got {len(args)} arguments")
    if name == "append":
        f.op("list_append", items, _item(f, args[0]))
    elif name == "extend":
        extend(f, items, args[0])
    elif name == "insert":
        f.op("list_insert", items, _index(f, args[0]), _item(f, args[1]))
    elif name == "copy":
        return f.op("list_copy", items)
    else:
        index = _index(f, args[0] if args else -1)
        item = getitem(f, items, index)
        f.op("list_delete", items, index)
        return item
    return None


def extend(f: Frame, items: Value, more: Any) -> Value:
    """`items.extend(more)` / `items += more` on a run-time list, in place."""
    if isinstance(more, Value) and isinstance(more.type, ListType):
        return f.op("list_extend", items, more)
    value = items
    for item in as_sequence(f, more):
        value = f.op("list_append", value, _item(f, item))
    return value


def _item(f: Frame, v: Any) -> Value:
    """An item going into a list built at run time (in a loop or a branch); a compile-time
    object (a function, a layer) asks for the loop to be unrolled instead."""
    try:
        return f.materialise(v)
    except CompileError as err:
        raise f.error(f"this list is built at run time (it grows in a loop or a branch), but "
                      f"{err.message[0].lower()}{err.message[1:]}",
                      "grow it in a loop over a tuple or a constant range instead",
                      kind=NeedsUnrolling) from None


def concat(f: Frame, a: Any, b: Any) -> Value:
    """`a + b` where one of the lists is built at run time: a new run-time list."""
    return f.op("list_concat", f.materialise(a), f.materialise(b))


def _index(f: Frame, i: Any) -> Value:
    v = f.materialise(i)
    if v.type not in (Scalar(int), Scalar(bool)) and not (
            isinstance(v.type, Tensor) and v.type.rank == 0 and v.type.dtype.kind in "iu"):
        raise f.error(f"list indices must be integers, not {describe(i)}")
    return v


def delitem(f: Frame, base: Any, key: Any) -> Any:
    """`del base[key]`; returns what the name holding `base` must now refer to."""
    if isinstance(base, dict) and not has_runtime(key):
        f.writable(base)
        k = to_python(key)
        if k not in base:
            f.raise_at_runtime(KeyError, k)
        new = {name: v for name, v in base.items() if name != k}
        replace_object(f, base, new)
        return new
    if isinstance(base, PyList) and not has_runtime(key):
        f.writable(base)
        items = list(base.items)
        try:
            del items[to_python(key)]
        except (IndexError, TypeError) as exc:
            f.raise_at_runtime(type(exc), str(exc))
        new = PyList(items)  # NOTE: a new list every name holding the old one now holds
        replace_object(f, base, new)
        return new
    if isinstance(base, Value) and isinstance(base.type, ListType) and not isinstance(key, slice):
        return f.op("list_delete", base, _index(f, key))
    if isinstance(base, Value) and isinstance(base.type, Tensor):
        f.raise_at_runtime(ValueError, "cannot delete array elements")
    raise f.error(f"{describe(base)} does not support deleting items here",
                  "build a new one without the item")


# -- dicts ----------------------------------------------------------------------------------------

MISSING_DEFAULT = object()


def dict_method(f: Frame, method: DictMethod, args: list[Any], kwargs: dict[str, Any]) -> Any:
    """`d.<name>(...)` on a compile-time dict (its keys are known; its values may be run-time
    values); a change replaces the dict everywhere it is held."""
    d, name = method.target, method.name
    if name == "get":
        key, default = _key_and_default(f, name, args, None)
        return d.get(key, default)
    if name == "copy":
        return dict(d)
    f.writable(d)
    new = dict(d)
    result: Any = None
    if name == "update":
        if len(args) > 1:
            raise f.error(f"update expected at most 1 argument, got {len(args)}")
        new.update(to_dict(f, args[0]) if args else {})
        new.update(kwargs)
    elif kwargs:
        raise f.error(f"dict.{name}() takes no keyword arguments")
    elif name == "pop":
        key, default = _key_and_default(f, name, args, MISSING_DEFAULT)
        if key not in new and default is MISSING_DEFAULT:
            f.raise_at_runtime(KeyError, key)
        result = new.pop(key, default)
    elif name == "setdefault":
        key, default = _key_and_default(f, name, args, None)
        result = new.setdefault(key, default)
    elif name == "popitem":
        if not new:
            f.raise_at_runtime(KeyError, "popitem(): dictionary is empty")
        result = new.popitem()
    elif name == "clear":
        new.clear()
    replace_object(f, d, new)
    return result


def _key_and_default(f: Frame, name: str, args: list[Any], default: Any) -> tuple[Any, Any]:
    if not 1 <= len(args) <= 2:
        raise f.error(f"dict.{name}() takes 1 or 2 arguments, got {len(args)}")
    if has_runtime(args[0]):
        raise f.error("dict keys must be known when compiling", "use a constant key")
    return to_python(args[0]), args[1] if len(args) == 2 else default


def to_dict(f: Frame, v: Any) -> dict[Any, Any]:
    """A mapping or a sequence of (key, value) pairs as a compile-time dict."""
    if isinstance(v, dict):
        return dict(v)
    out = {}
    for pair in as_sequence(f, v):
        items = as_sequence(f, pair)
        if len(items) != 2:
            f.raise_at_runtime(ValueError, "dictionary update sequence element has length "
                               f"{len(items)}; 2 is required")
        if has_runtime(items[0]):
            raise f.error("dict keys must be known when compiling", "use constant keys")
        out[to_python(items[0])] = items[1]
    return out


def dict_builtin(f: Frame, *args: Any, **kwargs: Any) -> dict[Any, Any]:
    """`dict()`, `dict(mapping)`, `dict(pairs)`, `dict(key=value, ...)`."""
    if len(args) > 1:
        raise f.error(f"dict expected at most 1 argument, got {len(args)}")
    out = to_dict(f, args[0]) if args else {}
    out.update(kwargs)
    return out

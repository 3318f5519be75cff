"""Specialization keys: what about a call's arguments the compiled code depends on (array shapes
and dtypes, Python scalar values, structure), as a hashable tuple, plus their readable text."""
from __future__ import annotations

from typing import Any, Callable, Hashable, Sequence

import numpy as np

from ..ops.types import dtype_short, is_namedtuple_class, keeps_class

_ndarray = np.ndarray
_KW = "kw"
NAMEDTUPLE = "namedtuple"
"""The head of a namedtuple argument's key: (NAMEDTUPLE, class, item keys...)."""


def arg_key(value: Any) -> Hashable:
    """The key of one argument: `(shape, dtype)` for an array, `(type, value)` for a scalar."""
    if isinstance(value, _ndarray):
        return (value.shape, value.dtype, "tensor") if keeps_class(value) else \
            (value.shape, value.dtype)
    if isinstance(value, np.generic):
        return ((), value.dtype, "scalar")
    kind = type(value)
    if kind is bool or kind is int or kind is str:
        return (kind, value)
    if kind is float:
        return (float, repr(value))  # NOTE: repr keeps nan and -0.0 apart from other values
    if value is None:
        return None
    if kind is tuple or kind is list:
        return (kind.__name__, *map(arg_key, value))
    if kind is dict:  # NOTE: keys and scalar items are compile-time, arrays are inputs by key
        return ("dict", tuple((k, arg_key(v)) for k, v in value.items()))
    if is_namedtuple_class(kind):  # NOTE: by class and items, as a tuple (never by identity)
        return (NAMEDTUPLE, kind, *map(arg_key, value))
    # Anything else is specialized on its identity; such keys never reach the disk cache.
    return ("object", kind, id(value))


_INT64 = range(-2**63, 2**63)


def holds_wide_int(key: Hashable) -> bool:
    """True if a call key holds a Python int that int64 cannot (`2**70` as a trip count): only
    the NumPy backend runs such code as eager does (a Numba kernel cannot take the value)."""
    if type(key) is not tuple:
        return False
    if len(key) == 2 and key[0] is int and key[1] not in _INT64:
        return True
    return any(holds_wide_int(part) for part in key)


def call_key(args: tuple, kwargs: dict) -> Hashable:
    """The key of a whole call (positional arguments, then keywords by name)."""
    if not kwargs:
        key = []  # NOTE: a loop, not a comprehension: no frame of its own on the hot path
        for a in args:
            key.append((a.shape, a.dtype) if type(a) is _ndarray else arg_key(a))
        return tuple(key)
    return (_KW, tuple(map(arg_key, args)),
            tuple(sorted((k, arg_key(v)) for k, v in kwargs.items())))


def shaped_key(args: tuple, kwargs: dict,
               shape: Callable[[str, np.ndarray], Any]) -> Hashable:
    """A call key like `call_key`'s, but each array's shape is `shape(input_path, array)`: a
    symbolic shape (`("N", 1, 32, 32)`) for a dynamic signature, or the rank alone for the
    call's structure."""
    def at(value: Any, path: str) -> Hashable:
        if isinstance(value, _ndarray):
            found = (shape(path, value), value.dtype)
            return (*found, "tensor") if keeps_class(value) else found
        kind = type(value)
        if kind is tuple or kind is list:
            return (kind.__name__, *(at(v, f"{path}.{i}") for i, v in enumerate(value)))
        if is_namedtuple_class(kind):
            return (NAMEDTUPLE, kind, *(at(v, f"{path}.{i}") for i, v in enumerate(value)))
        if kind is dict:
            return ("dict", tuple((k, at(v, f"{path}.{k}") if isinstance(k, str) else arg_key(v))
                                  for k, v in value.items()))
        return arg_key(value)

    positional = tuple(at(a, str(i)) for i, a in enumerate(args))
    if not kwargs:
        return positional
    return (_KW, positional, tuple(sorted((k, at(v, k)) for k, v in kwargs.items())))


def split_key(key: Hashable) -> tuple[tuple, tuple]:
    """`(positional keys, ((name, key), ...))` of a `call_key`."""
    if len(key) == 3 and key[0] == _KW:  # type: ignore[arg-type,index]
        return key[1], key[2]  # type: ignore[index]
    return key, ()  # type: ignore[return-value]


def describe_arg(key: Hashable) -> str:
    """Readable text of one argument key: `f32[1,1,32,32]`, `int=3`, `(f32[4], None)`."""
    if key is None:
        return "None"
    assert isinstance(key, tuple), f"not an argument key: {key!r}"
    head = key[0]
    if isinstance(head, tuple):
        dims = ",".join(str(d) for d in head)
        return f"{dtype_short(key[1])}[{dims}]" + ("" if len(key) == 2 else f" {key[2]}")
    if head in (bool, int, float, str):
        return f"{head.__name__}={key[1] if head is not str else repr(key[1])}"
    if head == "dict":
        return "{" + ", ".join(f"{k!r}: {describe_arg(v)}" for k, v in key[1]) + "}"
    if head == NAMEDTUPLE:
        return f"{key[1].__name__}({', '.join(describe_arg(k) for k in key[2:])})"
    if head in ("tuple", "list"):
        items = ", ".join(describe_arg(k) for k in key[1:])
        return f"({items}{',' if len(key) == 2 else ''})" if head == "tuple" else f"[{items}]"
    return f"<{key[1].__name__} object at {key[2]:#x}>"


def describe_key(key: Hashable) -> str:
    """Readable text of a call key, e.g. `(f32[1,4], int=3, h=f32[1,8])`."""
    positional, keywords = split_key(key)
    parts = [describe_arg(k) for k in positional] + [f"{n}={describe_arg(k)}" for n, k in keywords]
    return "(" + ", ".join(parts) + ")"


def persistable(key: Hashable) -> bool:
    """True if the key names no object by identity (so it means the same in another process)."""
    if isinstance(key, tuple):
        if len(key) == 3 and key[0] == "object" or key and isinstance(key[0], str) and \
                key[0] == NAMEDTUPLE:
            return False  # NOTE: a class in the key: only this process can match it
        return all(persistable(k) for k in key)
    return True


def key_components(key: Hashable) -> dict[str, str]:
    """Argument name (`arg 0`, `h`) -> readable key, for naming what differs between keys."""
    positional, keywords = split_key(key)
    parts = {f"arg {i}": describe_arg(k) for i, k in enumerate(positional)}
    parts.update({f"argument {n!r}": describe_arg(k) for n, k in keywords})
    return parts


def what_changed(components: Sequence[dict[str, str]]) -> list[str]:
    """The component names whose values differ across `components` (with the values seen)."""
    names: dict[str, list[str]] = {}
    for comp in components:
        for name in comp:
            names.setdefault(name, [])
    changed = []
    for name, seen in names.items():
        for comp in components:
            value = comp.get(name, "<absent>")
            if value not in seen:
                seen.append(value)
        if len(seen) > 1:
            shown = ", ".join(seen[:4]) + (", ..." if len(seen) > 4 else "")
            changed.append(f"{name} ({shown})")
    return changed

"""Checking the frontend's guards on every call, cheaply.

A full check re-reads each guard (`Guard.holds`). Once that passed for an instance, a
`GuardPlan` reads the raw objects behind the guards in one generated function and compares their
identities with the snapshot taken then: the frontend guards an object either by identity, by its
type, or (immutable values) by value, so the same object at the same place gives the same guarded
value. Lists, dicts and primitives, guarded by their contents, also compare the identities of
what they hold. Guards with readers the plan does not know are re-checked in full each call.
"""
from __future__ import annotations

from typing import Any, Callable, Protocol, Sequence

import numpy as np

from ..frontend.guards import AttrReader, ItemsReader, NamespaceReader
from ..ops import Primitive
from .paths import access

_PLAIN = (bool, int, float, complex, str, bytes, type(None), type(Ellipsis), np.dtype, np.generic)


class GuardLike(Protocol):
    """The frontend's `Guard`: a compile-time fact, re-read from the instance on each call."""
    description: str
    expected: Any

    def read(self, instance: Any) -> Any: ...

    def holds(self, instance: Any) -> bool: ...


def same_value(value: Any, expected: Any) -> bool:
    """Guard equality, as the frontend defines it: plain values by type and value (NaN equals
    NaN), containers item by item, every other object by identity. Never raises."""
    if value is expected:
        return True
    if type(value) is not type(expected):
        return False
    if isinstance(expected, tuple | list):
        return len(value) == len(expected) and all(map(same_value, value, expected))
    if isinstance(expected, dict):
        return value.keys() == expected.keys() and all(
            same_value(value[k], v) for k, v in expected.items())
    if isinstance(expected, _PLAIN):
        return bool(value == expected) or (value != value and expected != expected)
    return False


def make_guard_check(guards: Sequence[GuardLike]) -> Callable[[Any], bool] | None:
    """A function `instance -> bool` re-checking every guard in full; None without guards."""
    if not guards:
        return None
    checks = tuple(g.holds for g in guards)

    def guards_hold(instance: Any) -> bool:
        for holds in checks:
            if not holds(instance):
                return False
        return True
    return guards_hold


class GuardPlan:
    """How one instance re-checks an entry's guards on each call (see the module docstring).

    Built right after a full check passed; `holds` is then true while every guarded object is
    the same one (and, for lists, dicts and primitives, holds the same objects), and the
    guards the plan cannot read that way still pass their full check."""
    __slots__ = ("read", "ids", "checks", "_raw")

    def __init__(self, guards: Sequence[GuardLike], instance: Any) -> None:
        exprs: list[str] = []
        env: dict[str, Any] = {}
        checks = []
        for guard in guards:
            parts = _snapshot_parts(guard.read, instance, env)
            if parts is None:
                checks.append(guard.holds)
            else:
                exprs += parts
        self.read = None
        if exprs:
            self.read = eval(f"lambda s: ({', '.join(exprs)},)", env)  # noqa: S307
        self._raw = () if self.read is None else self.read(instance)  # NOTE: pins the ids
        self.ids = tuple(map(id, self._raw))
        self.checks = tuple(checks)

    def holds(self, instance: Any) -> bool:
        """True if the guards checked when the plan was made still hold for `instance`."""
        if self.read is not None:
            try:
                raw = self.read(instance)
            except Exception:  # a guarded attribute is gone, a list got shorter, ...
                return False
            if tuple(map(id, raw)) != self.ids:
                return False
        for check in self.checks:
            if not check(instance):
                return False
        return True


def _expand(expr: str, value: Any, out: list[str]) -> bool:
    """Append expressions for `value` and, inside lists, dicts and primitives (guarded by their
    contents), for everything they hold; False if some part cannot be spelled."""
    out.append(expr)
    if isinstance(value, Primitive):
        return _expand(f"vars({expr})", vars(value), out)
    if isinstance(value, list | dict):
        out.append(f"*{expr}")  # NOTE: a list's items or a dict's keys; the length comes along
    if isinstance(value, dict):
        out.append(f"*{expr}.values()")
        items = value.items()
    elif isinstance(value, tuple | list):
        items = enumerate(value)
    else:
        return True
    for key, item in items:
        if not isinstance(item, tuple | list | dict | Primitive):
            continue
        if not isinstance(key, int | str) or isinstance(key, bool):
            return False
        if not _expand(f"{expr}[{key!r}]", item, out):
            return False
    return True


def _snapshot_parts(read: Any, instance: Any, env: dict[str, Any]) -> list[str] | None:
    """Expressions reading the objects behind a guard of a known reader kind, else None."""
    parts: list[str] = []
    try:
        if type(read) is AttrReader:
            expr, value = access(instance, read.path)
        elif type(read) is ItemsReader:  # an iterable attribute: the object and its items
            expr, value = access(instance, read.path)
            if any(isinstance(v, tuple | list | dict | Primitive) for v in value):
                return None
            return [expr, f"*{expr}"]
        elif type(read) is NamespaceReader:
            slot = f"_ns{id(read.namespace)}"
            env[slot] = read.namespace
            if read.is_cell:
                expr, value = f"{slot}.cell_contents", read.namespace.cell_contents
            else:
                expr, value = f"{slot}[{read.name!r}]", read.namespace[read.name]
        else:
            return None
    except (AttributeError, LookupError, ValueError, TypeError):
        return None
    return parts if _expand(expr, value, parts) else None

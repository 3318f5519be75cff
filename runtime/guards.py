"""Checking the frontend's guards on every call, cheaply.

A full check re-reads each guard (`Guard.holds`). Once that passed for an instance, a
`GuardPlan` checks in one generated function (`s.conv1 is o0 and s.conv1.stride is o1 and ...`)
that the objects behind the guards are the very ones seen then (and each inlined method is still
its class's attribute, running the same code): the frontend guards an object
either by identity, by its type, or (immutable values) by value, so the same object at the same
place gives the same guarded value. Lists, dicts and primitives, guarded by their contents, also
check their length and the identities of what they hold. Guards with readers the plan does not
know are re-checked in full each call.
"""
from __future__ import annotations

import operator
import os
import sys
from types import FunctionType
from typing import Any, Callable, Protocol, Sequence


from ..frontend.guards import (AttrReader, CodeReader, ItemsReader, MethodReader,
                               NamespaceReader, PlaceReader, SameObjectReader)
from ..ops import Primitive
from .paths import access



class GuardLike(Protocol):
    """The frontend's `Guard`: a compile-time fact, re-read from the instance on each call."""
    description: str
    expected: Any

    def read(self, instance: Any) -> Any: ...

    def holds(self, instance: Any) -> bool: ...


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
    """How one instance re-checks an entry's guards (and that its parameters are the same
    objects) on each call; see the module docstring.

    Built right after a full check passed; `holds` is then true while every guarded object is
    the same one (and, for lists, dicts and primitives, holds the same objects), and the
    guards the plan cannot read that way still pass their full check."""
    __slots__ = ("same", "checks", "holds", "inline")

    def __init__(self, guards: Sequence[GuardLike], instance: Any,
                 param_paths: Sequence[str] = ()) -> None:
        snapshot = _Snapshot()
        self.checks = tuple(g.holds for g in guards if not snapshot.guard(g.read, instance))
        for path in param_paths:
            snapshot.same(*access(instance, path))
        self.same = snapshot.function()
        self.holds: Callable[[Any], bool] = self._holds_all if self.checks else self.same
        """True if the guards checked when the plan was made still hold for `instance` (the
        generated test itself when it covers every guard: one Python call less per call)."""
        self.inline: tuple[str, dict[str, Any]] | None = None if self.checks else \
            (snapshot.test(), snapshot.env)
        """`same`'s test as an expression over `s` and the objects it names (for code that
        runs it inline; it may raise where `same` returns False), when it covers every guard."""

    def _holds_all(self, instance: Any) -> bool:
        if not self.same(instance):
            return False
        for check in self.checks:
            if not check(instance):
                return False
        return True


class _Snapshot:
    """The conditions of a plan being built, `<expr> is o<k>` with `o<k>` the object found
    there. A path under an object already checked reads from it (`o0.weight`, not
    `s.conv1.weight`): the conditions run in order and stop at the first that fails."""

    def __init__(self) -> None:
        self.env: dict[str, Any] = {}
        self.conditions: list[str] = []
        self.methods: set[tuple[type, str]] = set()
        """(class, name) of the methods already checked."""
        self.checked: dict[str, str] = {}
        """Expression over `s` -> the name of the object it was checked to be."""

    def keep(self, value: Any) -> str:
        """A name for `value` (keeping it alive also pins its identity)."""
        name = f"o{len(self.env)}"
        self.env[name] = value
        return name

    def same(self, expr: str, value: Any) -> str:
        """Require `expr` to be `value` still; the object's name."""
        if expr in self.checked:
            return self.checked[expr]
        name = self.checked[expr] = self.keep(value)
        if not self._fixed_item(expr):
            self.conditions.append(f"{self._rebase(expr)} is {name}")
        return name

    def _fixed_item(self, expr: str) -> bool:
        """True if `expr` is `t[i]` with `t` a tuple already pinned by identity, whose items
        cannot change (a subclass's: while it reads them with tuple's own `__getitem__`, one
        condition per class): the optimizer's and the train step's parameter tuples."""
        start = expr.rfind("[")
        if not expr.endswith("]") or not expr[start + 1:-1].isdigit():
            return False
        holder = self.env.get(self.checked.get(expr[:start], ""))
        if not isinstance(holder, tuple):
            return False
        cls = type(holder)
        if cls is not tuple and (cls, "__getitem__") not in self.methods:
            if cls.__getitem__ is not tuple.__getitem__:
                return False
            self.methods.add((cls, "__getitem__"))
            self.conditions.append(f"{self.keep(cls)}.__getitem__ is "
                                   f"{self.keep(tuple.__getitem__)}")
        return True

    def _rebase(self, expr: str) -> str:
        for end in range(len(expr) - 1, 0, -1):
            if expr[end] in ".[" and expr[:end] in self.checked:
                return self.checked[expr[:end]] + expr[end:]
        return expr

    def expand(self, expr: str, value: Any) -> bool:
        """Require `expr` to be `value` and, inside lists, dicts and primitives (guarded by
        their contents), to hold the same items; False if some part cannot be spelled."""
        name = self.same(expr, value)
        if isinstance(value, Primitive):
            return self.expand(f"vars({name})", vars(value))
        if isinstance(value, list | dict):
            self.conditions.append(f"len({name}) == {len(value)}")
            items = value.items() if isinstance(value, dict) else enumerate(value)
        else:  # NOTE: a tuple's own items cannot change, only what they hold
            items = enumerate(value) if isinstance(value, tuple) else ()
        for key, item in items:
            if not isinstance(item, tuple | list | dict | Primitive) and isinstance(value, tuple):
                continue
            if not isinstance(key, int | str) or isinstance(key, bool):
                return False
            if not self.expand(f"{name}[{key!r}]", item):
                return False
        return True

    def guard(self, read: Any, instance: Any) -> bool:
        """Add a guard's conditions; False for a reader kind the snapshot cannot follow."""
        try:
            if type(read) is AttrReader:
                return self.expand(*access(instance, read.path))
            if type(read) is SameObjectReader:  # pinning both by identity keeps them one
                (expr, value), (other, first) = (access(instance, read.path),
                                                 access(instance, read.first))
                self.same(expr, value)
                self.same(other, first)
                return value is first
            if type(read) is ItemsReader:  # an iterable attribute: the object and its items
                expr, value = access(instance, read.path)
                items = tuple(value)
                if any(isinstance(v, tuple | list | dict | Primitive) for v in items):
                    return False
                name = self.same(expr, value)
                self.conditions.append(f"same_items({name}, {self.keep(items)})")
                self.env["same_items"] = _same_items
                return True
            if type(read) is MethodReader:  # the class's attribute, then its current code
                method, code = read(instance)
                if type(method) is not FunctionType or not read.name.isidentifier():
                    return False
                # NOTE: the object is pinned by identity (as attribute guards pin it), so its
                # class is checked once for all its instances (four Dense layers: one check)
                # (the instance itself is the one the plan was made for: never kept, or it
                # would never be freed)
                owner = instance
                if read.path:
                    expr, owner = access(instance, read.path)
                    self.same(expr, owner)
                cls = owner.__class__  # NOTE: an amber.jit(cell) wrapper answers its cell's
                if (cls, read.name) not in self.methods:
                    self.methods.add((cls, read.name))
                    held = self.keep(method)
                    self.conditions.append(f"{self.keep(cls)}.{read.name} is {held} "
                                           f"and {held}.__code__ is {self.keep(code)}")
                return True
            if type(read) is CodeReader:
                self.conditions.append(f"{self.keep(read.function)}.__code__ is "
                                       f"{self.keep(read(instance))}")
                return True
            if type(read) is PlaceReader:
                return self.place(read)
            if type(read) is NamespaceReader:
                slot = self.keep(read.namespace)
                if read.is_cell:
                    return self.expand(f"{slot}.cell_contents", read.namespace.cell_contents)
                return self.expand(f"{slot}[{read.name!r}]", read.namespace[read.name])
        except (AttributeError, LookupError, ValueError, TypeError):
            return False
        return False

    def place(self, read: PlaceReader) -> bool:
        """Where `module.qualname`'s function is defined stays put while the module, the objects
        bound to the name and unwrapped from it (`__wrapped__` kept in an instance's own dict,
        as amber.jit wrappers keep it) and the function's code are the same ones: a code
        object's file and first line cannot change. Only an absolute file name is spelled so
        (`abspath` of a relative one follows the working directory)."""
        parts = read.qualname.split(".")
        chain = [sys.modules.get(read.module)]
        for part in parts:
            chain.append(getattr(chain[-1], part, None))
        while type(chain[-1]) is not FunctionType:
            obj = chain[-1]
            if hasattr(type(obj), "__wrapped__") or "__wrapped__" not in vars(obj) or \
                    len(chain) > 64:  # NOTE: a wrapper cycle (inspect.unwrap refuses one too)
                return False
            chain.append(vars(obj)["__wrapped__"])
        found = chain[-1]
        if not all(map(str.isidentifier, parts)) or "__wrapped__" in vars(found) or \
                not os.path.isabs(found.__code__.co_filename):
            return False
        name = self.same(f"{self.keep(sys)}.modules.get({read.module!r})", chain[0])
        for step, obj in zip(parts + ["__wrapped__"] * len(chain), chain[1:]):
            name = self.same(f"{name}.{step}", obj)
        self.conditions.append(f"'__wrapped__' not in {name}.__dict__ and "
                               f"{name}.__code__ is {self.keep(found.__code__)}")
        return True

    def test(self) -> str:
        """Every condition, as one expression over `s` and the names of `env`."""
        return " and\n            ".join(self.conditions) or "True"

    def function(self) -> Callable[[Any], bool]:
        """`s -> bool` testing every condition (False if reading one fails); the objects it
        compares with are its default arguments, so reading them is a local read."""
        if not self.conditions:
            return lambda s: True
        defaults = ", ".join(f"{name}={name}" for name in self.env)
        test = self.test()
        source = (f"def same(s, {defaults}):\n    try:\n        return bool({test})\n"
                  "    except Exception:  # an attribute is gone, a list got shorter, ...\n"
                  "        return False\n")
        namespace = dict(self.env)
        exec(source, namespace)  # noqa: S102 (built from checked attribute paths)
        return namespace["same"]


def _same_items(items: Any, expected: tuple[Any, ...]) -> bool:
    """True if iterating `items` gives the very objects `expected` holds, in order."""
    found = tuple(items)
    return len(found) == len(expected) and all(map(operator.is_, found, expected))

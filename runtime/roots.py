"""A root for a plain function: the cells and Parameters it reaches through its globals and
closures (a model defined at module level, an optimizer), gathered as the children of one Cell.

Compiled with that Cell as `self`, the function reads their Parameters as graph inputs by path
(`model.fc.weight`), as a Cell's `construct` reads its own: so a gradient with respect to
`model.trainable_params()` flows to them, and an in-place update writes them. The root is
remade when one of the names it was built from is bound to another object.
"""
from __future__ import annotations

import types
from typing import Any, Iterator

from ..common.markers import GRADIENT_ATTR
from ..nn.cell import Cell, Parameter

MAX_DEPTH = 16
"""Helpers calling helpers are followed this deep."""


class FunctionRoot(Cell):
    """The cells and Parameters a function reaches, as attributes named like the globals and
    closure variables that hold them."""

    def __init__(self, found: dict[str, Any]) -> None:
        super().__init__(auto_prefix=False)
        for name, obj in found.items():
            setattr(self, name, obj)

    def construct(self, *args: Any) -> Any:
        raise TypeError("a FunctionRoot only holds a function's cells")


class RootOf:
    """The `FunctionRoot` of one function, made on first use (when the module's globals
    exist) and remade when a name it came from is bound to another object."""

    def __init__(self, fn: Any) -> None:
        self.fn = fn
        self._slots: list[tuple[Any, str, Any]] | None = None
        self._root: FunctionRoot | None = None

    def get(self) -> FunctionRoot | None:
        """The root for the function as its names are bound now (None: it reaches none)."""
        if self._slots is None:
            self._build()
        for namespace, name, obj in self._slots:  # type: ignore[union-attr]
            if namespace is not None and _read(namespace, name) is not obj:
                self._build()
                break
        return self._root

    def _build(self) -> None:
        found: dict[str, Any] = {}
        reached = list(_reachable(self.fn, 0, set()))
        owned: set[int] = set()
        # NOTE: cells first, so a Parameter is named by its path in its cell (`model.fc.weight`)
        for _, name, obj in sorted(reached, key=lambda s: not isinstance(s[2], Cell)):
            if isinstance(obj, Cell | Parameter) and id(obj) not in owned:
                key, n = name, 1
                while key in found:
                    key, n = f"{name}_{n}", n + 1
                found[key] = obj
                owned.add(id(obj))
                if isinstance(obj, Cell):
                    owned.update(id(p) for _, p in obj.parameters_and_names())
        self._slots = reached
        self._root = FunctionRoot(found) if found else None


def _read(namespace: Any, name: str) -> Any:
    if isinstance(namespace, dict):
        return namespace.get(name)
    try:
        return namespace.cell_contents
    except ValueError:
        return None


def _reachable(fn: Any, depth: int, seen: set[int]) -> Iterator[tuple[Any, str, Any]]:
    """(namespace, name, object) for every global and closure value `fn` (and the helpers it
    calls) reads that is a Cell, a Parameter or leads to them."""
    if depth > MAX_DEPTH or id(fn) in seen:
        return
    seen.add(id(fn))
    if hasattr(type(fn), GRADIENT_ATTR):
        forward, request = getattr(fn, GRADIENT_ATTR)
        yield from _reachable(forward, depth + 1, seen)
        for i, w in enumerate(request.weights or ()):
            yield None, f"weight_{i}", w  # NOTE: fixed with the gradient function
        return
    wrapped = getattr(fn, "__wrapped__", None)
    if wrapped is not None and not isinstance(fn, Cell):
        yield from _reachable(wrapped, depth + 1, seen)
        return
    if isinstance(fn, types.MethodType):
        fn = fn.__func__
    if not isinstance(fn, types.FunctionType):
        return
    code = fn.__code__
    for name in _names(code):
        if name in fn.__globals__:
            yield from _value(fn.__globals__, name, fn.__globals__[name], depth, seen)
    for name, cell in zip(code.co_freevars, fn.__closure__ or ()):
        try:
            value = cell.cell_contents
        except ValueError:
            continue
        yield from _value(cell, name, value, depth, seen)


def _value(namespace: Any, name: str, value: Any, depth: int, seen: set[int]
           ) -> Iterator[tuple[Any, str, Any]]:
    if isinstance(value, Cell | Parameter):
        yield namespace, name, value
    elif isinstance(value, types.FunctionType | types.MethodType) or \
            hasattr(type(value), GRADIENT_ATTR) or getattr(value, "__wrapped__", None) is not None:
        yield namespace, name, value
        yield from _reachable(value, depth + 1, seen)


def _names(code: types.CodeType) -> Iterator[str]:
    """The global names `code` (and the code nested in it: comprehensions) reads."""
    yield from code.co_names
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            yield from _names(const)

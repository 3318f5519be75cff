"""Which axes of a jit function's array arguments are symbolic sizes (code compiled once for
every size of them), and the shapes a call's arguments take under that choice.

Three ways to ask, the first that applies wins:
- `Cell.set_inputs(Tensor(shape=[None, 1, 32, 32], dtype=float32), ...)`, MindSpore's way: the
  None axes are symbolic; the other axes and the dtype must match (else ValueError);
- `jit(f, dynamic=...)`: True makes axis 0 of every array argument symbolic; a dict maps an
  argument (its name or position) to its symbolic axes (an int, a list of ints, or {axis:
  symbol name}) or to a `Tensor(shape=..., dtype=...)` spec; False compiles every shape apart;
- automatic (`dynamic=None`, the default): an axis whose size changes between calls becomes
  symbolic at the next compile (one more compile, never one per size), with a warning naming
  it. If that compile fails, the function goes back to a compile per shape.

Symbols are named at the call that compiles: symbolic axes of equal size share one symbol, so
`x: [N, 4]` and `labels: [N]` are known to agree; a later call where they differ is another
specialization. A symbol name given in a spec ties axes together: a call where they differ is a
ValueError naming both arguments.
"""
from __future__ import annotations

import inspect
from dataclasses import dataclass
from typing import Any, Callable, Hashable, Iterator

import numpy as np

from ..ops.symbolic import SYMBOL_NAME
from .keys import shaped_key

SYMBOLS = ("N", "M", "L", "K", "P", "Q", "R", "S", "T", "U", "V", "W")
"""Names of symbolic sizes, in the order the axes of a call meet them (then N1, M1, ...)."""

Shapes = dict[str, tuple[Any, ...]]
"""Input path (`0`, `x`, `1.2`) -> the shape its type takes: ints, and symbol names."""


@dataclass(frozen=True)
class Declared:
    """One argument's declared shape: `axes` maps each symbolic axis to a symbol name (None:
    named at compile time); `shape`, when given, fixes the rank and the other axes."""
    axes: dict[int, str | None]
    shape: tuple[Any, ...] | None = None
    dtype: np.dtype | None = None
    origin: str = "jit(dynamic=...)"


def array_arguments(args: tuple, kwargs: dict) -> Iterator[tuple[str, np.ndarray]]:
    """The call's arrays with their input paths, as the frontend names them."""
    for i, value in enumerate(args):
        yield from _walk(value, str(i))
    for name, value in kwargs.items():
        yield from _walk(value, name)


def _walk(value: Any, path: str) -> Iterator[tuple[str, np.ndarray]]:
    if isinstance(value, np.ndarray):
        yield path, value
    elif isinstance(value, tuple | list):
        for i, item in enumerate(value):
            yield from _walk(item, f"{path}.{i}")
    elif isinstance(value, dict):
        for key, item in value.items():
            if isinstance(key, str):
                yield from _walk(item, f"{path}.{key}")


class DynamicShapes:
    """The symbolic axes of one jit function: declared, or learned from the calls it saw."""

    def __init__(self, dynamic: Any = None) -> None:
        if not (dynamic is None or isinstance(dynamic, bool | dict)):
            raise TypeError(f"jit: dynamic must be None (automatic), True, False or a dict of "
                            f"argument -> axes or Tensor(shape=..., dtype=...), got {dynamic!r}")
        self.dynamic = dynamic
        self.learned: dict[str, set[int]] = {}
        """Automatic mode: the axes (by input path) seen changing size."""
        self.first: dict[Hashable, dict[str, tuple[int, ...]]] = {}
        """Automatic mode: the shapes of the first call of each structure (ranks and dtypes)."""
        self.refused = False
        """Automatic mode: a symbolic compile failed, so every shape compiles apart."""

    @property
    def automatic(self) -> bool:
        return self.dynamic is None and not self.refused

    # -- what is symbolic -------------------------------------------------------------------
    def declared(self, func: Callable[..., Any], instance: Any, args: tuple,
                 kwargs: dict) -> dict[str, Declared]:
        """The declared symbolic axes by input path (empty when nothing is declared)."""
        specs = instance.get_inputs() if hasattr(instance, "get_inputs") else None
        if specs is not None:
            return {path: _from_spec(spec, "set_inputs") for path, spec in
                    _by_path(func, instance, dict(enumerate(specs)), args, kwargs).items()
                    if spec is not None}
        if self.dynamic is True:
            return {path: Declared({0: None}) for path, a in array_arguments(args, kwargs)
                    if a.ndim}
        if isinstance(self.dynamic, dict):
            return {path: _from_entry(entry) for path, entry in
                    _by_path(func, instance, self.dynamic, args, kwargs).items()}
        return {}

    def signature(self, func: Callable[..., Any], instance: Any, key: Hashable, args: tuple,
                  kwargs: dict) -> tuple[Shapes, Hashable]:
        """The symbolic shapes of the call's arrays (none when every size is specialized) and
        the key code is cached by: with the symbols (`f32[N,1,32,32]`), or the call's `key`."""
        shapes = self.shapes(func, instance, args, kwargs)
        if not shapes:
            return shapes, key
        return shapes, shaped_key(args, kwargs, lambda path, a: shapes.get(path, a.shape))

    def shapes(self, func: Callable[..., Any], instance: Any, args: tuple,
               kwargs: dict) -> Shapes:
        """The symbolic shape of each array argument with symbolic axes; ValueError when a
        call does not fit what was declared."""
        declared = self.declared(func, instance, args, kwargs)
        arrays = dict(array_arguments(args, kwargs))
        if not declared and self.automatic:
            # NOTE: an axis learned from calls of one rank says nothing about a call where the
            # argument has another rank (a 0-d array after vectors): that call has its own shape
            declared = {path: Declared(dict.fromkeys(fitting)) for path, axes in
                        self.learned.items() if (fitting := [
                            a for a in sorted(axes) if path in arrays and a < arrays[path].ndim])}
        if not declared:
            return {}
        return _name_symbols(arrays, declared)

    # -- automatic mode ---------------------------------------------------------------------
    def learn(self, owner: Hashable, args: tuple, kwargs: dict) -> str:
        """Record this call's shapes; the news (for a warning) of axes that now turn symbolic
        because they differ from the first call of the same structure (`owner`'s calls with
        the same ranks, dtypes and other arguments), or "" when none do."""
        if not self.automatic:
            return ""
        structure = (owner, shaped_key(args, kwargs, lambda path, a: a.ndim))
        shapes = {path: a.shape for path, a in array_arguments(args, kwargs)}
        first = self.first.setdefault(structure, shapes)
        changed = []
        for path, shape in shapes.items():
            before = first.get(path)
            if before is None or len(before) != len(shape):
                continue
            for axis, (a, b) in enumerate(zip(before, shape)):
                if a != b and axis not in self.learned.get(path, ()):
                    self.learned.setdefault(path, set()).add(axis)
                    changed.append(f"{_argument(path)} axis {axis} ({a}, then {b})")
        if not changed:
            return ""
        return (f"{'; '.join(changed)} changed between calls: compiling once more with "
                f"{'that axis' if len(changed) == 1 else 'those axes'} symbolic, for every size "
                "(jit(..., dynamic=False) compiles each shape instead)")

    def refuse(self) -> None:
        """A symbolic compile failed: compile every shape apart from now on."""
        self.refused = True
        self.learned.clear()

    def describe(self) -> str:
        """The learned symbolic axes, for the recompile warning."""
        return "; ".join(f"{_argument(p)} axis {a}" for p, axes in self.learned.items()
                         for a in sorted(axes))


def symbolic_note(shapes: Shapes) -> str:
    """Why a call that compiles with its own shapes did not compile with symbolic ones."""
    described = ", ".join(f"{_argument(p)} ({', '.join(map(str, s))})"
                          for p, s in shapes.items())
    return (f"amber: compiled with symbolic sizes, {described}, which are known only when the "
            "code runs; these arguments' own shapes compile. Declare only the axes whose size "
            "varies, or leave dynamic= at its default (None), which compiles each shape where "
            "symbolic sizes do not")


def _argument(path: str) -> str:
    return f"arg {path}" if path.split(".")[0].isdigit() else f"argument {path!r}"


def _name_symbols(arrays: dict[str, np.ndarray], declared: dict[str, Declared]) -> Shapes:
    """Each declared array's shape with its symbolic axes named: given names as given (equal
    sizes required), the others by size (equal sizes share a symbol)."""
    taken = {name for d in declared.values() for name in d.axes.values() if name}
    fresh = (name for name in _names() if name not in taken)
    by_size: dict[int, str] = {}
    named: dict[str, tuple[int, str, int]] = {}
    shapes: Shapes = {}
    for path, spec in declared.items():
        array = arrays.get(path)
        if array is None:
            continue
        _check_declared(path, array, spec)
        dims: list[Any] = list(array.shape)
        for axis, name in sorted(spec.axes.items()):
            if axis >= array.ndim:
                raise ValueError(f"{_argument(path)}: axis {axis} is declared symbolic "
                                 f"({spec.origin}), but the array has shape {array.shape}")
            size = array.shape[axis]
            if name is None:
                if size not in by_size:
                    by_size[size] = next(fresh)
                name = by_size[size]
            elif name in named and named[name][0] != size:
                _, other, other_axis = named[name]
                raise ValueError(
                    f"{_argument(path)}: axis {axis} has size {size}, but {spec.origin} "
                    f"ties it to {_argument(other)} axis {other_axis} (both {name}), which "
                    f"has size {named[name][0]}")
            named.setdefault(name, (size, path, axis))
            dims[axis] = name
        shapes[path] = tuple(dims)
    return shapes


def _check_declared(path: str, array: np.ndarray, spec: Declared) -> None:
    if spec.dtype is not None and array.dtype != spec.dtype:
        raise ValueError(f"{_argument(path)}: expected dtype {spec.dtype} ({spec.origin}), "
                         f"got {array.dtype}")
    if spec.shape is None:
        return
    want = "[" + ", ".join("None" if d is None else str(d) for d in spec.shape) + "]"
    if array.ndim != len(spec.shape) or any(
            isinstance(d, int) and d != n for d, n in zip(spec.shape, array.shape)):
        raise ValueError(f"{_argument(path)}: expected shape {want} ({spec.origin}), got "
                         f"{array.shape}")


def _names() -> Iterator[str]:
    yield from SYMBOLS
    k = 1
    while True:
        yield from (f"{s}{k}" for s in SYMBOLS)
        k += 1


def _from_spec(spec: Any, origin: str) -> Declared:
    """A `Tensor(shape=..., dtype=...)` spec (or an example array) as a declaration."""
    shape = tuple(spec.shape)
    axes = {}
    for axis, d in enumerate(shape):
        if d is None or isinstance(d, str):
            if isinstance(d, str) and not SYMBOL_NAME.match(d):
                raise ValueError(f"{origin}: a symbol name is upper case (N, B, SEQ), got {d!r}")
            axes[axis] = d
    return Declared(axes, shape, np.dtype(spec.dtype), origin)


def _from_entry(entry: Any) -> Declared:
    """One value of `jit(dynamic={...})`: axes (int, list, {axis: name}) or a spec."""
    if hasattr(entry, "shape") and hasattr(entry, "dtype"):
        return _from_spec(entry, "jit(dynamic=...)")
    if isinstance(entry, int) and not isinstance(entry, bool):
        return Declared({entry: None})
    if isinstance(entry, list | tuple) and all(isinstance(a, int) and not isinstance(a, bool)
                                                for a in entry):
        return Declared(dict.fromkeys(entry))
    if isinstance(entry, dict) and all(isinstance(a, int) and (n is None or isinstance(n, str)
                                                               and SYMBOL_NAME.match(n))
                                       for a, n in entry.items()):
        return Declared(dict(entry))
    raise TypeError(f"jit(dynamic=...): an argument's entry is an axis, a list of axes, "
                    f"{{axis: 'NAME'}} or Tensor(shape=..., dtype=...), got {entry!r}")


def _by_path(func: Callable[..., Any], instance: Any, entries: dict[Any, Any], args: tuple,
             kwargs: dict) -> dict[str, Any]:
    """Entries keyed by argument position or name, re-keyed by the input path of this call
    (a position passed by keyword, or a name passed by position, is found either way)."""
    try:
        params = [p.name for p in inspect.signature(func).parameters.values()
                  if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    except (TypeError, ValueError):
        params = []
    if instance is not None and params and params[0] == "self":
        params = params[1:]
    found = {}
    for key, entry in entries.items():
        position = key if isinstance(key, int) else params.index(key) if key in params else None
        name = key if isinstance(key, str) else params[key] if key < len(params) else None
        if position is not None and position < len(args):
            found[str(position)] = entry
        elif name is not None and name in kwargs:
            found[name] = entry
        elif not isinstance(key, int | str):
            raise TypeError(f"jit(dynamic=...): keys are argument names or positions, got "
                            f"{key!r}")
    return found

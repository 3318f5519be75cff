"""Sequences: iterating compile-time sequences (unrolled), run-time iteration by index (a `for`
region), subscripts (`x[i, 1:]`, `t[0]`, `self.layers[1]`), item assignment and unpacking."""
from __future__ import annotations

from types import FunctionType
from typing import Any

import numpy as np

from ..graph import ListType, Scalar, Tensor, TupleType, Value
from ..ops.indexing import split_index
from .aliases import own_array, replace_object
from .context import Frame, IndexesLayers, NeedsUnrolling, tuple_items
from .operators import ITERATORS, binary, evaluate_python, to_python
from .scope import container_items, wrap
from .values import (BoundMethod, Choice, Closure, IndexedIter, PyList, Ref, RuntimeRange,
                     describe, has_runtime, static_type)


def first_dim(f: Frame, v: Value) -> Any:
    """len(x) of a tensor or list value: an int when static, else a `len` node."""
    t = v.type
    if isinstance(t, Tensor):
        if t.rank == 0:
            raise f.error(f"a 0-d array ({t}) has no length and cannot be iterated",
                          "use it as a number, or index a 1-d array instead")
        if isinstance(t.shape[0], int):
            return t.shape[0]
    return f.op("len", v)


def as_sequence(f: Frame, v: Any) -> list[Any]:
    """The items of a sequence known at compile time (a `for` over it is unrolled)."""
    if isinstance(v, tuple | list):
        return list(v)
    if isinstance(v, PyList):
        return list(v.items)
    if isinstance(v, range | str | dict):
        return list(v)
    if isinstance(v, Ref):
        return container_items(f, v)
    if isinstance(v, IndexedIter) and all(isinstance(b, int) for b in (v.start, v.stop, v.step)):
        return [v.element(i) for i in range(v.start, v.stop, v.step)]
    if isinstance(v, Value):
        if isinstance(v.type, TupleType):
            return list(tuple_items(f, v))
        n = first_dim(f, v) if isinstance(v.type, Tensor | ListType) else None
        if isinstance(n, int):
            return [getitem(f, v, i) for i in range(n)]
    if isinstance(v, np.ndarray) and v.ndim:
        return list(v)
    if isinstance(v, ITERATORS):
        return list(v)
    raise f.error(f"cannot iterate over {describe(v)} while compiling",
                  "iterate over a tuple, list, range or array")


def is_compile_time_sequence(v: Any) -> bool:
    """True for what a `for` unrolls: tuples, lists, strings, cell containers, tuple values."""
    if isinstance(v, Value):
        return isinstance(v.type, TupleType)
    return not isinstance(v, IndexedIter | RuntimeRange | range)


def indexed(f: Frame, v: Any) -> IndexedIter:
    """`v` iterated by index inside a `for` region: a range, a tensor's first axis, a list."""
    if isinstance(v, IndexedIter):
        return v
    if isinstance(v, range):
        return IndexedIter(v.start, v.stop, v.step, lambda i: i)
    if isinstance(v, RuntimeRange):
        return IndexedIter(v.start, v.stop, v.step, lambda i: i)
    if isinstance(v, Value) and isinstance(v.type, Tensor | ListType):
        return IndexedIter(0, first_dim(f, v), 1, lambda i: getitem(f, v, i))
    raise f.error(f"cannot iterate over {describe(v)}",
                  "iterate over a range, an array, a tuple or a list")


def counted(f: Frame, v: Any) -> IndexedIter:
    """`indexed(v)` with indices 0, 1, ... (what enumerate and zip need)."""
    it = indexed(f, v)
    if it.start == 0 and it.step == 1:
        return it
    if all(isinstance(b, int) for b in (it.start, it.step)) and isinstance(it.stop, int):
        n = len(range(it.start, it.stop, it.step))
        start, step, element = it.start, it.step, it.element
        return IndexedIter(0, n, 1, lambda i: element(binary(f, "Add", start,
                                                              binary(f, "Mult", i, step))))
    raise f.error("enumerate/zip over a range with run-time start or step is not supported",
                  "iterate over range(n) and compute the value from the index")


# -- subscripts ---------------------------------------------------------------------------------

def getitem(f: Frame, base: Any, key: Any) -> Any:
    """`base[key]`."""
    if isinstance(base, Value):
        return _value_item(f, base, key)
    if isinstance(base, Ref):
        return _ref_item(f, base, key)
    if has_runtime(key):
        if isinstance(base, tuple | PyList) and not all(_materialisable(x) for x in (
                base if isinstance(base, tuple) else base.items)):
            items = tuple(base if isinstance(base, tuple) else base.items)
            if all(_callable(x) for x in items):
                return _choice(f, items, key, type(base).__name__.replace("PyList", "list"))
            raise f.error(f"a sequence of {describe(_first_object(base))}s cannot be indexed by "
                          "a run-time value", "iterate over the sequence directly",
                          kind=NeedsUnrolling)
        if isinstance(base, tuple | PyList | np.ndarray):
            return _value_item(f, f.materialise(base), key)
        raise f.error(f"{describe(base)} cannot be indexed by a run-time value")
    if isinstance(base, PyList):
        if isinstance(key, slice):
            return PyList(base.items[key])
        return _py_index(f, base.items, key)
    if isinstance(base, tuple):
        return _py_index(f, base, key)
    return evaluate_python(f, lambda b, k: b[k], base, key)


def _materialisable(v: Any) -> bool:
    try:
        static_type(v)
    except TypeError:
        return False
    return True


def _first_object(base: Any) -> Any:
    items = base if isinstance(base, tuple) else base.items
    return next(x for x in items if not _materialisable(x))


def _py_index(f: Frame, items: Any, key: Any) -> Any:
    """Index a compile-time tuple or list whose items may be run-time values."""
    try:
        result = items[to_python(key) if not isinstance(key, slice) else key]
    except (IndexError, TypeError) as exc:
        f.raise_at_runtime(type(exc), str(exc))
    return tuple(result) if isinstance(key, slice) and isinstance(items, tuple) else result


def _ref_item(f: Frame, base: Ref, key: Any) -> Any:
    """`self.layers[i]` for a cell container: the item with its path (compile-time `i`)."""
    items = tuple(as_sequence(f, base))  # NOTE: guards the container's structure
    if has_runtime(key):
        return _choice(f, items, key, type(base.obj).__name__)
    if isinstance(key, slice):
        try:
            part = base.obj[key]  # a container's slice: a new container of the same layers
        except (TypeError, IndexError) as exc:
            f.raise_at_runtime(type(exc), str(exc))
        return wrap(f, part, None, None)
    return _py_index(f, items, key)


def _callable(x: Any) -> bool:
    return isinstance(x, Ref | Closure | BoundMethod) or isinstance(x, FunctionType)


def _choice(f: Frame, items: tuple[Any, ...], key: Any, what: str) -> Choice:
    """`items[key]` for a run-time integer `key`: picked when called (see `Choice`)."""
    t = key.type if isinstance(key, Value) else None
    if not (isinstance(t, Scalar) and t.kind is int or isinstance(t, Tensor) and not t.rank
            and t.dtype.kind in "iu"):
        raise f.error(f"a {what} of {len(items)} layers or functions can only be indexed by a "
                      f"run-time integer, got {describe(key)}",
                      "index it with a 0-d integer tensor or an int")
    if f.compiler.loop_seeds and not f.compiler.layer_choices:
        raise f.error(f"a {what} indexed by a run-time value inside a loop",
                      "iterate over the layers directly: `for layer in self.layers:`",
                      kind=IndexesLayers)  # NOTE: an enclosing loop is unrolled if it can be
    return Choice(items, key, what)


def _value_item(f: Frame, base: Value, key: Any) -> Any:
    t = base.type
    if isinstance(t, TupleType) and not has_runtime(key):
        items = tuple_items(f, base)
        return _py_index(f, items, key)
    if not isinstance(t, Tensor | ListType | TupleType):
        raise f.error(f"{describe(base)} is not subscriptable")
    index, dyn = split_index(_index_key(key))
    values = [f.materialise(_index_part(d)) for d in dyn]
    return f.op("getitem", base, *values, index=index)


def _index_key(key: Any) -> Any:
    """A subscript key with compile-time lists turned into index arrays."""
    if isinstance(key, tuple):
        return tuple(_index_part(k) for k in key)
    return _index_part(key)


def _index_part(k: Any) -> Any:
    if isinstance(k, PyList) and not has_runtime(k):
        return np.asarray(to_python(k))
    if isinstance(k, np.integer):
        return int(k)
    return k


def setitem(f: Frame, base: Any, key: Any, value: Any) -> Any:
    """`base[key] = value`; returns the value the name holding `base` must now refer to."""
    if isinstance(base, PyList) and not has_runtime(key):
        f.writable(base)
        items = list(base.items)
        try:
            if isinstance(key, slice):
                items[key] = as_sequence(f, value)
            else:
                items[to_python(key)] = value
        except (IndexError, TypeError, ValueError) as exc:
            f.raise_at_runtime(type(exc), str(exc))
        # NOTE: like a dict, a new list that every name holding the old one now holds, so a
        # branch or loop body never changes the one bound outside it (its items are merged
        # and carried one by one)
        new = PyList(items)
        replace_object(f, base, new)
        return new
    if isinstance(base, dict) and not has_runtime(key):
        f.writable(base)
        # NOTE: a new dict, so a branch or loop body never changes the one bound outside it;
        # every name holding the old one now holds the new one (see aliases.replace_object)
        new = {**base, to_python(key): value}
        replace_object(f, base, new)
        return new
    if isinstance(base, PyList):  # NOTE: a run-time index: the list is made at run time
        f.writable(base)
        runtime = f.materialise(base)
        replace_object(f, base, runtime)
        base = runtime
    if isinstance(base, np.ndarray):
        base = own_array(f, base)  # NOTE: an array built while compiling, written from now on
    if isinstance(base, Value) and isinstance(base.type, Tensor | ListType):
        index, dyn = split_index(_index_key(key))
        values = [f.materialise(_index_part(d)) for d in dyn]
        return f.op("setitem", base, f.materialise(value), *values, index=index)
    if isinstance(base, dict):
        raise f.error(f"a dict's keys must be known when compiling, but this key is "
                      f"{describe(key)}, known only at run time",
                      "use constant keys (strings, or the index of a loop over a constant "
                      "range), or a list indexed by the run-time value")
    raise f.error(f"{describe(base)} does not support item assignment",
                  "build a new tuple, or assign into an array or a list")


def unpack(f: Frame, value: Any, count: int, star: int | None) -> list[Any]:
    """`a, *b, c = value`: `count` targets, the starred one at index `star`."""
    items = as_sequence(f, value)
    n = len(items)
    if star is None and n != count or star is not None and n < count - 1:
        message = (f"too many values to unpack (expected {count})" if n > count else
                   f"not enough values to unpack (expected {count}, got {n})")
        f.raise_at_runtime(ValueError, message)
    if star is None:
        return items
    tail = count - star - 1
    middle = items[star:n - tail]
    return items[:star] + [PyList(middle)] + items[n - tail:]

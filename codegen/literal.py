"""Python and NumPy constants as AST: attribute values filled into templates, constant nodes
inlined at their use sites, and the module-level constants large arrays become.
"""
from __future__ import annotations

import ast
import builtins
import math
from typing import Any, Callable, Sequence

import numpy as np

from ..graph.analysis import repeats_one_value
from ..ops import Dyn
from ..ops.types import is_namedtuple_class
from ..ops.symbolic import SYMBOL_NAME, Sym
from . import pyast as py
from .namer import Namer, readable

INLINE_ARRAY_SIZE = 16
"""Arrays of at most this many elements are written where they are used; larger ones become
module-level constants, built once when the module is loaded."""

HEX_ARRAY_SIZE = 1024
"""Module constants of more elements are stored as hex bytes instead of a nested list."""

_SCALARS = (bool, int, float, complex, str, bytes, type(None), type(Ellipsis), slice, np.dtype,
            np.generic)

Hoist = Callable[[Any], ast.expr]
"""Turns a value too large to inline, or a class source cannot name, into a reference to a
module-level definition."""


def is_inline(value: Any) -> bool:
    """True for constants written at their use sites: scalars, None, dtypes, short tuples of
    those and tiny arrays. Lists are mutable and never inline."""
    if isinstance(value, tuple):  # NOTE: `Dyn` parts only exist at the use site
        return all(is_inline(v) for v in value) and (len(value) <= 16 or _has_dyn(value))
    if isinstance(value, np.ndarray):
        return value.size <= INLINE_ARRAY_SIZE
    if isinstance(value, type):
        return nameable(value)
    return isinstance(value, _SCALARS + (Dyn, Sym))


SIZE_PREFIX = "__amber_size_"
"""Generated code reads symbolic size N from a variable bound at the function's entry; until
codegen names it, expressions hold the placeholder `__amber_size_N`."""


def size_expression(value: Sym, names: dict[str, ast.Name] | None = None) -> ast.expr:
    """A symbolic size as an expression over the size placeholders (`N//2-2`), or over the
    variables `names` holding the sizes."""
    tree = ast.parse(str(value), mode="eval").body
    for node in ast.walk(tree):
        if isinstance(node, ast.Name) and SYMBOL_NAME.match(node.id):
            node.id = names[node.id].id if names is not None else SIZE_PREFIX + node.id
    return tree


def _has_dyn(value: Any) -> bool:
    if isinstance(value, Dyn):
        return True
    if isinstance(value, slice):
        value = (value.start, value.stop, value.step)
    return isinstance(value, tuple) and any(_has_dyn(v) for v in value)


def nameable(kind: type) -> bool:
    """True for classes generated code can name: builtins and NumPy scalar types."""
    return getattr(builtins, kind.__name__, None) is kind or issubclass(kind, np.generic)


def literal(value: Any, dyn: Sequence[ast.expr] = (), hoist: Hoist | None = None,
            subscript: bool = False) -> ast.expr:
    """The expression that rebuilds `value` in generated code (NumPy as `np`).

    `dyn` holds the expressions `Dyn(k)` references stand for; `hoist` receives arrays and
    tuples too large to inline; `subscript` writes slices as `a:b` (inside `x[...]`)."""
    def again(v: Any, sub: bool = False) -> ast.expr:
        return literal(v, dyn, hoist, sub)

    if hoist is not None and not isinstance(value, list) and not is_inline(value):
        return hoist(value)
    if isinstance(value, Dyn):
        assert value.k < len(dyn), f"{value!r} refers past the {len(dyn)} variadic inputs"
        return py.copy_expr(dyn[value.k])
    if isinstance(value, Sym):
        return size_expression(value)
    if isinstance(value, slice):
        parts = (value.start, value.stop, value.step)
        if subscript:
            lower, upper, step = (None if p is None else again(p) for p in parts)
            return ast.Slice(lower=lower, upper=upper, step=step)
        return py.call("slice", [again(p) for p in parts])
    if isinstance(value, tuple) and is_namedtuple_class(type(value)):
        items = py.tuple_([again(v) for v in value])  # NOTE: `Pair._make((1, 2))`
        return py.call(py.attr(again(type(value)), "_make"), [items])
    if isinstance(value, tuple):
        return py.tuple_([again(v, subscript) for v in value])
    if isinstance(value, list):
        return py.list_([again(v) for v in value])
    if isinstance(value, np.ndarray):
        return array_literal(value)
    if isinstance(value, np.generic):
        return py.call(dtype_literal(value.dtype), [_scalar(value.item())])
    if isinstance(value, np.dtype):
        return dtype_literal(value)
    if isinstance(value, type):
        return _type_literal(value)
    return _scalar(value)


def array_literal(array: np.ndarray) -> ast.expr:
    """`np.array([[1.0, 2.0]], dtype=np.float32)`, or hex bytes for a large array."""
    dtype = dtype_literal(array.dtype)
    if array.dtype == object:
        raise TypeError("codegen cannot write an array of Python objects into generated code")
    if array.size == 0:
        return py.call(py.attr("np", "zeros"), [literal(array.shape)], dtype=dtype)
    if array.size > INLINE_ARRAY_SIZE and _uniform(array):  # e.g. a mean's folded gradient
        return py.call(py.attr("np", "full"), [literal(array.shape), _scalar(array.flat[0].item())],
                       dtype=dtype)
    if array.size > HEX_ARRAY_SIZE:
        data = py.call(py.attr("bytes", "fromhex"), [py.const(array.tobytes().hex())])
        flat = py.call(py.attr("np", "frombuffer"), [data],
                       dtype=py.call(py.attr("np", "dtype"), [py.const(array.dtype.str)]))
        shaped = py.call(py.attr(flat, "reshape"), [literal(array.shape)])
        return py.call(py.attr(shaped, "copy"))
    return py.call(py.attr("np", "array"), [literal(array.tolist())], dtype=dtype)


def _uniform(array: np.ndarray) -> bool:
    """Every element of `array` has the bits of its first, a finite number `np.full` rebuilds
    exactly from its Python value (the sign of a zero included)."""
    return array.dtype.kind in "biuf" and bool(np.isfinite(array.flat[0])) and \
        repeats_one_value(array)


def dtype_literal(dtype: np.dtype) -> ast.expr:
    """`np.float32`, `np.bool_`, or `np.dtype('<U3')` for dtypes without a scalar name."""
    dtype = np.dtype(dtype)
    spelled = "bool_" if dtype == np.bool_ else dtype.name
    if getattr(np, spelled, None) is dtype.type:
        return py.attr("np", spelled)
    return py.call(py.attr("np", "dtype"), [py.const(dtype.str)])


def _type_literal(kind: type) -> ast.expr:
    if getattr(builtins, kind.__name__, None) is kind:
        return py.name(kind.__name__)
    if issubclass(kind, np.generic):
        return dtype_literal(np.dtype(kind))
    raise TypeError(f"codegen cannot name the class {kind.__module__}.{kind.__qualname__} "
                    "here (only builtins and NumPy scalar types)")


def _scalar(value: Any) -> ast.expr:
    if isinstance(value, float):
        if math.isnan(value):
            return py.call("float", [py.const("nan")])
        if math.isinf(value):
            inf = py.call("float", [py.const("inf")])
            return inf if value > 0 else py.neg(inf)
        return py.neg(py.const(-value)) if math.copysign(1.0, value) < 0 else py.const(value)
    if isinstance(value, complex):
        return py.call("complex", [_scalar(value.real), _scalar(value.imag)])
    if isinstance(value, int) and not isinstance(value, bool) and value < 0:
        return py.neg(py.const(-value))
    if isinstance(value, bool | int | str | bytes | type(None) | type(Ellipsis)):
        return py.const(value)
    raise TypeError(f"codegen cannot write a constant of type {type(value).__name__} into "
                    "generated code")


class ConstantPool:
    """The module-level definitions of one generated module, each value defined once: large
    constants, and stand-ins for classes source cannot name (user exception types), which a
    loader replaces by the real classes (`GeneratedCode.externals`)."""

    def __init__(self, namer: Namer) -> None:
        self.namer = namer
        self._entries: dict[int, tuple[str, Any]] = {}

    def ref(self, value: Any, hint: str = "") -> ast.Name:
        """A reference to the definition of `value`, made on first use."""
        entry = self._entries.get(id(value))
        if entry is None:
            if isinstance(value, type):
                base = value.__name__
            else:
                base = readable(hint).upper() if hint else "CONST"
            entry = self._entries[id(value)] = (self.namer.fresh(base), value)
        return py.name(entry[0])

    def definitions(self) -> list[ast.stmt]:
        """`NAME = <literal>` for every constant, a stand-in class for every external."""
        return [_stand_in(ident, value) if isinstance(value, type) else
                py.assign(ident, literal(value, hoist=self._class_ref))
                for ident, value in self._entries.values()]

    def _class_ref(self, value: Any) -> ast.expr:
        """Inside a module constant (a namedtuple), its class; nothing else is hoisted twice."""
        if not isinstance(value, type):
            return literal(value)
        return self.ref(value)

    def externals(self) -> dict[str, type]:
        return {ident: value for ident, value in self._entries.values()
                if isinstance(value, type)}


def _stand_in(ident: str, kind: type) -> ast.ClassDef:
    """`class Budget(RuntimeError):` (its nearest builtin base) with a docstring saying so."""
    base = next(k for k in kind.__mro__[1:] if nameable(k))
    doc = f"Stand-in for {kind.__module__}.{kind.__qualname__} (the loader puts it here)."
    return ast.ClassDef(name=ident, bases=[_type_literal(base)], keywords=[],
                        body=[py.expr_stmt(py.const(doc))], decorator_list=[])

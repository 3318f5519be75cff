"""The value types amber reasons about: tensors with static or symbolic shapes, Python scalars,
tuples, lists and None. They live beneath `ops` because every shape rule speaks them;
`amber.graph.types` re-exports them as the IR's type system.
"""
from __future__ import annotations

from contextvars import ContextVar
from dataclasses import dataclass
from typing import Any, Union

import numpy as np

from .symbolic import Sym, floordiv, parse_sym

Dim = Union[int, Sym, str]
"""A dimension: a known size, a symbolic size (`Sym`, e.g. `N` or `N//2-2`), or UNKNOWN."""

UNKNOWN: Dim = "?"
"""A size nothing is known about (two of them may differ)."""


def as_dim(d: object) -> Dim:
    """A dim as types hold it: ints, `Sym`s and "?"; a symbol's text (`"N"`) becomes its Sym."""
    if type(d) is int or isinstance(d, Sym) or d == UNKNOWN:
        return d  # type: ignore[return-value]
    if isinstance(d, str):
        return parse_sym(d)
    if isinstance(d, (int, np.integer)) and not isinstance(d, bool):
        return int(d)
    raise TypeError(f"a dimension is an int, a symbolic size or '?', not {d!r}")


@dataclass(frozen=True, slots=True)
class Tensor:
    """An ndarray (or NumPy scalar when the shape is ()) of a fixed dtype."""
    shape: tuple[Dim, ...]
    dtype: np.dtype

    def __post_init__(self) -> None:
        shape = self.shape
        if not all(type(d) is int for d in shape):
            shape = map(as_dim, shape)
        object.__setattr__(self, "shape", tuple(shape))
        object.__setattr__(self, "dtype", np.dtype(self.dtype))

    @property
    def rank(self) -> int:
        return len(self.shape)

    @property
    def is_static(self) -> bool:
        return all(isinstance(d, int) for d in self.shape)

    @property
    def is_symbolic(self) -> bool:
        """Every dim is an int or a `Sym` (none unknown): generated code can compute the shape
        from the function's entry sizes."""
        return all(isinstance(d, int | Sym) for d in self.shape)

    def __str__(self) -> str:
        return f"{dtype_short(self.dtype)}[{','.join(str(d) for d in self.shape)}]"


@dataclass(frozen=True, slots=True)
class Scalar:
    """A Python scalar (`int`, `float` or `bool`): weakly typed in NumPy promotion."""
    kind: type

    def __post_init__(self) -> None:
        assert self.kind in (int, float, bool), \
            f"Scalar kind must be int/float/bool, not {self.kind}"

    def __str__(self) -> str:
        return self.kind.__name__


@dataclass(frozen=True, slots=True)
class TupleType:
    """A Python tuple of a fixed length; `cls` is its class: `tuple`, or a namedtuple class
    (whose instances the values of this type are at run time)."""
    elements: tuple[Type, ...]
    cls: type = tuple

    def __post_init__(self) -> None:
        object.__setattr__(self, "elements", tuple(self.elements))

    def __str__(self) -> str:
        comma = "," if len(self.elements) == 1 else ""
        name = "" if self.cls is tuple else self.cls.__name__
        return name + "(" + ", ".join(str(e) for e in self.elements) + comma + ")"


def is_namedtuple_class(cls: object) -> bool:
    """True for a class made by `collections.namedtuple` or `typing.NamedTuple` (or a subclass
    of one): a tuple with named fields, rebuilt from its items by `cls._make`."""
    return isinstance(cls, type) and issubclass(cls, tuple) and hasattr(cls, "_fields") \
        and hasattr(cls, "_make")


def same_tuple_kind(like: tuple, items: Any) -> tuple:
    """A tuple of `like`'s class (a plain tuple or a namedtuple) holding `items`.
    NOTE: every place that takes a tuple apart and rebuilds it goes through here, so a
    namedtuple never silently becomes a plain tuple."""
    return tuple_of_class(type(like), items)


def tuple_class(value: tuple) -> type:
    """The class a tuple value keeps in compiled code: its namedtuple class, else `tuple`."""
    return type(value) if is_namedtuple_class(type(value)) else tuple


def tuple_of_class(cls: type, items: Any) -> tuple:
    """`items` as a tuple of class `cls` (`tuple`, or a namedtuple class)."""
    return cls._make(items) if is_namedtuple_class(cls) else tuple(items)


@dataclass(frozen=True, slots=True)
class ListType:
    """A Python list whose length is known only at run time; every element has type `element`."""
    element: Type

    def __str__(self) -> str:
        return f"list[{self.element}]"


@dataclass(frozen=True, slots=True)
class NoneType:
    """Python's None."""

    def __str__(self) -> str:
        return "none"


@dataclass(frozen=True, slots=True)
class StrType:
    """A Python string (print and assert messages, dtype names)."""

    def __str__(self) -> str:
        return "str"


@dataclass(frozen=True, slots=True)
class AnyType:
    """A value whose kind differs between paths (e.g. returns of different structure). Only
    returning or passing it along is allowed; ops reject it."""

    def __str__(self) -> str:
        return "any"


Type = Union[Tensor, Scalar, TupleType, ListType, NoneType, StrType, AnyType]

_SHORT = {"float16": "f16", "float32": "f32", "float64": "f64", "int8": "i8", "int16": "i16",
          "int32": "i32", "int64": "i64", "uint8": "u8", "uint16": "u16", "uint32": "u32",
          "uint64": "u64", "bool": "b1", "complex64": "c64", "complex128": "c128"}
_LONG = {v: k for k, v in _SHORT.items()}


def dtype_short(dtype: np.dtype) -> str:
    """`float32` -> `f32`, as the text IR spells dtypes."""
    return _SHORT.get(np.dtype(dtype).name, np.dtype(dtype).name)


def dtype_from_short(text: str) -> np.dtype:
    """Inverse of `dtype_short`."""
    return np.dtype(_LONG.get(text, text))


def broadcast_shapes(*shapes: tuple[Dim, ...]) -> tuple[Dim, ...]:
    """NumPy broadcasting over possibly symbolic shapes; raises ValueError when sizes clash."""
    rank = max((len(s) for s in shapes), default=0)
    out: list[Dim] = []
    for axis in range(rank):
        dims = [s[axis - rank + len(s)] for s in shapes if axis - rank + len(s) >= 0]
        sizes = {d for d in dims if d != 1}
        known = {d for d in sizes if isinstance(d, int)}
        if len(known) > 1:
            raise ValueError(f"shapes {' and '.join(_fmt(s) for s in shapes)} do not broadcast")
        if known:
            out.append(known.pop())
        elif len(sizes) == 1:
            out.append(sizes.pop())
        elif sizes:
            out.append(UNKNOWN)
        else:
            out.append(1)
    return tuple(out)


def _fmt(shape: tuple[Dim, ...]) -> str:
    return "(" + ", ".join(str(d) for d in shape) + ("," if len(shape) == 1 else "") + ")"


VALUE_BASED_CASTING = np.lib.NumpyVersion(np.__version__) < "2.0.0"
"""True under NumPy 1, whose promotion looks at the *values* of Python scalars and 0-d arrays
mixed with arrays (`int8 array + 300` is int16, `float32 array * np.float64(2)` is float32);
NumPy 2 (NEP 50) looks at types only (Python scalars are weak). The dtype rules follow the
NumPy amber runs with: an op's samples are 0-d where its operands are, and under NumPy 1 the
values of compile-time constants (`KNOWN_VALUES`) stand in for them."""

KNOWN_VALUES: ContextVar[tuple[Any, ...] | None] = ContextVar("amber_known_values",
                                                               default=None)
"""While an op's type is inferred: the value of each operand that is a compile-time constant
(`NOT_KNOWN` for the others), set by `graph.builder.Builder.op`. NumPy 1 promotes by these values,
and `**` picks its ufunc by the exponent's value under both NumPys (`mask ** 2` is int8)."""
NOT_KNOWN = object()


def result_dtype(*types: Type) -> np.dtype:
    """The dtype a ufunc over these operands gives with the running NumPy: NumPy 2 treats
    Python scalars as weak (NEP 50); NumPy 1 promotes Python scalars and 0-d arrays by value
    (taken as small here: see `VALUE_BASED_CASTING`)."""
    operands: list[Any] = []
    for t in types:
        if isinstance(t, Tensor):
            zero_d = VALUE_BASED_CASTING and t.rank == 0
            operands.append(np.zeros((), t.dtype) if zero_d else t.dtype)
        elif isinstance(t, Scalar):
            operands.append(t.kind(0))
        else:
            raise TypeError(f"expected a tensor or a Python scalar, got {t}")
    return np.result_type(*operands)


def keeps_class(obj: object) -> bool:
    """True for an array of an ndarray subclass NumPy keeps in results, 0-d ones included
    (amber's `Tensor`: `t + 1` and `t.sum()` are 0-d Tensors where a plain array gives NumPy
    scalars; a `Parameter` hands out plain values, as its `__array_wrap__` says)."""
    kind = type(obj)
    return kind is not np.ndarray and issubclass(kind, np.ndarray) and \
        kind.__array_wrap__ is np.ndarray.__array_wrap__


def type_of(value: object) -> Type:
    """The type of a concrete Python/NumPy value."""
    if isinstance(value, np.ndarray | np.generic):
        return Tensor(np.shape(value), value.dtype)
    if isinstance(value, bool | int | float):
        return Scalar(type(value))
    if value is None:
        return NoneType()
    if isinstance(value, str):
        return StrType()
    if isinstance(value, tuple):
        return TupleType(tuple(type_of(v) for v in value), tuple_class(value))
    if isinstance(value, list):
        return ListType(join_types([type_of(v) for v in value]) if value else AnyType())
    if isinstance(value, BaseException):
        return AnyType()  # NOTE: the exception an except block caught: opaque to ops
    raise TypeError(f"amber has no type for a value of Python type {type(value).__name__}")


def join_types(types: list[Type]) -> Type:
    """The least type covering all of `types` (branch merges, loop-carried values, list items).

    Tensors of one dtype and rank join to a tensor whose disagreeing dims become "?". Python
    scalars join to the widest kind (bool < int < float). A scalar joined with tensors takes the
    tensors' type: `s = 0` before `s = s + x[i]` in a loop is the common case. Anything else that
    disagrees raises TypeError; callers turn that into a located error.
    """
    first = types[0]
    if all(t == first for t in types):
        return first
    if all(isinstance(t, Scalar) for t in types):
        return Scalar(max((t.kind for t in types), key=(bool, int, float).index))
    tensors = [t for t in types if not isinstance(t, Scalar)]
    if len(tensors) < len(types) and all(isinstance(t, Tensor) for t in tensors):
        return join_types(tensors)
    if all(isinstance(t, Tensor) for t in types):
        if len({t.dtype for t in types}) != 1 or len({t.rank for t in types}) != 1:
            raise TypeError("tensors of different dtype or rank: " + ", ".join(map(str, types)))
        dims = zip(*(t.shape for t in types))
        return Tensor(tuple(d[0] if len(set(d)) == 1 else UNKNOWN for d in dims), first.dtype)
    if all(isinstance(t, TupleType) for t in types):
        if len({len(t.elements) for t in types}) != 1:
            raise TypeError("tuples of different length: " + ", ".join(map(str, types)))
        if len({t.cls for t in types}) != 1:
            raise TypeError("tuples of different classes: " + ", ".join(map(str, types)))
        return TupleType(tuple(join_types(list(e)) for e in zip(*(t.elements for t in types))),
                         first.cls)
    if all(isinstance(t, ListType) for t in types):
        return ListType(join_types([t.element for t in types]))
    raise TypeError("values of different kinds: " + ", ".join(map(str, types)))


# ---- shape and dtype checks the op families share ---------------------------------------

def expect_tensor(op: str, role: str, t: Type, rank: int | None = None,
                  min_rank: int = 0) -> Tensor:
    if not isinstance(t, Tensor):
        raise TypeError(f"{op}: {role} must be a tensor, got {t}")
    if rank is not None and t.rank != rank:
        raise ValueError(f"{op}: {role} must be {rank}-d, got {t}")
    if t.rank < min_rank:
        raise ValueError(f"{op}: {role} must have at least {min_rank} dims, got {t}")
    return t


def known(*dims: Dim) -> bool:
    return all(isinstance(d, int) for d in dims)


def may_equal(a: Dim, b: Dim) -> bool:
    """Two dims that may be equal at run time."""
    return a == b or not known(a, b)


# ---- arithmetic on dims (symbolic where affine, UNKNOWN where not) ----------------------------

def dim_add(*dims: Dim) -> Dim:
    """The sum of dims."""
    if UNKNOWN in dims:
        return UNKNOWN
    total: Dim = 0
    for d in dims:
        total = total + d  # type: ignore[operator]
    return total


def dim_mul(*dims: Dim) -> Dim:
    """The product of dims; UNKNOWN when it is not affine (N*M) or any is unknown."""
    if UNKNOWN in dims:
        return UNKNOWN
    total: Dim = 1
    for d in dims:
        if isinstance(total, Sym) and isinstance(d, Sym):
            return UNKNOWN
        total = total * d  # type: ignore[operator]
    return total


def dim_floordiv(d: Dim, k: int) -> Dim:
    """`d // k` for a positive int k."""
    return UNKNOWN if d == UNKNOWN else floordiv(d, k)  # type: ignore[arg-type]


def dim_divide(d: Dim, k: Dim) -> Dim | None:
    """`d / k` when it divides exactly for every value of the symbols (400*N / 400 is N), else
    None; UNKNOWN when either is unknown."""
    if d == UNKNOWN or k == UNKNOWN:
        return UNKNOWN
    if isinstance(k, int):
        if k == 0:
            return None
        if isinstance(d, int):
            return d // k if d % k == 0 else None
        q = floordiv(d, k) if k > 0 else floordiv(-d, -k)  # type: ignore[operator]
        return q if q * k == d else None  # type: ignore[operator]
    if d == k:
        return 1
    if isinstance(d, Sym) and isinstance(k, Sym) and not k.const and len(k.terms) == 1:
        (atom, coef), = k.terms  # NOTE: (c*N) / N is c when every term of d is that atom
        if all(a == atom for a, _ in d.terms) and not d.const and d.terms[0][1] % coef == 0:
            return d.terms[0][1] // coef
    return None


def expect_integer(op: str, role: str, t: Type) -> None:
    kind = t.dtype.kind if isinstance(t, Tensor) else "i" if t == Scalar(int) else None
    if kind not in ("i", "u"):
        raise TypeError(f"{op}: {role} must hold integers, got {t}")


def float_dtype(op: str, t: Tensor) -> np.dtype:
    """The dtype exp/log give for `t` (ints go to the smallest float NumPy picks)."""
    if t.dtype.kind == "f":
        return t.dtype
    if t.dtype.kind in "iu":
        return np.result_type(t.dtype, np.float16)
    raise TypeError(f"{op}: expected a float or integer tensor, got {t}")


def mean_dtype(dtype: np.dtype) -> np.dtype:
    """The dtype `np.mean` returns for `dtype`."""
    return dtype if dtype.kind in "fc" else np.dtype(np.float64)


def check_axis(op: str, axis: int, rank: int) -> int:
    if not isinstance(axis, int) or not -rank <= axis < rank:
        raise ValueError(f"{op}: axis {axis!r} is out of range for a {rank}-d tensor")
    return axis % rank

"""How IR values look inside a Numba kernel: which types a kernel can hold, their Numba
signature names, their scalar constructors, and which rank-0 values the NumPy code would hold as
0-d arrays rather than NumPy scalars (a kernel holds every rank-0 value as a scalar).
"""
from __future__ import annotations

import math
from typing import Any

import numpy as np

from ...graph import FOR, IF, TRY, WHILE, Node, Scalar, Tensor, Type, Value

NUMERIC = frozenset(np.dtype(d) for d in (
    np.bool_, np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16, np.uint32, np.uint64,
    np.float32, np.float64))
"""Dtypes a kernel computes with (no float16, complex, strings or objects)."""

_PYTHON = {int: "int64", float: "float64", bool: "boolean"}
INT64 = (-2 ** 63, 2 ** 63 - 1)


class NotNative(Exception):
    """A region a Numba kernel cannot compute; the message says why."""


def kernel_type(t: Type, what: str) -> str:
    """The Numba signature name of values of type `t` (arrays as any layout: `float32[:, :]`);
    NotNative naming `what` if a kernel cannot hold them."""
    if isinstance(t, Scalar):
        return _PYTHON[t.kind]
    if isinstance(t, Tensor) and t.dtype in NUMERIC and t.is_static:
        if 0 in t.shape:
            raise NotNative(f"{what} is empty ({t})")
        name = "boolean" if t.dtype == np.bool_ else t.dtype.name
        return name if t.rank == 0 else f"{name}[{', '.join(':' * t.rank)}]"
    raise NotNative(f"{what} has type {t}, which a Numba kernel does not hold (only numeric "
                    "arrays of static shape and Python numbers)")


def is_array(t: Type) -> bool:
    return isinstance(t, Tensor) and t.rank > 0


def scalar_type(t: Type) -> Any:
    """The Python or NumPy scalar type (a constructor in kernel code) of `t`'s elements."""
    return t.kind if isinstance(t, Scalar) else t.dtype.type


def element_dtype(t: Type) -> Any:
    """`t`'s elements as NumPy promotion sees them: a dtype, or a Python scalar standing for a
    weakly typed Python number."""
    return {int: 0, float: 0.0, bool: False}[t.kind] if isinstance(t, Scalar) else t.dtype


def python_result(types: tuple[Type, ...]) -> type:
    """The Python type arithmetic on Python scalars of these types gives (bool < int < float)."""
    kinds = {t.kind for t in types}
    return float if float in kinds else int if int in kinds else bool


def elements(t: Type) -> int:
    return math.prod(t.shape) if isinstance(t, Tensor) else 1


def fits_kernel_constant(value: Any) -> bool:
    """True for constants a kernel writes inline: Python and NumPy numbers in range."""
    if isinstance(value, bool | float | np.bool_ | np.floating):
        return True
    if isinstance(value, int | np.integer):
        return INT64[0] <= int(value) <= INT64[1]
    return False


_SCALAR_RESULT_OPS = frozenset({
    "sum", "mean", "prod", "reduce_max", "reduce_min", "argmax", "argmin", "all", "any",
    "getitem", "matmul", "dot", "len", "int", "float", "bool", "not", "min", "max"})
"""Ops whose rank-0 results NumPy code holds as NumPy scalars (besides elementwise ufuncs)."""

_KIND_PRESERVING = frozenset({"cast", "copy", "stop_gradient", "depend"})


def may_be_0d_array(value: Value, seen: set[Value] | None = None) -> bool:
    """True if NumPy code might hold rank-0 `value` as a 0-d array (a graph input, `np.zeros(())`,
    a reshape) rather than a NumPy scalar: a kernel would hand back a scalar instead."""
    seen = set() if seen is None else seen
    if value in seen:
        return False
    seen.add(value)
    if not isinstance(value.type, Tensor) or value.type.rank:
        return False
    node = value.producer
    if node is None:
        return _param_may_be_array(value, seen)
    if node.is_region:
        return any(may_be_0d_array(v, seen) for v in node.incoming(value.index))
    name = node.op.name
    if name == "constant":
        return isinstance(node.attrs["value"], np.ndarray)
    if node.op.elementwise or name in _SCALAR_RESULT_OPS:
        return False
    if name in _KIND_PRESERVING:
        return may_be_0d_array(node.inputs[0], seen)
    return True


def _param_may_be_array(param: Value, seen: set[Value]) -> bool:
    block = param.owner
    owner = getattr(block, "owner_node", None)
    if owner is None or owner.op not in (WHILE, FOR):
        return True  # a graph input: the caller may pass a 0-d array
    slot = owner.slot_of(param)
    return slot is not None and any(may_be_0d_array(v, seen) for v in owner.incoming(slot))


def region_kind(node: Node) -> str:
    return {IF: "if", WHILE: "while", FOR: "for", TRY: "try"}[node.op]

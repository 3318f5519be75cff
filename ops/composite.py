"""MindSpore API that is not an op of its own but a composition of ops or a compile-time fact:
`ops.DType()(x)`, `ops.scalar_to_tensor`, `ops.tuple_to_array`. Plain Python over other spellings,
so it runs eagerly as written and compiles by inlining (like a layer's `construct`)."""
from __future__ import annotations

from typing import Any

import numpy as np

from .registry import FUNCTIONS

__all__ = ["DType", "dtype", "scalar_to_tensor", "tuple_to_array", "ScalarToTensor",
           "TupleToArray", "addn", "AddN"]

_full = FUNCTIONS["full"]


def dtype(x: Any) -> np.dtype:
    """`ops.dtype(x)`: the dtype of `x` (known while compiling)."""
    return x.dtype


class DType:
    """`ops.DType()(x)`: the dtype of `x` (known while compiling)."""

    def __call__(self, x: Any) -> np.dtype:
        return x.dtype


def scalar_to_tensor(input_x: Any, dtype: Any = np.float32) -> np.ndarray:
    """A 0-d array holding the number `input_x`, as `dtype` (float32 by default)."""
    return _full((), input_x, dtype=dtype)


class ScalarToTensor:
    """`ops.ScalarToTensor()(x, dtype=float32)`."""

    def __call__(self, x: Any, dtype: Any = np.float32) -> np.ndarray:
        return scalar_to_tensor(x, dtype)


def tuple_to_array(input_x: Any) -> np.ndarray:
    """A 1-d array of the numbers in the tuple `input_x` (known while compiling): float32 when
    one of them is a float, else int32, as MindSpore makes them."""
    floats = [isinstance(v, float) for v in input_x]
    return np.array(input_x, np.float32 if any(floats) else np.int32)


class TupleToArray:
    """`ops.TupleToArray()(x)`."""

    def __call__(self, x: Any) -> np.ndarray:
        return tuple_to_array(x)


def addn(x: Any) -> Any:
    """`ops.addn((a, b, c))`: the element-wise sum of the tensors in a tuple or list, added
    left to right."""
    if not len(x):
        raise ValueError("addn needs at least one tensor")
    total = x[0]
    for item in x[1:]:
        total = total + item
    return total


class AddN:
    """`ops.AddN()((a, b, c))`."""

    def __call__(self, x: Any) -> Any:
        return addn(x)


PUBLIC = {name: globals()[name] for name in __all__}
"""What `amber.ops.<name>` serves from this module."""

"""Eager values: `Tensor` (an ndarray constructor) and the global seed (checkpoints live in
`checkpoint.py`)."""
from __future__ import annotations

from typing import Any

import numpy as np

from .common.dtype import to_array
from .common.initializer import initializer
from .common.seed import get_generator, get_seed, set_seed

__all__ = ["Tensor", "set_seed", "get_seed", "get_generator"]


class _TensorMeta(type):
    def __instancecheck__(cls, obj: Any) -> bool:
        return isinstance(obj, np.ndarray)


class Tensor(metaclass=_TensorMeta):
    """`Tensor(data, dtype=None)` builds a new `np.ndarray` (amber's eager tensor).

    Python floats default to float32, ints to int64. `Tensor(shape=s, dtype=d, init=i)` draws
    from an initializer. `isinstance(x, Tensor)` holds for every ndarray."""

    def __new__(cls, input_data: Any = None, dtype: Any = None, shape: Any = None,
                init: Any = None) -> np.ndarray:  # type: ignore[misc]
        if input_data is not None:
            if shape is not None or init is not None:
                raise TypeError("Tensor: give either input_data or (shape, init), not both")
            return to_array(input_data, dtype)
        if shape is None or init is None:
            raise TypeError("Tensor: needs input_data, or both shape and init")
        return initializer(init, shape, np.float32 if dtype is None else dtype)

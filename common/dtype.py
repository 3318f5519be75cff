"""MindSpore-style dtype names (`amber.float32`, `mstype.int64`): plain `np.dtype` objects."""
from __future__ import annotations

import numpy as np

float16: np.dtype = np.dtype("float16")
float32: np.dtype = np.dtype("float32")
float64: np.dtype = np.dtype("float64")
int8: np.dtype = np.dtype("int8")
int16: np.dtype = np.dtype("int16")
int32: np.dtype = np.dtype("int32")
int64: np.dtype = np.dtype("int64")
uint8: np.dtype = np.dtype("uint8")
bool_: np.dtype = np.dtype("bool")

__all__ = ["float16", "float32", "float64", "int8", "int16", "int32", "int64", "uint8", "bool_",
           "to_array"]


def to_array(data: object, dtype: object = None) -> np.ndarray:
    """A new ndarray holding `data`, with MindSpore's default dtypes for Python data.

    Arrays keep their dtype; Python floats (and lists of them) become float32, Python ints int64,
    bools bool, unless `dtype` says otherwise.
    """
    if dtype is not None:
        return np.array(data, dtype=np.dtype(dtype))
    array = np.array(data)
    if not isinstance(data, np.ndarray | np.generic) and array.dtype == np.float64:
        return array.astype(np.float32)  # NOTE: float32 is amber's (and MindSpore's) float default
    return array

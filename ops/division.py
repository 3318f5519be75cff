"""Division as MindSpore's spellings define it (`ops.div`, `ops.Div`, `ops.RealDiv`): true
division, except of two integer operands, where Div gives float32 and RealDiv the quotient
rounded toward zero. Python's `/` on arrays stays NumPy's (the `div` op in binary.py):
eager code computes it with NumPy, and compiled code must agree with eager code."""
from __future__ import annotations

from typing import Any

import numpy as np

from . import onnx as ox
from .batching import broadcast_batch
from .elementwise import checked, elementwise_infer, primitive, spell
from .opdef import OpDef


def mindspore_divide(x: np.ndarray, y: np.ndarray, integers: str) -> np.ndarray:
    """x / y; of two integer operands, float32 (`integers="float32"`, MindSpore's Div) or the
    quotient rounded toward zero, C's integer division (`integers="truncate"`, RealDiv)."""
    xa, ya = np.asarray(x), np.asarray(y)
    if xa.dtype.kind in "iub" and ya.dtype.kind in "iub":
        if integers == "truncate":
            q = np.floor_divide(x, y)
            return q + ((np.remainder(x, y) != 0) & ((xa < 0) != (ya < 0)))
        return np.true_divide(x, y).astype(np.float32)
    return np.true_divide(x, y)


_infer = elementwise_infer("mindspore_div", mindspore_divide)
mindspore_div = OpDef("mindspore_div", ("x", "y"),
                      kernel=checked("mindspore_div", mindspore_divide, _infer), infer=_infer,
                      emit="mindspore_divide(x, y, integers)", attrs={"integers": "float32"},
                      helpers=(mindspore_divide,), elementwise=True, fresh=True, can_raise=True,
                      grad=lambda ad: (ad.g / ad.input(1), -ad.g * ad.out / ad.input(1)),
                      onnx=ox.true_divide, batch=broadcast_batch)


def _true_division(values: dict[str, Any]) -> dict[str, Any]:
    if values.pop("rounding_mode") is not None:
        raise ValueError("div: rounding_mode is not supported; use ops.floor_div")
    return values


def _truncating(values: dict[str, Any]) -> dict[str, Any]:
    return {**values, "integers": "truncate"}


OPS = (mindspore_div,)
FUNCTIONS = (
    spell("div", mindspore_div, "input, other, *, rounding_mode=None", _true_division,
          input="x", other="y"),
)
PRIMITIVES = (
    primitive("Div", mindspore_div, call="x, y"),
    primitive("RealDiv", mindspore_div, call="x, y", fix=_truncating),
)

"""Stacks: one array a loop fills a row per trip, in place of a list of per-trip arrays joined
after the loop (graph/passes/stack_tapes.py turns autodiff's tapes into them). Made after
autodiff and after the cleanups: no gradient, never folded or merged (each is its own buffer).
"""
from __future__ import annotations

from typing import Any

import numpy as np

from .batch_rules import LOOP_EFFECT, LOOP_SHAPE
from .elementwise import checked
from .opdef import NO_GRAD, REQUIRED, OpDef
from .symbolic import Sym
from .types import UNKNOWN, Scalar, Tensor, Type


def _stack_new_infer(rows: Type, *, item: tuple, dtype: np.dtype) -> Tensor:
    if not (isinstance(rows, Scalar) and rows.kind is int) or \
            not all(type(d) is int or isinstance(d, Sym) for d in item):
        raise TypeError(f"stack_new: an int row count and a row shape of ints and sizes, got "
                        f"{rows}, {item}")
    return Tensor((UNKNOWN, *item), dtype)


def _stack_new(rows: int, *, item: tuple, dtype: np.dtype) -> np.ndarray:
    return np.empty((rows, *item), dtype)


def _stack_new_text(a: dict[str, Any]) -> str:
    dims = "".join(f", {d}" for d in a["item"])  # NOTE: a size `N` reads the entry's size
    return f"np.empty((rows{dims}), dtype=dtype)"


stack_new = OpDef(
    "stack_new", ("rows",), kernel=checked("stack_new", _stack_new, _stack_new_infer),
    infer=_stack_new_infer, emit=_stack_new_text, attrs={"item": REQUIRED, "dtype": REQUIRED},
    fresh=True, effects=True, grad=NO_GRAD, batch=LOOP_SHAPE)
"""An uninitialized array of `rows` rows of shape `item` (ints and symbolic sizes):
effectful, so no pass merges two stacks or folds one."""


def _rows_infer(stack: Type, rows: Type) -> Tensor:
    if not isinstance(stack, Tensor) or not stack.rank or \
            not (isinstance(rows, Scalar) and rows.kind is int):
        raise TypeError(f"stack_reserve: a stack and an int row count, got {stack}, {rows}")
    return stack


def reserve_rows(stack: np.ndarray, rows: int) -> np.ndarray:
    """`stack` when it has `rows` rows, else a copy at least twice as long holding its rows
    (the rows past them uninitialized): a loop of unknown trip count grows its stack by
    doubling, so filling n rows copies fewer than 2n."""
    if rows <= len(stack):
        return stack
    grown = np.empty((max(2 * len(stack), rows), *stack.shape[1:]), stack.dtype)
    grown[:len(stack)] = stack
    return grown


stack_reserve = OpDef(
    "stack_reserve", ("stack", "rows"), kernel=checked("stack_reserve", reserve_rows, _rows_infer),
    infer=_rows_infer, emit="reserve_rows(stack, rows)", helpers=(reserve_rows,), effects=True,
    grad=NO_GRAD, batch=LOOP_EFFECT)
"""`stack` with room for `rows` rows: itself, or a longer copy holding its rows."""


def _put_infer(stack: Type, row: Type, value: Type) -> Tensor:
    if not isinstance(stack, Tensor) or not (isinstance(row, Scalar) and row.kind is int) or \
            not isinstance(value, Tensor) or value.dtype != stack.dtype or \
            value.rank != stack.rank - 1 or not all(
                a == b or UNKNOWN in (a, b) for a, b in zip(value.shape, stack.shape[1:])):
        raise TypeError(f"stack_put: a row {value} of stack {stack} at an int, got {row}")
    return stack


def put_row(stack: np.ndarray, row: int, value: Any) -> np.ndarray:
    """`stack` with `value` written into row `row`."""
    stack[row] = value
    return stack


stack_put = OpDef(
    "stack_put", ("stack", "row", "value"), kernel=checked("stack_put", put_row, _put_infer),
    infer=_put_infer, emit="put_row(stack, row, value)", helpers=(put_row,), effects=True,
    can_raise=True, writes=0, same_object=True, grad=NO_GRAD, inplace="put_row(out, row, value)",
    batch=LOOP_EFFECT)
"""`stack[row] = value`, in place (value exactly a row's shape and dtype); returns `stack`.
When memory planning lets the value's producer compute straight into the row (`out=`), the
write is already done and generated code spells nothing for it."""

OPS = (stack_new, stack_reserve, stack_put)

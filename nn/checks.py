"""Argument and input checks for layers, raising errors that name the layer and the shapes.

Input checks read only `.shape` and `.dtype`, so they accept NumPy arrays and the compiler's
`ops.types.Tensor` alike; a dim that is not an int (a symbol) is never reported as wrong.
"""
from __future__ import annotations

from typing import Any, Sequence

import numpy as np

from ..common.initializer import initializer
from .cell import Cell, Parameter


def layer_error(cell: Cell, message: str) -> ValueError:
    """`Dense(in_channels=4, out_channels=3): <message>`."""
    return ValueError(f"{cell.cls_name}({cell.extend_repr()}): {message}")


def check_int(layer: str, arg: str, value: Any, minimum: int = 1) -> int:
    """`value` as an int >= minimum; TypeError/ValueError naming the layer otherwise."""
    if isinstance(value, bool) or not isinstance(value, int | np.integer):
        raise TypeError(f"{layer}: {arg} must be an int, got {value!r}")
    if value < minimum:
        raise ValueError(f"{layer}: {arg} must be >= {minimum}, got {value}")
    return int(value)


def check_bool(layer: str, arg: str, value: Any) -> bool:
    """`value`, which must be a bool."""
    if not isinstance(value, bool | np.bool_):
        raise TypeError(f"{layer}: {arg} must be a bool, got {value!r}")
    return bool(value)


def check_float(layer: str, arg: str, value: Any, low: float, high: float,
                include_low: bool = True, include_high: bool = True) -> float:
    """`value` as a float inside [low, high] (ends open when not included)."""
    if isinstance(value, bool) or not isinstance(value, int | float | np.number):
        raise TypeError(f"{layer}: {arg} must be a float, got {value!r}")
    above = value >= low if include_low else value > low
    below = value <= high if include_high else value < high
    if not (above and below):
        interval = f"{'[' if include_low else '('}{low}, {high}{']' if include_high else ')'}"
        raise ValueError(f"{layer}: {arg} must be in {interval}, got {value}")
    return float(value)


def check_choice(layer: str, arg: str, value: Any, choices: Sequence[Any]) -> Any:
    """`value`, which must be one of `choices`."""
    if value not in choices:
        raise ValueError(f"{layer}: {arg} must be one of {list(choices)}, got {value!r}")
    return value


def int_tuple(layer: str, arg: str, value: Any, lengths: Sequence[int],
              minimum: int = 1) -> tuple[int, ...]:
    """An int (repeated to `lengths[0]` items) or a tuple of one of the allowed `lengths`."""
    items = (value,) * lengths[0] if isinstance(value, int | np.integer) else value
    if not isinstance(items, tuple | list) or len(items) not in lengths:
        raise TypeError(f"{layer}: {arg} must be an int or a tuple of "
                        f"{' or '.join(map(str, lengths))} ints, got {value!r}")
    return tuple(check_int(layer, arg, v, minimum) for v in items)


def make_param(layer: str, arg: str, init: Any, shape: tuple[int, ...], name: str,
               requires_grad: bool = True) -> Parameter:
    """A float32 Parameter of `shape` from an init spec, with errors naming the layer."""
    try:
        data = initializer(init, shape, np.float32)
    except (TypeError, ValueError) as err:
        raise type(err)(f"{layer}: {arg}: {err}") from err
    param = data.view(Parameter)  # NOTE: no copy; `data` is fresh (Parameter() would copy it)
    param.name = name
    param.requires_grad = requires_grad
    return param


def static_shape(x: Any) -> tuple[Any, ...] | None:
    """The shape of an array or tensor type, or None for something shapeless."""
    shape = getattr(x, "shape", None)
    return tuple(shape) if isinstance(shape, tuple) else None


def check_rank(cell: Cell, x: Any, ranks: Sequence[int], what: str = "input") -> tuple | None:
    """The shape of `x` after checking its rank is one of `ranks`."""
    shape = static_shape(x)
    if shape is not None and len(shape) not in ranks:
        wanted = " or ".join(f"{r}-D" for r in ranks)
        raise layer_error(cell, f"{what} must be {wanted}, got shape {shape}")
    return shape


def check_dim(cell: Cell, shape: tuple | None, axis: int, expected: int, what: str) -> None:
    """Raise unless `shape[axis]` is `expected` (or a symbol)."""
    if shape is None or not shape:
        return
    dim = shape[axis]
    if isinstance(dim, int | np.integer) and dim != expected:
        raise layer_error(cell, f"{what} is {dim}, expected {expected} (input shape {shape})")

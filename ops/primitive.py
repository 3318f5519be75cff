"""MindSpore's `ops.primitive`: `constexpr` (a function run while compiling, on compile-time
arguments) and the `Primitive` base class of the `ops.Name()` spellings."""
from __future__ import annotations

import functools
from typing import Any, Callable

from .opdef import Primitive

__all__ = ["constexpr", "Primitive", "prim_attr_register"]

CONSTEXPR_FLAG = "__amber_constexpr__"
"""The attribute `constexpr` sets: the frontend calls such a function while compiling."""


def constexpr(fn: Callable[..., Any] | None = None, *, get_instance: bool = True,
              name: str | None = None, reuse_result: bool = True, check: bool = True) -> Any:
    """`@constexpr def f(n): ...`: inside compiled code `f(...)` runs while compiling, on
    compile-time arguments (shapes, attributes, constants), and its result (a number, a tuple,
    an array) is a constant of the program; called eagerly it is the plain function. A
    run-time argument is a CompileError."""
    if fn is None:
        return functools.partial(constexpr, get_instance=get_instance, name=name,
                                 reuse_result=reuse_result, check=check)
    setattr(fn, CONSTEXPR_FLAG, True)
    return fn


def prim_attr_register(fn: Callable[..., Any]) -> Callable[..., Any]:
    """MindSpore's decorator of primitive `__init__` methods: nothing to register in amber."""
    return fn

"""NumPy's global random number functions (`np.random.seed`, `np.random.normal`, ...): each call
is one effectful node, so compiled code makes the very calls eager code makes, in program order,
on the same global generator, and draws the same numbers."""
from __future__ import annotations

from typing import Any

import numpy as np

from .batch_rules import LOOP_EFFECT
from .opdef import NO_GRAD, REQUIRED, OpDef
from .types import Type, type_of


def global_random_function(func: Any) -> str | None:
    """The name of `func` if it is one of `np.random`'s functions of the global generator
    (`np.random.seed`, or a method of the hidden RandomState, as `np.random.binomial`)."""
    name = getattr(func, "__name__", "")
    if getattr(np.random, name, None) is not func:
        return None
    if func is np.random.seed or getattr(func, "__self__", None) is np.random.mtrand._rand:
        return name
    return None


def _draw(*, function: str, args: tuple, keywords: tuple) -> Any:
    return getattr(np.random, function)(*args, **dict(keywords))


def _infer(*, function: str, args: tuple, keywords: tuple) -> Type:
    """The type of what the call returns: the same call on a scratch generator (the dtype and
    shape of a draw depend on the arguments only)."""
    sample = getattr(np.random.RandomState(0), function)(*args, **dict(keywords))
    if isinstance(sample, np.generic):
        raise TypeError(f"np.random.{function} returns a NumPy scalar here, which compiled code "
                        "does not make: pass size=... for an array")
    return type_of(sample)


def _emit(attrs: dict[str, Any]) -> str:
    """`np.random.binomial(*args)`, with `**dict(keywords)` when there are keywords."""
    extra = ", **dict(keywords)" if attrs["keywords"] else ""
    return f"np.random.{attrs['function']}(*args{extra})"


global_random = OpDef(
    "global_random", (), kernel=_draw, infer=_infer, emit=_emit,
    attrs={"function": REQUIRED, "args": (), "keywords": ()}, effects=True, fresh=True,
    can_raise=True, grad=NO_GRAD, batch=LOOP_EFFECT)
"""`np.random.<function>(*args, **keywords)` on NumPy's global generator (arguments known when
compiling; `keywords` as (name, value) pairs)."""

OPS = (global_random,)

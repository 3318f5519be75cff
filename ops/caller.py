"""Writes compiled code makes to objects its caller owns: a list or dict passed in or held by an
attribute or a global (made equal to what the frontend computed for it), an attribute of a
cell, and a module global. Effects, in program order, never folded or removed."""
from __future__ import annotations

from typing import Any

import numpy as np

from .batch_rules import LOOP_EFFECT
from .opdef import NO_GRAD, REQUIRED, OpDef
from .types import AnyType, ListType, NoneType, Scalar, Tensor, join_types


def set_list_items(target: list, *items: Any) -> None:
    target[:] = items


def set_dict_items(target: dict, *values: Any, keys: tuple) -> None:
    target.clear()
    target.update(zip(keys, values))


def store_global(value: Any, module: str, variable: str) -> None:
    import sys
    sys.modules[module].__dict__[variable] = value


def load_global(module: str, variable: str) -> Any:
    import sys
    return sys.modules[module].__dict__[variable]


def _none(*inputs: Any, **attrs: Any) -> NoneType:
    return NoneType()


set_list = OpDef(
    "set_list", ("target", "*items"), kernel=set_list_items, infer=_none,
    emit="set_list_items(target, *items)", helpers=(set_list_items,), effects=True,
    reads_only=True, grad=NO_GRAD, batch=LOOP_EFFECT)
"""`target[:] = items`: the caller's list (an input) made what compiled code changed it to."""
set_dict = OpDef(
    "set_dict", ("target", "*values"), kernel=set_dict_items, infer=_none,
    emit="set_dict_items(target, *values, keys=keys)", helpers=(set_dict_items,),
    attrs={"keys": REQUIRED}, effects=True, reads_only=True, grad=NO_GRAD, batch=LOOP_EFFECT)
"""The caller's dict (an input) made `dict(zip(keys, values))`, in that order, in place."""
set_attribute = OpDef(
    "set_attribute", ("target", "value"), kernel=lambda target, value, attribute: setattr(
        target, attribute, value), infer=_none, emit="setattr(target, attribute, value)",
    attrs={"attribute": REQUIRED}, effects=True, reads_only=True, grad=NO_GRAD, batch=LOOP_EFFECT)
"""`target.<attribute> = value` on an object the caller owns (a cell's plain Python attribute)."""
set_global = OpDef(
    "set_global", ("value",), kernel=store_global, infer=_none,
    emit="store_global(value, module, variable)", helpers=(store_global,),
    attrs={"module": REQUIRED, "variable": REQUIRED}, effects=True, reads_only=True, grad=NO_GRAD,
    batch=LOOP_EFFECT)
"""`global variable; variable = value` in the module (by its name in sys.modules) of the function."""
get_global = OpDef(
    "get_global", (), kernel=load_global, infer=lambda module, variable: AnyType(),
    emit="load_global(module, variable)", helpers=(load_global,),
    attrs={"module": REQUIRED, "variable": REQUIRED}, effects=True,
    grad=NO_GRAD, batch=LOOP_EFFECT)
"""The object global `variable` of `module` holds when the code runs (a list or dict it writes)."""

caller_list = OpDef(
    "caller_list", ("target", "*items"), kernel=lambda target, *items: target,
    infer=lambda target, *items: ListType(join_types(list(items)) if items else AnyType()),
    emit="target", same_object=True, effects=True, grad=NO_GRAD, batch=LOOP_EFFECT)
"""The caller's list `target` itself, as a run-time list whose items are now `items` (they
type it): where compiled code merges, carries or returns it, it stays the caller's object."""


def _live_list(target: Any, kind: tuple) -> ListType:
    if not kind:
        return ListType(AnyType())
    (first, *more), = kind
    return ListType(Tensor((), np.dtype(more[0])) if first == "scalar" else
                    Scalar(NUMBERS[first]))


caller_items = OpDef(
    "caller_items", ("target",), kernel=lambda target, kind: target, infer=_live_list,
    emit="target", attrs={"kind": REQUIRED}, same_object=True, effects=True, grad=NO_GRAD,
    batch=LOOP_EFFECT)
"""The caller's list `target` itself, read when the code runs, its items of `kind` (a guard
holds it: `(("float",),)`, `(("scalar", "<f4"),)`, or `()` for an empty list)."""
caller_dict = OpDef(
    "caller_dict", ("target",), kernel=lambda target: target, infer=lambda target: AnyType(),
    emit="target", same_object=True, effects=True, grad=NO_GRAD, batch=LOOP_EFFECT)
"""The caller's dict `target` itself, where compiled code returns or stores it."""

NUMBERS = {"bool": bool, "int": int, "float": float}


def _number(*inputs: Any, kind: str, **attrs: Any) -> Scalar:
    return Scalar(NUMBERS[kind])


read_global = OpDef(
    "read_global", (), kernel=lambda module, variable, kind: load_global(module, variable),
    infer=_number, emit="load_global(module, variable)", helpers=(load_global,),
    attrs={"module": REQUIRED, "variable": REQUIRED, "kind": REQUIRED}, effects=True,
    grad=NO_GRAD, batch=LOOP_EFFECT)
"""The Python number (of `kind`) global `variable` holds when the code runs: a global the
compiled code itself writes is read, not assumed."""
read_attribute = OpDef(
    "read_attribute", ("target",), kernel=lambda target, attribute, kind: getattr(
        target, attribute), infer=_number, emit="getattr(target, attribute)",
    attrs={"attribute": REQUIRED, "kind": REQUIRED}, effects=True, grad=NO_GRAD, batch=LOOP_EFFECT)
"""The Python number (of `kind`) `target.<attribute>` holds when the code runs (an attribute
the compiled code itself assigns)."""

OPS = (set_list, set_dict, set_attribute, set_global, get_global, read_global, read_attribute,
       caller_list, caller_items, caller_dict)

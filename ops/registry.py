"""The op registry: name -> OpDef, and the tables the frontend uses to recognise spellings.

Built explicitly from each family file's tuples (`OPS`, `FUNCTIONS`, `NUMPY`, `METHODS`,
`PRIMITIVES`); nothing registers itself on import.
"""
from __future__ import annotations

from types import ModuleType

import numpy as np

from . import (activations, adjoint, binary, creation, division, elementwise, indexing, joining,
               losses, nn, normalization, python, randomness, reduce, resize, shaping, sorting,
               window)
from . import caller, collective, conv_nhwc, conv_pairs
from . import stacks
from .opdef import OpDef, OpFunction, Primitive

FAMILIES: tuple[ModuleType, ...] = (python, elementwise, binary, division, activations, reduce,
                                    sorting, shaping, joining, indexing, creation, nn, window, resize,
                                    normalization, losses, adjoint, randomness, collective, caller,
                                    conv_nhwc, stacks, conv_pairs)


def _table(attr: str, key) -> dict:
    table: dict = {}
    for family in FAMILIES:
        for entry in getattr(family, attr, ()):
            name = key(entry)
            assert name not in table, f"{attr}: {name!r} is declared twice"
            table[name] = entry
    return table


OPS: dict[str, OpDef] = _table("OPS", lambda op: op.name)
"""Every op by name."""

FUNCTIONS: dict[str, OpFunction] = _table("FUNCTIONS", lambda f: f.name)
"""`amber.ops.<name>` functional spellings (MindSpore names)."""

NUMPY: dict[str, OpFunction] = {
    name: spelling for name, spelling in _table("NUMPY", lambda f: f.name).items()
    if callable(getattr(np, name, None))}  # NOTE: NumPy 1 lacks some (pow, bitwise_invert)
"""`np.<name>` functions the frontend compiles, by NumPy name (those the running NumPy has)."""

METHODS: dict[str, OpFunction] = _table("METHODS", lambda f: f.name)
"""ndarray methods (`x.sum(...)`) by method name; the binder takes the array first."""

MNP: dict[str, OpFunction] = _table("MNP", lambda f: f.name)
"""`mindspore.numpy` functions that differ from NumPy's (float32 defaults), by name."""

PRIMITIVES: dict[str, type[Primitive]] = _table("PRIMITIVES", lambda p: p.__name__)
"""`amber.ops.<Name>` primitive classes (MindSpore's `ops.ReLU()` style)."""

OPERATORS: dict[str, OpDef] = {op.operator: op for op in OPS.values() if op.operator}
"""Python operators by AST class name (`"Add"`, `"USub"`, `"Lt"`, ...)."""


def lookup(name: str) -> OpDef:
    """The op called `name`; KeyError with a readable message otherwise."""
    try:
        return OPS[name]
    except KeyError:
        raise KeyError(f"no op named {name!r}") from None

"""Every tensor operation amber knows, defined once (see `opdef.OpDef`).

`amber.ops.relu(x)` and `amber.ops.ReLU()(x)` run eagerly on NumPy arrays; the frontend compiles
the same spellings into graph nodes.
"""
from .opdef import REQUIRED, Dyn, OpDef, OpFunction, Primitive, Spelling
from .registry import FUNCTIONS, METHODS, NUMPY, OPERATORS, OPS, PRIMITIVES, lookup
from . import composite, functional, operations, primitive
from .primitive import constexpr

__all__ = ["OpDef", "OpFunction", "Primitive", "Spelling", "Dyn", "REQUIRED", "OPS", "FUNCTIONS",
           "NUMPY", "METHODS", "OPERATORS", "PRIMITIVES", "lookup", "operations", "functional",
           "primitive", "constexpr", *FUNCTIONS, *PRIMITIVES, *composite.PUBLIC]


def __getattr__(name: str):
    """`ops.relu`, `ops.ReduceMean`: the public spellings, straight from the registry."""
    if name in FUNCTIONS:
        return FUNCTIONS[name]
    if name in PRIMITIVES:
        return PRIMITIVES[name]
    if name in composite.PUBLIC:
        return composite.PUBLIC[name]
    raise AttributeError(f"amber.ops has no operation {name!r}")


def __dir__() -> list[str]:
    return sorted(__all__)

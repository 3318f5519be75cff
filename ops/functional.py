"""MindSpore's `ops.functional` (written `from mindspore.ops import functional as F`): the
functional spellings (`F.reshape`, `F.shape`, `F.stop_gradient`), plus the older names some
model files use (`F.tensor_add`)."""
from .composite import PUBLIC as COMPOSITE
from .registry import FUNCTIONS

OLDER_NAMES = {"tensor_add": "add", "tensor_sub": "sub", "tensor_mul": "mul",
               "tensor_div": "div", "tensor_pow": "pow", "tensor_floordiv": "floor_div",
               "tensor_mod": "floor_mod", "array_reduce": None}
"""MindSpore 1.x functional names -> today's (None: not supported)."""

__all__ = sorted(FUNCTIONS) + sorted(k for k, v in OLDER_NAMES.items() if v)


def __getattr__(name: str):
    if name in FUNCTIONS:
        return FUNCTIONS[name]
    if name[:1].islower() and name in COMPOSITE:
        return COMPOSITE[name]
    if OLDER_NAMES.get(name) in FUNCTIONS:
        return FUNCTIONS[OLDER_NAMES[name]]
    raise AttributeError(f"amber.ops.functional has no function {name!r}")


def __dir__() -> list[str]:
    return list(__all__)

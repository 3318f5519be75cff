"""MindSpore's `ops.operations` (written `from mindspore.ops import operations as P`): the
primitive classes, `P.ReLU()(x)`, `P.Concat(axis=1)((a, b))`, straight from the registry."""
from .composite import PUBLIC as COMPOSITE
from .registry import PRIMITIVES

__all__ = sorted(PRIMITIVES)


def __getattr__(name: str):
    if name in PRIMITIVES:
        return PRIMITIVES[name]
    if name[:1].isupper() and name in COMPOSITE:
        return COMPOSITE[name]
    raise AttributeError(f"amber.ops.operations has no primitive {name!r}")


def __dir__() -> list[str]:
    return list(__all__)

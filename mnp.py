"""`amber.numpy`: MindSpore's `mindspore.numpy` (usually imported as `mnp`), NumPy's functions
with MindSpore's float32 defaults for the creation functions (`mnp.zeros(shape)` is float32).

Each name is an amber op spelling, so it runs eagerly and compiles inside `construct`. The
module is registered as `amber.numpy` (a file named numpy.py at the package root would shadow
NumPy for any script started there)."""
from .ops.registry import MNP, NUMPY

__all__ = sorted(set(MNP) | set(NUMPY))


def __getattr__(name: str):
    if name in MNP:
        return MNP[name]
    if name in NUMPY:
        return NUMPY[name]
    raise AttributeError(f"amber.numpy has no function {name!r} (the supported ones are the "
                         f"NumPy functions amber compiles: amber.ops.NUMPY)")


def __dir__() -> list[str]:
    return list(__all__)

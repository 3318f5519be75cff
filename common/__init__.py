"""Model-building support shared by `nn` and the public API: dtypes, seeding, initializers.

`amber.common.initializer` is the module (as in MindSpore); its `initializer(init, shape,
dtype)` function is imported from there.
"""
from . import dtype, initializer, parameter, tensor
from .initializer import (Constant, HeNormal, HeUniform, Initializer, Normal, One,
                          TruncatedNormal, Uniform, XavierNormal, XavierUniform, Zero)
from .seed import get_generator, get_seed, set_seed

__all__ = ["dtype", "initializer", "parameter", "tensor", "Initializer", "Constant", "HeNormal",
           "HeUniform", "Normal", "One", "TruncatedNormal", "Uniform", "XavierNormal",
           "XavierUniform", "Zero", "set_seed", "get_seed", "get_generator"]

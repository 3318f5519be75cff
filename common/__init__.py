"""Model-building support shared by `nn` and the public API: dtypes, seeding, initializers."""
from . import dtype
from .initializer import (Constant, HeNormal, HeUniform, Initializer, Normal, One,
                          TruncatedNormal, Uniform, XavierNormal, XavierUniform, Zero, initializer)
from .seed import get_generator, get_seed, set_seed

__all__ = ["dtype", "initializer", "Initializer", "Constant", "HeNormal", "HeUniform", "Normal",
           "One", "TruncatedNormal", "Uniform", "XavierNormal", "XavierUniform", "Zero",
           "set_seed", "get_seed", "get_generator"]

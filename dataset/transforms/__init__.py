"""MindSpore's `mindspore.dataset.transforms` (and the older `c_transforms` / `py_transforms`
module names scripts still import)."""
from . import c_transforms, py_transforms, transforms
from .transforms import Compose, OneHot, TypeCast

__all__ = ["Compose", "OneHot", "TypeCast"]

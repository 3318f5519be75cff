"""MindSpore's `mindspore.dataset.vision` (and the older `c_transforms` / `py_transforms` module
names scripts still import)."""
from . import c_transforms, py_transforms, transforms, utils
from .transforms import (Border, HWC2CHW, Inter, Normalize, RandomCrop, RandomHorizontalFlip,
                         Rescale, Resize, ToTensor)

__all__ = ["Border", "HWC2CHW", "Inter", "Normalize", "RandomCrop", "RandomHorizontalFlip",
           "Rescale", "Resize", "ToTensor"]

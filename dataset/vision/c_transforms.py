"""MindSpore 1.x's `mindspore.dataset.vision.c_transforms`: the same operations."""
from .transforms import (Border, HWC2CHW, Inter, Normalize, RandomCrop, RandomHorizontalFlip,
                         Rescale, Resize)

__all__ = ["Border", "HWC2CHW", "Inter", "Normalize", "RandomCrop", "RandomHorizontalFlip",
           "Rescale", "Resize"]

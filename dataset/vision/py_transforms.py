"""MindSpore 1.x's `mindspore.dataset.vision.py_transforms`: the same operations (on NumPy
images; amber does not take PIL images)."""
from .transforms import HWC2CHW, Normalize, RandomCrop, RandomHorizontalFlip, Resize, ToTensor

__all__ = ["HWC2CHW", "Normalize", "RandomCrop", "RandomHorizontalFlip", "Resize", "ToTensor"]

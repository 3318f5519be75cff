"""MindSpore 1.x's `mindspore.dataset.transforms.py_transforms`: the same operations."""
from .transforms import Compose, OneHot

__all__ = ["Compose", "OneHot"]

"""MindSpore 1.x's `mindspore.dataset.transforms.c_transforms`: the same operations."""
from .transforms import Compose, OneHot, TypeCast

__all__ = ["Compose", "OneHot", "TypeCast"]

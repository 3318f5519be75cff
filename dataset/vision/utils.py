"""MindSpore's `mindspore.dataset.vision.utils` path: the `Inter` and `Border` enums."""
from .transforms import Border, Inter

__all__ = ["Border", "Inter"]

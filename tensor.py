"""Eager values: `Tensor` and `TensorSpec` (defined in common/tensor.py) and the global seed
(checkpoints live in `checkpoint.py`)."""
from __future__ import annotations

from .common.seed import get_generator, get_seed, set_seed
from .common.tensor import Tensor, TensorSpec

__all__ = ["Tensor", "TensorSpec", "set_seed", "get_seed", "get_generator"]

"""MindSpore's `mindspore.train.serialization` path: amber's checkpoint functions."""
from ..checkpoint import load_checkpoint, load_param_into_net, save_checkpoint

__all__ = ["save_checkpoint", "load_checkpoint", "load_param_into_net"]

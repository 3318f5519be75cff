"""MindSpore's `mindspore.train` names that model files import (`Callback`, `RunContext`);
training itself is `nn.TrainOneStepCell` with an optimizer."""
from . import callback
from .callback import Callback, RunContext

__all__ = ["callback", "Callback", "RunContext"]

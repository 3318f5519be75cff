"""MindSpore-style model building: `Cell`, `Parameter`, containers, layers and losses.

Every layer's `construct` is plain Python over `amber.ops`, so it runs eagerly as written and
compiles with `amber.jit`.
"""
from .activation import GELU, LogSoftmax, ReLU, Sigmoid, Softmax, Tanh, get_activation
from .basic import Dense, Dropout, Embedding, Flatten, Pad
from .cell import Cell, Parameter, ParameterTuple
from .containers import CellList, SequentialCell
from .conv import AvgPool2d, Conv2d, MaxPool2d
from .loss import MSELoss, SoftmaxCrossEntropyWithLogits
from .normalization import BatchNorm1d, BatchNorm2d, LayerNorm
from .rnn import LSTM, RNN
from .wrap import WithLossCell

__all__ = [
    "Cell", "Parameter", "ParameterTuple", "SequentialCell", "CellList",
    "Dense", "Flatten", "Dropout", "Pad", "Embedding",
    "Conv2d", "MaxPool2d", "AvgPool2d",
    "ReLU", "Sigmoid", "Tanh", "GELU", "Softmax", "LogSoftmax", "get_activation",
    "BatchNorm1d", "BatchNorm2d", "LayerNorm",
    "RNN", "LSTM",
    "SoftmaxCrossEntropyWithLogits", "MSELoss",
    "WithLossCell",
]

"""MindSpore-style model building: `Cell`, `Parameter`, containers, layers, losses, optimizers,
learning-rate schedules and the training wrappers.

Every layer's `construct` is plain Python over `amber.ops`, so it runs eagerly as written and
compiles with `amber.jit`.
"""
from .activation import (GELU, LeakyReLU, LogSoftmax, ReLU, ReLU6, Sigmoid, Softmax, Tanh,
                         get_activation)
from .activation import ELU, HSigmoid, HSwish, Identity, Mish, SiLU, Softplus
from .basic import Dense, Dropout, Embedding, Flatten, Pad
from .cell import Cell, Parameter, ParameterTuple
from .containers import CellList, SequentialCell
from .distributed import DistributedGradReducer
from .conv import AvgPool2d, Conv2d, Conv2dTranspose, MaxPool2d
from .learning_rate import (CosineDecayLR, ExponentialDecayLR, InverseDecayLR,
                            LearningRateSchedule, NaturalExpDecayLR, PolynomialDecayLR, WarmUpLR,
                            cosine_decay_lr, exponential_decay_lr, inverse_decay_lr,
                            natural_exp_decay_lr, piecewise_constant_lr, polynomial_decay_lr,
                            warmup_lr)
from .loss import BCEWithLogitsLoss, L1Loss, MSELoss, SoftmaxCrossEntropyWithLogits
from .loss import CosineEmbeddingLoss, HuberLoss, KLDivLoss, SmoothL1Loss
from .entropy_loss import BCELoss, CrossEntropyLoss, NLLLoss
from .normalization import BatchNorm1d, BatchNorm2d, LayerNorm
from .optim import SGD, Adam, Momentum
from .optimizer import Optimizer
from .rnn import LSTM, RNN
from .wrap import NonFiniteLossError, TrainOneStepCell, WithLossCell
from .wrap import WithEvalCell

__all__ = [
    "Cell", "Parameter", "ParameterTuple", "SequentialCell", "CellList",
    "Dense", "Flatten", "Dropout", "Pad", "Embedding",
    "Conv2d", "Conv2dTranspose", "MaxPool2d", "AvgPool2d",
    "ReLU", "ReLU6", "LeakyReLU", "Sigmoid", "Tanh", "GELU", "Softmax", "LogSoftmax",
    "get_activation", "SiLU", "ELU", "Softplus", "HSwish", "HSigmoid", "Mish", "Identity",
    "BatchNorm1d", "BatchNorm2d", "LayerNorm",
    "RNN", "LSTM",
    "SoftmaxCrossEntropyWithLogits", "MSELoss", "L1Loss", "BCEWithLogitsLoss",
    "SmoothL1Loss", "HuberLoss", "KLDivLoss", "CosineEmbeddingLoss", "CrossEntropyLoss",
    "NLLLoss", "BCELoss",
    "Optimizer", "SGD", "Momentum", "Adam",
    "LearningRateSchedule", "ExponentialDecayLR", "NaturalExpDecayLR", "InverseDecayLR",
    "CosineDecayLR", "PolynomialDecayLR", "WarmUpLR",
    "piecewise_constant_lr", "exponential_decay_lr", "natural_exp_decay_lr", "inverse_decay_lr",
    "cosine_decay_lr", "polynomial_decay_lr", "warmup_lr",
    "WithLossCell", "TrainOneStepCell", "NonFiniteLossError", "DistributedGradReducer",
    "WithEvalCell",
]

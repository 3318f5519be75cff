"""Kaiming initializers written MindSpore's way: `Initializer` subclasses whose `_initialize(arr)`
fills the array in place from NumPy's global generator (the model zoo's shared `var_init.py`
pattern), and a recursive default initialization over `cells_and_names`."""
import math

import numpy as np

import amber.nn as nn
from amber.common import initializer as init
from amber.common.initializer import _assignment


def fans(shape):
    """(fan_in, fan_out) of a weight shaped [out, in, *kernel]."""
    receptive = int(np.prod(shape[2:])) if len(shape) > 2 else 1
    return shape[1] * receptive, shape[0] * receptive


def gain_of(nonlinearity, slope):
    if nonlinearity == "relu":
        return math.sqrt(2.0)
    if nonlinearity == "leaky_relu":
        return math.sqrt(2.0 / (1 + slope ** 2))
    return 1.0


class KaimingInit(init.Initializer):
    """Base: keeps the mode and the gain; subclasses draw."""

    def __init__(self, a=0, mode="fan_in", nonlinearity="leaky_relu"):
        super().__init__()
        self.mode = mode
        self.gain = gain_of(nonlinearity, a)

    def fan(self, arr):
        fan_in, fan_out = fans(arr.shape)
        return fan_in if self.mode == "fan_in" else fan_out

    def _initialize(self, arr):
        pass


class KaimingUniform(KaimingInit):
    def _initialize(self, arr):
        bound = math.sqrt(3.0) * self.gain / math.sqrt(self.fan(arr))
        _assignment(arr, np.random.uniform(-bound, bound, arr.shape))


class KaimingNormal(KaimingInit):
    def _initialize(self, arr):
        std = self.gain / math.sqrt(self.fan(arr))
        _assignment(arr, np.random.normal(0, std, arr.shape))


def default_recursive_init(net):
    """Kaiming-uniform weights and fan-in-bounded uniform biases for every Conv2d and Dense."""
    for _, cell in net.cells_and_names():
        if isinstance(cell, (nn.Conv2d, nn.Dense)):
            cell.weight.set_data(init.initializer(KaimingUniform(a=math.sqrt(5)),
                                                  cell.weight.shape, cell.weight.dtype))
            if cell.bias is not None:
                bound = 1 / math.sqrt(fans(cell.weight.shape)[0])
                cell.bias.set_data(init.initializer(init.Uniform(bound), cell.bias.shape,
                                                    cell.bias.dtype))

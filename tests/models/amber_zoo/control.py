"""Control-flow programs written as MindSpore graph mode accepts them: tensor conditions in `if`
and `while`, loops over constant ranges and over CellLists, early returns, loop-carried tensors.
Each class is a Cell; `PROGRAMS` pairs it with an input batch."""
import numpy as np

import amber.nn as nn
import amber.ops as ops


class ScaleUntil(nn.Cell):
    """while on a tensor condition."""

    def construct(self, x):
        while ops.reduce_sum(x) < 50.0:
            x = x * 2.0 + 1.0
        return x


class BranchOnMean(nn.Cell):
    """if/else on a tensor condition, both sides computing."""

    def __init__(self):
        super().__init__()
        self.fc = nn.Dense(4, 4)

    def construct(self, x):
        y = self.fc(x)
        if ops.reduce_mean(y) > 0.0:
            y = ops.relu(y) * 2.0
        else:
            y = ops.tanh(y) - 1.0
        return y


class AccumulateRange(nn.Cell):
    """A for over a constant range carrying two tensors."""

    def __init__(self):
        super().__init__()
        self.fc = nn.Dense(4, 4)

    def construct(self, x):
        acc = ops.zeros_like(x)
        for i in range(4):
            x = ops.sigmoid(self.fc(x))
            acc = acc + x * float(i + 1)
        return acc, x


class LayersInList(nn.Cell):
    """A for over a CellList with a tensor-conditioned early exit."""

    def __init__(self):
        super().__init__()
        self.layers = nn.CellList([nn.Dense(4, 4) for _ in range(3)])

    def construct(self, x):
        for layer in self.layers:
            x = ops.tanh(layer(x))
        if ops.reduce_max(x) > 0.5:
            return x * 0.5
        return x


class CountSteps(nn.Cell):
    """A while whose trip count depends on data, returning the count as a tensor."""

    def construct(self, x):
        steps = ops.zeros((1,), x.dtype)
        while ops.reduce_max(x) > 1.0:
            x = x / 2.0
            steps = steps + 1.0
        return x, steps


PROGRAMS = {
    "scale_until": (ScaleUntil, lambda: (np.full((2, 3), 0.5, np.float32),)),
    "branch_on_mean": (BranchOnMean, lambda: (np.linspace(-1, 1, 8, dtype=np.float32)
                                              .reshape(2, 4),)),
    "accumulate_range": (AccumulateRange, lambda: (np.linspace(-1, 1, 8, dtype=np.float32)
                                                   .reshape(2, 4),)),
    "layers_in_list": (LayersInList, lambda: (np.linspace(-2, 2, 8, dtype=np.float32)
                                              .reshape(2, 4),)),
    "count_steps": (CountSteps, lambda: (np.array([[3.0, 17.0, -2.0]], np.float32),)),
}

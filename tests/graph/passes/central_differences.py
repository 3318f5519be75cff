"""Float64 central finite differences of a scalar function of its argument at `position`: the
oracle of the passes' gradient tests (importable as a top-level module, like conftest); and
`SquaredSum`, the scalar loss those tests differentiate a network through."""
import numpy as np

from amber import nn


class SquaredSum(nn.Cell):
    """sum(net(x) ** 2): a scalar that every output element reaches."""

    def __init__(self, net: nn.Cell) -> None:
        super().__init__()
        self.net = net

    def construct(self, x: np.ndarray) -> np.ndarray:
        return (self.net(x) ** 2).sum()


def finite_difference(fn, args, position, eps=1e-6):
    x = np.array(args[position], np.float64)
    out = np.zeros_like(x)
    for idx in np.ndindex(x.shape):
        values = []
        for step in (eps, -eps):
            moved = x.copy()
            moved[idx] += step
            values.append(fn(*args[:position], moved, *args[position + 1:]))
        out[idx] = (values[0] - values[1]) / (2 * eps)
    return out

"""Activation layers (`ReLU`, `ReLU6`, `LeakyReLU`, `Sigmoid`, `Tanh`, `GELU`, `Softmax`,
`LogSoftmax`, `SiLU`, `ELU`, `Softplus`, `HSwish`, `HSigmoid`, `Mish`), `Identity`, and
`get_activation`, which maps the names `Dense(activation='relu')` accepts to
layers."""
from __future__ import annotations

import numpy as np

from .. import ops
from .cell import Cell
from .checks import check_bool, check_int


class ReLU(Cell):
    """max(x, 0)."""

    def construct(self, x: np.ndarray) -> np.ndarray:
        return ops.relu(x)


class ReLU6(Cell):
    """min(max(x, 0), 6)."""

    def construct(self, x: np.ndarray) -> np.ndarray:
        return ops.relu6(x)


class LeakyReLU(Cell):
    """x where x > 0, alpha * x elsewhere (MindSpore's default alpha is 0.2)."""

    def __init__(self, alpha: float = 0.2) -> None:
        super().__init__()
        if isinstance(alpha, bool) or not isinstance(alpha, int | float) or alpha < 0:
            raise TypeError(f"LeakyReLU: alpha must be a non-negative number, got {alpha!r}")
        self.alpha = float(alpha)

    def construct(self, x: np.ndarray) -> np.ndarray:
        return ops.leaky_relu(x, self.alpha)

    def extend_repr(self) -> str:
        return f"alpha={self.alpha}"


class Sigmoid(Cell):
    """1 / (1 + exp(-x))."""

    def construct(self, x: np.ndarray) -> np.ndarray:
        return ops.sigmoid(x)


class Tanh(Cell):
    """tanh(x)."""

    def construct(self, x: np.ndarray) -> np.ndarray:
        return ops.tanh(x)


class GELU(Cell):
    """Gaussian error linear unit in its tanh form (`approximate=True`, MindSpore's default)."""

    def __init__(self, approximate: bool = True) -> None:
        super().__init__()
        self.approximate = check_bool("GELU", "approximate", approximate)
        if not self.approximate:
            raise NotImplementedError("GELU: only approximate=True (the tanh form) is supported")

    def construct(self, x: np.ndarray) -> np.ndarray:
        return ops.gelu(x)

    def extend_repr(self) -> str:
        return f"approximate={self.approximate}"


def _check_axis(layer: str, axis: int | tuple[int, ...]) -> int | tuple[int, ...]:
    if isinstance(axis, tuple):
        return tuple(check_int(layer, "axis", a, minimum=-(2**31)) for a in axis)
    return check_int(layer, "axis", axis, minimum=-(2**31))


class Softmax(Cell):
    """exp(x) / sum(exp(x)) along `axis`."""

    def __init__(self, axis: int = -1) -> None:
        super().__init__()
        self.axis = _check_axis("Softmax", axis)

    def construct(self, x: np.ndarray) -> np.ndarray:
        return ops.softmax(x, self.axis)

    def extend_repr(self) -> str:
        return f"axis={self.axis}"


class LogSoftmax(Cell):
    """log(softmax(x)) along `axis`, computed stably."""

    def __init__(self, axis: int = -1) -> None:
        super().__init__()
        self.axis = _check_axis("LogSoftmax", axis)

    def construct(self, x: np.ndarray) -> np.ndarray:
        return ops.log_softmax(x, self.axis)

    def extend_repr(self) -> str:
        return f"axis={self.axis}"


class SiLU(Cell):
    """x * sigmoid(x) (also called swish)."""

    def construct(self, x: np.ndarray) -> np.ndarray:
        return x * ops.sigmoid(x)


class ELU(Cell):
    """x where x > 0, alpha * (exp(x) - 1) elsewhere."""

    def __init__(self, alpha: float = 1.0) -> None:
        super().__init__()
        if isinstance(alpha, bool) or not isinstance(alpha, int | float):
            raise TypeError(f"ELU: alpha must be a number, got {alpha!r}")
        self.alpha = float(alpha)

    def construct(self, x: np.ndarray) -> np.ndarray:
        # NOTE: exp of min(x, 0): the branch not taken must not overflow (its gradient is
        # multiplied by 0, and inf * 0 is nan)
        return ops.select(x > 0, x, self.alpha * (ops.exp(ops.minimum(x, 0.0)) - 1.0))

    def extend_repr(self) -> str:
        return f"alpha={self.alpha}"


class Softplus(Cell):
    """log(1 + exp(x)), computed without overflow."""

    def construct(self, x: np.ndarray) -> np.ndarray:
        return ops.softplus(x)


class HSwish(Cell):
    """x * relu6(x + 3) / 6."""

    def construct(self, x: np.ndarray) -> np.ndarray:
        return x * ops.relu6(x + 3.0) / 6.0


class HSigmoid(Cell):
    """relu6(x + 3) / 6."""

    def construct(self, x: np.ndarray) -> np.ndarray:
        return ops.relu6(x + 3.0) / 6.0


class Mish(Cell):
    """x * tanh(softplus(x))."""

    def construct(self, x: np.ndarray) -> np.ndarray:
        return x * ops.tanh(ops.softplus(x))


class Identity(Cell):
    """The input itself."""

    def construct(self, x: np.ndarray) -> np.ndarray:
        return x


_ACTIVATIONS: dict[str, type[Cell]] = {
    "relu": ReLU, "relu6": ReLU6, "leakyrelu": LeakyReLU, "sigmoid": Sigmoid, "tanh": Tanh,
    "gelu": GELU, "softmax": Softmax, "logsoftmax": LogSoftmax, "silu": SiLU,
    "elu": ELU, "softplus": Softplus, "hswish": HSwish, "hsigmoid": HSigmoid, "mish": Mish,
}


def get_activation(name: str) -> Cell:
    """A new activation layer from its name ('relu', 'sigmoid', 'tanh', 'gelu', ...)."""
    key = name.lower() if isinstance(name, str) else name
    if key not in _ACTIVATIONS:
        raise ValueError(f"get_activation: unknown activation {name!r}; expected one of "
                         f"{sorted(_ACTIVATIONS)}")
    return _ACTIVATIONS[key]()

"""State that changes between calls of one compiled object (the harness applies each change to
both sides before input k): configuration attributes, training mode, parameter values and
objects, swapped sub-cells, module globals and rebound helpers. Compiled code must follow the
change (a guard recompiles, or the value is read at run time), never keep a stale constant."""
import numpy as np

from amber import Parameter, nn
from harness import f32, randn, runs

X = randn(2, 4)
SCALE = 1.0
WEIGHTS = (1.0, 2.0)


def _double(v):
    return v * 2.0


def _negate(v):
    return -v


ACTIVATION = _double


def _set_scale(net, k):
    net.scale = (0.5, 2.0, 2.0, -1.0)[k]


def _toggle_training(net, k):
    net.set_train(k % 2 == 1)


def _set_weight_data(net, k):
    net.fc.weight.set_data(np.full((3, 4), 0.1 * (k + 1), np.float32))


def _replace_parameter(net, k):
    net.w = Parameter(randn(4, 3, seed=k), name="w")


def _reshape_parameter(net, k):
    net.w = Parameter(randn(4, 2 + k, seed=k), name="w")


def _swap_activation(net, k):
    net.act = (nn.ReLU(), nn.Tanh(), nn.ReLU(), nn.Sigmoid())[k]


def _set_depth(net, k):
    net.inner.depth = (1, 3, 0, 3)[k]


def _set_config_entry(net, k):
    net.config["mode"] = ("sum", "max", "sum")[k]


def _set_global_scale(net, k):
    global SCALE
    SCALE = (1.0, 3.0, 3.0, -0.5)[k]


def _set_global_weights(net, k):
    global WEIGHTS
    WEIGHTS = ((1.0, 2.0), (0.5, 0.5, 0.5), (1.0, 2.0))[k]


def _rebind_helper(net, k):
    global ACTIVATION
    ACTIVATION = (_double, _negate, _double)[k]


def _set_dropout(net, k):
    net.drop.p = (0.5, 0.1, 0.5)[k]


@runs(X, X, X, X, between=_set_scale)
class ScaleAttribute(nn.Cell):
    def __init__(self):
        super().__init__()
        self.scale = 1.0

    def construct(self, x):
        if self.scale > 1:
            return x * self.scale
        return x - self.scale


@runs(X, X, X, between=_toggle_training)
class TrainingToggled(nn.Cell):
    def __init__(self):
        super().__init__()
        self.drop = nn.Dropout(p=0.5)

    def construct(self, x):
        if self.training:
            return self.drop(x), 1
        return x, 0


@runs(X, X, X, between=_set_weight_data)
class ParameterDataChanged(nn.Cell):
    def __init__(self):
        super().__init__()
        self.fc = nn.Dense(4, 3)

    def construct(self, x):
        return self.fc(x)


@runs(X, X, X, between=_replace_parameter)
class ParameterObjectReplaced(nn.Cell):
    def __init__(self):
        super().__init__()
        self.w = Parameter(randn(4, 3, seed=9), name="w")

    def construct(self, x):
        return x @ self.w


@runs(X, X, X, between=_reshape_parameter)
class ParameterShapeChanged(ParameterObjectReplaced):
    pass


@runs(X, X, X, X, between=_swap_activation)
class SubCellSwapped(nn.Cell):
    def __init__(self):
        super().__init__()
        self.act = nn.ReLU()

    def construct(self, x):
        return self.act(x) * 2.0


class Repeater(nn.Cell):
    def __init__(self):
        super().__init__()
        self.depth = 2

    def construct(self, x):
        for _ in range(self.depth):
            x = np.tanh(x + 1.0)
        return x


@runs(X, X, X, X, between=_set_depth)
class NestedAttributeChanged(nn.Cell):
    def __init__(self):
        super().__init__()
        self.inner = Repeater()

    def construct(self, x):
        return self.inner(x)


@runs(X, X, X, between=_set_config_entry)
class DictConfigChanged(nn.Cell):
    def __init__(self):
        super().__init__()
        self.config = {"mode": "sum"}

    def construct(self, x):
        if self.config["mode"] == "sum":
            return x.sum(axis=-1)
        return x.max(axis=-1)


@runs(X, X, X, between=_set_dropout, train=True)
class DropoutRateChanged(nn.Cell):
    def __init__(self):
        super().__init__()
        self.drop = nn.Dropout(p=0.5)

    def construct(self, x):
        return self.drop(x)


@runs(f32([1.0, -2.0]), f32([1.0, -2.0]), f32([3.0]), f32([1.0, -2.0]), between=_set_global_scale)
def global_scalar_changed(x):
    if SCALE > 2:
        return x * SCALE
    return x + SCALE


@runs(f32([1.0, -2.0]), f32([1.0, -2.0]), f32([1.0, -2.0]), between=_set_global_weights)
def global_tuple_changed(x):
    out = x * 0.0
    for w in WEIGHTS:
        out = out + x * w
    return out, len(WEIGHTS)


@runs(f32([1.0, -2.0]), f32([1.0, -2.0]), f32([1.0, -2.0]), between=_rebind_helper)
def global_helper_rebound(x):
    return ACTIVATION(x) + 1.0


def test_program(program, check_program):
    """Compiled and eager agree on every input, state changing between them."""
    check_program(program)


def _set_numpy_scalars(net, k):
    net.eps = (np.float32(1e-5), np.float32(0.5), np.float32(2.0))[k]
    net.pair = ((2, np.float32(3.0)), (2, np.float32(-1.0)), (4, np.float32(3.0)))[k]


@runs(X, X, X, between=_set_numpy_scalars)
class NumpyScalarAttributes(nn.Cell):
    """NumPy scalars held by the cell, alone and in a tuple: read on every call (a new value
    needs no recompiling), and kept NumPy scalars (`self.eps + 1` is an np.float32)."""

    def __init__(self):
        super().__init__()
        self.eps = np.float32(1e-5)
        self.pair = (2, np.float32(3.0))

    def construct(self, x):
        scale, shift = self.pair[1], self.pair[0]
        return x * scale + shift, self.eps + 1, x / (np.abs(x) + self.eps)

"""Python class features inside cells: inheritance and `super().construct`, overridden hooks,
class attributes, properties, methods of sub-cells other than construct, keyword arguments to
sub-cells, `*args` constructs, cells held in plain tuples and dicts, returning a Parameter."""
import numpy as np

from amber import Parameter, nn, ops
from harness import randn, runs

X = randn(2, 4)
X2 = randn(3, 4, seed=1, scale=2.0)


class Base(nn.Cell):
    """A construct calling an overridable hook."""
    FACTOR = 2.0

    def __init__(self):
        super().__init__()
        self.fc = nn.Dense(4, 4, "xavier_uniform")

    def hook(self, h):
        return ops.relu(h)

    def construct(self, x):
        h = self.fc(x) * self.FACTOR
        if h.sum() > 0:
            h = self.hook(h)
        return h


@runs(X, X2)
class OverridesHook(Base):
    FACTOR = -1.0

    def hook(self, h):
        return np.tanh(h) + 1.0


@runs(X, X2)
class CallsSuperConstruct(Base):
    def construct(self, x):
        h = super().construct(x)
        for _ in range(2):
            h = super().hook(h - 0.5)
        return h


@runs(X, X2)
class PropertyAccess(nn.Cell):
    def __init__(self):
        super().__init__()
        self.widths = (4, 8)

    @property
    def depth(self):
        return len(self.widths)

    @property
    def last_width(self):
        return self.widths[-1]

    def construct(self, x):
        for _ in range(self.depth):
            x = x * 0.5
        return x, self.last_width


class Encoder(nn.Cell):
    def __init__(self):
        super().__init__()
        self.fc = nn.Dense(4, 3)

    def encode(self, x, scale=1.0):
        return np.tanh(self.fc(x)) * scale

    def construct(self, x):
        return self.encode(x)


@runs(X, X2)
class SubCellOtherMethod(nn.Cell):
    def __init__(self):
        super().__init__()
        self.encoder = Encoder()

    def construct(self, x):
        return self.encoder.encode(x, scale=3.0), self.encoder(x)


class Scaled(nn.Cell):
    def construct(self, x, scale=1.0, shift=0.0):
        return x * scale + shift


@runs(X, X2)
class KeywordsToSubCell(nn.Cell):
    def __init__(self):
        super().__init__()
        self.scaled = Scaled()

    def construct(self, x):
        return self.scaled(x, shift=1.0), self.scaled(x, 2.0), self.scaled(x, scale=-1.0)


@runs((X,), (X, X2[:2]), (X, X, X))
class VarargsConstruct(nn.Cell):
    def construct(self, *xs):
        total = xs[0]
        for t in xs[1:]:
            total = total + t
        return total, len(xs)


@runs(X, X2)
class CellsInPlainTuple(nn.Cell):
    """Cells in a tuple attribute (not registered as sub-cells, their weights still used)."""

    def __init__(self):
        super().__init__()
        self.pair = (nn.Dense(4, 4), nn.Dense(4, 2))

    def construct(self, x):
        for layer in self.pair:
            x = layer(x)
        return x


@runs(X, X2)
class CellsInDict(nn.Cell):
    def __init__(self):
        super().__init__()
        self.heads = {"mean": nn.Dense(4, 1), "max": nn.Dense(4, 1)}

    def construct(self, x):
        return self.heads["mean"](x).mean() + self.heads["max"](x).max()


@runs(X, X2, -X2)
class ReturnsParameter(nn.Cell):
    def __init__(self):
        super().__init__()
        self.w = Parameter(randn(4, seed=3), name="w")

    def construct(self, x):
        if x.sum() > 0:
            return self.w
        return x[0] * self.w


@runs(X, X2)
class StaticAndClassMethods(nn.Cell):
    OFFSET = 0.25

    @staticmethod
    def clip(v):
        return np.clip(v, -1.0, 1.0)

    @classmethod
    def offset(cls):
        return cls.OFFSET * 2

    def construct(self, x):
        return self.clip(x) + self.offset()


@runs(X, X2)
class InstanceHoldsFunction(nn.Cell):
    """An attribute bound to a plain module-level function (a configurable activation)."""

    def __init__(self):
        super().__init__()
        self.act = np.tanh
        self.post = _halve

    def construct(self, x):
        return self.post(self.act(x))


def _halve(v):
    return v * 0.5


def test_program(program, check_program):
    """Compiled and eager agree on every input."""
    check_program(program)

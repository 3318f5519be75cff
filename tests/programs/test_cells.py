"""Cells: Parameters used directly and updated in place, configuration attributes (ints, tuples,
flags, strings) steering control flow, `self.training`, containers, library layers, MindSpore
primitives built in `__init__`, losses, and `construct` signatures with defaults and tuples."""
import numpy as np

from amber import Parameter, nn, ops
from harness import f32, i32, i64, randn, runs

X = randn(2, 4)
X2 = randn(3, 4, seed=1, scale=3.0)


@runs(X, X2)
class DirectParameters(nn.Cell):
    def __init__(self):
        super().__init__()
        self.w = Parameter(randn(4, 3, seed=10), name="w")
        self.b = Parameter(np.zeros(3, np.float32), name="b")

    def construct(self, x):
        return np.tanh(x @ self.w + self.b), self.w.T.shape


@runs(X, X2)
class CounterParameterUpdatedInPlace(nn.Cell):
    """A step counter and a running mean, updated as side effects of every call."""

    def __init__(self):
        super().__init__()
        self.steps = Parameter(np.zeros((), np.int64), name="steps", requires_grad=False)
        self.running = Parameter(np.zeros(4, np.float32), name="running", requires_grad=False)

    def construct(self, x):
        ops.assign(self.steps, self.steps + 1)
        if x.mean() > 0:
            ops.assign(self.running, self.running * 0.9 + x.mean(axis=0) * 0.1)
        return x - self.running


@runs(X, X2, init=(3,), tag="3")
@runs(X, X2, init=(0,), tag="0")
class ConfigIntLoop(nn.Cell):
    def __init__(self, depth):
        super().__init__()
        self.depth = depth
        self.fc = nn.Dense(4, 4, "xavier_uniform")

    def construct(self, x):
        for _ in range(self.depth):
            x = ops.relu(self.fc(x)) + x
        return x


@runs(randn(2, 6), randn(1, 6, seed=2))
class TupleAttributeIterated(nn.Cell):
    def __init__(self):
        super().__init__()
        self.cuts = (0, 2, 5, 6)
        self.weights = [0.5, 2.0, -1.0]

    def construct(self, x):
        parts = []
        for i in range(len(self.cuts) - 1):
            parts.append(x[:, self.cuts[i]:self.cuts[i + 1]].sum(axis=1) * self.weights[i])
        return ops.stack(parts, -1)


@runs(X, X2, init=(True, "mean"), tag="mean")
@runs(X, X2, init=(False, "max"), tag="max")
class FlagAndStringAttributes(nn.Cell):
    def __init__(self, normalize, pool):
        super().__init__()
        self.normalize = normalize
        self.pool = pool

    def construct(self, x):
        if self.normalize:
            x = x / (np.abs(x).max() + 1e-6)
        if self.pool == "mean":
            return x.mean(axis=-1)
        return x.max(axis=-1)


@runs(X, X2, train=True, tag="train")
@runs(X, X2, tag="eval")
class TrainingFlagBranch(nn.Cell):
    def construct(self, x):
        if self.training:
            return x * 0.5, 1
        return x, 0


@runs(randn(2, 3, 8, 8), randn(1, 3, 8, 8, seed=4))
class SmallConvNet(nn.Cell):
    def __init__(self):
        super().__init__()
        self.features = nn.SequentialCell(
            nn.Conv2d(3, 4, 3, pad_mode="same", has_bias=True, weight_init="he_normal"),
            nn.ReLU(),
            nn.MaxPool2d(2, 2),
            nn.Conv2d(4, 6, 3, pad_mode="valid", weight_init="he_normal"),
            nn.AvgPool2d(2, 1),
        )
        self.flatten = nn.Flatten()

    def construct(self, x):
        return self.flatten(self.features(x))


@runs(i32([[1, 2, 3], [0, 0, 4]]), i64([[5, 5, 1]]))
class EmbeddingMeanPool(nn.Cell):
    def __init__(self):
        super().__init__()
        self.embed = nn.Embedding(6, 4, padding_idx=0)

    def construct(self, ids):
        e = self.embed(ids)
        mask = (ids != 0).astype(np.float32)
        return (e * mask[..., None]).sum(axis=1) / np.maximum(mask.sum(axis=1, keepdims=True), 1)


@runs(randn(2, 5, 8), randn(1, 2, 8, seed=6))
class NormActivations(nn.Cell):
    def __init__(self):
        super().__init__()
        self.norm = nn.LayerNorm((8,))
        self.gelu = nn.GELU()
        self.softmax = nn.Softmax()
        self.log_softmax = nn.LogSoftmax(axis=1)
        self.sigmoid = nn.Sigmoid()

    def construct(self, x):
        h = self.gelu(self.norm(x))
        return self.softmax(h), self.log_softmax(h), self.sigmoid(h)


@runs(X, X2)
class SequentialIndexAndSlice(nn.Cell):
    def __init__(self):
        super().__init__()
        self.seq = nn.SequentialCell(nn.Dense(4, 4), nn.Tanh(), nn.Dense(4, 2), nn.ReLU())

    def construct(self, x):
        first = self.seq[0](x)
        rest = self.seq[1:](first)
        return rest, len(self.seq), self.seq(x)


@runs(X, X2)
class CellListEnumerate(nn.Cell):
    def __init__(self):
        super().__init__()
        self.blocks = nn.CellList([nn.Dense(4, 4, "xavier_uniform") for _ in range(3)])

    def construct(self, x):
        outs = []
        for i, block in enumerate(self.blocks):
            x = block(x)
            if i % 2 == 0:
                x = ops.relu(x)
            outs.append(x)
        return outs[-1], outs[0]


@runs((X,), (X, 0.5), (X2, -1.0))
class ConstructDefaults(nn.Cell):
    def construct(self, x, scale=2.0):
        return x * scale


@runs((randn(2, 3), randn(3, seed=1)), (randn(1, 3), f32(2.0)))
class TwoInputsBroadcast(nn.Cell):
    def construct(self, x, y):
        return x * y, x - y


@runs(((X, X2[:2]),), ((X2, X2),))
class TupleInput(nn.Cell):
    def construct(self, pair):
        a, b = pair
        return a + b, len(pair)


@runs(X, X2)
class PrimitivesFromInit(nn.Cell):
    def __init__(self):
        super().__init__()
        self.matmul = ops.MatMul(transpose_b=True)
        self.reduce_sum = ops.ReduceSum(keep_dims=True)
        self.cast = ops.Cast()
        self.w = Parameter(randn(3, 4, seed=7), name="w")

    def construct(self, x):
        y = self.matmul(x, self.w)
        return self.reduce_sum(y, 1), self.cast(y > 0, np.int32)


@runs((randn(4, 3), i32([0, 2, 1, 2])), (randn(2, 3, seed=2), i32([1, 1])))
class LossesOnLogits(nn.Cell):
    def __init__(self):
        super().__init__()
        self.ce = nn.SoftmaxCrossEntropyWithLogits(sparse=True, reduction="mean")
        self.mse = nn.MSELoss()

    def construct(self, logits, labels):
        onehot = ops.one_hot(labels, 3, 1.0, 0.0)
        return self.ce(logits, labels), self.mse(ops.softmax(logits, -1), onehot)


@runs(randn(1, 2, 3, 3), randn(2, 1, 2, 2, seed=3))
class PadModes(nn.Cell):
    def __init__(self):
        super().__init__()
        self.const = nn.Pad(((0, 0), (0, 0), (1, 1), (2, 0)))
        self.reflect = nn.Pad(((0, 0), (0, 0), (1, 1), (1, 1)), mode="REFLECT")

    def construct(self, x):
        return self.const(x), self.reflect(x)


@runs(X, X2)
class SharedSubCellTwice(nn.Cell):
    """The same sub-cell object reached by two attributes: one set of parameters."""

    def __init__(self):
        super().__init__()
        self.fc = nn.Dense(4, 4)
        self.alias = self.fc

    def construct(self, x):
        return self.alias(self.fc(x))


def test_program(program, check_program):
    """Compiled and eager agree on every input."""
    check_program(program)


@runs(X, X2)
class ListAttributesStayLists(nn.Cell):
    """A list attribute reads as a list: returned as one, concatenated with a list, iterated,
    indexed and measured (a tuple would come back as a tuple, and `+ [3]` would raise)."""

    def __init__(self):
        super().__init__()
        self.sizes = [2, 2]
        self.scales = [0.5, 2.0, -1.0]

    def construct(self, x):
        total = x
        for s in self.scales:
            total = total * s
        return self.sizes, self.sizes + [3], total, len(self.scales), self.scales[-1]

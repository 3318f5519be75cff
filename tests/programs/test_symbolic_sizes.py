"""Programs over arrays whose sizes change from call to call: from the second input on, jit
compiles them once with symbolic sizes (automatic mode), so every later call runs the symbolic
code. Shape arithmetic, shape conditions, sizes in creation ops, reductions that divide by the
batch, loops over a symbolic count, conv/pool nets and residual shape checks."""
import numpy as np

from amber import nn, ops
from harness import i64, randint, randn, runs

B3, B1, B5, B2 = randn(3, 4), randn(1, 4, seed=1), randn(5, 4, seed=2), randn(2, 4, seed=3)


@runs(B3, B1, B5, B2)
def reshape_by_batch(x):
    flat = x.reshape(x.shape[0], -1)
    grid = x.reshape(-1, 2, 2)
    return flat * 2, grid.sum(axis=(1, 2)), x.reshape(-1)


@runs(B3, B1, B5)
def creation_from_symbolic_shape(x):
    z = np.zeros(x.shape, np.float32) + x
    o = ops.ones((x.shape[0], 3), np.float32) * x.shape[0]
    f = np.full((2, x.shape[0]), 0.5, np.float32)
    return z, o, f, np.zeros_like(x) - x


@runs(B3, B1, B5, B2)
def branch_on_batch_size(x):
    if x.shape[0] > 2:
        y = x[:2].sum(axis=0)
    else:
        y = x.sum(axis=0) * 10
    return y, x.shape[0] == 1, x.shape


@runs(B3, B1, B5)
def divide_by_batch(x):
    mean = x.sum(axis=0) / x.shape[0]
    centered = x - x.mean(axis=0, keepdims=True)
    return mean, centered / (x.size + 1), len(x), x.size


@runs(B3, B1, B5)
def concat_on_batch(x):
    both = np.concatenate([x, x * 2], axis=0)
    wide = np.concatenate((x, x[:, :2]), axis=1)
    return both.sum(axis=0), both.shape[0], wide, np.stack([x, -x], axis=1)


@runs(B3, B1, B5)
def loop_over_rows(x):
    acc = np.zeros(x.shape[1], np.float32)
    for i in range(x.shape[0]):
        acc = acc + x[i] * (i + 1)
    rows = []
    for row in x:
        rows.append(row.max())
    return acc, ops.stack(rows)


@runs(B3, B1, B5)
def gram_and_rows(x):
    g = x.T @ x
    return g, x @ x.T, x[-1], x[1:], x[::-1]


@runs(B3, B1, B5)
def print_shapes(x):
    print("shape", x.shape, "rows", x.shape[0], "size", x.size)
    return x.shape[0] * 2 + 1


@runs((B3, i64([0, 2, 1])), (B5, i64([3, 3, 0, 1, 2])), (B1, i64([1])))
def loss_over_a_batch(logits, labels):
    """Two arguments with the same batch size: one symbol for both."""
    return ops.softmax_cross_entropy(logits, labels, sparse=True, reduction="mean")


@runs(randn(4, 6), randn(2, 6, seed=1), randn(6, 6, seed=2))
def split_in_halves(x):
    a, b = np.split(x, 2, axis=0)
    return a - b, a.shape


@runs(randint(3, 4), randint(1, 4, seed=1), randint(6, 4, seed=2))
def integer_batch(x):
    return x.sum(axis=0) // x.shape[0], x % x.shape[0], (x > 0).sum()


class SmallCNN(nn.Cell):
    """conv -> relu -> pool -> conv -> pool -> flatten -> dense: the batch is the only size
    that changes, so convolution and pooling keep their static-geometry spellings."""

    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(2, 4, 3, pad_mode="valid", weight_init="xavier_uniform")
        self.conv2 = nn.Conv2d(4, 4, 3, pad_mode="same", weight_init="xavier_uniform")
        self.pool = nn.MaxPool2d(kernel_size=2, stride=2)
        self.avg = nn.AvgPool2d(kernel_size=2, stride=2)
        self.flatten = nn.Flatten()
        self.fc = nn.Dense(16, 3, weight_init="xavier_uniform")

    def construct(self, x):
        x = self.pool(ops.relu(self.conv1(x)))
        x = self.avg(self.conv2(x))
        return self.fc(self.flatten(x))


runs(randn(2, 2, 10, 10), randn(1, 2, 10, 10, seed=1), randn(5, 2, 10, 10, seed=2),
     randn(3, 2, 10, 10, seed=3))(SmallCNN)


@runs(randn(2, 2, 10, 10), randn(1, 2, 12, 12, seed=1), randn(2, 2, 15, 11, seed=2))
class FullyConvolutional(nn.Cell):
    """Height and width change too: output sizes are expressions of symbolic H and W."""

    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(2, 3, 3, stride=2, pad_mode="valid", weight_init="xavier_uniform")
        self.pool = nn.MaxPool2d(kernel_size=2, stride=2)

    def construct(self, x):
        y = self.pool(ops.relu(self.conv(x)))
        return y.mean(axis=(2, 3)), y.shape


@runs(randn(3, 8), randn(1, 8, seed=1), randn(4, 8, seed=2))
class ResidualShapes(nn.Cell):
    """Adds the input back where the shapes agree: `out.shape == h.shape` with a symbolic
    batch is decided while compiling (the same size), the feature size by its value."""

    def __init__(self):
        super().__init__()
        self.layers = nn.CellList([nn.Dense(8, 8, "xavier_uniform"),
                                   nn.Dense(8, 4, "xavier_uniform"),
                                   nn.Dense(4, 4, "xavier_uniform")])

    def construct(self, x):
        h = x
        for layer in self.layers:
            out = ops.tanh(layer(h))
            if out.shape == h.shape:
                out = out + h
            h = out
        return h


def test_program(program, check_program):
    """Compiled (symbolic from the second input on) and eager agree on every input."""
    check_program(program)

"""Calls compiled by the frontend: amber ops (functional and primitive), numpy functions, array
methods, sub-cells and containers, methods, helpers with control flow, closures, globals."""
import numpy as np
import pytest

from amber import nn, ops
from amber.frontend.reference import agree

rng = np.random.default_rng(0)
X = rng.standard_normal((2, 4)).astype(np.float32)
SCALE = 3
OFFSETS = (1.0, -2.0)


def functional_ops(x):
    return ops.relu(x), ops.add(x, 1), ops.reduce_mean(x, 1), ops.reshape(x, (4, 2))


def primitive_ops(x):
    mean = ops.ReduceMean(keep_dims=True)
    return mean(x, 1), ops.ReLU()(x), ops.Transpose()(x, (1, 0))


def numpy_functions(x):
    return np.tanh(x), np.exp(-x), np.maximum(x, 0.0), np.concatenate([x, x], axis=1)


def with_kwargs(x):
    return ops.stack((x, x), axis=1), np.sum(x, axis=0, keepdims=True), x.sum(axis=-1)


def helper_with_control(x, n):
    y = x
    for _ in range(n):
        if y.sum() > 0:
            return y * 2
        y = y + 1
    return y


def helper_defaults(x, scale=2, bias=None):
    if bias is None:
        return x * scale
    return x * scale + bias


def calls_helpers(x):
    a = helper_with_control(x, 3)
    b = helper_defaults(x)
    c = helper_defaults(x, bias=1.0, scale=SCALE)
    return a + b + c


def uses_globals(x):
    return x * SCALE + OFFSETS[1]


def make_closure(k):
    def inner(x):
        return x * k + helper_defaults(x, k)
    return inner


def star_args(*xs):
    return ops.concat(xs, 0)


def tuple_helper(x):
    return x, x * 2


def unpack_helper(x):
    a, b = tuple_helper(x)
    return a + b


class Block(nn.Cell):
    def __init__(self, n):
        super().__init__()
        self.fc = nn.Dense(n, n)
        self.act = nn.ReLU()
        self.use_act = True

    def construct(self, x):
        y = self.fc(x)
        if self.use_act:
            y = self.act(y)
        return y + x


class Net(nn.Cell):
    def __init__(self):
        super().__init__()
        self.blocks = nn.CellList([Block(4), Block(4)])
        self.seq = nn.SequentialCell(nn.Dense(4, 4), nn.Tanh())
        self.norm_mean = np.full((4,), 0.25, np.float32)  # not a Parameter: passed each call
        self.head = nn.Dense(4, 2)
        self.depth = 2
        self.relu = ops.ReLU()

    def scaled(self, x, k=2):
        return x * k

    def construct(self, x):
        x = x - self.norm_mean
        for block in self.blocks:
            x = block(x)
        x = self.seq(x)
        for i in range(self.depth):
            x = self.scaled(x, k=0.5)
        x = self.relu(x)
        return self.head(x), self.blocks[1].fc.weight.shape


class Training(nn.Cell):
    def __init__(self):
        super().__init__()
        self.bn = nn.BatchNorm1d(4)
        self.drop = nn.Dropout(p=0.5)
        self.fc = nn.Dense(4, 3)

    def construct(self, x):
        return self.fc(self.drop(self.bn(x)))


class Recurrent(nn.Cell):
    def __init__(self):
        super().__init__()
        self.rnn = nn.RNN(4, 5, num_layers=2)
        self.lstm = nn.LSTM(5, 3)

    def construct(self, x):
        y, h = self.rnn(x)
        z, (hn, cn) = self.lstm(y)
        return z, h, hn + cn


class Conv(nn.Cell):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(1, 2, 3)
        self.pool = nn.MaxPool2d(2, 2)
        self.flat = nn.Flatten()

    def construct(self, x):
        return self.flat(self.pool(ops.relu(self.conv(x))))


def apply_twice(layer, x):
    return layer(layer(x))


class Config:
    def __init__(self):
        self.width = 4
        self.use_tanh = True


class Scaler:
    def __init__(self, k):
        self.k = k

    def __call__(self, x):
        if self.k > 1:
            return x * self.k
        return x


class Methods(nn.Cell):
    def __init__(self):
        super().__init__()
        self.fc = nn.Dense(4, 4)
        self.cfg = Config()
        self.scale = Scaler(3)
        self.mean = ops.ReduceMean(keep_dims=True)

    @staticmethod
    def clamp(x, lo):
        return ops.maximum(x, lo)

    @classmethod
    def factor(cls, x):
        return x * 2

    def refine(self, x, steps):
        for _ in range(steps):
            x = self.step(x)
        return x

    def step(self, x):
        if x.sum() > 0:
            return self.fc(x)
        return -x

    def construct(self, x):
        y = self.refine(x, 2)
        if self.cfg.use_tanh:
            y = ops.tanh(y)
        y = apply_twice(self.fc, y) + self.scale(y)
        return self.clamp(self.factor(y), 0.0) + self.mean(y, 1), self.cfg.width


PROGRAMS = [
    (functional_ops, (X,)), (primitive_ops, (X,)), (numpy_functions, (X,)), (with_kwargs, (X,)),
    (calls_helpers, (X,)), (calls_helpers, (-X - 3,)), (uses_globals, (X,)),
    (make_closure(3), (X,)), (star_args, (X, X)), (unpack_helper, (X,)),
]


@pytest.mark.parametrize("fn,args", PROGRAMS, ids=[p[0].__name__ for p in PROGRAMS])
def test_calls_agree_with_eager(fn, args):
    agree(fn, *args)


def test_network_with_containers_and_methods():
    net = Net()
    result = agree(net, X)
    params = result.graph.param_paths
    assert "norm_mean" in params and "blocks.1.fc.weight" in params and "seq.0.bias" in params
    assert result.graph.name == "Net.construct"
    assert result.graph.input_paths == ("0",)


def test_methods_callables_and_config_objects():
    net = Methods()
    result = agree(net, X, rtol=1e-5)
    guards = {g.description for g in result.guards}
    assert {"self.cfg.use_tanh", "self.cfg.width", "self.scale.k"} <= guards


class Base(nn.Cell):
    def __init__(self):
        super().__init__()
        self.fc = nn.Dense(4, 4)

    def hook(self, h):
        return ops.relu(h)

    def construct(self, x):
        return self.hook(self.fc(x))


class Child(Base):
    def __init__(self):
        super().__init__()
        self.heads = {"mean": nn.Dense(4, 1), "max": nn.Dense(4, 1)}

    def construct(self, x):
        h = super().construct(x)
        for _ in range(2):
            h = super(Child, self).hook(h - 0.5)
        return self.heads["mean"](h).mean() + self.heads["max"](h).max()


def test_super_calls_and_layers_in_a_dict():
    net = Child()
    result = agree(net, X, rtol=1e-5)
    assert "heads.mean.weight" in result.graph.param_paths


class IndexedStages(nn.Cell):
    def __init__(self):
        super().__init__()
        self.stages = nn.CellList([nn.Dense(4, 4, activation="relu") for _ in range(3)])
        self.heads = nn.CellList([nn.Dense(4, 2) for _ in range(3)])

    def construct(self, x):
        h = x
        for k in range(3):
            h = self.stages[k](h)
            p = ops.softmax(self.heads[k](h), -1)
            if p.max() > 0.9:
                return p, k
        return p, 3


def test_loop_indexing_layers_is_unrolled():
    result = agree(IndexedStages(), X, rtol=1e-5)
    nodes = [n.name for n in result.graph.walk()]
    assert "for" not in nodes and nodes.count("softmax") == 3


def test_training_mode_updates_state_like_eager():
    net = Training().set_train(True)
    agree(net, X, rtol=1e-5)
    net.set_train(False)
    agree(net, X, rtol=1e-5)


def test_recurrent_layers():
    agree(Recurrent(), rng.standard_normal((3, 2, 4)).astype(np.float32), rtol=1e-5)


def test_convolution_layers():
    agree(Conv(), rng.standard_normal((2, 1, 6, 6)).astype(np.float32), rtol=1e-5)


def test_sources_cover_everything_inlined():
    result = agree(Net(), X)
    text = "\n".join(result.sources)
    assert "def construct(self, x):" in text and "def scaled" in text
    assert any("class" not in s and "ops.dense" in s for s in result.sources)


def test_guards_record_compile_time_facts():
    net = Net()
    result = agree(net, X)
    guards = {g.description: g for g in result.guards}
    assert guards["self.depth"].expected == 2
    assert "self.blocks.0.use_act" in guards
    assert all(g.holds(net) for g in result.guards)
    net.blocks[0].use_act = False
    assert not guards["self.blocks.0.use_act"].holds(net)


def test_global_guard():
    result = agree(uses_globals, X)
    guard = next(g for g in result.guards if g.description == "global SCALE")
    assert guard.expected == 3 and guard.holds(None)


def test_closure_guard():
    result = agree(make_closure(5), X)
    guard = next(g for g in result.guards if g.description == "closure k")
    assert guard.expected == 5 and guard.holds(None)

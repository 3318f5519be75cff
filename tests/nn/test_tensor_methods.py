"""MindSpore's Tensor methods on amber's values, eagerly (on `amber.Tensor`, which every Cell
call returns) and compiled (on every array): view reshapes, expand_as, asnumpy, expand_dims,
the `keep_dims` keyword of the reductions, and the NumPy methods that share MindSpore's
meaning."""
from __future__ import annotations

import numpy as np
import pytest

import amber
from amber import Tensor, nn

X = np.arange(6, dtype=np.float32).reshape(2, 3) - 2.5
Y = np.zeros((4, 3), np.float32)

METHODS = {
    "view": (lambda x, y: x.view(3, 2), lambda x, y: x.reshape(3, 2)),
    "view-flat": (lambda x, y: x.view(-1), lambda x, y: x.reshape(-1)),
    "view-tuple": (lambda x, y: x.view((3, 2)), lambda x, y: x.reshape(3, 2)),
    "expand_as": (lambda x, y: x[:1].expand_as(y), lambda x, y: np.broadcast_to(x[:1], y.shape)),
    "asnumpy": (lambda x, y: x.asnumpy() * 2, lambda x, y: x * 2),
    "shape-ndim-size": (lambda x, y: x * (x.ndim + x.size + x.shape[1]),
                        lambda x, y: x * 11),
    "astype": (lambda x, y: x.astype(amber.int32), lambda x, y: x.astype(np.int32)),
    "reshape": (lambda x, y: x.reshape((3, 2)), lambda x, y: x.reshape(3, 2)),
    "transpose": (lambda x, y: x.transpose(1, 0), lambda x, y: x.T),
    "squeeze": (lambda x, y: x[:1].squeeze(0), lambda x, y: x[0]),
    "expand_dims": (lambda x, y: x.expand_dims(1), lambda x, y: x[:, None]),
    "sum-keep_dims": (lambda x, y: x.sum(axis=1, keep_dims=True),
                      lambda x, y: x.sum(1, keepdims=True)),
    "mean-keep_dims": (lambda x, y: x.mean(axis=0, keep_dims=True),
                       lambda x, y: x.mean(0, keepdims=True)),
    "max-keep_dims": (lambda x, y: x.max(axis=1, keep_dims=True),
                      lambda x, y: x.max(1, keepdims=True)),
    "min-keep_dims": (lambda x, y: x.min(axis=1, keep_dims=True),
                      lambda x, y: x.min(1, keepdims=True)),
    "argmax": (lambda x, y: x.argmax(axis=1), lambda x, y: np.argmax(x, 1)),
    "argmax-keep_dims": (lambda x, y: x.argmax(axis=1, keep_dims=True),
                         lambda x, y: np.argmax(x, 1)[:, None]),
}


class Apply(nn.Cell):
    def __init__(self, method):
        super().__init__()
        self.method = method

    def construct(self, x, y):
        return self.method(x, y)


@pytest.mark.parametrize("name", sorted(METHODS))
def test_eager_on_tensors_and_compiled(name):
    method, want = METHODS[name]
    expected = want(X, Y)
    eager = method(Tensor(X), Tensor(Y))
    np.testing.assert_array_equal(eager, expected)
    assert eager.dtype == expected.dtype
    compiled = amber.jit(Apply(method))(X, Y)  # plain ndarrays in, compiled
    np.testing.assert_array_equal(compiled, expected)
    assert np.asarray(compiled).dtype == expected.dtype


def test_a_compiled_cell_call_returns_tensors():
    """MindSpore's DCGAN ends `output.view(1)`: a compiled Cell call's result (jit, GRAPH_MODE)
    is a Tensor, whose view reshapes; an eager call returns what construct computed."""
    net = nn.SequentialCell([nn.Conv2d(1, 2, 3), nn.Flatten(), nn.Dense(2 * 16, 1)])
    x = np.ones((1, 1, 4, 4), np.float32)
    eager = net(Tensor(x))
    assert type(eager) is np.ndarray  # Conv2d's kernels drop the subclass
    compiled = amber.jit(net)(x)
    assert type(compiled) is Tensor and compiled.view(1).shape == (1,)
    amber.set_context(mode=amber.GRAPH_MODE)
    try:
        graph = net(x)
    finally:
        amber.set_context(mode=amber.PYNATIVE_MODE)
    assert type(graph) is Tensor
    np.testing.assert_allclose(graph, eager, rtol=1e-6)
    loss = nn.MSELoss()(graph, np.zeros((1, 1), np.float32))
    assert type(loss) is Tensor and loss.asnumpy().shape == ()  # NumPy keeps the subclass
    plain = nn.MSELoss()(np.ones((1, 1), np.float32), np.zeros((1, 1), np.float32))
    assert type(plain) is np.float32  # a NumPy number stays one, as compiled code returns it


def test_a_dtype_keeps_numpys_view():
    assert Tensor(np.zeros(2, np.float32)).view(np.int32).dtype == np.int32

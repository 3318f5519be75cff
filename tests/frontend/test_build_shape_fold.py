"""Shapes are compile-time constants when they are static, however they are asked for (`x.shape`,
`ops.shape(x)`, `ops.Shape()(x)`, `np.shape`, sizes and ranks), as MindSpore folds them: they
feed attributes (`OneHot` depth, reshape targets) and leave no shape op in the graph. An
attribute computed from array data is refused with a message saying what computed it."""
import numpy as np
import pytest

import amber
from amber import nn, ops
from amber.frontend import CompileError, build_graph

X = np.arange(12, dtype=np.float32).reshape(3, 4)
LABELS = np.array([0, 3, 1], np.int32)


class OneHotByShape(nn.Cell):
    def __init__(self):
        super().__init__()
        self.onehot = ops.OneHot()
        self.shape = ops.Shape()

    def construct(self, x, labels):
        rows, classes = self.shape(x)
        hot = self.onehot(labels, classes, 1.0, 0.0)
        flat = ops.reshape(x, (rows * ops.shape(x)[1],))
        grown = ops.reshape(x, ops.shape(x) + (1, 1))
        return hot * x, flat, grown


def shapes_everywhere(x):
    return (x.shape, ops.shape(x), ops.Shape()(x), np.shape(x), ops.size(x), ops.Size()(x),
            ops.rank(x), ops.Rank()(x), np.ndim(x), x.ndim, x.size)


def test_static_shapes_are_constants_in_every_spelling():
    result = build_graph(shapes_everywhere, (X,))
    ops_used = {node.op.name for node in result.graph.body.nodes if hasattr(node.op, "name")}
    assert not ops_used & {"shape", "size", "ndim"}, ops_used
    got = amber.jit(shapes_everywhere)(X)
    assert got == shapes_everywhere(X)


def test_folded_shapes_feed_attributes():
    net = OneHotByShape()
    fast = amber.jit(net)
    got, want = fast(X, LABELS), net.construct(X, LABELS)
    for g, w in zip(got, want):
        np.testing.assert_array_equal(g, w)
    assert "np.shape" not in fast.code


def shape_of_constant(x):
    table = np.ones((5, 2), np.float32)
    return ops.shape(table)[0] + x


def test_the_shape_of_a_constant_is_a_constant():
    assert amber.jit(shape_of_constant)(X).tolist() == shape_of_constant(X).tolist()


def axis_from_data(x):
    axis = int(x.sum()) % 2
    return ops.reduce_sum(x, axis)


def depth_from_data(x, labels):
    return ops.one_hot(labels, int(x.max()), 1.0, 0.0)


@pytest.mark.parametrize("fn, args, fragment", [
    (axis_from_data, (X,), "argument `axis` must be a compile-time constant, but it is a Python "
                           "int computed by `mod` at run time"),
    (depth_from_data, (X, LABELS), "computed by `int` at run time"),
])
def test_attributes_from_array_data_say_what_computed_them(fn, args, fragment):
    with pytest.raises(CompileError) as info:
        build_graph(fn, args)
    assert fragment in info.value.message, info.value.message
    assert "got a Python int" not in info.value.message
    assert "shapes" in info.value.hint

"""Cell registration and naming, Parameter semantics, training mode and containers."""
from __future__ import annotations

import copy
import pickle

import numpy as np
import pytest

import amber
from amber import nn


class Block(nn.Cell):
    def __init__(self) -> None:
        super().__init__()
        self.fc1 = nn.Dense(4, 8)
        self.act = nn.ReLU()
        self.scale = amber.Parameter(np.ones(8, np.float32))
        self.fc2 = nn.Dense(8, 2, has_bias=False)

    def construct(self, x):
        return self.fc2(self.act(self.fc1(x)) * self.scale)


class Outer(nn.Cell):
    def __init__(self) -> None:
        super().__init__()
        self.block = Block()
        self.drop = nn.Dropout(p=0.5)
        self.head = nn.SequentialCell(nn.Dense(2, 3), nn.BatchNorm1d(3))

    def construct(self, x):
        return self.head(self.drop(self.block(x)))


def test_parameters_registered_in_order_with_dotted_names():
    net = Outer()
    names = [name for name, _ in net.parameters_and_names()]
    assert names == ["block.scale", "block.fc1.weight", "block.fc1.bias", "block.fc2.weight",
                     "head.0.weight", "head.0.bias", "head.1.gamma", "head.1.beta",
                     "head.1.moving_mean", "head.1.moving_variance"]
    assert all(p.name == name for name, p in net.parameters_and_names())
    assert net.block.fc1.weight.name == "block.fc1.weight"


def test_parameter_name_follows_the_latest_owner():
    dense = nn.Dense(2, 2)
    assert [p.name for p in dense.get_parameters()] == ["weight", "bias"]
    holder = nn.Cell()
    holder.layer = dense
    assert dense.weight.name == "layer.weight"


def test_trainable_and_untrainable_params():
    net = Outer()
    trainable = {p.name for p in net.trainable_params()}
    frozen = {p.name for p in net.untrainable_params()}
    assert frozen == {"head.1.moving_mean", "head.1.moving_variance"}
    assert "head.1.gamma" in trainable and not trainable & frozen
    assert [n for n, _ in net.parameters_and_names(expand=False)] == []
    assert list(net.parameters_dict()) == [n for n, _ in net.parameters_and_names()]


def test_cells_and_names_and_name_cells():
    net = Outer()
    names = [name for name, _ in net.cells_and_names()]
    assert names == ["", "block", "block.fc1", "block.act", "block.fc2", "drop", "head",
                     "head.0", "head.1"]
    assert list(net.name_cells()) == ["block", "drop", "head"]
    assert net.cells() == [net.block, net.drop, net.head]


def test_shared_parameter_listed_once():
    net = nn.Cell()
    net.a = nn.Dense(3, 3)
    net.b = nn.Dense(3, 3)
    net.b.weight = net.a.weight  # weight tying
    params = list(net.get_parameters())
    assert sum(p is net.a.weight for p in params) == 1
    assert len(params) == 3


def test_set_train_is_recursive_and_returns_self():
    net = Outer()
    assert not any(cell.training for _, cell in net.cells_and_names())
    assert net.set_train() is net
    assert all(cell.training for _, cell in net.cells_and_names())
    net.set_train(False)
    assert not any(cell.training for _, cell in net.cells_and_names())


def test_assigning_an_array_to_a_parameter_attribute_writes_in_place():
    dense = nn.Dense(2, 2)
    weight = dense.weight
    dense.weight = np.full((2, 2), 3.0)
    assert dense.weight is weight and (weight == 3).all() and weight.dtype == np.float32
    with pytest.raises(ValueError, match="set_data got shape"):
        dense.weight = np.zeros((3, 3))
    with pytest.raises(TypeError, match="is a Parameter"):
        dense.weight = "nope"
    dense.bias = None
    assert [n for n, _ in dense.parameters_and_names()] == ["weight"]


def test_assigning_before_super_init_is_a_clear_error():
    class Broken(nn.Cell):
        def __init__(self) -> None:
            self.fc = nn.Dense(2, 2)
            super().__init__()

    with pytest.raises(AttributeError, match="Broken: call super"):
        Broken()


def test_replacing_and_deleting_attributes_updates_registration():
    net = Block()
    del net.act
    assert "act" not in net.name_cells()
    net.fc1 = None
    assert list(net.name_cells()) == ["fc2"]
    with pytest.raises(TypeError, match="is a sub-cell"):
        net.fc2 = 3


def test_parameter_results_are_plain_arrays():
    p = amber.Parameter(np.arange(6, dtype=np.float32).reshape(2, 3), name="w")
    x = np.ones((4, 2), np.float32)
    plain = [p + 1, x @ p, p.T, p[0], p.reshape(3, 2), np.tanh(p), np.concatenate([p, p]),
             np.dot(x, p), -p, p > 1, np.maximum(p, 0), list(p)[0], p.astype(np.float64)]
    for value in plain:
        assert type(value) is np.ndarray
    assert type(p.sum()) is np.float32 and type(np.mean(p)) is np.float32
    assert isinstance(p, np.ndarray) and isinstance(p, amber.Tensor)


def test_parameter_in_place_updates_keep_identity():
    p = amber.Parameter(np.zeros(3, np.float32), name="w")
    q = p
    q -= 1.5
    q *= 2.0
    q[...] = q + 1
    np.add(q, 1, out=q)
    assert q is p and type(p) is amber.Parameter and p.name == "w"
    np.testing.assert_array_equal(p, np.full(3, -1.0, np.float32))
    assert p.set_data(np.arange(3)) is p
    np.testing.assert_array_equal(p, [0, 1, 2])
    with pytest.raises(TypeError, match="cannot cast"):
        amber.Parameter(np.zeros(2, np.int32), name="i").set_data(np.ones(2))


def test_parameter_copies_its_input_and_defaults_to_float32():
    source = np.zeros(3, np.float32)
    p = amber.Parameter(source, requires_grad=False)
    p += 1
    assert (source == 0).all() and not p.requires_grad and p.name is None
    assert amber.Parameter([1.0, 2.0]).dtype == np.float32
    assert amber.Parameter(np.zeros(2, np.float64)).dtype == np.float64


def test_parameter_hash_copy_and_pickle():
    p = amber.Parameter(np.arange(3.0, dtype=np.float32), name="w", requires_grad=False)
    assert {p: 1}[p] == 1
    for clone in (copy.deepcopy(p), pickle.loads(pickle.dumps(p)), p.clone()):
        assert type(clone) is amber.Parameter and clone is not p
        assert clone.name == "w" and clone.requires_grad is False
        np.testing.assert_array_equal(clone, p)
    assert (p.clone("zeros") == 0).all() and "name=w" in repr(p)


def test_deepcopy_of_a_cell_keeps_parameters_shared_consistently():
    net = Block()
    twin = copy.deepcopy(net)
    assert twin.fc1.weight is not net.fc1.weight
    assert twin.fc1.weight is twin.fc1._params["weight"]
    assert dict(twin.parameters_and_names()).keys() == dict(net.parameters_and_names()).keys()
    np.testing.assert_array_equal(twin.fc1.weight, net.fc1.weight)


def test_parameter_tuple():
    net = Block()
    params = amber.ParameterTuple(net.trainable_params())
    assert isinstance(params, tuple) and params[0] is net.scale
    moments = params.clone("moments", init="zeros")
    assert moments[1].name == "moments.fc1.weight" and (moments[1] == 0).all()
    with pytest.raises(TypeError, match="item 1 is a ndarray"):
        amber.ParameterTuple([net.scale, np.zeros(2)])


def test_sequential_cell_forms_and_editing():
    a, b, c = nn.Dense(2, 3), nn.ReLU(), nn.Dense(3, 1)
    seq = nn.SequentialCell([a, b, c])
    x = np.ones((5, 2), np.float32)
    np.testing.assert_allclose(seq(x), c(b(a(x))))
    assert len(seq) == 3 and seq[0] is a and seq[-1] is c and list(seq) == [a, b, c]
    assert [n for n, _ in seq.parameters_and_names()] == ["0.weight", "0.bias", "2.weight",
                                                          "2.bias"]
    del seq[1]
    assert list(seq.name_cells()) == ["0", "1"] and seq[1] is c and c.weight.name == "1.weight"
    seq.insert(1, b)
    seq.append(nn.Sigmoid())
    assert seq.cell_list == (a, b, c, seq[3]) and len(seq[1:]) == 3
    assert c.weight.name == "2.weight"  # slicing leaves the names alone
    keyed = nn.SequentialCell({"first": nn.Dense(2, 2), "act": nn.Tanh()})
    assert list(keyed.name_cells()) == ["first", "act"]
    assert keyed.first.weight.name == "first.weight"
    with pytest.raises(TypeError, match="item 0 is a int"):
        nn.SequentialCell([1])


def test_cell_list_registers_parameters():
    layers = nn.CellList([nn.Dense(2, 2), nn.Dense(2, 2)])
    layers.append(nn.Dense(2, 1))
    assert len(layers) == 3 and [n for n, _ in layers.parameters_and_names()][-1] == "2.bias"
    holder = nn.Cell()
    holder.layers = layers
    assert layers[2].weight.name == "layers.2.weight"
    with pytest.raises(NotImplementedError):
        layers(np.ones(2))


def test_repr_nests_children():
    text = repr(Outer())
    assert text.startswith("Outer<")
    assert "(fc1): Dense<in_channels=4, out_channels=8>" in text
    assert "(0): Dense<in_channels=2, out_channels=3>" in text


def test_construct_must_be_defined():
    with pytest.raises(NotImplementedError, match="Cell does not define construct"):
        nn.Cell()(1)

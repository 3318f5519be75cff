"""Tensor construction, dtype names, and checkpoint save / load round trips."""
from __future__ import annotations

import numpy as np
import pytest

import amber
from amber import nn


class Small(nn.Cell):
    def __init__(self) -> None:
        super().__init__()
        self.conv = nn.Conv2d(1, 2, 3, has_bias=True)
        self.bn = nn.BatchNorm2d(2)
        self.fc = nn.Dense(2, 3)

    def construct(self, x):
        return self.fc(self.bn(self.conv(x)).mean(axis=(2, 3)))


def test_tensor_is_an_array_constructor():
    assert amber.Tensor([1.0, 2.0]).dtype == np.float32
    assert amber.Tensor([1, 2]).dtype == np.int64
    assert amber.Tensor(True).dtype == np.bool_
    assert amber.Tensor(np.zeros(2, np.float64)).dtype == np.float64
    assert amber.Tensor([1, 2], amber.float16).dtype == np.float16
    source = np.zeros(3, np.float32)
    copy = amber.Tensor(source)
    assert type(copy) is amber.Tensor and isinstance(copy, np.ndarray)
    assert not np.shares_memory(copy, source)
    assert type(copy.asnumpy()) is np.ndarray and type(copy + 1) is amber.Tensor
    assert isinstance(source, amber.Tensor) and not isinstance([1], amber.Tensor)
    ones = amber.Tensor(shape=(2, 3), dtype=amber.float32, init="ones")
    assert ones.shape == (2, 3) and (ones == 1).all()
    with pytest.raises(TypeError, match="needs input_data, shape and init"):
        amber.Tensor(shape=(2,))


def test_dtype_names_are_numpy_dtypes():
    names = {"float32": np.float32, "float16": np.float16, "float64": np.float64,
             "int32": np.int32, "int64": np.int64, "bool_": np.bool_, "uint8": np.uint8}
    for name, kind in names.items():
        assert getattr(amber, name) == np.dtype(kind)
        assert isinstance(getattr(amber, name), np.dtype)
    assert amber.dtype.float32 is amber.float32


def test_round_trip_restores_values_in_place(tmp_path):
    amber.set_seed(0)
    net = Small()
    x = np.random.default_rng(0).standard_normal((2, 1, 5, 5)).astype(np.float32)
    expected = net(x)
    path = tmp_path / "small.ckpt"
    amber.save_checkpoint(net, path)
    assert path.exists() and not list(tmp_path.glob("*.tmp*"))

    amber.set_seed(1)
    other = Small()
    weight = other.conv.weight
    assert not np.allclose(other(x), expected)
    params = amber.load_checkpoint(path)
    assert list(params) == [name for name, _ in net.parameters_and_names()]
    assert all(isinstance(p, amber.Parameter) and p.name == n for n, p in params.items())
    assert params["conv.weight"].dtype == np.float32
    not_loaded, unused = amber.load_param_into_net(other, params)
    assert not_loaded == [] and unused == []
    assert other.conv.weight is weight
    np.testing.assert_array_equal(other(x), expected)


def test_partial_and_mismatched_loads(tmp_path):
    net = Small()
    path = tmp_path / "part.npz"
    amber.save_checkpoint({"fc.weight": np.ones((3, 2)), "extra": np.zeros(1)}, path)
    params = amber.load_checkpoint(path)
    not_loaded, unused = amber.load_param_into_net(net, params)
    assert "conv.weight" in not_loaded and unused == ["extra"]
    assert (net.fc.weight == 1).all() and net.fc.weight.dtype == np.float32
    with pytest.raises(ValueError, match="checkpoint lacks conv.weight"):
        amber.load_param_into_net(net, params, strict_load=True)
    with pytest.raises(ValueError, match=r"'fc.weight' has shape \(2, 2\) in the checkpoint but "
                                         r"\(3, 2\) in the net; nothing was loaded"):
        amber.load_param_into_net(net, {"fc.weight": np.zeros((2, 2))})
    loaded = amber.load_checkpoint(path, net=Small())
    assert set(loaded) == {"fc.weight", "extra"}


def test_save_a_list_of_parameters(tmp_path):
    net = nn.Dense(2, 2)
    path = tmp_path / "list.ckpt"
    amber.save_checkpoint(list(net.get_parameters()), path)
    assert list(amber.load_checkpoint(path)) == ["weight", "bias"]
    amber.save_checkpoint([{"name": "w", "data": np.ones(2)}], path)
    assert list(amber.load_checkpoint(path)) == ["w"]
    with pytest.raises(ValueError, match="every parameter needs a name"):
        amber.save_checkpoint([amber.Parameter(np.ones(2))], path)
    with pytest.raises(TypeError, match="expected a Cell, a dict or a list"):
        amber.save_checkpoint(3, path)


def test_saved_by_parameter_name_with_optimizer_state_and_resumes_exactly(tmp_path):
    """Saving a train step keeps the optimizer state under MindSpore's names; loading it into a
    fresh one continues exactly where the first left off."""
    rng = np.random.default_rng(0)
    x = rng.standard_normal((4, 1, 5, 5)).astype(np.float32)
    y = np.array([0, 1, 2, 1], np.int32)

    def make():
        amber.set_seed(0)
        net = Small()
        loss = nn.WithLossCell(net, nn.SoftmaxCrossEntropyWithLogits(True, "mean"))
        return net, nn.TrainOneStepCell(loss, nn.Adam(net.trainable_params(), [0.01] * 10))

    net, step = make()
    step.set_train()
    for _ in range(2):
        step(x, y)
    path = tmp_path / "train.ckpt"
    amber.save_checkpoint(step, path, append_dict={"epoch": 2, "note": "adam"})
    saved = amber.load_checkpoint(path)
    assert {"conv.weight", "bn.moving_mean", "moment1.conv.weight", "moment2.fc.bias",
            "beta1_power", "global_step", "learning_rate"} <= set(saved)
    assert saved["epoch"] == 2 and saved["note"] == "adam"
    assert saved["global_step"][0] == 2
    expected = [float(step(x, y)) for _ in range(2)]

    other_net, other = make()
    other.set_train()
    not_loaded, unused = amber.load_param_into_net(other, saved)
    assert not_loaded == [] and unused == ["epoch", "note"]
    got = [float(other(x, y)) for _ in range(2)]
    assert got == expected
    for a, b in zip(net.get_parameters(), other_net.get_parameters()):
        np.testing.assert_array_equal(a, b)


def test_net_only_checkpoint_and_filters(tmp_path):
    net = Small()
    path = tmp_path / "net.ckpt"
    amber.save_checkpoint(net, path, choice_func=lambda name: not name.startswith("bn."))
    assert sorted(amber.load_checkpoint(path)) == ["conv.bias", "conv.weight", "fc.bias",
                                                    "fc.weight"]
    assert sorted(amber.load_checkpoint(path, filter_prefix="conv")) == ["fc.bias", "fc.weight"]
    assert sorted(amber.load_checkpoint(path, specify_prefix=["fc."])) == ["fc.bias",
                                                                          "fc.weight"]
    assert list(amber.load_checkpoint(path, choice_func=lambda n: n == "fc.bias")) == ["fc.bias"]


def test_a_mismatch_loads_nothing(tmp_path):
    net = Small()
    before = [np.array(p) for p in net.get_parameters()]
    params = {name: np.ones_like(p) for name, p in net.parameters_dict().items()}
    params["fc.bias"] = np.ones(4, np.float32)
    with pytest.raises(ValueError, match="'fc.bias' has shape \\(4,\\) in the checkpoint but "
                                         "\\(3,\\) in the net; nothing was loaded"):
        amber.load_param_into_net(net, params)
    params["fc.bias"] = np.ones(3, np.complex64)
    with pytest.raises(TypeError, match="'fc.bias' is complex64 in the checkpoint"):
        amber.load_param_into_net(net, params)
    for p, b in zip(net.get_parameters(), before):
        np.testing.assert_array_equal(p, b)


def test_loading_never_unpickles(tmp_path):
    evil = tmp_path / "evil.npz"
    np.savez(evil, weight=np.array([object()], dtype=object))  # needs pickle to read back
    with pytest.raises(ValueError, match="cannot be read safely"):
        amber.load_checkpoint(evil)
    with pytest.raises(ValueError, match="junk.ckpt' is not a readable MindSpore checkpoint"):
        (tmp_path / "junk.ckpt").write_bytes(b"\x80\x04junk")  # a pickle: never unpickled
        amber.load_checkpoint(tmp_path / "junk.ckpt")
    with pytest.raises(ValueError, match="no checkpoint file"):
        amber.load_checkpoint(tmp_path / "missing.ckpt")
    with pytest.raises(TypeError, match="holds numbers, bools and strings only"):
        amber.save_checkpoint({"w": np.array([object()], dtype=object)}, tmp_path / "o.ckpt")
    assert not (tmp_path / "o.ckpt").exists()

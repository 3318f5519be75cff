"""Context and jit as MindSpore scripts write them: integer mode constants,
`set_context(mode=GRAPH_MODE, device_target="CPU")`, `get_context("mode")`, `set_device`, and
`@amber.jit` on a `construct` method (MindSpore 2.x style)."""
from __future__ import annotations

import numpy as np
import pytest

import amber
from amber import nn

X = np.linspace(-1, 1, 8, dtype=np.float32).reshape(2, 4)


class Jitted(nn.Cell):
    """MindSpore 2.x: the decorator sits on construct, the cell is called as usual."""

    def __init__(self, scale: float = 2.0) -> None:
        super().__init__()
        self.fc = nn.Dense(4, 3)
        self.tail = nn.SequentialCell(nn.ReLU(), nn.Dense(3, 2))
        self.scale = scale

    @amber.jit
    def construct(self, x: np.ndarray) -> np.ndarray:
        y = self.fc(x)
        if y.sum() > 0:
            y = y * self.scale
        return self.tail(y)


class Holder(nn.Cell):
    """A plain cell whose sub-cell has a jitted construct."""

    def __init__(self) -> None:
        super().__init__()
        self.inner = Jitted()

    def construct(self, x: np.ndarray) -> np.ndarray:
        return self.inner(x) - 1


@amber.jit(capture_mode="ast", jit_level="O0")
def with_mindspore_options(x: np.ndarray) -> np.ndarray:
    return x * 3


def eager(net: Jitted, x: np.ndarray) -> np.ndarray:
    return Jitted.construct.__wrapped__(net, x)


def test_mode_constants_are_mindspores() -> None:
    assert (amber.GRAPH_MODE, amber.PYNATIVE_MODE) == (0, 1)
    amber.set_context(mode=amber.GRAPH_MODE, device_target="CPU")
    assert amber.get_context("mode") == amber.get_context().mode == 0
    assert amber.get_context("device_target") == "CPU"
    amber.set_context(mode="pynative")  # amber's older spelling
    assert amber.get_context("mode") == amber.PYNATIVE_MODE


@pytest.mark.parametrize("device", ["GPU", "Ascend", "cuda"])
def test_other_devices_say_what_amber_runs_on(device: str) -> None:
    with pytest.raises(ValueError, match="NumPy code on the CPU"):
        amber.set_context(device_target=device)
    with pytest.raises(ValueError, match="CPU"):
        amber.set_device(device)
    amber.set_device("CPU")
    amber.set_context(device_target="cpu")


def test_mindspore_only_options_are_accepted_and_unknown_ones_refused() -> None:
    amber.set_context(mode=amber.GRAPH_MODE, device_target="CPU", device_id=0,
                      max_call_depth=10000, runtime_num_threads=2)
    with pytest.raises(TypeError, match="no_such_option"):
        amber.set_context(no_such_option=1)
    with pytest.raises(ValueError, match="GRAPH_MODE"):
        amber.set_context(mode=2)
    with pytest.raises(ValueError, match="unknown setting"):
        amber.get_context("no_such_option")


def test_jit_on_construct_runs_compiled_and_equals_eager() -> None:
    net = Jitted()
    np.testing.assert_allclose(net(X), eager(net, X), rtol=1e-6)
    stats = Jitted.construct.stats
    assert stats.compiles + stats.disk_hits >= 1
    assert "def Jitted_construct" in net.construct.code


def test_one_compile_serves_every_instance_with_its_own_weights() -> None:
    a, b = Jitted(), Jitted(scale=2.0)
    b.fc.weight.set_data(np.full((3, 4), 0.5, np.float32))
    before = Jitted.construct.stats.specializations
    np.testing.assert_allclose(a(X), eager(a, X), rtol=1e-6)
    np.testing.assert_allclose(b(X), eager(b, X), rtol=1e-6)
    assert not np.allclose(a(X), b(X))
    assert Jitted.construct.stats.specializations - before <= 1


def test_a_different_attribute_value_is_guarded() -> None:
    net = Jitted(scale=5.0)
    np.testing.assert_allclose(net(X), eager(net, X), rtol=1e-6)
    net.scale = -1.0
    np.testing.assert_allclose(net(X), eager(net, X), rtol=1e-6)


def test_a_jitted_construct_inside_compiled_code_is_inlined() -> None:
    holder = Holder()
    got = amber.jit(holder)(X)
    np.testing.assert_allclose(got, eager(holder.inner, X) - 1, rtol=1e-6)


def test_jit_disabled_runs_the_method_as_python() -> None:
    net = Jitted()
    amber.set_context(jit_enabled=False)  # MindSpore's MS_JIT=0
    before = Jitted.construct.stats.specializations
    np.testing.assert_allclose(net(X), eager(net, X), rtol=1e-6)
    assert Jitted.construct.stats.specializations == before


def test_mindspore_jit_options_are_accepted_and_unknown_ones_refused() -> None:
    np.testing.assert_array_equal(with_mindspore_options(X), X * 3)
    with pytest.raises(TypeError, match="no_such_option"):
        amber.jit(no_such_option=True)

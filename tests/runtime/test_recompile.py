"""Specialization: what recompiles (shapes, dtypes, scalar values, guarded attributes, parameter
shapes), what is reused (the memory cache, refreshed parameters), and the recompile warning."""
from __future__ import annotations

import warnings

import numpy as np
import pytest

import amber
from amber import nn, ops
from amber.runtime.specializations import RECOMPILE_WARNING


class Scaled(nn.Cell):
    """x * w * scale, with a config branch: `scale` and `clip` are compile-time attributes."""

    def __init__(self, n: int = 4) -> None:
        super().__init__()
        self.w = amber.Parameter(np.linspace(-1, 1, n, dtype=np.float32))
        self.scale = 2.0
        self.clip = False

    def construct(self, x: np.ndarray) -> np.ndarray:
        y = x * self.w * self.scale
        if self.clip:
            y = ops.relu(y)
        return y


def add_power(x: np.ndarray, p: int) -> np.ndarray:
    """x + x**p with p a compile-time scalar."""
    return x + x ** p


def _ones(*shape: int, dtype: type = np.float32) -> np.ndarray:
    return np.ones(shape, dtype)


def test_same_key_hits_memory_cache() -> None:
    fast = amber.jit(Scaled())
    x = _ones(4)
    first = fast(x)
    for _ in range(3):
        np.testing.assert_array_equal(fast(x + 0), first)
    assert fast.stats.specializations == 1 and fast.stats.compiles == 1


def test_shape_dtype_and_scalar_changes_recompile() -> None:
    fast = amber.jit(add_power)
    calls = [(_ones(3), 2), (_ones(3), 2), (_ones(5), 2), (_ones(3, dtype=np.float64), 2),
             (_ones(3), 3), (_ones(3), 3.0)]
    for x, p in calls:
        out = fast(x, p)
        expected = add_power(x, p)
        assert out.dtype == expected.dtype
        np.testing.assert_allclose(out, expected)
    assert fast.stats.specializations == 5  # the repeated first call is a hit


def test_guarded_attribute_change_recompiles_and_changes_back() -> None:
    net = Scaled()
    fast = amber.jit(net)
    x = np.array([-1, -2, 3, 4], np.float32)
    np.testing.assert_allclose(fast(x), net.construct(x))
    net.scale = 3.0
    np.testing.assert_allclose(fast(x), net.construct(x))
    net.clip = True
    np.testing.assert_allclose(fast(x), net.construct(x))
    assert fast.stats.specializations == 3
    net.scale, net.clip = 2.0, False  # the first specialization again: no compile
    np.testing.assert_allclose(fast(x), net.construct(x))
    assert fast.stats.specializations == 3


def test_parameters_are_refreshed_not_recompiled() -> None:
    net = Scaled()
    fast = amber.jit(net)
    x = _ones(4)
    fast(x)
    net.w.set_data(np.full(4, 5, np.float32))  # in place
    np.testing.assert_allclose(fast(x), net.construct(x))
    net.w = amber.Parameter(np.full(4, -1, np.float32))  # a new Parameter object
    np.testing.assert_allclose(fast(x), np.full(4, -2, np.float32))
    assert fast.stats.specializations == 1


def test_new_parameter_shape_gets_new_code() -> None:
    net = Scaled()
    fast = amber.jit(net)
    fast(_ones(4))
    net.w = amber.Parameter(np.arange(3, dtype=np.float32))
    np.testing.assert_allclose(fast(_ones(3)), net.construct(_ones(3)))
    assert fast.stats.specializations == 2


def test_instances_share_a_class_cache() -> None:
    @amber.jit
    class Shared(Scaled):
        pass

    a, b = Shared(), Shared()
    b.w.set_data(np.full(4, 7, np.float32))
    x = _ones(4)
    np.testing.assert_allclose(a(x), a.construct(x))
    np.testing.assert_allclose(b(x), b.construct(x))
    assert Shared.__call__.stats.compiles == 1  # one module serves both instances


def test_warns_once_after_eight_recompiles_naming_the_argument() -> None:
    fast = amber.jit(add_power, dynamic=False)  # NOTE: else the size becomes symbolic
    x = _ones(2)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        for n in range(1, RECOMPILE_WARNING + 1):
            fast(_ones(n), 2)
        assert not [w for w in caught if "recompiled" in str(w.message)]
        fast(_ones(RECOMPILE_WARNING + 1), 2)
        fast(_ones(RECOMPILE_WARNING + 2), 2)
        fast(x, 5)
    messages = [str(w.message) for w in caught if "recompiled" in str(w.message)]
    assert len(messages) == 1
    assert "add_power" in messages[0] and "arg 0" in messages[0]
    assert "arg 1" not in messages[0]  # p stayed 2 until after the warning
    assert caught[0].filename == __file__  # attributed to the calling line
    assert fast.stats.recompiles == RECOMPILE_WARNING + 2


def test_unhashable_or_odd_arguments_are_keyed_by_identity() -> None:
    def pick(x: np.ndarray, shift: tuple) -> np.ndarray:
        return x + shift[0] - shift[1]

    fast = amber.jit(pick)
    np.testing.assert_allclose(fast(_ones(2), (1, 2)), _ones(2) * 0)
    np.testing.assert_allclose(fast(_ones(2), (3, 1)), _ones(2) * 3)
    assert fast.stats.specializations == 2
    with pytest.raises(amber.CompileError):
        fast(_ones(2), object())


class Stack(nn.Cell):
    """Applies every layer of a CellList in turn."""

    def __init__(self) -> None:
        super().__init__()
        self.layers = nn.CellList([nn.Dense(4, 4), nn.ReLU()])

    def construct(self, x: np.ndarray) -> np.ndarray:
        for layer in self.layers:
            x = layer(x)
        return x


def test_changing_a_cell_list_recompiles() -> None:
    net = Stack()
    fast = amber.jit(net)
    x = np.linspace(-2, 2, 8, dtype=np.float32).reshape(2, 4)
    np.testing.assert_allclose(fast(x), net.construct(x), rtol=1e-6)
    fast(x)
    assert fast.stats.specializations == 1
    net.layers.append(nn.Dense(4, 2))
    out = fast(x)
    assert out.shape == (2, 2)
    np.testing.assert_allclose(out, net.construct(x), rtol=1e-6)
    assert fast.stats.specializations == 2

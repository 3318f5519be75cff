"""Initializers: names, determinism after set_seed, and distribution sanity."""
from __future__ import annotations

import math

import numpy as np
import pytest

import amber
from amber import nn
from amber.common import initializer as init


def test_same_seed_same_weights():
    amber.set_seed(11)
    first = [p.copy() for p in nn.Conv2d(3, 4, 3).get_parameters()]
    a = init.initializer("truncated_normal", (50, 20))
    amber.set_seed(11)
    second = [p.copy() for p in nn.Conv2d(3, 4, 3).get_parameters()]
    b = init.initializer("truncated_normal", (50, 20))
    assert amber.get_seed() == 11
    for x, y in zip(first, second):
        np.testing.assert_array_equal(x, y)
    np.testing.assert_array_equal(a, b)
    amber.set_seed(12)
    assert not np.array_equal(init.initializer("truncated_normal", (50, 20)), a)


def test_results_are_float32_arrays_of_the_shape():
    for name in ("normal", "zeros", "ones", "xavier_uniform", "he_uniform", "he_normal",
                 "truncated_normal", "uniform", "XavierUniform", "HeNormal"):
        value = init.initializer(name, [6, 5, 2])
        assert type(value) is np.ndarray and value.shape == (6, 5, 2)
        assert value.dtype == np.float32
    assert init.initializer("ones", 3, amber.float16).dtype == np.float16
    assert init.initializer(init.One, (2,)).tolist() == [1.0, 1.0]


def test_distributions():
    amber.set_seed(0)
    shape = (400, 300)
    normal = init.initializer(init.Normal(sigma=0.5, mean=1.0), shape)
    assert abs(normal.mean() - 1.0) < 0.01 and abs(normal.std() - 0.5) < 0.01
    trunc = init.initializer(init.TruncatedNormal(sigma=0.2), shape)
    assert np.abs(trunc).max() <= 0.4 + 1e-6 and 0.15 < trunc.std() < 0.2
    bound = math.sqrt(6 / (300 + 400))
    xavier = init.initializer("xavier_uniform", shape)
    assert np.abs(xavier).max() <= bound and np.abs(xavier).max() > 0.99 * bound
    he_bound = math.sqrt(2) * math.sqrt(3 / 300)  # relu-like gain, fan_in
    he = init.initializer("he_uniform", shape)
    assert np.abs(he).max() <= he_bound and abs(he.std() - he_bound / math.sqrt(3)) < 1e-3
    he_normal = init.initializer(init.HeNormal(mode="fan_out"), shape)
    assert abs(he_normal.std() - math.sqrt(2 / 400)) < 1e-3
    conv_fan = init.initializer("he_normal", (64, 32, 3, 3))  # fan_in = 32 * 3 * 3
    assert abs(conv_fan.std() - math.sqrt(2 / 288)) < 2e-3
    np.testing.assert_array_equal(init.initializer(init.Constant(2.5), (2, 2)), 2.5)
    np.testing.assert_array_equal(init.initializer(0.5, (3,)), [0.5] * 3)
    assert (init.initializer("zeros", (3, 3)) == 0).all()


def test_array_and_in_place_forms():
    source = np.arange(6.0).reshape(2, 3)
    value = init.initializer(source, (2, 3))
    assert value.dtype == np.float32 and value is not source
    np.testing.assert_array_equal(value, source)
    buffer = np.zeros((3, 4), np.float32)
    assert init.One()(buffer) is buffer and (buffer == 1).all()


def test_errors():
    with pytest.raises(ValueError, match="unknown name 'glorot'"):
        init.initializer("glorot", (2, 2))
    with pytest.raises(ValueError, match=r"XavierUniform: needs a weight shape of rank >= 2"):
        init.initializer("xavier_uniform", (4,))
    with pytest.raises(ValueError, match="shape must be non-negative ints"):
        init.initializer("zeros", (2, -1))
    with pytest.raises(TypeError, match="init must be a name"):
        init.initializer(object(), (2,))
    with pytest.raises(ValueError, match=r"array has shape \(2,\), expected \(3,\)"):
        init.initializer(np.zeros(2), 3)
    with pytest.raises(ValueError, match="set_seed: seed must be a non-negative int"):
        amber.set_seed(-1)

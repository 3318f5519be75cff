"""Activation layers from MindSpore's tutorials and zoo scripts beyond amber's first set (SiLU,
ELU, Softplus, HSwish, HSigmoid, Mish, Identity): values against float64 formulas, compiled
equal to eager, gradients against finite differences, get_activation names."""
from __future__ import annotations

import numpy as np
import pytest

import amber
from amber import nn

X = np.linspace(-6, 6, 25).reshape(5, 5) + 0.013  # away from the kinks at 0 and +-3


def _softplus(x):
    return np.logaddexp(0.0, x)


CASES = {
    "SiLU": (nn.SiLU, lambda x: x / (1 + np.exp(-x))),
    "ELU": (lambda: nn.ELU(0.5), lambda x: np.where(x > 0, x, 0.5 * (np.exp(x) - 1))),
    "Softplus": (nn.Softplus, _softplus),
    "HSwish": (nn.HSwish, lambda x: x * np.clip(x + 3, 0, 6) / 6),
    "HSigmoid": (nn.HSigmoid, lambda x: np.clip(x + 3, 0, 6) / 6),
    "Mish": (nn.Mish, lambda x: x * np.tanh(_softplus(x))),
    "Identity": (nn.Identity, lambda x: x),
}


@pytest.mark.filterwarnings("ignore:.*cannot be kept in the disk cache")
@pytest.mark.parametrize("name", sorted(CASES))
def test_values_compiled_and_gradients(name):
    make, reference = CASES[name]
    layer = make()
    x32 = X.astype(np.float32)
    np.testing.assert_allclose(layer(x32), reference(X), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(amber.jit(layer)(x32), layer(x32), rtol=1e-6, atol=1e-7)

    def total(x):
        return (layer(x) * np.cos(X)).sum()

    grad = amber.grad(total)(X)
    eps = 1e-6
    numeric = np.array([(total(X + eps * e) - total(X - eps * e)) / (2 * eps)
                        for e in np.eye(X.size).reshape(X.size, *X.shape)]).reshape(X.shape)
    np.testing.assert_allclose(grad, numeric, rtol=1e-5, atol=1e-7)


ELU = nn.ELU()


def elu_total(v):
    return ELU(v).sum()


def test_elu_gradient_is_finite_for_large_inputs():
    grad = amber.grad(elu_total)(np.array([800.0, -2.0]))
    np.testing.assert_allclose(grad, [1.0, np.exp(-2.0)], rtol=1e-12)


def test_activation_names():
    assert isinstance(nn.get_activation("silu"), nn.SiLU)
    assert isinstance(nn.get_activation("hswish"), nn.HSwish)

"""What the generated backward looks like where it matters for speed, checked on the code a
gradient function runs (`grad_fn.code`) and on its results (float64 finite differences): a
scalar loss's seed is a constant folded into the first multiply; a reverse loop adds each step's
part of an indexed input's gradient in place (`add_at(dx, np.s_[t], g)`), not as a new array
of zeros per step; weight gradients are one GEMM over the stacked steps after the loop
(graph/passes/batch_loop_matmuls.py), not one small GEMM per step."""
from __future__ import annotations

import re

import numpy as np

import amber
import numeric
from amber import nn, ops


class Scan(nn.Cell):
    """An RNN over x[t] (a data-dependent `while` with break): a gradient by step of x."""

    def __init__(self):
        super().__init__()
        self.ih = nn.Dense(8, 40)
        self.hh = nn.Dense(40, 40, has_bias=False)

    def construct(self, x):
        h = ops.zeros((x.shape[1], 40), x.dtype)
        t = 0
        while t < x.shape[0]:
            h = ops.tanh(self.ih(x[t]) + self.hh(h))
            t += 1
            if (h * h).sum() > 1e6:
                break
        return (h * h).mean()


def _float64(net):
    for _, cell in net.cells_and_names():
        for name, p in list(cell._params.items()):
            setattr(cell, name, amber.Parameter(p.astype(np.float64), name=p.name))
    return net


def test_a_reverse_loop_adds_each_steps_gradient_in_place():
    amber.set_seed(4)
    net = _float64(Scan())
    x = np.random.default_rng(4).standard_normal((6, 30, 8)) * 0.5
    grad = amber.grad(net, 0, net.trainable_params())
    dx, dws = grad(x)
    code = grad.code
    loop = code[code.index("for k in range("):]
    assert re.search(r"\badd_at\(dx, np\.s_\[\w+\], \w+\)", loop), loop  # in place
    assert "added_at(" not in loop and "accumulated_at(" not in loop  # no copies of dx
    steps, after = loop.split("\n    if ", 1)
    assert not re.search(r"d\w*_weight \+= ", steps), loop  # no GEMM per step for dW
    assert re.search(r"np\.swapaxes\(\w+_all, -1, -2\) @ \w+_all\b", after), loop
    numeric.close(dx, numeric.gradient(net.construct, (x,), 0), rtol=1e-6, atol=1e-9)
    numeric.close(dws[1], numeric.parameter_gradient(net.construct, (x,), net.ih.bias),
                  rtol=1e-6, atol=1e-9)
    amber.set_context(jit_enabled=False)  # NOTE: the same graph op by op, nothing in place
    want_dx, want_dws = amber.grad(net, 0, net.trainable_params())(x)
    numeric.close(dx, want_dx, rtol=1e-12, atol=1e-14)
    for g, want in zip(dws, want_dws):
        numeric.close(g, want, rtol=1e-12, atol=1e-14)


def test_repeated_indices_add_up():
    """x[idx] with a repeated index inside a loop: add_at must add twice, not once."""
    def f(x, idx):
        s = x * 0.0
        for _ in range(3):
            s = s + np.tanh(x[idx]).sum() * x
        return s.sum()
    x = np.linspace(-1, 1, 5)
    idx = np.array([1, 1, 3])
    got = amber.grad(f)(x, idx)
    numeric.close(got, numeric.gradient(f, (x, idx), 0), rtol=1e-7, atol=1e-9)


def test_a_scalar_losss_seed_is_folded():
    def f(x, w):
        return (np.tanh(x @ w) ** 2).sum()
    grad = amber.grad(f, (0, 1))
    x, w = np.ones((4, 3)), np.full((3, 2), 0.1)
    grad(x, w)
    code = grad.code
    assert "np.ones" not in code and "ones_like" not in code and "* 1.0" not in code, code

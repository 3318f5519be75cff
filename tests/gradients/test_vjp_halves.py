"""ops.vjp and ops.linearize as two compiled halves: the forward returns the residuals, vjp_fn /
jvp_fn run only the backward half on them. Checked against float64 central differences and
against GradOperation (which runs the forward again), with weights, aux, Cells and symbolic
sizes; residuals of one call never reach another."""
from __future__ import annotations

import numpy as np
import pytest

import amber
import numeric
from sample_programs import looping
from amber import nn, ops

RNG = np.random.default_rng(31)


def _inputs(scale):
    return RNG.standard_normal(3) * scale + 0.4, RNG.standard_normal(3) * 0.5 + 0.8


def _statements(code):
    """The generated code without its comments (which quote the user's lines)."""
    return "\n".join(line.split("#")[0] for line in code.splitlines())


def _vjp_by_differences(fn, args, v):
    return tuple(numeric.gradient(fn, args, p, sens=v) for p in range(len(args)))


@pytest.mark.parametrize("scale", [0.3, 2.0])
def test_vjp_fn_twice_reuses_the_forward(scale):
    x, y = _inputs(scale)
    out, vjp_fn = ops.vjp(looping, x, y)
    numeric.close(out, looping(x, y), rtol=1e-12, atol=1e-12)
    for _ in range(2):
        v = RNG.standard_normal(3)
        numeric.close(vjp_fn(v), _vjp_by_differences(looping, (x, y), v), rtol=1e-5, atol=1e-6)
    # NOTE: the backward half reads residuals (the tape of branch flags, the trip count) and
    # never the forward: the forward's code is not in it
    assert "while" not in _statements(vjp_fn.code) and "trips" in vjp_fn.code, vjp_fn.code
    assert "t_tape" in vjp_fn.forward_code and "while" in vjp_fn.forward_code


def test_residuals_stay_with_their_call():
    (x1, y1), (x2, y2) = _inputs(0.3), _inputs(2.0)
    _, first = ops.vjp(looping, x1, y1)
    _, second = ops.vjp(looping, x2, y2)  # NOTE: the same compiled halves, other residuals
    v = RNG.standard_normal(3)
    numeric.close(first(v), _vjp_by_differences(looping, (x1, y1), v), rtol=1e-5, atol=1e-6)
    numeric.close(second(v), _vjp_by_differences(looping, (x2, y2), v), rtol=1e-5, atol=1e-6)


def test_linearize_runs_the_tangent_half_only():
    x, y = _inputs(1.0)
    out, jvp_fn = ops.linearize(looping, (x, y))
    numeric.close(out, looping(x, y), rtol=1e-12, atol=1e-12)
    for _ in range(2):
        tx, ty = RNG.standard_normal(3), RNG.standard_normal(3)
        want = (np.asarray(looping(x + 1e-6 * tx, y + 1e-6 * ty)) -
                np.asarray(looping(x - 1e-6 * tx, y - 1e-6 * ty))) / 2e-6
        numeric.close(jvp_fn(tx, ty), want, rtol=1e-5, atol=1e-6)
        numeric.close(jvp_fn((tx, ty)), want, rtol=1e-5, atol=1e-6)
    assert "while" not in _statements(jvp_fn.code), jvp_fn.code
    with pytest.raises(ValueError, match="shape"):
        jvp_fn(np.ones(4), np.ones(3))


class Net(nn.Cell):
    def __init__(self):
        super().__init__()
        self.dense = nn.Dense(3, 2)

    def construct(self, x):
        h = self.dense(x)
        if h.sum() > 0:
            h = ops.tanh(h)
        return h, h.sum()


def test_weights_follow_grad_operation():
    net = Net()
    x = RNG.standard_normal((4, 3)).astype(np.float32)
    v = (RNG.standard_normal((4, 2)).astype(np.float32), np.float32(2.0))
    out, vjp_fn = ops.vjp(net, x, weights=net.trainable_params())
    gx, gw = vjp_fn(v)
    want = ops.GradOperation(get_all=True, get_by_list=True, sens_param=True)(
        net, net.trainable_params())(x, v)
    numeric.close(gx, want[0][0], rtol=1e-6, atol=1e-6)
    numeric.close(gw, want[1], rtol=1e-6, atol=1e-6)
    w = net.dense.weight
    out, vjp_fn, aux = ops.vjp(net, x, weights=w, has_aux=True)
    numeric.close(aux, (net.construct(x)[1],), rtol=1e-5, atol=1e-5)
    gx, gw = vjp_fn(v[0])
    assert gw.shape == w.shape

    def loss(w_value):
        saved = np.array(w, copy=True)
        w[...] = w_value
        try:
            return net.construct(x.astype(np.float64))[0].astype(np.float64)
        finally:
            w[...] = saved
    numeric.close(gw, numeric.gradient(loss, (np.asarray(w, np.float64),), 0, sens=v[0]),
                  rtol=2e-2, atol=2e-3)


def test_symbolic_sizes_and_eager_mode():
    def fn(a):
        return (ops.sin(a) * a).sum(axis=0)
    for n in (3, 5, 7):
        a = RNG.standard_normal((n, 2))
        _, vjp_fn = ops.vjp(fn, a)
        v = RNG.standard_normal(2)
        numeric.close(vjp_fn(v), numeric.gradient(fn, (a,), 0, sens=v), rtol=1e-5, atol=1e-6)
    amber.set_context(jit_enabled=False)
    try:
        _, vjp_fn = ops.vjp(fn, a)
        numeric.close(vjp_fn(v), numeric.gradient(fn, (a,), 0, sens=v), rtol=1e-5, atol=1e-6)
    finally:
        amber.set_context(jit_enabled=True)


def test_refusals():
    with pytest.raises(amber.CompileError, match="has_aux=True") as err:
        ops.vjp(lambda x: x * 2.0, np.ones(3), has_aux=True)
    assert "test_vjp_halves.py" in str(err.value)
    _, vjp_fn = ops.vjp(lambda x: x * 2.0, np.ones(3))
    with pytest.raises(ValueError, match="shape"):
        vjp_fn(np.ones(4))
    with pytest.raises(TypeError, match="Parameter"):
        ops.vjp(lambda x: x * 2.0, np.ones(3), weights=[np.ones(2)])


class Sub(nn.Cell):
    def __init__(self):
        super().__init__()
        self.w = amber.Parameter(np.array([0.5, -0.3, 0.8]), name="w")

    def construct(self, x):
        y = x * self.w
        i = 0
        while y.sum() < 3.0 and i < 5:
            y = y * 1.5 + ops.sin(x)
            i += 1
        return y


class Calls(nn.Cell):
    """A Cell whose construct calls every transform on a sub-cell."""

    def __init__(self, kind):
        super().__init__()
        self.sub, self.kind = Sub(), kind

    def construct(self, x, v):
        if self.kind == "vjp":
            out, vjp_fn = ops.vjp(self.sub, x)
            return vjp_fn(v) * out
        if self.kind == "linearize":
            out, jvp_fn = ops.linearize(self.sub, x)
            return jvp_fn(v) * out
        if self.kind == "jvp":
            return ops.jvp(self.sub, x, v)[1]
        return ops.jacrev(self.sub)(x) @ v


@pytest.mark.parametrize("kind", ["vjp", "linearize", "jvp", "jacrev"])
def test_inside_a_jitted_cell_and_under_grad(kind):
    net = Calls(kind)
    x, v = np.array([0.2, 0.4, 0.9]), np.array([1.0, 0.5, -1.0])
    out = net.sub.construct(x)
    jac = np.stack([numeric.gradient(lambda a: net.sub.construct(a)[i], (x,), 0)
                    for i in range(3)])
    want = {"vjp": (v @ jac) * out, "linearize": (jac @ v) * out, "jvp": jac @ v,
            "jacrev": jac @ v}[kind]
    numeric.close(amber.jit(net)(x, v), want, rtol=1e-5, atol=1e-6)
    total = amber.grad(lambda a, b: net(a, b).sum(), 1)
    numeric.close(total(x, v), numeric.gradient(lambda b: net.construct(x, b).sum(), (v,), 0),
                  rtol=1e-5, atol=1e-6)


def test_refusals_inside_and_around_name_the_line():
    def padded(x):
        return np.pad(x, 1, mode="reflect") * 2.0

    for call in (lambda: ops.jvp(padded, np.ones(3), np.ones(3)),
                 lambda: ops.vjp(padded, np.ones(3)),
                 lambda: ops.linearize(padded, np.ones(3)),
                 lambda: amber.jit(lambda x: ops.vjp(padded, x)[1](np.ones(5)))(np.ones(3))):
        with pytest.raises(amber.CompileError, match="np.pad in mode 'reflect'") as err:
            call()
        assert "test_vjp_halves.py" in str(err.value) and "np.pad(x, 1" in str(err.value)


def test_vjp_of_a_gradient_is_a_hessian_vector_product():
    def loss(x):
        return (looping(x, x * 0.5 + 0.6) ** 2).sum()
    x = np.array([0.3, 0.2, 0.5])
    gradient = amber.grad(loss)
    _, hvp = ops.vjp(gradient, x)
    hessian = np.stack([numeric.gradient(lambda a: gradient(a)[i], (x,), 0) for i in range(3)])
    for v in (np.array([1.0, 0.0, 0.0]), np.array([0.0, 1.0, 2.0]), np.array([1.0, 0.0, 0.0])):
        numeric.close(hvp(v), v @ hessian, rtol=1e-5, atol=1e-5)

"""Function transforms (ops.jvp, vjp, linearize, derivative, jacfwd, jacrev) through if, while,
for and early return, on functions and Cells, inside compiled code and around it, composed with
each other and with grad: every result against float64 central differences."""
from __future__ import annotations

import numpy as np
import pytest

import amber
import numeric
from sample_programs import looping
from amber import nn, ops

RNG = np.random.default_rng(3)
EPS = 1e-6


def branchy(x, y):
    s = x * y
    if s.sum() > 0.5:
        s = ops.sin(s) + y
    else:
        s = s * s - x
    return s * 2.0


def counted(x, y):
    acc = x
    for k in range(3):
        acc = ops.tanh(acc * y + k)
        if k == 1:
            acc = acc + x * x
    return acc


def early(x, y):
    if x.sum() > 2.0:
        return ops.exp(x) * y
    for _ in range(2):
        x = x * y + 0.1
    return x


def reduce_then_broadcast(x, y):
    return ops.softmax(x.reshape(1, 3) * y.reshape(3, 1), axis=-1) @ x


PROGRAMS = [branchy, looping, counted, early, reduce_then_broadcast]


def _inputs(scale=1.0):
    return RNG.standard_normal(3) * scale + 0.4, RNG.standard_normal(3) * 0.5 + 0.8


def _directional(fn, args, tangents):
    ahead = fn(*[a + EPS * t for a, t in zip(args, tangents)])
    behind = fn(*[a - EPS * t for a, t in zip(args, tangents)])
    return (np.asarray(ahead) - np.asarray(behind)) / (2 * EPS)


def _jacobian(fn, args, position):
    x = np.asarray(args[position], np.float64)
    columns = []
    for idx in np.ndindex(x.shape):
        t = [np.zeros_like(a) for a in args]
        t[position][idx] = 1.0
        columns.append(_directional(fn, args, t))
    stacked = np.stack(columns, axis=-1)
    return stacked.reshape(stacked.shape[:-1] + x.shape)


@pytest.mark.parametrize("fn", PROGRAMS, ids=lambda f: f.__name__)
@pytest.mark.parametrize("scale", [0.3, 2.0])
def test_jvp_through_control_flow(fn, scale):
    x, y = _inputs(scale)
    tx, ty = RNG.standard_normal(3), RNG.standard_normal(3)
    out, tangent = ops.jvp(fn, (x, y), (tx, ty))
    numeric.close(out, fn(x, y), rtol=1e-12, atol=1e-12)
    numeric.close(tangent, _directional(fn, (x, y), (tx, ty)), rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("fn", PROGRAMS, ids=lambda f: f.__name__)
@pytest.mark.parametrize("transform", [ops.jacrev, ops.jacfwd], ids=["jacrev", "jacfwd"])
def test_jacobians_of_both_positions(fn, transform):
    x, y = _inputs(1.0)
    jx, jy = transform(fn, grad_position=(0, 1))(x, y)
    numeric.close(jx, _jacobian(fn, (x, y), 0), rtol=1e-5, atol=1e-6)
    numeric.close(jy, _jacobian(fn, (x, y), 1), rtol=1e-5, atol=1e-6)
    numeric.close(transform(fn)(x, y), jx, rtol=1e-12, atol=1e-12)


def scalar_loss(x):
    y = x
    for _ in range(2):
        if y.sum() > 0:
            y = ops.tanh(y) * x
        else:
            y = ops.sin(y) + x * x
    return (y * y).sum()


@pytest.mark.parametrize("outer,inner", [(ops.jacfwd, ops.jacrev), (ops.jacrev, ops.jacrev),
                                         (ops.jacfwd, ops.jacfwd)])
def test_hessian_by_nested_jacobians(outer, inner):
    x = RNG.standard_normal(4) * 0.5 + 0.3
    hessian = outer(inner(scalar_loss))(x)
    assert hessian.shape == (4, 4)
    want = _jacobian(amber.grad(scalar_loss), (x,), 0)
    numeric.close(hessian, want, rtol=1e-5, atol=1e-6)
    numeric.close(hessian, hessian.T, rtol=1e-9, atol=1e-9)


def test_jacobian_shapes_follow_mindspore():
    def fn(a, b):
        return (a.reshape(2, 3) * b.sum()).T
    a, b = RNG.standard_normal(6), RNG.standard_normal((2, 2))
    ja, jb = ops.jacrev(fn, (0, 1))(a, b)
    assert ja.shape == (3, 2, 6) and jb.shape == (3, 2, 2, 2)
    fa, fb = ops.jacfwd(fn, (0, 1))(a, b)
    numeric.close(fa, ja, rtol=1e-12, atol=1e-12)
    numeric.close(fb, jb, rtol=1e-12, atol=1e-12)


def with_aux(x):
    y = ops.tanh(x)
    return y * x, y.sum()


def test_has_aux():
    x = RNG.standard_normal(3)
    jac, aux = ops.jacrev(with_aux, has_aux=True)(x)
    numeric.close(jac, _jacobian(lambda x: with_aux(x)[0], (x,), 0), rtol=1e-5, atol=1e-6)
    numeric.close(aux, (with_aux(x)[1],), rtol=1e-12, atol=1e-12)
    out, tangent, aux = ops.jvp(with_aux, x, np.ones(3), has_aux=True)
    numeric.close(tangent, jac.sum(axis=1), rtol=1e-9, atol=1e-9)
    numeric.close(out, with_aux(x)[0], rtol=1e-12, atol=1e-12)


class Net(nn.Cell):
    def __init__(self):
        super().__init__()
        self.dense = nn.Dense(3, 2)

    def construct(self, x):
        h = self.dense(x)
        if h.sum() > 0:
            h = ops.tanh(h)
        return h * 2.0


def test_cells_with_parameters():
    # NOTE: its own seeds: float32 finite differences are coarse, so the inputs are fixed
    # rather than drawn after however many other tests ran in this worker
    amber.set_seed(0)
    net = Net()
    x = np.random.default_rng(2).standard_normal((1, 3)).astype(np.float32)
    jac = ops.jacrev(net)(x)
    want = _jacobian(lambda x: net.construct(x.astype(np.float32)), (x.astype(np.float64),), 0)
    numeric.close(jac, want, rtol=2e-2, atol=2e-3)
    assert jac.dtype == np.float32 and jac.shape == (1, 2, 1, 3)
    out, tangent = ops.jvp(net, x, np.ones_like(x))
    numeric.close(tangent, jac.sum(axis=(2, 3)), rtol=1e-5, atol=1e-5)


def test_vjp_and_linearize():
    x, y = _inputs()
    v = RNG.standard_normal(3)
    out, vjp_fn = ops.vjp(looping, x, y)
    numeric.close(out, looping(x, y), rtol=1e-12, atol=1e-12)
    gx, gy = vjp_fn(v)
    numeric.close(gx, v @ _jacobian(looping, (x, y), 0), rtol=1e-5, atol=1e-6)
    numeric.close(gy, v @ _jacobian(looping, (x, y), 1), rtol=1e-5, atol=1e-6)
    out, jvp_fn = ops.linearize(looping, (x, y))
    numeric.close(jvp_fn(v, v), _directional(looping, (x, y), (v, v)), rtol=1e-5, atol=1e-6)


def test_derivative_orders():
    x = RNG.standard_normal(4)
    out, series = ops.derivative(ops.sin, x, 3)
    numeric.close(out, np.sin(x), rtol=1e-12, atol=1e-12)
    numeric.close(series, -np.cos(x), rtol=1e-9, atol=1e-9)
    _, second = ops.derivative(lambda x: ops.exp(2.0 * x) * x, x, 2)
    numeric.close(second, (4 * x + 4) * np.exp(2 * x), rtol=1e-9, atol=1e-9)


def test_inside_compiled_code_and_under_grad():
    v = RNG.standard_normal(3)

    def directional(x, y):
        _, t = ops.jvp(looping, (x, y), (v, v))
        return (t * t).sum()

    def jacobian_norm(x, y):
        return (ops.jacrev(branchy)(x, y) ** 2).sum()

    x, y = _inputs()
    numeric.close(amber.jit(directional)(x, y), directional(x, y), rtol=1e-9, atol=1e-9)
    numeric.close(amber.jit(jacobian_norm)(x, y), jacobian_norm(x, y), rtol=1e-9, atol=1e-9)
    numeric.close(amber.grad(jacobian_norm)(x, y), _jacobian(jacobian_norm, (x, y), 0),
                  rtol=1e-4, atol=1e-6)
    numeric.close(amber.grad(directional, 1)(x, y), _jacobian(directional, (x, y), 1),
                  rtol=1e-4, atol=1e-6)


def test_symbolic_sizes():
    jac = ops.jacrev(counted)
    for n in (3, 4, 5, 6):
        x, y = RNG.standard_normal(n) * 0.3, RNG.standard_normal(n)
        numeric.close(jac(x, y), _jacobian(counted, (x, y), 0), rtol=1e-5, atol=1e-6)
    assert jac.stats.specializations == 2  # NOTE: the first size, then one for every size


def test_compiled_once_and_readable():
    jac = ops.jacrev(branchy)
    x, y = _inputs()
    jac(x, y)
    jac(x + 1.0, y)
    assert jac.stats.specializations == 1
    code = jac.code
    # NOTE: the forward once, and every basis vector at once (no loop over them)
    assert "for i in range(3)" not in code and code.count("np.sin(") <= 2, code


def test_generated_code_names_only_the_users_lines():
    """The comments of a transform's code name the user's file: a line of amber's own call
    wrapper (`return function(*args)`) shows as the wrapped function's `def`."""
    def squares(v):
        return (v * v).sum()

    def wave(v):
        return ops.sin(v) * v

    x = np.array([0.3, -0.5, 0.8])
    made = [ops.vmap(branchy, in_axes=(0, None)), ops.jacfwd(amber.grad(squares)),
            ops.jacfwd(ops.jacrev(wave))]
    args = [(np.ones((2, 3)), x), (x,), (x,)]
    for fn, a in zip(made, args):
        fn(*a)
        comments = [line.strip() for line in fn.code.splitlines() if line.strip().startswith("#")]
        assert comments and all("test_transforms.py:" in c for c in comments), fn.code


def test_refusals_name_the_users_line():
    def two_outputs(x):
        return x * 2.0

    with pytest.raises(amber.CompileError, match="has_aux=True"):
        ops.jacrev(two_outputs, has_aux=True)(np.ones(3))

    def listed(x):
        return (x, x * 2.0)

    with pytest.raises(amber.CompileError, match="one floating-point array") as err:
        ops.jacfwd(listed)(np.ones(3))
    assert "test_transforms.py" in str(err.value)
    with pytest.raises(TypeError, match="grad_position"):
        ops.jacrev(listed, grad_position=1.5)
    with pytest.raises(amber.CompileError, match="weights=.*inside compiled code"):
        amber.jit(lambda x: ops.vjp(two_outputs, x, weights=[])[0])(np.ones(3))

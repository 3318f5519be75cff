"""ops.vmap against a Python loop over the examples: examples that take different branches and
trip counts (if, while with a data-dependent stop, early return), in_axes/out_axes as ints, None
and nested tuples, Cells with shared Parameters, vmap(grad) as per-example gradients, vmap
inside compiled code and under grad, symbolic batch sizes, refused effects."""
from __future__ import annotations

import numpy as np
import pytest

import amber
import numeric
from amber import nn, ops

RNG = np.random.default_rng(11)


def steps(x, y):
    s = x * y
    i = 0
    while s.sum() < 6.0 and i < 12:
        if s.mean() > 1.0:
            s = s * 1.5 + ops.sin(x)
        else:
            s = s + 0.7
        i += 1
    return s * y, i


def early(x):
    if x.sum() > 0:
        return ops.exp(x)
    for _ in range(2):
        x = x * x + 0.1
    return x


def _loop(fn, *args, axes=None):
    axes = axes or [0] * len(args)
    n = next(np.shape(a)[ax] for a, ax in zip(args, axes) if ax is not None)
    outs = [fn(*[a if ax is None else np.take(a, i, axis=ax) for a, ax in zip(args, axes)])
            for i in range(n)]
    if isinstance(outs[0], tuple):
        return tuple(np.stack([o[k] for o in outs]) for k in range(len(outs[0])))
    return np.stack(outs)


def test_branches_and_trip_counts_differ_per_example():
    x, y = RNG.standard_normal((6, 3)), RNG.random((6, 3)) * 2
    got = ops.vmap(steps)(x, y)
    want = _loop(steps, x, y)
    assert len(set(want[1].tolist())) > 1  # NOTE: the examples really take different trips
    numeric.close(got, want, rtol=1e-12, atol=1e-12)
    numeric.close(ops.vmap(early)(x), _loop(early, x), rtol=1e-12, atol=1e-12)


def test_in_axes_and_out_axes():
    x, y = RNG.standard_normal((3, 5)), RNG.random(3)
    out, trips = ops.vmap(steps, in_axes=(1, None), out_axes=(1, 0))(x, y)
    want, want_trips = _loop(steps, x, y, axes=[1, None])
    numeric.close(out, want.T, rtol=1e-12, atol=1e-12)
    numeric.close(trips, want_trips, rtol=0, atol=0)

    def pair(p, scale):
        a, b = p
        return a * scale + b.sum()
    a, b = RNG.standard_normal((4, 2)), RNG.standard_normal((2, 4))
    got = ops.vmap(pair, in_axes=((0, 1), None))((a, b), np.array(3.0))
    want = np.stack([a[i] * 3.0 + b[:, i].sum() for i in range(4)])
    numeric.close(got, want, rtol=1e-12, atol=1e-12)


class Gate(nn.Cell):
    def __init__(self):
        super().__init__()
        self.dense = nn.Dense(3, 2)

    def construct(self, x):
        h = self.dense(x)
        while np.abs(h).max() > 1.0:
            h = h * 0.5
        return h


def test_cells_share_their_parameters():
    net = Gate()
    x = (RNG.standard_normal((5, 3)) * 4).astype(np.float32)
    numeric.close(ops.vmap(net)(x), _loop(net.construct, x), rtol=1e-6, atol=1e-6)


def loss(w, x):
    h = ops.tanh(x @ w)
    if h.sum() > 0:
        h = h * 2.0
    return (h * h).sum()


def test_vmap_of_grad_gives_per_example_gradients():
    w, x = RNG.standard_normal((3, 2)), RNG.standard_normal((6, 3))
    got = ops.vmap(amber.grad(loss), in_axes=(None, 0))(w, x)
    for i in range(6):
        numeric.close(got[i], numeric.gradient(loss, (w, x[i]), 0), rtol=1e-5, atol=1e-6)


def test_inside_compiled_code_and_under_grad():
    def total(w, x):
        return ops.vmap(loss, in_axes=(None, 0))(w, x).sum()
    w, x = RNG.standard_normal((3, 2)), RNG.standard_normal((4, 3))
    numeric.close(amber.jit(total)(w, x), total(w, x), rtol=1e-12, atol=1e-12)
    numeric.close(amber.grad(total)(w, x), numeric.gradient(total, (w, x), 0),
                  rtol=1e-5, atol=1e-6)


def test_symbolic_batch_sizes():
    batched = ops.vmap(early)
    for n in (2, 3, 5, 7):
        x = RNG.standard_normal((n, 3))
        numeric.close(batched(x), _loop(early, x), rtol=1e-12, atol=1e-12)
    assert batched.stats.specializations == 2


def test_effects_outside_one_example_are_refused():
    def noisy(x):
        print(x)
        return x * 2.0

    with pytest.raises(amber.CompileError, match="effect outside one example") as err:
        ops.vmap(noisy)(np.ones((2, 3)))
    assert "print(x)" in str(err.value)
    with pytest.raises(amber.CompileError, match="different batch sizes"):
        ops.vmap(lambda a, b: a + b)(np.ones((2, 3)), np.ones((3, 3)))
    with pytest.raises(TypeError, match="axes"):
        ops.vmap(early, in_axes="0")


def grow(x):
    while x.sum() < 6.0:
        if x.mean() > 1.0:
            x = x * 1.5 + ops.sin(x)
        else:
            x = x + 0.7
    return x


def test_batched_without_a_loop_over_examples():
    """A per-example while and if run on the whole batch (masked while, select); so do
    per-example gradients of a Cell with its Parameters shared, and a Hessian's basis."""
    x = RNG.standard_normal((6, 3))
    batched = ops.vmap(grow)
    numeric.close(batched(x), _loop(grow, x), rtol=1e-12, atol=1e-12)
    assert "while" in batched.code and "for " not in batched.code, batched.code
    net = nn.Dense(3, 2)
    per_example = ops.vmap(amber.grad(lambda x: (net(x) ** 2).sum(), None,
                                      net.trainable_params()))
    got = per_example(x.astype(np.float32))
    one = amber.grad(lambda x: (net(x) ** 2).sum(), None, net.trainable_params())
    for i in range(6):
        for g, w in zip(got, one(x[i].astype(np.float32))):
            numeric.close(g[i], w, rtol=1e-5, atol=1e-6)
    assert "for " not in per_example.code, per_example.code
    hessian = ops.jacfwd(ops.jacrev(lambda v: (ops.tanh(v) * v).sum()))
    v = RNG.standard_normal(4)
    t = np.tanh(v)
    want = np.diag(2 * (1 - t * t) - 2 * v * t * (1 - t * t))
    numeric.close(hessian(v), want, rtol=1e-9, atol=1e-9)
    assert "for " not in hessian.code, hessian.code


def test_loops_it_cannot_batch_stay_exact():
    """A while inside a per-example if's arm would run for examples that never reach it (and
    never end for them): vmap keeps the loop over examples; likewise a per-example counter."""
    def doubled_if_positive(x):
        if x.sum() > 0:
            while x.sum() < 10:
                x = x * 2
        return x
    x = np.array([[1.0, 1.0], [-1.0, -2.0]])
    batched = ops.vmap(doubled_if_positive)
    numeric.close(batched(x), _loop(doubled_if_positive, x), rtol=0, atol=0)
    assert "for i in range(" in batched.code
    out = ops.vmap(lambda x, w: w, in_axes=(0, None))(x, np.ones(2))
    out[0, 0] = 5.0  # NOTE: an unbatched output is a fresh array, not a read-only view

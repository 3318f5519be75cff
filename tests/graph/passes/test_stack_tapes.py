"""stack_tapes: loop tapes as preallocated stacks. Gradients of RNN-like loops (For, While with
and without a bound, early exits, zero trips, symbolic sizes, nesting, a While past its first
capacity) against float64 finite differences, and the generated code's stacks."""
from __future__ import annotations

import re
import warnings

import numpy as np
import pytest

import amber
from amber.graph.passes.stack_tapes import FIRST_CAPACITY, LARGEST_PLANNED

from central_differences import finite_difference


def _args(steps, rows=3, seed=None):
    rng = np.random.default_rng(steps if seed is None else seed)
    return (rng.standard_normal((steps, rows, 4)) * 0.5,
            rng.standard_normal((4, 5)) * 0.5,
            rng.standard_normal((5, 5)) * 0.5)


def _check(fn, args, positions=(1, 2)):
    """The compiled gradient equals finite differences of the eager function; its code."""
    grad = amber.grad(fn, positions)
    got = grad(*args)
    for position, g in zip(positions, got if len(positions) > 1 else (got,)):
        want = finite_difference(fn, args, position)
        np.testing.assert_allclose(g, want, rtol=1e-6, atol=1e-8)
    return grad.code


def _for_rnn(x, w, u):
    h = np.zeros((x.shape[1], u.shape[0]))
    for t in range(x.shape[0]):
        h = np.tanh(x[t] @ w + h @ u)
    return (h * h).sum()


def _while_bounded(x, w, u):
    """A While whose condition bounds it (t < steps), stopping early past a norm."""
    h = np.zeros((x.shape[1], u.shape[0]))
    t = 0
    while t < x.shape[0]:
        h = np.tanh(x[t] @ w + h @ u)
        t = t + 1
        if (h * h).sum() > 4.0:
            break
    return (h * h).sum()


def _while_unbounded(x, w, u, limit):
    """A While bounded only by a run-time value: the compiler cannot size its stack, which
    grows by doubling."""
    h = np.zeros((x.shape[1], u.shape[0]))
    t = 0
    while t < limit:
        h = np.tanh(x[t % x.shape[0]] @ w + h @ u)
        t = t + 1
    return (h * h).sum()


def test_a_for_loop_fills_one_stack_of_states_written_by_their_producer():
    code = _check(_for_rnn, _args(6))
    assert ".append(" not in code and "concatenate" not in code, code
    assert re.search(r"out=h_stack\[", code), code  # NOTE: the tanh computes into its row
    assert re.search(r"h_stack\[0:", code) and "g_stack" in code, code


@pytest.mark.parametrize("steps", [0, 1, 6])
def test_a_bounded_while_with_a_break_has_a_fixed_stack(steps):
    args = _args(steps)
    code = _check(_while_bounded, args)
    if steps:  # NOTE: with no step at all the loop folds away
        assert "h_stack = np.empty((" in code and "reserve_rows" not in code, code


@pytest.mark.parametrize("limit", [0, 2 * FIRST_CAPACITY + 3])
def test_a_while_past_its_first_capacity_grows_its_stack(limit):
    code = _check(_while_unbounded, (*_args(3), np.array(float(limit))))
    assert "reserve_rows(" in code, code


def test_symbolic_sizes_give_a_stack_of_symbolic_rows():
    grad = amber.grad(_for_rnn, (1, 2))
    for rows in (3, 5):
        args = _args(4, rows)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)  # NOTE: compiling once more
            got = grad(*args)
        for position, g in zip((1, 2), got):
            np.testing.assert_allclose(g, finite_difference(_for_rnn, args, position),
                                       rtol=1e-6, atol=1e-8)
    assert re.search(r"np\.empty\(\(\w+, \w+, 5\)", grad.code), grad.code


def _while_huge_bound(x, w, u):
    """Bounded far above what it runs: it breaks after the sequence's rows."""
    h = np.zeros((x.shape[1], u.shape[0]))
    t = 0
    while t < 10 * LARGEST_PLANNED:
        h = np.tanh(x[t] @ w + h @ u)
        t = t + 1
        if t >= x.shape[0]:
            break
    return (h * h).sum()


def test_a_bound_far_above_the_trips_grows_the_stack_instead():
    code = _check(_while_huge_bound, _args(4))
    assert "reserve_rows(" in code and str(10 * LARGEST_PLANNED) not in code.split("while")[0]


def _early_return(x, w, u):
    h = np.zeros((x.shape[1], u.shape[0]))
    for t in range(x.shape[0]):
        h = np.tanh(x[t] @ w + h @ u)
        if (h * h).sum() > 2.0:
            return (h * h).sum() * 2.0
    return (h * h).sum()


def _nested(x, w, u):
    h = np.zeros((x.shape[1], u.shape[0]))
    for t in range(x.shape[0]):
        k = 0
        while k < 2:
            h = np.tanh(x[t] @ w + h @ u)
            k = k + 1
    return (h * h).sum()


@pytest.mark.parametrize("fn", [_early_return, _nested])
def test_early_returns_and_nested_loops_differentiate_exactly(fn):
    _check(fn, _args(5, seed=3))


def test_a_users_list_is_never_a_stack():
    def f(x, w, u):
        h = np.zeros((x.shape[1], u.shape[0]))
        states = []
        for t in range(x.shape[0]):
            h = np.tanh(x[t] @ w + h @ u)
            states.append(h)
        total = h * 0.0
        for s in states:
            total = total + s * s
        return total.sum()

    code = _check(f, _args(4))
    assert "states.append(" in code or "states = [" in code, code


@pytest.mark.parametrize("name, shapes, attrs", [
    ("matmul", ((3, 4), (4, 5)), {}),
    ("matmul", ((4, 3), (5, 4)), {"transpose_a": True, "transpose_b": True}),
    ("dense", ((3, 4), (5, 4)), {"has_bias": False})])
def test_into_forms_write_the_kernel_result_into_a_fresh_buffer(name, shapes, attrs):
    """`OpDef.into`: what a row-producing matmul or dense spells (`out=stack[row]`)."""
    from amber.ops import registry
    op = registry.OPS[name]
    rng = np.random.default_rng(0)
    inputs = [rng.standard_normal(s) for s in shapes]
    full = op.full_attrs(attrs)
    want = op.kernel(*inputs, **full)
    out = np.empty_like(want)
    names = dict(zip(op.inputs, inputs))
    got = eval(op.into_template(full), {"np": np, **names, "out": out})
    assert got is out and np.array_equal(out, want)
    assert registry.OPS["dense"].into_template({"has_bias": True}) is None


def test_a_chain_of_in_place_ops_runs_in_its_row():
    """The matmul starting `tanh(h @ u + x[t] @ w)` computes into the row; the add and tanh
    follow in place there (the hand-written code's form)."""
    code = _check(_for_rnn, _args(5))
    assert re.search(r"= np\.matmul\(h, u, out=h_stack\[row\]\)", code), code

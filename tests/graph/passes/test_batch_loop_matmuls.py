"""Loop batching (graph/passes/batch_loop_matmuls.py): IR text in and out for the row rule;
compiled against eager (and float64 finite differences for gradients) for both rules, with the
cases where the pass must not fire or must guard an empty loop."""
from __future__ import annotations

import re

import numpy as np
import pytest

import amber
from amber.graph import Rewriter
from amber.graph.passes import PASSES

from central_differences import finite_difference


def _batch_then_dce(graph, rw: Rewriter) -> bool:
    changed = PASSES["batch_loop_matmuls"](graph, rw)
    PASSES["dce"](graph, rw)
    return changed


def test_row_matmul_and_bias_leave_the_loop(check_pass):
    check_pass(_batch_then_dce, """
        graph @f(%x: f32[5,2,3], %w: f32[3,4], %b: f32[4], %h: f32[2,4]) {
          %0 = constant(value=0) : int
          %1 = constant(value=5) : int
          %2 = constant(value=1) : int
          %a = for %0, %1, %2, %h : f32[2,4] {
            body(%i: int, %h_1: f32[2,4]) {
              %r = getitem(%x, %i, index=($0,)) : f32[2,3]
              %p = matmul(%r, %w) : f32[2,4]
              %q = add(%p, %b) : f32[2,4]
              %s = add(%q, %h_1) : f32[2,4]
              %t = tanh(%s) : f32[2,4]
              yield %t
            }
          }
          return %a
        }
    """, """
        graph @f(%x: f32[5,2,3], %w: f32[3,4], %b: f32[4], %h: f32[2,4]) {
          %0 = constant(value=0) : int
          %1 = constant(value=5) : int
          %2 = constant(value=1) : int
          %x_rows = matmul(%x, %w) : f32[5,2,4]
          %x_rows_1 = add(%x_rows, %b) : f32[5,2,4]
          %a = for %0, %1, %2, %h : f32[2,4] {
            body(%i: int, %h_1: f32[2,4]) {
              %q = getitem(%x_rows_1, %i, index=($0,)) : f32[2,4]
              %s = add(%q, %h_1) : f32[2,4]
              %t = tanh(%s) : f32[2,4]
              yield %t
            }
          }
          return %a
        }
    """)


def _rnn(x, w, u, b, limit):
    """A while loop over x's rows with an early stop."""
    h = np.zeros((x.shape[1], u.shape[0]), x.dtype)
    t = 0
    while t < x.shape[0]:
        h = np.tanh(x[t] @ w + b + h @ u)
        t = t + 1
        if (h * h).sum() > limit:
            break
    return h, t


def _rnn_args(steps, limit=1e9, rows=3, dtype=np.float64):
    rng = np.random.default_rng(steps)
    return (rng.standard_normal((steps, rows, 4)).astype(dtype),
            rng.standard_normal((4, 5)).astype(dtype) * 0.5,
            rng.standard_normal((5, 5)).astype(dtype) * 0.5,
            rng.standard_normal(5).astype(dtype), limit)


@pytest.mark.parametrize("steps, limit", [(6, 1e9), (6, 2.0), (0, 1e9), (1, 1e9)])
def test_while_rows_equal_eager(steps, limit):
    """All steps, an early break (rows after it computed, unread), no step, one step."""
    fast = amber.jit(_rnn)
    args = _rnn_args(steps, limit)
    (h, t), (want_h, want_t) = fast(*args), _rnn(*args)
    assert t == want_t
    np.testing.assert_allclose(h, want_h, rtol=1e-12, atol=1e-12)
    if steps:
        code = _statements(fast.code)
        assert "x_rows = x @ w" in code[:code.index("while ")], code  # one GEMM before the loop
        assert "x[t] @" not in code


def test_not_a_counter_or_a_written_array_stays_per_step():
    def by_index(x, w, order):
        total = np.zeros((x.shape[1], w.shape[1]))
        for k in range(order.shape[0]):
            total = total + x[order[k]] @ w  # NOTE: an index read from an array, not the counter
        return total

    def writes_ahead(x, w):
        for t in range(x.shape[0] - 1):
            x[t + 1] = np.tanh(x[t] @ w)  # NOTE: row t + 1 changes before the loop reads it
        return x

    def wider_operand(x, b):
        total = np.zeros(b.shape)
        for t in range(x.shape[0]):
            total = total + (x[t] + b)  # NOTE: b [2, 3] is above the row's rank (x[t] is [3])
        return total

    rng = np.random.default_rng(1)
    x, w = rng.standard_normal((4, 2, 3)), rng.standard_normal((3, 3))
    order = np.array([3, 0, 0])
    fast = amber.jit(wider_operand)
    np.testing.assert_allclose(fast(x[:, 0], w[:2]), wider_operand(x[:, 0], w[:2]), rtol=1e-12)
    assert "_rows" not in fast.code
    fast = amber.jit(by_index)
    np.testing.assert_allclose(fast(x, w, order), by_index(x, w, order), rtol=1e-12)
    assert "_rows" not in fast.code
    fast = amber.jit(writes_ahead)
    np.testing.assert_allclose(fast(x.copy(), w), writes_ahead(x.copy(), w), rtol=1e-12)
    assert "_rows" not in fast.code


def _statements(code: str) -> str:
    """The generated code without its comments (which quote the user's lines)."""
    return "\n".join(line for line in code.splitlines() if not line.lstrip().startswith("#"))


def _loss(x, w, u, b, limit):
    h, _ = _rnn(x, w, u, b, limit)
    return (h * h).mean()


@pytest.mark.parametrize("steps, limit", [(5, 1e9), (5, 1.5), (0, 1e9)])
def test_weight_gradients_are_one_gemm_after_the_loop(steps, limit):
    """dW += g[t].T @ x[t] and db += sum(g[t]) become one GEMM and one sum over the steps;
    a loop of no step keeps the zeros."""
    grad = amber.grad(_loss, (1, 2, 3))
    args = _rnn_args(steps, limit)
    got = grad(*args)
    for position, g in zip((1, 2, 3), got):
        np.testing.assert_allclose(g, finite_difference(_loss, args, position),
                                   rtol=1e-6, atol=1e-8)
    if steps:
        code = _statements(grad.code)
        steps_part, after = code[code.index("for k in range("):].split("\n    if ", 1)
        assert not any(f"d{w} = " in steps_part or f"d{w} += " in steps_part for w in "wub")
        for w in ("dw", "du", "db"):
            assert f"{w} = {w} + " in after, code  # one term after the loop
        assert re.search(r"dw = dw \+ np\.swapaxes\(\w+_all, -1, -2\) @ \w+_all", after), code


def test_float32_rnn_gradient_within_tolerance():
    """Float32: the batched GEMM sums in another order; results agree to float32 rounding."""
    args = _rnn_args(20, rows=8, dtype=np.float32)
    got = amber.grad(_loss, (1, 2))(*args)
    amber.set_context(jit_enabled=True, opt_level=1)  # NOTE: -O1 runs no loop batching
    try:
        want = amber.grad(_loss, (1, 2))(*args)
    finally:
        amber.set_context(opt_level=2)
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, w, rtol=1e-5, atol=1e-6)


DUMPED = '''
import numpy as np


def scan(x, w, u):
    h = np.zeros((x.shape[1], u.shape[0]), x.dtype)
    for t in range(x.shape[0]):
        h = np.tanh(x[t] @ w + h @ u)
    return h
'''


def test_dump_shows_the_pass(tmp_path, capsys):
    from amber import cli
    path = tmp_path / "scan.py"
    path.write_text(DUMPED)
    code = cli.main(["dump", f"{path}:scan", "--stage", "all", "--input", "6x2x3",
                     "--input", "3x4", "--input", "4x4"])
    out = capsys.readouterr().out
    assert code == 0
    section = out[out.index("# ===== after pass batch_loop_matmuls"):]
    section = section[:section.index("# ===== ", 8)]
    assert "%x_rows = matmul(%x, %w)" in section, section


def test_an_operand_written_after_its_step_keeps_the_step_by_step_sum():
    def f(x, w):
        acc = np.zeros((w.shape[1], w.shape[1]))
        for t in range(x.shape[0]):
            a = x[t] @ w
            acc = acc + a.T @ a
            a[0] = 0.0  # NOTE: the step's operand changes after the product read it
        return acc

    rng = np.random.default_rng(2)
    x, w = rng.standard_normal((5, 3, 4)), rng.standard_normal((4, 2))
    fast = amber.jit(f)
    np.testing.assert_allclose(fast(x, w), f(x, w), rtol=1e-12)
    assert "_steps" not in fast.code and "_rows" not in fast.code


def test_weights_written_inside_the_loop_stay_per_step_and_after_it_do_not_matter():
    def inside(x, w):
        v = w  # NOTE: an alias: the loop writes w's memory through it
        out = np.zeros((x.shape[1], w.shape[1]))
        for t in range(x.shape[0]):
            out = out + x[t] @ w
            v[0, 0] = v[0, 0] + 1.0
        return out

    def after(x, w):
        out = np.zeros((x.shape[1], w.shape[1]))
        for t in range(x.shape[0]):
            out = np.tanh(out + x[t] @ w)
        w[0, 0] = 5.0
        return out

    rng = np.random.default_rng(3)
    x, w = rng.standard_normal((4, 2, 3)), rng.standard_normal((3, 3))
    for fn, batched in ((inside, False), (after, True)):
        fast = amber.jit(fn)
        np.testing.assert_allclose(fast(x, w.copy()), fn(x, w.copy()), rtol=1e-12)
        assert ("x_rows" in _statements(fast.code)) is batched, fast.code


def _scan_from(x, w, u, first):
    """A For loop over x's rows from row `first` on."""
    h = np.zeros((x.shape[1], u.shape[0]), x.dtype)
    for t in range(first, x.shape[0]):
        h = np.tanh(x[t] @ w + h @ u)
    return (h * h).mean()


def _while_from(x, w, u, first):
    """A While loop over x's rows from row `first` on, stopping early."""
    h = np.zeros((x.shape[1], u.shape[0]), x.dtype)
    t = first
    while t < x.shape[0]:
        h = np.tanh(x[t] @ w + h @ u)
        t = t + 1
        if (h * h).sum() > 2.0:
            break
    return (h * h).mean()


@pytest.mark.parametrize("fn", [_scan_from, _while_from])
@pytest.mark.parametrize("first", [0, 2])
def test_recorded_rows_are_read_in_place_of_their_tape(fn, first):
    """dW = sum g[t].T @ x[t] over the rows the forward read: x[first:first + trips] itself,
    reshaped, with the step lists reversed to forward order (or their stack filled backwards,
    graph/passes/stack_tapes.py); the forward records no tape of them."""
    args = _rnn_args(6)[:3]
    grad = amber.grad(fn, (1, 2))
    got = grad(*args, first)
    for position, g in zip((1, 2), got):
        want = finite_difference(lambda *a: fn(*a, first), args, position)
        np.testing.assert_allclose(g, want, rtol=1e-6, atol=1e-8)
    code = _statements(grad.code)
    assert re.search(rf"x\[{first}:", code) and "x_tape" not in code, code
    assert "[::-1]" in code or re.search(r"g_stack\[0:", code), code


def test_rows_of_an_array_written_later_come_from_the_tape():
    """The forward's rows are views of x; x written after the loop: the tape's views see the
    write as eager's do, and the rows are not re-read from x."""
    def f(x, w, u):
        x = x * 1.0
        h = np.zeros((x.shape[1], u.shape[0]), x.dtype)
        for t in range(x.shape[0]):
            h = np.tanh(x[t] @ w + h @ u)
        x[0] = 0.0
        return (h * h).mean()

    args = _rnn_args(4)[:3]
    grad = amber.grad(f, (1, 2))
    for position, g in zip((1, 2), grad(*args)):
        amber.set_context(jit_enabled=False)
        try:
            want = amber.grad(f, (1, 2))(*args)[position - 1]
        finally:
            amber.set_context(jit_enabled=True)
        np.testing.assert_allclose(g, want, rtol=1e-12, atol=1e-14)
    recorded = "_tape.append(" in grad.code or re.search(r"put_row\(\w+_stack", grad.code)
    assert recorded and not re.search(r"x\[0:", grad.code), grad.code


def test_a_users_list_of_rows_changed_between_the_loops_is_read_as_it_is():
    """A list the user fills with rows and then changes: the second loop reads the list, never
    the rows of x again."""
    def f(x, g):
        rows = []
        for t in range(x.shape[0]):
            rows.append(x[t])
        rows[0] = rows[0] * 0.0
        acc = np.zeros((x.shape[2], g.shape[1]))
        for k in range(x.shape[0] - 1, -1, -1):
            acc = acc + rows[k].T @ g
        return acc

    rng = np.random.default_rng(5)
    x, g = rng.standard_normal((4, 3, 2)), rng.standard_normal((3, 5))
    fast = amber.jit(f)
    np.testing.assert_allclose(fast(x, g), f(x, g), rtol=1e-12)
    assert not re.search(r"x\[0:", fast.code), fast.code

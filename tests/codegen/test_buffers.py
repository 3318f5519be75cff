"""Buffers kept across calls (codegen/buffers.py): the large temporaries that never leave a call
are computed into a set of arrays the next call reuses; results, threads, recursion and errors
stay as with fresh arrays."""
from __future__ import annotations

import threading

import numpy as np
import pytest

import amber
from amber import nn
from amber.codegen.buffers import reuses_buffers
from amber.graph import parse_graph


def _mlp_graph(returned: str) -> str:
    return f"""
    graph @f(%x: f32[64,128], %w: f32[128,128]) {{
      %h = matmul(%x, %w) : f32[64,128]
      %r = relu(%h) : f32[64,128]
      %y = mul(%r, %r) : f32[64,128]
      %s = sum(%y, axis=0) : f32[128]
      return {returned}
    }}"""


def test_a_temporary_that_stays_inside_goes_into_a_kept_buffer(compile_graph) -> None:
    fn, code = compile_graph(parse_graph(_mlp_graph("%s")))
    assert "h = np.matmul(x, w, out=buffers.h)" in code.source
    assert "@reuses_buffers(Buffers)" in code.source
    rng = np.random.default_rng(0)
    w = rng.standard_normal((128, 128), np.float32)
    xs = [rng.standard_normal((64, 128), np.float32) for _ in range(3)]
    first = fn(xs[0], w)
    kept = first.copy()
    for x in xs:  # NOTE: changing inputs: each call overwrites the buffers
        r = np.maximum(x @ w, 0)
        np.testing.assert_allclose(fn(x, w), (r * r).sum(axis=0), rtol=1e-5)
    np.testing.assert_array_equal(first, kept)  # a result of call 1 is not call 3's buffer


@pytest.mark.parametrize("returned", ["%h", "%s, %r", "%y"])
def test_a_temporary_that_leaves_the_call_is_fresh(compile_graph, returned) -> None:
    fn, code = compile_graph(parse_graph(_mlp_graph(returned)))
    for name in returned.replace("%", "").split(", "):
        assert f"out=buffers.{name})" not in code.source
    rng = np.random.default_rng(1)
    w = rng.standard_normal((128, 128), np.float32)
    x1, x2 = (rng.standard_normal((64, 128), np.float32) for _ in range(2))
    first = fn(x1, w)
    kept = [np.array(a) for a in (first if isinstance(first, tuple) else (first,))]
    fn(x2, w)
    for a, k in zip(first if isinstance(first, tuple) else (first,), kept):
        np.testing.assert_array_equal(a, k)


def test_returned_or_viewed_values_are_not_kept(compile_graph) -> None:
    graph = parse_graph("""
    graph @f(%x: f32[64,128], %w: f32[128,128]) {
      %h = matmul(%x, %w) : f32[64,128]
      %v = transpose(%h, perm=(1, 0)) : f32[128,64]
      %g = matmul(%x, %w) : f32[64,128]
      return %v, %g
    }""")
    _, code = compile_graph(graph)
    assert "buffers" not in code.source


class _MLP(nn.Cell):
    def __init__(self) -> None:
        super().__init__()
        self.fc1 = nn.Dense(96, 128, activation="relu")
        self.fc2 = nn.Dense(128, 10)

    def construct(self, x: np.ndarray) -> np.ndarray:
        return self.fc2(self.fc1(x))


def _steps() -> tuple[nn.Cell, nn.Cell, nn.Cell]:
    nets = []
    for _ in range(2):
        amber.set_seed(3)
        nets.append(_MLP())
    steps = [nn.TrainOneStepCell(nn.WithLossCell(net, nn.SoftmaxCrossEntropyWithLogits(
        sparse=True, reduction="mean")), nn.SGD(net.trainable_params(), 0.05)) for net in nets]
    return nets[0], steps[0], steps[1]


def test_train_step_equals_eager_over_many_calls() -> None:
    net, eager_step, step = _steps()
    fast = amber.jit(step)
    rng = np.random.default_rng(2)
    for _ in range(6):
        x = rng.standard_normal((32, 96)).astype(np.float32)
        y = rng.integers(0, 10, 32).astype(np.int32)
        got = fast(x, y)
        amber.set_context(jit_enabled=False)
        try:
            want = eager_step(x, y)
        finally:
            amber.set_context(jit_enabled=True)
        np.testing.assert_allclose(np.asarray(got), np.asarray(want), rtol=1e-5, atol=1e-6)
    assert "out=buffers." in fast.code
    for mine, theirs in zip(step.trainable_params(), eager_step.trainable_params()):
        np.testing.assert_allclose(np.asarray(mine), np.asarray(theirs), rtol=1e-4, atol=1e-6)


def test_an_error_mid_call_gives_the_buffers_back() -> None:
    def f(x, w, limit):
        h = x @ w
        z = np.tanh(h) * 2.0
        if z.max() > limit:
            raise ValueError("too large")
        return z.sum(axis=0)

    fast = amber.jit(f)
    rng = np.random.default_rng(4)
    w = rng.standard_normal((128, 128)).astype(np.float32)
    x = rng.standard_normal((64, 128)).astype(np.float32)
    # NOTE: the product is turned (graph/passes/orient_products.py): NumPy sums its axis 0,
    # now contiguous, pairwise, and the sums of 64 terms of either sign differ by float rounding
    np.testing.assert_allclose(fast(x, w, 5.0), f(x, w, 5.0), rtol=1e-5, atol=1e-4)
    assert "out=buffers." in fast.code
    with pytest.raises(ValueError, match="too large") as info:
        fast(x, w, 0.5)
    assert any("test_buffers.py" in note for note in getattr(info.value, "__notes__", []))
    for k in range(3):
        x = rng.standard_normal((64, 128)).astype(np.float32)
        np.testing.assert_allclose(fast(x, w, 5.0), f(x, w, 5.0), rtol=1e-5, atol=1e-4)


def test_two_threads_at_once_agree_with_numpy() -> None:
    def f(x, w):
        h = np.tanh(x @ w)
        return (h @ w.T).sum(axis=1)

    fast = amber.jit(f)
    rng = np.random.default_rng(5)
    w = rng.standard_normal((96, 96)).astype(np.float32)
    fast(np.zeros((64, 96), np.float32), w)
    assert "out=buffers." in fast.code
    inputs = [[rng.standard_normal((64, 96)).astype(np.float32) for _ in range(40)]
              for _ in range(2)]
    wrong: list[int] = []

    def run(xs: list[np.ndarray]) -> None:
        for x in xs:
            if not np.allclose(fast(x, w), f(x, w), rtol=1e-4, atol=1e-4):
                wrong.append(1)

    threads = [threading.Thread(target=run, args=(xs,)) for xs in inputs]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not wrong


def test_calls_running_at_once_each_take_their_own_set() -> None:
    made: list[object] = []
    seen: list[int] = []

    def make() -> object:
        made.append(object())
        return made[-1]

    @reuses_buffers(make)
    def recurse(depth, fail, buffers):
        seen.append(id(buffers))
        if depth:
            recurse(depth - 1, fail)
        elif fail:
            raise KeyError("innermost")
        return buffers

    with pytest.raises(KeyError):
        recurse(2, True)  # NOTE: three calls at once: three sets, all given back after the error
    assert len(made) == 3 and len(set(seen)) == 3
    seen.clear()
    recurse(2, False)  # NOTE: the same three sets again, none made
    assert len(made) == 3 and set(seen) == {id(b) for b in made}

    barrier = threading.Barrier(2)

    @reuses_buffers(make)
    def wait(buffers):
        barrier.wait(timeout=10)
        return buffers

    found: list[object] = []
    threads = [threading.Thread(target=lambda: found.append(wait())) for _ in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(found) == 2 and found[0] is not found[1]


def test_a_user_variable_named_buffers_keeps_its_value() -> None:
    def f(buffers, w):
        Buffers = np.tanh(buffers @ w)
        return (Buffers * 2.0).sum(axis=0)

    fast = amber.jit(f)
    rng = np.random.default_rng(6)
    x, w = rng.standard_normal((64, 128)), rng.standard_normal((128, 64))
    np.testing.assert_allclose(fast(x, w), f(x, w), rtol=1e-12)
    assert "out=buffers." in fast.code

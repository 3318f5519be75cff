"""Symbolic sizes at run time: how users ask for them (set_inputs, jit(dynamic=...), automatic),
one compile serving every size, the generated code reading sizes at entry, calls that conflict
with what was declared, and falling back to a compile per shape."""
from __future__ import annotations

import sys
import warnings
from pathlib import Path

import numpy as np
import pytest

import amber
from amber import nn, ops
from amber.tensor import TensorSpec

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "samples"))
from lenet import LeNet5  # noqa: E402
from rnn import EarlyStopRNN  # noqa: E402

F32 = amber.float32


def images(n: int, seed: int = 0) -> np.ndarray:
    return np.random.default_rng(seed).standard_normal((n, 1, 32, 32), dtype=np.float32)


def sequence(n: int, seed: int = 0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    ramp = np.linspace(0.05, 3.0, 24, dtype=np.float32).reshape(24, 1, 1)
    return rng.standard_normal((24, n, 8), dtype=np.float32) * ramp / np.sqrt(n)


def calls(fast, *inputs) -> list:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        for args in inputs:
            fast(*args)
    return [str(w.message) for w in caught]


def test_set_inputs_compiles_lenet_once_for_every_batch_size() -> None:
    amber.set_seed(0)
    net = LeNet5()
    net.set_inputs(amber.Tensor(shape=[None, 1, 32, 32], dtype=F32))
    fast = amber.jit(net)
    for n in (1, 2, 7, 13, 14, 64):
        x = images(n, n)
        # NOTE: equal to float rounding: at several BLAS threads a GEMM's bits depend on its
        # row count, and the compiled code multiplies blocks of images where eager takes all
        np.testing.assert_allclose(fast(x), net.construct(x), rtol=1e-5, atol=1e-9)
    assert fast.stats.specializations == 1
    assert "Input signature: (f32[N,1,32,32])" in fast.code
    body = fast.code[fast.code.index("def LeNet5_construct"):]
    assert "conv2d_gemm(" in body and "max_pool_blocks(" in body  # specialized, batch symbolic
    assert "np.maximum(x, 0, out=x)" in body  # memory planning over [N,...] buffers
    assert [str(v.type) for v in fast.graph.outputs] == ["f32[N,10]"]


def test_a_spec_for_an_axis_of_a_sequence_rnn() -> None:
    amber.set_seed(0)
    net = EarlyStopRNN()
    fast = amber.jit(net, dynamic={"x": 1})
    for n in (1, 3, 64):
        h, t = fast(sequence(n, n))
        want_h, want_t = net.construct(sequence(n, n))
        assert t == want_t
        np.testing.assert_allclose(h, want_h, rtol=1e-6, atol=1e-6)
    assert fast.stats.specializations == 1
    assert "n = x.shape[1]" in fast.code and "np.zeros((n, 16)" in fast.code


def test_automatic_mode_makes_a_changing_axis_symbolic_with_one_more_compile() -> None:
    net = nn.Dense(4, 3)
    fast = amber.jit(net)
    xs = [np.full((n, 4), n, np.float32) for n in (2, 2, 5, 1, 9, 3)]
    messages = calls(fast, *[(x,) for x in xs])
    assert fast.stats.specializations == 2
    became = [m for m in messages if "changed between calls" in m]
    assert len(became) == 1 and "arg 0 axis 0 (2, then 5)" in became[0]
    for x in xs:
        np.testing.assert_allclose(fast(x), net.construct(x), rtol=1e-6)
    assert fast.stats.specializations == 2


def test_dynamic_false_compiles_each_shape() -> None:
    fast = amber.jit(lambda_free_double, dynamic=False)
    for n in (1, 2, 3):
        fast(np.ones((n, 2), np.float32))
    assert fast.stats.specializations == 3


def lambda_free_double(x: np.ndarray) -> np.ndarray:
    return x * 2


def test_dynamic_true_makes_every_batch_symbolic_from_the_first_call() -> None:
    fast = amber.jit(lambda_free_double, dynamic=True)
    out = fast(np.ones((3, 2), np.float32))
    assert "f32[N,2]" in fast.code and out.shape == (3, 2)
    fast(np.ones((7, 2), np.float32))
    assert fast.stats.specializations == 1


def concat_rows(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    return np.concatenate([x, y], axis=1)


def test_declared_symbols_tie_arguments_and_conflicts_are_value_errors() -> None:
    fast = amber.jit(concat_rows, dynamic={"x": {0: "B"}, "y": {0: "B"}})
    x, y = np.ones((3, 2), np.float32), np.zeros((3, 5), np.float32)
    np.testing.assert_array_equal(fast(x, y), concat_rows(x, y))
    assert "f32[B,2], f32[B,5]" in fast.code
    with pytest.raises(ValueError, match=r"arg 1: axis 0 has size 4, but jit\(dynamic=...\) "
                                         r"ties it to arg 0 axis 0 \(both B\), which has size 3"):
        fast(x, np.zeros((4, 5), np.float32))


def test_set_inputs_rejects_other_fixed_sizes_dtypes_and_ranks() -> None:
    net = LeNet5()
    net.set_inputs(amber.Tensor(shape=[None, 1, 32, 32], dtype=F32))
    fast = amber.jit(net)
    with pytest.raises(ValueError, match=r"arg 0: expected shape \[None, 1, 32, 32\] "
                                         r"\(set_inputs\), got \(2, 3, 32, 32\)"):
        fast(np.zeros((2, 3, 32, 32), np.float32))
    with pytest.raises(ValueError, match="expected dtype float32 .set_inputs., got float64"):
        fast(np.zeros((2, 1, 32, 32)))
    with pytest.raises(ValueError, match=r"expected shape \[None, 1, 32, 32\]"):
        fast(np.zeros((1, 32, 32), np.float32))


def test_unrelated_sizes_get_their_own_symbols() -> None:
    """Duck sizing: axes of equal size share a symbol; a call where they differ compiles
    again with two symbols and still computes what eager does (here, an outer sum)."""
    def outer(x, y):
        return x[:, None] + y[None, :]

    fast = amber.jit(outer, dynamic={"x": 0, "y": 0})
    a, b = np.arange(3, dtype=np.float32), np.arange(3, dtype=np.float32) * 10
    np.testing.assert_array_equal(fast(a, b), outer(a, b))
    assert "(f32[N], f32[N])" in fast.code
    c = np.arange(5, dtype=np.float32)
    np.testing.assert_array_equal(fast(a, c), outer(a, c))
    assert "(f32[N], f32[M])" in fast.code
    assert fast.stats.specializations == 2


def shape_logic(x: np.ndarray) -> tuple:
    if x.shape[0] > 2:
        y = ops.zeros((x.shape[0], 2), np.float32) + x[:, :2]
    else:
        y = x.reshape(x.shape[0], -1)[:, -2:] * 10
    return y, x.shape, x.shape[0] * 3 - 1


def test_conditions_on_a_symbolic_size_run_at_run_time() -> None:
    fast = amber.jit(shape_logic, dynamic=True)
    for n in (1, 2, 3, 6):
        x = np.arange(n * 4, dtype=np.float32).reshape(n, 4)
        got, want = fast(x), shape_logic(x)
        np.testing.assert_array_equal(got[0], want[0])
        assert got[1:] == want[1:]
    assert fast.stats.specializations == 1
    assert "if n > 2:" in fast.code and "np.zeros((n, 2)" in fast.code


def squeezed(x: np.ndarray) -> np.ndarray:
    return x.squeeze() * 2  # NOTE: which axes go depends on the sizes


def test_a_function_symbols_cannot_compile_falls_back_to_a_compile_per_shape() -> None:
    fast = amber.jit(squeezed)
    xs = [np.ones(s, np.float32) for s in ((1, 3), (2, 3), (1, 3), (4, 3))]
    messages = calls(fast, *[(x,) for x in xs])
    assert any("cannot be compiled for symbolic sizes" in m and "squeeze" in m
               for m in messages)
    for x in xs:
        np.testing.assert_array_equal(fast(x), squeezed(x))
    assert fast.stats.specializations == 3  # (1,3), (2,3), (4,3): each shape apart


def rows_by_a_growing_tuple(x: np.ndarray) -> np.ndarray:
    rows = ()
    for i in range(x.shape[0]):  # NOTE: a tuple growing in a loop of run-time length
        rows = rows + (x[i] * i,)
    return np.stack(rows)


def test_declared_symbolic_sizes_that_cannot_compile_say_why() -> None:
    """Sizes the user declared symbolic are never given up silently: the CompileError names
    the line, and a note says the same call compiles with its own shapes."""
    fast = amber.jit(rows_by_a_growing_tuple, dynamic=True)
    with pytest.raises(amber.CompileError) as caught:
        fast(np.ones((3, 4), np.float32))
    assert "range(x.shape[0])" in str(caught.value)
    notes = "\n".join(getattr(caught.value, "__notes__", ()))
    assert "compiled with symbolic sizes, arg 0 (N, 4)" in notes
    assert "own shapes compile" in notes
    np.testing.assert_array_equal(amber.jit(rows_by_a_growing_tuple)(np.ones((3, 4), np.float32)),
                                  rows_by_a_growing_tuple(np.ones((3, 4), np.float32)))
    with pytest.raises(amber.CompileError) as caught:
        amber.jit(lambda_free_undefined, dynamic=True)(np.ones((3, 4), np.float32))
    assert not getattr(caught.value, "__notes__", ())  # NOTE: no static compile either


def lambda_free_undefined(x: np.ndarray) -> np.ndarray:
    return x.no_such_method()


def size_is_one(x: np.ndarray, one: int) -> bool:
    return x.shape[0] is one


def test_identity_of_a_symbolic_size_is_refused_not_guessed() -> None:
    """`x.shape[0] is 1` is True eagerly for a size 1 (CPython shares small ints) and False for
    300: compiled code cannot know, so it refuses (a static size decides while compiling)."""
    x = np.ones((1, 2), np.float32)
    assert amber.jit(size_is_one, dynamic=False)(x, 1) is size_is_one(x, 1)
    with pytest.raises(amber.CompileError, match="`is` between a run-time int and the "
                                                 "constant 1"):
        amber.jit(size_is_one, dynamic=True)(x, 1)


def per_sample_nll(logits: np.ndarray, labels: np.ndarray) -> tuple:
    loss = ops.nll_loss(ops.log_softmax(logits), labels, reduction="none")
    return loss, loss.shape


def test_two_symbols_that_broadcast_give_the_broadcast_shape() -> None:
    """logits [N,4] and labels [M] sized apart (5 and 1): the kernel broadcasts the one label,
    so the loss has N entries, not M (a shape rule that took the labels' size said (1,))."""
    fast = amber.jit(per_sample_nll, dynamic={"logits": 0, "labels": 0})
    for n in (5, 6, 1):
        x = np.random.default_rng(n).standard_normal((n, 4)).astype(np.float32)
        y = np.array([2])
        got, want = fast(x, y), per_sample_nll(x, y)
        np.testing.assert_allclose(got[0], want[0], rtol=1e-6)
        assert got[1] == want[1] == (n,)
    assert fast.stats.specializations == 2  # NOTE: (5, 1) names N and M; (1, 1) shares N


def squared_sum(a: np.ndarray) -> np.ndarray:
    return (a * a).sum()


def test_jit_of_a_gradient_function_takes_the_dynamic_it_is_given() -> None:
    """`jit(grad(f), dynamic=...)` returns the gradient function itself, with those symbolic
    axes (the request was dropped before); a conflicting request is a TypeError."""
    g = amber.jit(amber.grad(squared_sum), dynamic={"a": 0})
    for n in (3, 5, 1):
        x = np.arange(n * 4, dtype=np.float32).reshape(n, 4)
        np.testing.assert_array_equal(g(x), 2 * x)
    assert g.stats.compiles + g.stats.disk_hits == 1 and "(f32[N,4])" in g.code
    f = amber.jit(squared_sum, dynamic=True)
    assert amber.jit(f) is f and amber.jit(f, dynamic=True) is f
    with pytest.raises(TypeError, match="already compiled with dynamic=True, not False"):
        amber.jit(f, dynamic=False)


def test_the_disk_cache_serves_symbolic_code_to_a_new_process(tmp_path, monkeypatch) -> None:
    monkeypatch.setenv("AMBER_CACHE_DIR", str(tmp_path))
    first = amber.jit(lambda_free_double, dynamic=True)
    first(np.ones((2, 3), np.float32))
    second = amber.jit(lambda_free_double, dynamic=True)
    np.testing.assert_array_equal(second(np.ones((5, 3), np.float32)),
                                  np.full((5, 3), 2, np.float32))
    assert second.stats.disk_hits == 1 and second.stats.compiles == 0


def test_mindspore_spellings() -> None:
    fast = amber.jit(lambda_free_double,
                     input_signature=amber.Tensor(shape=[None, 2], dtype=F32))
    fast(np.ones((3, 2), np.float32))
    fast(np.ones((4, 2), np.float32))
    assert fast.stats.specializations == 1
    with pytest.raises(ValueError, match="expected shape"):
        fast(np.ones((4, 3), np.float32))
    assert amber.jit(lambda_free_double, dynamic=1).dynamic_shapes.dynamic is True
    net = nn.Dense(2, 2)
    assert net.get_inputs() is None
    spec = amber.Tensor(shape=[None, 2], dtype=F32)
    net.set_inputs(spec)
    assert net.get_inputs() == (spec,) and repr(spec) == "Tensor(shape=[None, 2], dtype=float32)"
    with pytest.raises(TypeError, match="set_inputs: input 0 must be"):
        net.set_inputs([None, 2])
    with pytest.raises(TypeError, match="dynamic must be"):
        amber.jit(lambda_free_double, dynamic="batch")
    with pytest.raises(TypeError, match="a spec of any rank is not supported"):
        TensorSpec(None, F32)
    with pytest.raises(TypeError, match="an axis size is an int >= 0, None or a symbol name"):
        TensorSpec([2.5], F32)


def test_a_bad_call_is_reported_as_before_not_made_symbolic() -> None:
    """Automatic mode: a call whose own shapes cannot compile (here a Dense layer's input
    check) raises the static error, and teaches nothing; the next good size goes symbolic."""
    net = nn.Dense(4, 3)
    fast = amber.jit(net)
    fast(np.ones((2, 4), np.float32))
    with pytest.raises(amber.CompileError, match="has 5 features but weight f32.3,4."):
        fast(np.ones((2, 5), np.float32))
    assert not fast.dynamic_shapes.learned
    messages = calls(fast, (np.ones((3, 4), np.float32),))
    assert any("arg 0 axis 0 (2, then 3)" in m for m in messages)
    assert fast.dynamic_shapes.learned == {"0": {0}}


def _train_step() -> nn.TrainOneStepCell:
    amber.set_seed(0)
    net = LeNet5()
    loss = nn.WithLossCell(net, nn.SoftmaxCrossEntropyWithLogits(sparse=True, reduction="mean"))
    return nn.TrainOneStepCell(loss, nn.SGD(net.trainable_params(), learning_rate=0.1))


def test_a_train_step_compiles_once_for_every_batch_size_with_the_last_short_one() -> None:
    """Forward, backward (conv and pooling gradients, the mean loss's 1/N) and the update,
    one graph for batches of 8, then the epoch's short batch of 5, then 1."""
    step, eager = _train_step(), _train_step()
    step.set_inputs(amber.Tensor(shape=[None, 1, 32, 32], dtype=F32),
                    amber.Tensor(shape=[None], dtype=amber.int32))
    fast = amber.jit(step)
    rng = np.random.default_rng(0)
    for n in (8, 5, 1, 8):
        x = rng.standard_normal((n, 1, 32, 32), dtype=np.float32)
        y = rng.integers(0, 10, n).astype(np.int32)
        np.testing.assert_allclose(fast(x, y), eager.construct(x, y), rtol=1e-6)
        for got, want in zip(step.trainable_params(), eager.trainable_params()):
            np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-7)
    assert fast.stats.specializations == 1
    assert "x_shape=(n, 6, 14, 14)" in fast.code  # the conv gradient's shape, at entry size


def test_the_samples_run_every_batch_size_from_1_to_64_with_one_compile() -> None:
    """The issue's bar: LeNet-5 (set_inputs) and the RNN (its batch axis 1, jit(dynamic=...)),
    equal to eager at every size."""
    amber.set_seed(0)
    lenet = LeNet5()
    lenet.set_inputs(amber.Tensor(shape=[None, 1, 32, 32], dtype=F32))
    rnn = EarlyStopRNN()
    fast_lenet, fast_rnn = amber.jit(lenet), amber.jit(rnn, dynamic={"x": 1})
    for n in range(1, 65):
        x = images(n, n)
        np.testing.assert_allclose(fast_lenet(x), lenet.construct(x), rtol=1e-5, atol=1e-6)
        h, t = fast_rnn(sequence(n, n))
        want_h, want_t = rnn.construct(sequence(n, n))
        assert t == want_t
        np.testing.assert_allclose(h, want_h, rtol=1e-5, atol=1e-6)
    assert fast_lenet.stats.compiles + fast_lenet.stats.disk_hits == 1
    assert fast_rnn.stats.compiles + fast_rnn.stats.disk_hits == 1

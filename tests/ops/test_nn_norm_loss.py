"""batch_norm, layer_norm, softmax, log_softmax and the losses against their formulas."""
import itertools

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from amber.ops import losses, nn, normalization, window

FAMILIES = (nn, window, normalization, losses)
"""The neural-network op families."""
from amber.ops.types import Tensor, TupleType, type_of

FN = {f.name: f for family in FAMILIES for f in family.FUNCTIONS}
RNG = np.random.default_rng(0)


@pytest.fixture(autouse=True)
def reseed():
    """Each test draws the same data whatever ran before it."""
    global RNG
    RNG = np.random.default_rng(0)


def rand(*shape, dtype=np.float32):
    return RNG.standard_normal(shape).astype(dtype)


def channel(v, ndim):
    """A per-channel vector shaped to broadcast over axis 1 of an `ndim`-d input."""
    return v.reshape((1, -1) + (1,) * (ndim - 2))


@pytest.mark.parametrize("shape", [(4, 3), (2, 3, 5, 4), (2, 3, 6)])
def test_batch_norm_inference_formula(shape):
    x, c = rand(*shape), shape[1]
    mean, var = rand(c), np.abs(rand(c)) + 0.1
    gamma, beta = rand(c), rand(c)
    got = FN["batch_norm"](x, mean, var, gamma, beta, eps=1e-3)
    m, v, g, b = (channel(a, x.ndim) for a in (mean, var, gamma, beta))
    want = (x - m) / np.sqrt(v + 1e-3) * g + b
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)
    assert got.dtype == np.float32
    assert normalization.batch_norm.infer(*map(type_of, (x, mean, var, gamma, beta)), epsilon=1e-3) == \
        type_of(got)


@pytest.mark.parametrize("shape", [(8, 3), (2, 3, 4, 5), (1, 2, 1, 1)])
def test_batch_norm_train_normalizes_with_batch_stats(shape):
    x, c = rand(*shape) * 3 + 1, shape[1]
    gamma, beta = rand(c), rand(c)
    y, mean, var = FN["batch_norm_train"](x, gamma, beta, eps=1e-5)
    axes = tuple(i for i in range(x.ndim) if i != 1)
    biased = x.astype(np.float64).var(axis=axes)
    want = (x - channel(x.mean(axis=axes), x.ndim)) / np.sqrt(channel(biased, x.ndim) + 1e-5) \
        * channel(gamma, x.ndim) + channel(beta, x.ndim)
    np.testing.assert_allclose(y, want, rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(mean, x.mean(axis=axes), rtol=1e-5, atol=1e-6)
    count = x.size // c
    unbiased = x.astype(np.float64).var(axis=axes, ddof=1) if count > 1 else np.zeros(c)
    np.testing.assert_allclose(var, unbiased, rtol=1e-5, atol=1e-6)
    assert y.dtype == mean.dtype == var.dtype == np.float32
    inferred = normalization.batch_norm_train.infer(*map(type_of, (x, gamma, beta)), epsilon=1e-5)
    assert inferred == TupleType((type_of(y), type_of(mean), type_of(var)))


def test_batch_norm_rejects_mismatched_channels_and_training_flag():
    with pytest.raises(ValueError, match=r"batch_norm: gamma f32\[4\] does not match the 3 "):
        normalization.batch_norm.infer(Tensor(("N", 3, 8, 8), np.float32), *[Tensor((3,), np.float32)] * 2,
                            Tensor((4,), np.float32), Tensor((3,), np.float32), epsilon=1e-5)
    with pytest.raises(NotImplementedError, match="batch_norm_train"):
        FN["batch_norm"]("x", "m", "v", "g", "b", training=True)


@pytest.mark.parametrize("shape, norm_axis, params_axis", [
    ((4, 6), -1, -1), ((2, 3, 4), 1, 1), ((2, 3, 4), 1, -1), ((2, 3, 4), -2, 2),
    ((5,), 0, 0)])
def test_layer_norm_formula(shape, norm_axis, params_axis):
    x = rand(*shape) * 2 + 0.5
    params = shape[params_axis % len(shape):]
    gamma, beta = rand(*params), rand(*params)
    got = FN["layer_norm"](x, gamma, beta, norm_axis, params_axis)  # epsilon: MindSpore's 1e-7
    axes = tuple(range(norm_axis % x.ndim, x.ndim))
    mean, var = x.mean(axis=axes, keepdims=True), x.var(axis=axes, keepdims=True)
    want = (x - mean) / np.sqrt(var + 1e-7) * gamma + beta
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4)
    inputs, attrs = FN["layer_norm"].bind(x, gamma, beta, norm_axis, params_axis)
    assert attrs["epsilon"] == 1e-7
    assert normalization.layer_norm.infer(*map(type_of, inputs), **attrs) == type_of(got)


def test_layer_norm_gamma_shape_error():
    with pytest.raises(ValueError, match=r"layer_norm: gamma f32\[3\] must have shape \(4,\)"):
        normalization.layer_norm.infer(Tensor(("B", 3, 4), np.float32), Tensor((3,), np.float32),
                            Tensor((4,), np.float32), **normalization.layer_norm.full_attrs({}))


def softmax_ref(x, axis):
    e = np.exp(x.astype(np.float64))
    return e / e.sum(axis=axis, keepdims=True)


@settings(max_examples=40, deadline=None)
@given(hnp.arrays(np.float32, hnp.array_shapes(min_dims=1, max_dims=3, max_side=5),
                  elements=st.floats(-20, 20, width=32)), st.integers(0, 2))
def test_softmax_and_log_softmax_formulas(x, axis):
    axis = axis % x.ndim - x.ndim  # a negative axis in range
    got = FN["softmax"](x, axis)
    np.testing.assert_allclose(got, softmax_ref(x, axis), rtol=1e-5, atol=1e-7)
    logs = FN["log_softmax"](x, axis)
    np.testing.assert_allclose(logs, np.log(softmax_ref(x, axis)), rtol=1e-5, atol=1e-5)
    assert got.dtype == logs.dtype == np.float32
    for op in (losses.softmax, losses.log_softmax):
        assert op.infer(type_of(x), axis=axis) == type_of(got)


def test_softmax_is_numerically_stable():
    x = np.array([[1000.0, 1000.0, -1000.0], [-5e4, 0.0, 5e4]], np.float32)
    np.testing.assert_allclose(losses.Softmax()(x), [[0.5, 0.5, 0.0], [0.0, 0.0, 1.0]])
    half = -np.log(2)
    np.testing.assert_allclose(losses.LogSoftmax(axis=1)(x), [[half, half, -2000 + half],
                                                         [-1e5, -5e4, 0.0]], rtol=1e-6)


def test_softmax_over_several_axes_and_integer_inputs():
    x = rand(2, 3, 4)
    np.testing.assert_allclose(FN["softmax"](x, (1, 2)), softmax_ref(x, (1, 2)), rtol=1e-5)
    ints = np.arange(6, dtype=np.int32).reshape(2, 3)
    got = FN["softmax"](ints)
    assert got.dtype == np.float64 and losses.softmax.infer(type_of(ints), axis=-1) == type_of(got)


def cross_entropy_ref(logits, probs):
    return -(probs * np.log(softmax_ref(logits, -1))).sum(axis=-1)


@pytest.mark.parametrize("reduction", ["none", "mean", "sum"])
def test_softmax_cross_entropy_dense_and_sparse(reduction):
    logits, ids = rand(6, 5) * 3, RNG.integers(0, 5, 6)
    one_hot = np.eye(5, dtype=np.float32)[ids]
    reduce = {"none": lambda v: v, "mean": np.mean, "sum": np.sum}[reduction]
    want = reduce(cross_entropy_ref(logits, one_hot))
    dense = FN["softmax_cross_entropy"](logits, one_hot, reduction=reduction)
    sparse = FN["softmax_cross_entropy"](logits, ids, sparse=True, reduction=reduction)
    np.testing.assert_allclose(dense, want, rtol=1e-5)
    np.testing.assert_allclose(sparse, want, rtol=1e-5)
    for labels, flag, got in ((one_hot, False, dense), (ids, True, sparse)):
        assert got.dtype == np.float32
        assert losses.softmax_cross_entropy.infer(type_of(logits), type_of(labels), sparse=flag,
                                              reduction=reduction) == type_of(got)


def test_softmax_cross_entropy_soft_labels_and_errors():
    logits = rand(3, 4)
    probs = softmax_ref(rand(3, 4), -1).astype(np.float32)
    np.testing.assert_allclose(FN["softmax_cross_entropy"](logits, probs),
                               cross_entropy_ref(logits, probs), rtol=1e-5)
    with pytest.raises(ValueError, match=r"labels i64\[3,4\] \(class ids\) must have shape \(3,\)"):
        losses.softmax_cross_entropy.infer(Tensor((3, 4), np.float32), Tensor((3, 4), np.int64),
                                       sparse=True, reduction="none")
    with pytest.raises(ValueError, match="reduction must be one of"):
        FN["softmax_cross_entropy"].bind("l", "y", reduction="avg")


@pytest.mark.parametrize("perm", list(itertools.permutations(range(3))))
@pytest.mark.parametrize("fortran", [False, True])
@pytest.mark.parametrize("reduction", ["none", "mean"])
def test_sparse_cross_entropy_gradient_for_logits_in_any_memory_layout(perm, fortran, reduction):
    """Both gradient kernels take one off at each label through a [rows, classes] view: logits
    a transpose of another array ([B, T, C] from [B, C, T]) or Fortran-ordered once made that
    reshape a copy, and the gradient lacked the -1 (a silent wrong gradient). Checked against
    softmax - one_hot in float64."""
    logits = (rand(4, 6, 5) * 3).transpose(perm)
    logits = np.asfortranarray(logits) if fortran else logits
    labels = RNG.integers(0, logits.shape[-1], logits.shape[:-1]).astype(np.int32)
    g = np.ones(labels.shape, np.float32) if reduction == "none" else np.float32(1.0)
    shifted = logits.astype(np.float64) - logits.max(axis=-1, keepdims=True)
    want = np.exp(shifted) / np.exp(shifted).sum(axis=-1, keepdims=True)
    want -= np.eye(logits.shape[-1])[labels]
    want /= labels.size if reduction == "mean" else 1
    fused = losses.softmax_cross_entropy_with_grad.kernel(logits, labels, g, reduction=reduction)
    alone = losses.softmax_cross_entropy_grad.kernel(logits, labels, g, reduction=reduction)
    for got in (fused[1], alone):
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)


def nll_ref(log_probs, target, weight, ignore_index, reduction):
    """Loop over samples: -w[t] * log_probs[i, t], skipping ignored targets."""
    losses, weights = [], []
    for i, t in enumerate(target):
        w = 0.0 if t == ignore_index else (1.0 if weight is None else float(weight[t]))
        losses.append(0.0 if t == ignore_index else -w * float(log_probs[i, t]))
        weights.append(w)
    if reduction == "none":
        return np.array(losses)
    return sum(losses) if reduction == "sum" else sum(losses) / sum(weights)


@pytest.mark.parametrize("reduction", ["none", "mean", "sum"])
@pytest.mark.parametrize("weighted", [False, True])
def test_nll_loss_formula(reduction, weighted):
    log_probs = np.log(softmax_ref(rand(7, 4), -1)).astype(np.float32)
    target = np.array([0, 3, -100, 2, 1, 3, -100])
    weight = np.abs(rand(4)) + 0.5 if weighted else None
    got = FN["nll_loss"](log_probs, target, weight, reduction=reduction)
    np.testing.assert_allclose(got, nll_ref(log_probs, target, weight, -100, reduction),
                               rtol=1e-5)
    inputs, attrs = FN["nll_loss"].bind(log_probs, target, weight, reduction=reduction)
    assert got.dtype == np.float32
    assert losses.nll_loss.infer(*map(type_of, inputs), **attrs) == type_of(got)


def test_nll_loss_spatial_targets():
    log_probs, target = rand(2, 3, 4), RNG.integers(0, 3, (2, 4))
    got = FN["nll_loss"](log_probs, target, reduction="none")
    want = [[-log_probs[n, target[n, j], j] for j in range(4)] for n in range(2)]
    np.testing.assert_allclose(got, want)


@pytest.mark.parametrize("reduction", ["none", "mean", "sum"])
def test_mse_loss_formula(reduction):
    x, y = rand(3, 4), rand(4)
    got = FN["mse_loss"](x, y, reduction)
    diff = (x.astype(np.float64) - y) ** 2
    want = {"none": diff, "mean": diff.mean(), "sum": diff.sum()}[reduction]
    np.testing.assert_allclose(got, want, rtol=1e-5)
    assert got.dtype == np.float32
    assert losses.mse_loss.infer(type_of(x), type_of(y), reduction=reduction) == type_of(got)
    with pytest.raises(ValueError, match=r"mse_loss: input f32\[3,4\] and target f32\[5\]"):
        losses.mse_loss.infer(type_of(x), Tensor((5,), np.float32), reduction=reduction)

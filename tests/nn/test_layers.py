"""Each layer against an independent NumPy formula, plus argument and shape errors."""
from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import amber
from amber import nn


def rand(*shape: int, seed: int = 0) -> np.ndarray:
    return np.random.default_rng(seed).standard_normal(shape).astype(np.float32)


# -- Dense ------------------------------------------------------------------------------------


@settings(max_examples=30, deadline=None)
@given(st.integers(1, 4), st.integers(1, 6), st.integers(1, 5), st.booleans())
def test_dense_matches_formula(batch, n_in, n_out, has_bias):
    dense = nn.Dense(n_in, n_out, weight_init="xavier_uniform", bias_init="normal",
                     has_bias=has_bias)
    x = rand(batch, n_in)
    expected = np.einsum("bi,oi->bo", x, dense.weight)
    if has_bias:
        expected = expected + dense.bias
    out = dense(x)
    assert out.dtype == np.float32 and dense.weight.shape == (n_out, n_in)
    np.testing.assert_allclose(out, expected, rtol=1e-5, atol=1e-6)


def test_dense_activation_and_higher_rank_input():
    dense = nn.Dense(3, 2, weight_init="normal", activation="relu")
    x = rand(2, 4, 3)
    np.testing.assert_allclose(dense(x), np.maximum(x @ dense.weight.T + dense.bias, 0),
                               rtol=1e-6)
    assert isinstance(nn.Dense(3, 2, activation=nn.Tanh()).activation, nn.Tanh)


def test_dense_errors_name_layer_and_shapes():
    with pytest.raises(ValueError, match=r"Dense\(in_channels=4, out_channels=3\): input last "
                                         r"dim is 5"):
        nn.Dense(4, 3)(rand(2, 5))
    with pytest.raises(TypeError, match="Dense: in_channels must be an int"):
        nn.Dense(4.0, 3)
    with pytest.raises(TypeError, match="unexpected keyword argument 'in_features'"):
        nn.Dense(in_features=4, out_channels=3)
    with pytest.raises(ValueError, match=r"Dense: weight_init: .*shape \(3, 4\), expected "
                                         r"\(3, 5\)"):
        nn.Dense(5, 3, weight_init=np.zeros((3, 4)))
    with pytest.raises(ValueError, match="unknown activation 'swish'"):
        nn.Dense(2, 2, activation="swish")


# -- Conv2d and pooling ------------------------------------------------------------------------


def conv2d_reference(x, w, b, stride, pads, dilation, groups):
    """Direct nested-loop convolution (pads = top, bottom, left, right)."""
    x = np.pad(x.astype(np.float64), ((0, 0), (0, 0), (pads[0], pads[1]), (pads[2], pads[3])))
    n, _, h, wd = x.shape
    o, cg, kh, kw = w.shape
    oh = (h - dilation[0] * (kh - 1) - 1) // stride[0] + 1
    ow = (wd - dilation[1] * (kw - 1) - 1) // stride[1] + 1
    out = np.zeros((n, o, oh, ow))
    for b_ in range(n):
        for oc in range(o):
            g = oc // (o // groups)
            for i in range(oh):
                for j in range(ow):
                    total = 0.0
                    for c in range(cg):
                        for p in range(kh):
                            for q in range(kw):
                                total += (x[b_, g * cg + c, i * stride[0] + p * dilation[0],
                                            j * stride[1] + q * dilation[1]] * w[oc, c, p, q])
                    out[b_, oc, i, j] = total + (b[oc] if b is not None else 0.0)
    return out


def same_pads(size, kernel, stride, dilation):
    pads = []
    for n, k, s, d in zip(size, kernel, stride, dilation):
        total = max((math.ceil(n / s) - 1) * s + d * (k - 1) + 1 - n, 0)
        pads += [total // 2, total - total // 2]
    return pads


@settings(max_examples=25, deadline=None)
@given(st.sampled_from(["valid", "same", "pad"]), st.integers(1, 3), st.integers(1, 2),
       st.integers(1, 2), st.sampled_from([1, 2]), st.booleans(), st.integers(0, 2))
def test_conv2d_matches_loop_reference(pad_mode, kernel, stride, dilation, groups, has_bias, pad):
    conv = nn.Conv2d(2 * groups, 2 * groups, kernel, stride=stride, pad_mode=pad_mode,
                     padding=pad if pad_mode == "pad" else 0, dilation=dilation, group=groups,
                     has_bias=has_bias, weight_init="he_uniform", bias_init="normal")
    x = rand(2, 2 * groups, 6, 5)
    if pad_mode == "same":
        pads = same_pads((6, 5), (kernel, kernel), (stride, stride), (dilation, dilation))
    else:
        pads = [pad if pad_mode == "pad" else 0] * 4
    expected = conv2d_reference(x, conv.weight, conv.bias, (stride, stride), pads,
                                (dilation, dilation), groups)
    out = conv(x)
    assert out.dtype == np.float32 and conv.weight.shape == (2 * groups, 2, kernel, kernel)
    np.testing.assert_allclose(out, expected, rtol=1e-4, atol=1e-5)
    if pad_mode == "same":
        assert out.shape[2:] == (math.ceil(6 / stride), math.ceil(5 / stride))


def test_conv2d_defaults_follow_mindspore():
    conv = nn.Conv2d(1, 4, 3)
    assert conv.pad_mode == "same" and conv.bias is None and conv.stride == (1, 1)
    assert conv(rand(1, 1, 7, 7)).shape == (1, 4, 7, 7)
    asymmetric = nn.Conv2d(1, 1, (1, 1), pad_mode="pad", padding=(1, 0, 2, 0), weight_init=1.0)
    np.testing.assert_array_equal(asymmetric(np.ones((1, 1, 2, 2), np.float32))[0, 0],
                                  [[0, 0, 0, 0], [0, 0, 1, 1], [0, 0, 1, 1]])


def test_conv2d_errors():
    with pytest.raises(ValueError, match=r"Conv2d\(in_channels=3.*input channels \(dim 1\) is 4,"
                                         r" expected 3 \(input shape \(1, 4, 8, 8\)\)"):
        nn.Conv2d(3, 8, 3)(rand(1, 4, 8, 8))
    with pytest.raises(ValueError, match="input must be 4-D, got shape"):
        nn.Conv2d(3, 8, 3)(rand(3, 8, 8))
    with pytest.raises(ValueError, match="input height 4 .* smaller than the kernel extent 5"):
        nn.Conv2d(1, 1, 5, pad_mode="valid")(rand(1, 1, 4, 9))
    with pytest.raises(ValueError, match="padding must be 0 unless pad_mode='pad'"):
        nn.Conv2d(1, 1, 3, padding=1)
    with pytest.raises(ValueError, match="divisible by group=2"):
        nn.Conv2d(3, 4, 3, group=2)
    with pytest.raises(ValueError, match="pad_mode must be one of"):
        nn.Conv2d(1, 1, 3, pad_mode="full")


def pool_reference(x, k, s, reduce):
    n, c, h, w = x.shape
    oh, ow = (h - k) // s + 1, (w - k) // s + 1
    out = np.zeros((n, c, oh, ow), x.dtype)
    for i in range(oh):
        for j in range(ow):
            out[:, :, i, j] = reduce(x[:, :, i * s:i * s + k, j * s:j * s + k], axis=(2, 3))
    return out


@pytest.mark.parametrize("kernel,stride", [(2, 2), (3, 1), (3, 2)])
def test_pools_match_reference(kernel, stride):
    x = rand(2, 3, 7, 8)
    np.testing.assert_allclose(nn.MaxPool2d(kernel, stride)(x),
                               pool_reference(x, kernel, stride, np.max))
    np.testing.assert_allclose(nn.AvgPool2d(kernel, stride)(x),
                               pool_reference(x, kernel, stride, np.mean), rtol=1e-5)


def test_pool_same_mode_and_errors():
    x = rand(1, 2, 5, 5)
    out = nn.MaxPool2d(2, 2, pad_mode="same")(x)
    assert out.shape == (1, 2, 3, 3) and out[0, 0, 2, 2] == x[0, 0, 4, 4]
    assert nn.MaxPool2d()(x).shape == x.shape  # kernel 1, stride 1
    with pytest.raises(ValueError, match=r"MaxPool2d\(kernel_size=\(3, 3\).*input width 2"):
        nn.MaxPool2d(3)(rand(1, 1, 4, 2))


def test_flatten_keeps_batch_dim():
    x = rand(2, 3, 4, 5)
    np.testing.assert_array_equal(nn.Flatten()(x), x.reshape(2, 60))


# -- normalization -----------------------------------------------------------------------------


@pytest.mark.parametrize("layer,shape", [(nn.BatchNorm2d, (4, 3, 5, 6)), (nn.BatchNorm1d, (8, 3)),
                                         (nn.BatchNorm1d, (4, 3, 7))])
def test_batch_norm_train_and_eval(layer, shape):
    bn = layer(3, eps=1e-3, momentum=0.8, gamma_init="normal", beta_init="normal",
               moving_mean_init="normal", moving_var_init="ones")
    x = rand(*shape) * 2 + 1
    axes = tuple(i for i in range(len(shape)) if i != 1)
    bshape = [1] * len(shape)
    bshape[1] = 3
    gamma, beta = bn.gamma.reshape(bshape), bn.beta.reshape(bshape)
    mean0, var0 = bn.moving_mean.copy(), bn.moving_variance.copy()

    out_eval = bn(x)
    expected = (x - mean0.reshape(bshape)) / np.sqrt(var0.reshape(bshape) + 1e-3) * gamma + beta
    np.testing.assert_allclose(out_eval, expected, rtol=1e-4, atol=1e-5)
    np.testing.assert_array_equal(bn.moving_mean, mean0)  # eval leaves the statistics alone

    moving_mean = bn.moving_mean
    out_train = bn.set_train()(x)
    mu, var = x.mean(axis=axes), x.var(axis=axes)
    expected = (x - mu.reshape(bshape)) / np.sqrt(var.reshape(bshape) + 1e-3) * gamma + beta
    np.testing.assert_allclose(out_train, expected, rtol=1e-4, atol=1e-5)
    count = x.size // 3
    np.testing.assert_allclose(bn.moving_mean, 0.8 * mean0 + 0.2 * mu, rtol=1e-5)
    np.testing.assert_allclose(bn.moving_variance, 0.8 * var0 + 0.2 * var * count / (count - 1),
                               rtol=1e-5)
    assert bn.moving_mean is moving_mean and bn.moving_mean.dtype == np.float32
    assert out_train.dtype == np.float32 and out_eval.dtype == np.float32


def test_batch_norm_use_batch_statistics_overrides_training():
    x = rand(4, 2, 3, 3)
    always = nn.BatchNorm2d(2, use_batch_statistics=True)
    out = always(x)  # not training, but batch statistics anyway
    np.testing.assert_allclose(out.mean(axis=(0, 2, 3)), 0, atol=1e-5)
    assert not np.allclose(always.moving_mean, 0)
    never = nn.BatchNorm2d(2, use_batch_statistics=False).set_train()
    np.testing.assert_allclose(never(x), x / np.sqrt(1 + 1e-5), rtol=1e-5)
    assert (never.moving_mean == 0).all()


def test_batch_norm_params_and_errors():
    bn = nn.BatchNorm2d(3, affine=False)
    assert [n for n, _ in bn.parameters_and_names()] == ["gamma", "beta", "moving_mean",
                                                         "moving_variance"]
    assert bn.trainable_params() == []
    with pytest.raises(ValueError, match=r"BatchNorm2d\(num_features=3.*input channels \(dim 1\) "
                                         r"is 4, expected 3"):
        nn.BatchNorm2d(3)(rand(2, 4, 2, 2))
    with pytest.raises(ValueError, match="BatchNorm1d.*input must be 2-D or 3-D"):
        nn.BatchNorm1d(3)(rand(2, 3, 2, 2))
    with pytest.raises(ValueError, match="momentum must be in"):
        nn.BatchNorm2d(3, momentum=1.5)


@pytest.mark.parametrize("shape,norm_axis,params_axis", [((4, 6), -1, -1), ((2, 3, 4), 1, 1),
                                                          ((2, 3, 4), 1, -1)])
def test_layer_norm_matches_formula(shape, norm_axis, params_axis):
    normalized = shape[params_axis:]
    ln = nn.LayerNorm(normalized, norm_axis, params_axis, gamma_init="normal",
                      beta_init="normal", epsilon=1e-5)
    x = rand(*shape) * 3
    axes = tuple(range(norm_axis % len(shape), len(shape)))
    mean = x.mean(axis=axes, keepdims=True)
    var = x.var(axis=axes, keepdims=True)
    expected = (x - mean) / np.sqrt(var + 1e-5) * ln.gamma + ln.beta
    out = ln(x)
    assert out.dtype == np.float32
    np.testing.assert_allclose(out, expected, rtol=1e-4, atol=1e-5)


def test_layer_norm_errors():
    with pytest.raises(ValueError, match=r"LayerNorm\(normalized_shape=\(4,\).*input dims from "
                                         r"begin_params_axis are \(5,\)"):
        nn.LayerNorm((4,))(rand(2, 5))
    with pytest.raises(TypeError, match="normalized_shape must be"):
        nn.LayerNorm("4")


# -- Dropout -----------------------------------------------------------------------------------


def test_dropout_is_identity_unless_training():
    x = rand(4, 5)
    kept = nn.Dropout(keep_prob=0.2)(x)  # a Tensor view of x itself, no copy
    assert np.shares_memory(kept, x) and np.array_equal(kept, x)


def test_dropout_reproducible_after_set_seed():
    x = np.ones((50, 40), np.float32)
    amber.set_seed(7)
    first = nn.Dropout(p=0.25).set_train()
    a1, a2 = first(x), first(x)
    amber.set_seed(7)
    second = nn.Dropout(p=0.25).set_train()
    np.testing.assert_array_equal(second(x), a1)
    np.testing.assert_array_equal(second(x), a2)
    assert not np.array_equal(a1, a2)  # the stream advances between calls
    other = nn.Dropout(p=0.25).set_train()
    assert not np.array_equal(other(x), a1)  # each Dropout has its own stream


def test_dropout_statistics_and_scaling():
    amber.set_seed(1)
    drop = nn.Dropout(keep_prob=0.7).set_train()
    assert math.isclose(drop.p, 0.3)
    out = drop(np.ones((200, 200), np.float32))
    assert out.dtype == np.float32
    assert abs((out == 0).mean() - 0.3) < 0.01
    np.testing.assert_allclose(out[out != 0], 1 / 0.7, rtol=1e-6)
    with pytest.raises(ValueError, match=r"Dropout: keep_prob must be in \(0.0, 1.0\]"):
        nn.Dropout(keep_prob=0.0)
    with pytest.raises(ValueError, match=r"Dropout: p must be in \[0.0, 1.0\)"):
        nn.Dropout(p=1.0)


# -- Embedding, Pad, activations, losses -------------------------------------------------------


def test_embedding_looks_up_rows():
    emb = nn.Embedding(10, 4, padding_idx=0)
    ids = np.array([[1, 0, 9], [3, 3, 2]], np.int32)
    out = emb(ids)
    assert out.shape == (2, 3, 4) and out.dtype == np.float32
    for i in range(2):
        for j in range(3):
            np.testing.assert_array_equal(out[i, j], emb.embedding_table[ids[i, j]])
    assert (emb.embedding_table[0] == 0).all()
    with pytest.raises(ValueError, match=r"embedding: ids must be in \[0, 10\), got values in "
                                         r"\[-1, 10\]"):
        emb(np.array([10, -1]))
    with pytest.raises(TypeError, match="ids must be integers, got float32"):
        emb(np.zeros(2, np.float32))


@pytest.mark.parametrize("mode,np_mode", [("CONSTANT", "constant"), ("REFLECT", "reflect"),
                                          ("SYMMETRIC", "symmetric")])
def test_pad_modes(mode, np_mode):
    x = rand(2, 3, 4)
    paddings = ((0, 0), (1, 2), (2, 1))
    np.testing.assert_array_equal(nn.Pad(paddings, mode)(x), np.pad(x, paddings, mode=np_mode))


def test_pad_errors():
    with pytest.raises(ValueError, match="input must be 2-D"):
        nn.Pad(((1, 1), (1, 1)))(rand(2, 2, 2))
    with pytest.raises(ValueError, match="padding \\(3, 0\\) of axis 1 is too large for size 3"):
        nn.Pad(((0, 0), (3, 0)), "REFLECT")(rand(2, 3))
    with pytest.raises(ValueError, match="mode must be one of"):
        nn.Pad(((1, 1),), "EDGE")


def test_activations_match_formulas():
    x = rand(3, 5) * 3
    np.testing.assert_allclose(nn.ReLU()(x), np.maximum(x, 0))
    np.testing.assert_allclose(nn.Sigmoid()(x), 1 / (1 + np.exp(-x)), rtol=1e-6)
    np.testing.assert_allclose(nn.Tanh()(x), np.tanh(x), rtol=1e-6)
    gelu = 0.5 * x * (1 + np.tanh(np.sqrt(2 / np.pi) * (x + 0.044715 * x ** 3)))
    np.testing.assert_allclose(nn.GELU()(x), gelu, rtol=1e-5, atol=1e-6)
    e = np.exp(x - x.max(axis=0, keepdims=True))
    np.testing.assert_allclose(nn.Softmax(axis=0)(x), e / e.sum(axis=0), rtol=1e-5)
    log_probs = x - np.log(np.exp(x).sum(axis=-1, keepdims=True))
    np.testing.assert_allclose(nn.LogSoftmax()(x), log_probs, rtol=1e-5, atol=1e-6)
    for layer in (nn.ReLU(), nn.Sigmoid(), nn.Tanh(), nn.GELU(), nn.Softmax(), nn.LogSoftmax()):
        assert layer(x).dtype == np.float32


def test_softmax_cross_entropy_with_logits():
    logits = rand(4, 5)
    ids = np.array([0, 3, 4, 1])
    onehot = np.eye(5, dtype=np.float32)[ids]
    log_probs = logits - np.log(np.exp(logits).sum(axis=1, keepdims=True))
    per_sample = -log_probs[np.arange(4), ids]
    np.testing.assert_allclose(nn.SoftmaxCrossEntropyWithLogits()(logits, onehot), per_sample,
                               rtol=1e-5)
    sparse_mean = nn.SoftmaxCrossEntropyWithLogits(sparse=True, reduction="mean")
    np.testing.assert_allclose(sparse_mean(logits, ids), per_sample.mean(), rtol=1e-5)
    with pytest.raises(ValueError, match=r"labels have shape \(4, 4\), expected \(4, 5\)"):
        nn.SoftmaxCrossEntropyWithLogits()(logits, onehot[:, :4])
    with pytest.raises(ValueError, match="sparse labels must be integer"):
        sparse_mean(logits, ids.astype(np.float32))


def test_mse_loss_reductions():
    a, b = rand(3, 4), rand(3, 4, seed=1)
    sq = (a - b) ** 2
    np.testing.assert_allclose(nn.MSELoss()(a, b), sq.mean(), rtol=1e-5)
    np.testing.assert_allclose(nn.MSELoss("sum")(a, b), sq.sum(), rtol=1e-5)
    np.testing.assert_allclose(nn.MSELoss("none")(a, b), sq, rtol=1e-5)
    with pytest.raises(ValueError, match="do not broadcast"):
        nn.MSELoss()(a, rand(3, 5))
    with pytest.raises(ValueError, match="reduction must be one of"):
        nn.MSELoss("avg")

"""MindSpore 2.x's losses: CrossEntropyLoss (class ids, probabilities, weight, ignore_index,
label_smoothing), NLLLoss, BCELoss, SmoothL1Loss, HuberLoss, KLDivLoss, CosineEmbeddingLoss.
Values against float64 formulas written from MindSpore's documentation, compiled equal to eager,
gradients against finite differences."""
from __future__ import annotations

import numpy as np
import pytest

import amber
from amber import nn

RNG = np.random.default_rng(7)
LOGITS = RNG.standard_normal((5, 4)).astype(np.float32)
CLASSES = np.array([0, 3, 1, 3, 2], np.int32)
PROBS = RNG.dirichlet(np.ones(4), 5).astype(np.float32)
WEIGHT = np.array([1.0, 2.0, 0.5, 1.5], np.float32)
OTHER = RNG.standard_normal((5, 4)).astype(np.float32)
SIGNS = np.array([1, -1, 1, -1, -1], np.int32)
P01 = RNG.uniform(0.05, 0.95, (5, 4)).astype(np.float32)
T01 = RNG.uniform(0.0, 1.0, (5, 4)).astype(np.float32)


def _log_softmax(x):
    x = x.astype(np.float64)
    return x - np.log(np.exp(x - x.max(1, keepdims=True)).sum(1, keepdims=True)) - \
        x.max(1, keepdims=True)


def _reduce(per, reduction, divisor=None):
    if reduction == "none":
        return per
    total = per.sum()
    return total if reduction == "sum" else total / (per.size if divisor is None else divisor)


def ce_ids(x, t, weight=None, ignore=-100, reduction="mean", smoothing=0.0):
    logp, c = _log_softmax(x), x.shape[1]
    w = np.ones(c) if weight is None else weight.astype(np.float64)
    kept = t != ignore
    safe = np.where(kept, t, 0)
    nll = -logp[np.arange(len(t)), safe] * w[safe] * kept
    smooth = -(logp * w).sum(1) * kept
    divisor = (w[safe] * kept).sum()
    return (1 - smoothing) * _reduce(nll, reduction, divisor) + \
        smoothing / c * _reduce(smooth, reduction, divisor)


def nll(logp, t, w, ignore, reduction):
    kept = t != ignore
    per = -logp.astype(np.float64)[np.arange(len(t)), t] * w[t] * kept
    return _reduce(per, reduction, (w[t] * kept).sum())


def ce_probs(x, p, weight=None, reduction="mean", smoothing=0.0):
    c = x.shape[1]
    p = p.astype(np.float64) * (1 - smoothing) + smoothing / c
    w = np.ones(c) if weight is None else weight.astype(np.float64)
    per = -(_log_softmax(x) * p * w).sum(1)
    return _reduce(per, reduction, x.shape[0])


def diff(x, y):
    return np.abs(x.astype(np.float64) - y)


# name -> (make(reduction), inputs, reference(reduction), index of the input differentiated)
CASES = {
    "ce-ids": (lambda r: nn.CrossEntropyLoss(reduction=r), (LOGITS, CLASSES),
               lambda r: ce_ids(LOGITS, CLASSES, reduction=r)),
    "ce-ids-weight-ignore-smooth": (
        lambda r: nn.CrossEntropyLoss(WEIGHT, ignore_index=3, reduction=r, label_smoothing=0.2),
        (LOGITS, CLASSES), lambda r: ce_ids(LOGITS, CLASSES, WEIGHT, 3, r, 0.2)),
    "ce-probs": (lambda r: nn.CrossEntropyLoss(reduction=r), (LOGITS, PROBS),
                 lambda r: ce_probs(LOGITS, PROBS, reduction=r)),
    "ce-probs-weight-smooth": (
        lambda r: nn.CrossEntropyLoss(WEIGHT, reduction=r, label_smoothing=0.1),
        (LOGITS, PROBS), lambda r: ce_probs(LOGITS, PROBS, WEIGHT, r, 0.1)),
    "nll": (lambda r: nn.NLLLoss(WEIGHT, ignore_index=1, reduction=r), (LOGITS, CLASSES),
            lambda r: nll(LOGITS, CLASSES, WEIGHT, 1, r)),
    "bce": (lambda r: nn.BCELoss(WEIGHT, reduction=r), (P01, T01),
            lambda r: _reduce(-WEIGHT * (T01 * np.log(P01.astype(np.float64)) +
                                         (1 - T01) * np.log(1 - P01.astype(np.float64))), r)),
    "smooth-l1": (lambda r: nn.SmoothL1Loss(0.5, r), (LOGITS, OTHER),
                  lambda r: _reduce(np.where(diff(LOGITS, OTHER) < 0.5,
                                             diff(LOGITS, OTHER) ** 2, diff(LOGITS, OTHER) - 0.25),
                                    r)),
    "huber": (lambda r: nn.HuberLoss(r, delta=0.7), (LOGITS, OTHER),
              lambda r: _reduce(np.where(diff(LOGITS, OTHER) < 0.7,
                                         0.5 * diff(LOGITS, OTHER) ** 2,
                                         0.7 * (diff(LOGITS, OTHER) - 0.35)), r)),
    "kl-div": (lambda r: nn.KLDivLoss(r), (LOGITS, PROBS),
               lambda r: _reduce(PROBS * (np.log(PROBS.astype(np.float64)) - LOGITS), r)),
    "cosine-embedding": (
        lambda r: nn.CosineEmbeddingLoss(0.2, r), (LOGITS, OTHER, SIGNS),
        lambda r: _reduce(_cosine_reference(LOGITS, OTHER, SIGNS, 0.2), r)),
}


def _cosine_reference(a, b, y, margin):
    a, b = a.astype(np.float64), b.astype(np.float64)
    cos = (a * b).sum(1) / np.linalg.norm(a, axis=1) / np.linalg.norm(b, axis=1)
    return np.where(y == 1, 1 - cos, np.maximum(cos - margin, 0.0))


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
@pytest.mark.parametrize("case", sorted(CASES))
def test_values_eager_and_compiled(case, reduction):
    make, inputs, reference = CASES[case]
    loss = make(reduction)
    eager = loss(*inputs)
    np.testing.assert_allclose(eager, reference(reduction), rtol=2e-5, atol=1e-6)
    np.testing.assert_allclose(amber.jit(loss)(*inputs), eager, rtol=1e-6, atol=1e-7)


def test_kl_div_batchmean_and_zero_labels():
    labels = PROBS.copy()
    labels[0, 0] = 0.0  # contributes 0, not nan
    got = nn.KLDivLoss("batchmean")(LOGITS, labels)
    per = np.where(labels > 0, labels * (np.log(np.where(labels > 0, labels, 1.0)) - LOGITS), 0)
    np.testing.assert_allclose(got, per.sum() / 5, rtol=1e-5)


def test_one_sample_of_class_ids():
    loss = nn.CrossEntropyLoss(reduction="none")
    np.testing.assert_allclose(loss(LOGITS[0], CLASSES[0]), ce_ids(LOGITS[:1], CLASSES[:1],
                                                                   reduction="none")[0],
                               rtol=1e-5)


@pytest.mark.parametrize("case", sorted(CASES))
def test_gradients_match_finite_differences(case):
    make, inputs, _ = CASES[case]
    loss = make("mean")
    args = [a.astype(np.float64) if a.dtype.kind == "f" else a for a in inputs]
    grad = amber.grad(loss)(*args)
    x, eps = args[0], 1e-6
    numeric = np.zeros_like(x)
    for i in np.ndindex(x.shape):
        up, down = x.copy(), x.copy()
        up[i] += eps
        down[i] -= eps
        numeric[i] = (loss.construct(up, *args[1:]) - loss.construct(down, *args[1:])) / (2 * eps)
    np.testing.assert_allclose(grad, numeric, rtol=1e-5, atol=1e-8)


def test_arguments_and_inputs_are_checked():
    with pytest.raises(ValueError, match="label_smoothing"):
        nn.CrossEntropyLoss(label_smoothing=1.5)
    with pytest.raises(TypeError, match="weight must be a 1-D float array"):
        nn.CrossEntropyLoss(weight=[1.0, 2.0])
    with pytest.raises(ValueError, match="reduction must be one of"):
        nn.KLDivLoss("average")
    with pytest.raises(ValueError, match=r"labels \(class ids\) have shape \(4,\)"):
        nn.CrossEntropyLoss()(LOGITS, CLASSES[:4])
    with pytest.raises(ValueError, match="weight has 4 entries for 3 classes"):
        nn.NLLLoss(WEIGHT)(LOGITS[:, :3], np.zeros(5, np.int32))
    with pytest.raises(ValueError, match="must be integer class ids"):
        nn.NLLLoss()(LOGITS, PROBS)

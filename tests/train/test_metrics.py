"""Metrics: the values MindSpore's documentation prints for its examples, and scikit-learn's
value of the same metric on random data, accumulated over several updates."""
from __future__ import annotations

import numpy as np
import pytest
from sklearn import metrics as sk

import amber
from amber.train import (F1, MAE, MSE, Accuracy, Fbeta, Loss, Precision, Recall,
                         Top1CategoricalAccuracy, Top5CategoricalAccuracy,
                         TopKCategoricalAccuracy, get_metric_fn)

X = np.array([[0.2, 0.5], [0.3, 0.1], [0.9, 0.6]])
Y = np.array([1, 0, 1])
TOPK_X = np.array([[0.2, 0.5, 0.3, 0.6, 0.2], [0.1, 0.35, 0.5, 0.2, 0.],
                   [0.9, 0.6, 0.2, 0.01, 0.3]], np.float32)
TOPK_Y = np.array([2, 0, 1], np.float32)


def fed(metric, *batches):
    metric.clear()
    for batch in batches:
        metric.update(*batch)
    return metric


def test_mindspore_documented_examples():
    assert Accuracy()(amber.Tensor(X, amber.float32), Y) == pytest.approx(2 / 3)
    np.testing.assert_allclose(Precision()(X, Y), [0.5, 1.0])
    np.testing.assert_allclose(F1()(X, Y), [2 / 3, 2 / 3])
    assert TopKCategoricalAccuracy(3)(TOPK_X, TOPK_Y) == pytest.approx(2 / 3)
    assert Top1CategoricalAccuracy()(TOPK_X, TOPK_Y) == 0.0
    assert Top5CategoricalAccuracy()(TOPK_X, TOPK_Y) == 1.0
    x = np.array([0.1, 0.2, 0.6, 0.9], np.float32)
    assert MAE()(x, np.array([0.1, 0.25, 0.7, 0.9], np.float32)) == pytest.approx(0.0375, 1e-5)
    assert MSE()(x, np.array([0.1, 0.25, 0.5, 0.9], np.float32)) == pytest.approx(0.003125,
                                                                                   1e-5)
    assert Loss()(np.array(0.2, np.float32)) == pytest.approx(0.2)


def random_batches(n_batches=4, n=25, classes=7, seed=0):
    rng = np.random.default_rng(seed)
    return [(rng.standard_normal((n, classes)), rng.integers(0, classes, n))
            for _ in range(n_batches)]


def test_classification_metrics_equal_scikit_learn():
    batches = random_batches()
    scores = np.concatenate([b[0] for b in batches])
    labels = np.concatenate([b[1] for b in batches])
    predicted = scores.argmax(axis=1)
    assert fed(Accuracy(), *batches).eval() == pytest.approx(sk.accuracy_score(labels, predicted))
    for k, metric in ((1, Top1CategoricalAccuracy()), (2, TopKCategoricalAccuracy(2)),
                      (5, Top5CategoricalAccuracy())):
        expected = sk.top_k_accuracy_score(labels, scores, k=k, labels=range(7))
        assert fed(metric, *batches).eval() == pytest.approx(expected)
    kw = dict(average=None, labels=range(7), zero_division=0)
    np.testing.assert_allclose(fed(Precision(), *batches).eval(),
                               sk.precision_score(labels, predicted, **kw))
    np.testing.assert_allclose(fed(Recall(), *batches).eval(),
                               sk.recall_score(labels, predicted, **kw))
    np.testing.assert_allclose(fed(F1(), *batches).eval(), sk.f1_score(labels, predicted, **kw))
    np.testing.assert_allclose(fed(Fbeta(2), *batches).eval(),
                               sk.fbeta_score(labels, predicted, beta=2, **kw))
    assert fed(Recall(), *batches).eval(average=True) == pytest.approx(
        sk.recall_score(labels, predicted, average="macro"))


def test_one_hot_labels_equal_index_labels():
    scores, labels = random_batches(1)[0]
    onehot = np.eye(7)[labels]
    for metric in (Accuracy(), Precision(), Recall(), F1(), Top1CategoricalAccuracy()):
        np.testing.assert_allclose(metric(scores, onehot), type(metric)()(scores, labels))


def test_a_class_never_predicted_scores_zero_not_nan():
    scores = np.array([[1.0, 0.0, 0.0], [0.0, 1.0, 0.0]])
    out = Precision()(scores, np.array([0, 2]))
    assert np.isfinite(out).all() and out[2] == 0.0


def test_multilabel_accuracy_and_per_sample_precision_recall():
    rng = np.random.default_rng(3)
    y_pred = rng.integers(0, 2, (30, 4))
    y = rng.integers(0, 2, (30, 4))
    assert Accuracy("multilabel")(y_pred, y) == pytest.approx(sk.accuracy_score(y, y_pred))
    precision = fed(Precision("multilabel"), (y_pred[:10], y[:10]), (y_pred[10:], y[10:]))
    assert precision.eval(average=True) == pytest.approx(
        sk.precision_score(y, y_pred, average="samples", zero_division=0))
    recall = fed(Recall("multilabel"), (y_pred, y))
    assert recall.eval(average=True) == pytest.approx(
        sk.recall_score(y, y_pred, average="samples", zero_division=0))
    with pytest.raises(ValueError, match="0/1"):
        Accuracy("multilabel")(y_pred * 2, y)


def test_regression_metrics_equal_scikit_learn_on_1d_data():
    rng = np.random.default_rng(4)
    pred, target = rng.standard_normal(40), rng.standard_normal(40)
    halves = [(pred[:15], target[:15]), (pred[15:], target[15:])]
    assert fed(MAE(), *halves).eval() == pytest.approx(sk.mean_absolute_error(target, pred))
    assert fed(MSE(), *halves).eval() == pytest.approx(sk.mean_squared_error(target, pred))
    # MindSpore divides the summed error of [N, D] data by N (not N * D)
    two_d = rng.standard_normal((10, 3))
    assert MAE()(two_d, np.zeros((10, 3))) == pytest.approx(np.abs(two_d).sum() / 10)


def test_loss_is_the_mean_of_the_updates_and_indexes_pick_inputs():
    loss = fed(Loss(), (np.array(1.0),), (np.array([2.0, 4.0]),))
    assert loss.eval() == pytest.approx(2.0)
    picked = Accuracy().set_indexes([1, 2])
    assert picked(np.zeros(3), X, Y) == pytest.approx(2 / 3)


def test_errors_and_names():
    with pytest.raises(RuntimeError, match="no samples"):
        Accuracy().eval()
    with pytest.raises(ValueError, match="labels of shape"):
        Accuracy()(X, np.array([0, 1]))
    with pytest.raises(ValueError, match="classes"):
        fed(Accuracy(), (X, Y), (np.zeros((2, 3)), np.array([0, 1])))
    with pytest.raises(TypeError, match="eval_type"):
        Accuracy("regression")
    with pytest.raises(ValueError, match="at least 1"):
        TopKCategoricalAccuracy(0)
    with pytest.raises(TypeError, match="must be Tensors, lists or arrays"):
        Accuracy()(X, 3)
    assert isinstance(get_metric_fn("acc"), Accuracy) and isinstance(get_metric_fn("F1"), F1)
    with pytest.raises(KeyError, match="unknown metric"):
        get_metric_fn("auc")

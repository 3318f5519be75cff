"""`Model`: train equals the same loop written by hand around `amber.jit(TrainOneStepCell)`
(and compiles its step once), eval's metrics equal the metrics of the eager network's outputs,
predict equals eager, fit evaluates between epochs, sink mode reports per epoch, and the
arguments amber does not implement are refused."""
from __future__ import annotations

import numpy as np
import pytest

import amber
import amber.dataset as ds
from amber import nn
from amber.train import Accuracy, EarlyStopping, History, LambdaCallback, Loss, Model

RNG = np.random.default_rng(0)
X = RNG.standard_normal((96, 4)).astype(np.float32)
Y = (X[:, 0] - X[:, 2] > 0).astype(np.int32) + (X[:, 1] > 1).astype(np.int32)


def data(batch=16, drop=True, n=96):
    return ds.NumpySlicesDataset({"x": X[:n], "y": Y[:n]}, shuffle=False).batch(batch, drop)


def parts(seed=0):
    amber.set_seed(seed)
    net = nn.Dense(4, 3)
    loss = nn.SoftmaxCrossEntropyWithLogits(sparse=True, reduction="mean")
    return net, loss, nn.Momentum(net.trainable_params(), 0.1, 0.9)


def test_train_equals_a_hand_written_loop_and_compiles_the_step_once():
    net, loss, opt = parts()
    model = Model(net, loss, opt)
    losses = []
    record = LambdaCallback(on_train_step_end=lambda ctx: losses.append(
        float(ctx.original_args().net_outputs)))
    model.train(3, data(), callbacks=record)
    assert model._compiled["train"].stats.compiles == 1

    hand_net, hand_loss, hand_opt = parts()
    step = amber.jit(nn.TrainOneStepCell(nn.WithLossCell(hand_net, hand_loss), hand_opt))
    expected = [float(step(x, y)) for _ in range(3)
                for x, y in data().create_tuple_iterator(output_numpy=True)]
    np.testing.assert_allclose(losses, expected, rtol=1e-6, atol=1e-7)
    np.testing.assert_allclose(net.weight, hand_net.weight, rtol=1e-6, atol=1e-7)
    assert losses[-1] < losses[0]


def test_eval_and_predict_equal_the_eager_network():
    net, loss, opt = parts(1)
    model = Model(net, loss, opt, metrics={"acc": Accuracy(), "loss": Loss()})
    model.train(1, data(drop=False))
    results = model.eval(data(batch=40, drop=False))
    logits = net.construct(X)
    assert set(results) == {"acc", "loss"}
    assert results["acc"] == pytest.approx(float((logits.argmax(1) == Y).mean()))
    batch_losses = [float(loss(net.construct(X[k:k + 40]), Y[k:k + 40])) for k in (0, 40, 80)]
    assert results["loss"] == pytest.approx(np.mean(batch_losses), rel=1e-5)
    predicted = model.predict(amber.Tensor(X[:5]))
    assert isinstance(predicted, amber.Tensor)
    np.testing.assert_allclose(predicted, logits[:5], rtol=1e-5, atol=1e-6)
    assert model._compiled["predict"].stats.compiles == 1


def test_fit_evaluates_between_epochs_and_early_stopping_ends_it():
    net, loss, opt = parts(2)
    model = Model(net, loss, opt, metrics={"acc"})
    history, seen = History(), []
    watch = LambdaCallback(on_train_epoch_end=lambda ctx: seen.append(
        dict(ctx.original_args().eval_results)))
    stop = EarlyStopping(monitor="acc", patience=1, min_delta=2.0)  # never improves by 2
    model.fit(6, data(), data(batch=48), callbacks=[history, watch, stop])
    assert history.epoch["epoch"] == [1, 2] and stop.stopped_epoch == 2
    assert set(seen[0]) == {"acc", "eval_loss"} and len(history.history["acc"]) == 2
    assert history.history["acc"][-1] == model.eval(data(batch=48))["acc"]


def test_sink_mode_reports_once_per_epoch_of_sink_size_steps():
    net, loss, opt = parts(3)
    steps = []
    record = LambdaCallback(on_train_step_end=lambda ctx: steps.append(
        ctx.original_args().cur_step_num))
    Model(net, loss, opt).train(3, data(), callbacks=record, dataset_sink_mode=True,
                                sink_size=4)
    assert steps == [4, 8, 12]  # 12 steps: two passes over the 6 batches


def test_arguments_amber_does_not_implement_are_refused():
    net, loss, opt = parts()
    with pytest.raises(ValueError, match="amp_level"):
        Model(net, loss, opt, amp_level="O2")
    with pytest.raises(NotImplementedError, match="loss_scale_manager"):
        Model(net, loss, opt, loss_scale_manager=object())
    with pytest.raises(RuntimeError, match="no optimizer"):
        Model(net, loss).train(1, data())
    with pytest.raises(RuntimeError, match="metrics"):
        Model(net, loss, opt).eval(data())
    with pytest.raises(ValueError, match="loss_fn or an eval_network"):
        Model(net, metrics={"acc"})
    with pytest.raises(TypeError, match="expected a dataset"):
        Model(net, loss, opt).train(1, [(X, Y)])
    with pytest.raises(TypeError, match="Callback"):
        Model(net, loss, opt).train(1, data(), callbacks=[print])


def test_top_level_and_mindspore_paths():
    import importlib
    assert amber.Model is Model and amber.LossMonitor is amber.train.LossMonitor
    assert importlib.import_module("amber.train.callback").ModelCheckpoint \
        is amber.ModelCheckpoint
    assert importlib.import_module("amber.train.metrics").Accuracy is amber.Accuracy
    assert importlib.import_module("amber.train.serialization").load_checkpoint \
        is amber.load_checkpoint
    assert nn.WithEvalCell is amber.nn.wrap.WithEvalCell

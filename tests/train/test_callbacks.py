"""Callbacks as MindSpore documents them: the hook order `Model.train`/`eval` follow (the
`on_train_*` hooks reaching the older `begin`/`step_end`/... names), `request_stop`,
LossMonitor's lines and its NaN check, TimeMonitor, ModelCheckpoint's files, History (and
its plot) and LambdaCallback."""
from __future__ import annotations

import re

import numpy as np
import pytest

import amber
import amber.dataset as ds
from amber import nn
from amber.train import (Callback, CheckpointConfig, EarlyStopping, History, LambdaCallback,
                         LossMonitor, Model, ModelCheckpoint, RunContext, TimeMonitor)
from amber.train.hooks import InternalCallbackParam
from amber.train.plots import plot_curves

X = np.random.default_rng(0).standard_normal((40, 4)).astype(np.float32)
Y = (X[:, 0] > 0).astype(np.int32)


def data(batch=10):
    return ds.NumpySlicesDataset({"x": X, "y": Y}, shuffle=False).batch(batch)


def model(seed=0, metrics=None):
    amber.set_seed(seed)
    net = nn.Dense(4, 2)
    loss = nn.SoftmaxCrossEntropyWithLogits(sparse=True, reduction="mean")
    return Model(net, loss, nn.Momentum(net.trainable_params(), 0.1, 0.9), metrics=metrics)


class Recorder(Callback):
    """Overrides the older hook names, and one on_train_* hook, as user callbacks do."""

    def __init__(self, stop_at=None):
        self.calls, self.stop_at = [], stop_at

    def begin(self, ctx):
        self.calls.append(f"begin:{ctx.original_args().mode}")

    def on_train_epoch_begin(self, ctx):
        self.calls.append(f"epoch{ctx.original_args().cur_epoch_num}")

    def step_end(self, ctx):
        params = ctx.original_args()
        self.calls.append(f"step{params.cur_step_num}")
        if params.cur_step_num == self.stop_at:
            ctx.request_stop()

    def epoch_end(self, ctx):
        self.calls.append("epoch_end")

    def end(self, ctx):
        self.calls.append("end")


def test_train_calls_the_hooks_in_order_and_stops_on_request():
    rec = Recorder()
    model(metrics={"acc"}).train(2, data(20), callbacks=rec)
    assert rec.calls == ["begin:train", "epoch1", "step1", "step2", "epoch_end", "epoch2",
                         "step3", "step4", "epoch_end", "end"]
    rec = Recorder(stop_at=3)
    model().train(5, data(), callbacks=[rec])
    assert rec.calls == ["begin:train", "epoch1", "step1", "step2", "step3", "epoch_end",
                         "end"]
    rec = Recorder()
    model(metrics={"acc"}).eval(data(20), callbacks=rec)
    assert rec.calls == ["begin:eval", "step1", "step2", "epoch_end", "end"]


def test_cb_params_hold_what_mindspore_documents():
    seen = {}

    def grab(ctx):
        seen.update(ctx.original_args())

    m = model()
    m.train(1, data(), callbacks=LambdaCallback(on_train_step_end=grab))
    assert seen["train_network"] is m.train_network and seen["epoch_num"] == 1
    assert seen["batch_num"] == 4 and seen["cur_step_num"] == 4 and seen["mode"] == "train"
    assert isinstance(seen["net_outputs"], amber.Tensor) and seen["net_outputs"].shape == ()
    assert len(seen["train_dataset_element"]) == 2
    assert seen["parallel_mode"] == "stand_alone" and seen["device_number"] == 1
    with pytest.raises(TypeError, match="unknown hook"):
        LambdaCallback(on_step_end=print)


def test_loss_monitor_prints_mindspore_lines_and_stops_on_nan(capsys):
    model().train(2, data(), callbacks=LossMonitor(per_print_times=2))
    lines = capsys.readouterr().out.splitlines()
    assert [re.sub(r"loss is \S+", "loss is L", ln) for ln in lines] == [
        "epoch: 1 step: 2, loss is L", "epoch: 1 step: 4, loss is L",
        "epoch: 2 step: 2, loss is L", "epoch: 2 step: 4, loss is L"]
    params = InternalCallbackParam(net_outputs=amber.Tensor(np.float32("nan")), cur_step_num=7,
                                   batch_num=5, cur_epoch_num=2)
    with pytest.raises(ValueError, match="epoch: 2 step: 2. Invalid loss"):
        LossMonitor().on_train_step_end(RunContext(params))
    with pytest.raises(ValueError, match="per_print_times"):
        LossMonitor(-1)


def test_time_monitor_prints_epoch_and_step_times(capsys):
    model().train(1, data(), callbacks=TimeMonitor())
    out = capsys.readouterr().out
    assert re.fullmatch(r"Train epoch time: [\d.]+ ms, per step time: [\d.]+ ms\n", out)


def test_model_checkpoint_names_keeps_and_restores(tmp_path):
    config = CheckpointConfig(save_checkpoint_steps=3, keep_checkpoint_max=2,
                              append_info=["epoch_num"])
    m = model()
    ckpt = ModelCheckpoint(prefix="net", directory=tmp_path, config=config)
    m.train(2, data(), callbacks=ckpt)  # 8 steps: saved at 3, 6 and (the last step) 8
    assert sorted(p.name for p in tmp_path.glob("*.ckpt")) == ["net-2_2.ckpt", "net-2_4.ckpt"]
    assert ckpt.latest_ckpt_file_name == str(tmp_path / "net-2_4.ckpt")
    saved = amber.load_checkpoint(ckpt.latest_ckpt_file_name)
    assert int(np.asarray(saved["epoch_num"])) == 2 and "moments.weight" in saved
    np.testing.assert_array_equal(np.asarray(saved["weight"]), m.predict_network.weight)
    again = ModelCheckpoint(prefix="net", directory=tmp_path, config=config)
    model().train(1, data(), callbacks=again)  # the prefix is taken: nothing is overwritten
    assert again.latest_ckpt_file_name == str(tmp_path / "net_1-1_4.ckpt")
    assert len(list(tmp_path.glob("net-*.ckpt"))) == 2
    with pytest.raises(ValueError, match="both be 0"):
        CheckpointConfig(save_checkpoint_steps=0)


def test_history_plots_one_number_per_epoch_against_the_epoch(tmp_path, monkeypatch):
    history = History()
    with pytest.raises(ValueError, match="no numbers recorded yet"):
        history.plot(tmp_path / "none.png")
    history.on_train_begin(RunContext())
    for epoch, loss in ((2, 0.9), (3, 0.4), (4, 0.3)):  # NOTE: fit(4, initial_epoch=1): 2..4
        results = {"acc": 0.5 + loss / 10, "precision": np.array([0.5, loss]),
                   "eval_loss": loss} if epoch > 2 else None  # NOTE: evaluated from epoch 3
        history.on_train_epoch_end(RunContext(InternalCallbackParam(
            cur_epoch_num=epoch, net_outputs=amber.Tensor(np.float32(loss)),
            eval_results=results)))
    drawn = {}
    monkeypatch.setattr("amber.train.plots.plot_curves", lambda curves, path, title, epochs:
                        drawn.update(curves=curves, epochs=epochs) or path)
    history.plot(tmp_path / "curves.png")
    assert drawn["epochs"] == {"loss": [2, 3, 4], "acc": [3, 4], "eval_loss": [3, 4]}
    assert drawn["curves"] == {"loss": history.history["net_output"],  # NOTE: no precision:
                               "acc": history.history["acc"],           # one value per class
                               "eval_loss": history.history["eval_loss"]}
    monkeypatch.undo()
    pytest.importorskip("matplotlib", reason="History.plot needs matplotlib (examples extra)")
    from matplotlib.image import imread
    image = imread(history.plot(tmp_path / "curves.png", title="Dense"))
    assert image.shape[1] > 2 * image.shape[0]  # NOTE: three panels side by side
    assert image[..., :3].std() > 0.05
    with pytest.raises(ValueError, match="'loss' has 2 values for 3 epochs"):
        plot_curves({"loss": [1.0, 0.5]}, tmp_path / "bad.png", epochs={"loss": [1, 2, 3]})


def test_callbacks_are_context_managers_entered_for_the_run():
    events = []

    class Managed(Callback):
        def __enter__(self):
            events.append("enter")
            return self

        def __exit__(self, *err):
            events.append("exit")

        def on_train_begin(self, ctx):
            events.append("train")

    model().train(1, data(), callbacks=Managed())
    assert events == ["enter", "train", "exit"]


def test_early_stopping_waits_patience_epochs_and_restores_the_best_weights(capsys):
    net = nn.Dense(2, 1)
    stop = EarlyStopping(monitor="loss", patience=2, verbose=True, restore_best_weights=True)
    params = InternalCallbackParam(train_network=net)
    ctx = RunContext(params)
    stop.on_train_begin(ctx)
    for epoch, loss in enumerate([3.0, 2.0, 2.5, 2.6, 1.0], start=1):
        net.weight[...] = epoch
        params.update(cur_epoch_num=epoch, net_outputs=amber.Tensor(np.float32(loss)))
        stop.on_train_epoch_end(ctx)
        if ctx.get_stop_requested():
            break
    stop.on_train_end(ctx)
    assert stop.stopped_epoch == 4 and stop.best == 2.0
    assert (net.weight == 2).all()  # the weights of epoch 2, the best
    assert "Epoch 00004: early stopping" in capsys.readouterr().out
    with pytest.raises(ValueError, match="mode"):
        EarlyStopping(mode="up")

"""What `Model.train` and the dataset pipeline cost: one epoch of LeNet-5 on scikit-learn's
digits (1437 images, batches of 32, Adam; samples/ms_train_lenet.py's network and pipeline)
trained four ways, CPU seconds per epoch (median over epochs, after a first epoch that
compiles):

- hand:      the loop written by hand around `amber.jit(TrainOneStepCell)`, over batches
             prepared beforehand (no pipeline);
- Model:     `Model.train` over the same prepared batches (a NumpySlicesDataset + batch):
             the cost of Model's loop and callbacks; its losses are checked equal to hand's;
- pipeline:  `Model.train` over the sample's whole pipeline (decode-free uint8 images ->
             Resize, Rescale, Normalize, HWC2CHW, TypeCast per row -> batch), as a script runs;
- MindSpore: the sample's `Model.train` on MindSpore itself, in a child process, where
             mindspore is importable (its CPU time counts all its threads).

    python benchmarks/model_train.py [--epochs 5]
"""
from __future__ import annotations

import argparse
import importlib.util
import json
import statistics
import subprocess
import sys
from pathlib import Path
from typing import Any, Callable

sys.path.insert(0, str(Path(__file__).resolve().parent))

import harness  # noqa: E402  (one BLAS thread before NumPy loads)

import numpy as np  # noqa: E402

SAMPLE = Path(__file__).resolve().parent.parent / "samples" / "ms_train_lenet.py"


def load_sample() -> Any:
    """samples/ms_train_lenet.py as a module, its `import mindspore` answered by whatever
    `mindspore` this process has (amber's alias or the real one)."""
    spec = importlib.util.spec_from_file_location("ms_train_lenet", SAMPLE)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def epoch_seconds(run_epoch: Callable[[], Any], epochs: int) -> tuple[float, Any]:
    """(median CPU seconds of an epoch after a warm-up one, the last epoch's result)."""
    result = run_epoch()
    times = []
    for _ in range(epochs):
        start = harness.CLOCK()
        result = run_epoch()
        times.append(harness.CLOCK() - start)
    return statistics.median(times), result


def model_epochs(sample: Any, dataset: Any, epochs: int) -> tuple[float, list[float]]:
    """Model.train one epoch at a time over `dataset`; the losses of the last epoch."""
    import mindspore as ms
    ms.set_seed(1)
    net = sample.LeNet5()
    loss = ms.nn.SoftmaxCrossEntropyWithLogits(sparse=True, reduction="mean")
    model = ms.train.Model(net, loss, ms.nn.Adam(net.trainable_params(), learning_rate=0.003))
    losses: list[float] = []
    record = ms.train.LambdaCallback(on_train_step_end=lambda ctx: losses.append(
        float(ctx.original_args().net_outputs.asnumpy())))

    def run() -> list[float]:
        losses.clear()
        model.train(1, dataset, callbacks=record, dataset_sink_mode=False)
        return list(losses)
    return epoch_seconds(run, epochs)


def hand_epochs(sample: Any, batches: list, epochs: int) -> tuple[float, list[float]]:
    """The same training written by hand around amber.jit(TrainOneStepCell)."""
    import amber
    from amber import nn
    amber.set_seed(1)
    net = sample.LeNet5()
    loss = nn.SoftmaxCrossEntropyWithLogits(sparse=True, reduction="mean")
    step = amber.jit(nn.TrainOneStepCell(nn.WithLossCell(net, loss),
                                         nn.Adam(net.trainable_params(), learning_rate=0.003)))
    step.__wrapped__.set_train(True)
    return epoch_seconds(lambda: [float(step(x, y)) for x, y in batches], epochs)


def mindspore_epochs(epochs: int, installed: bool) -> dict[str, float] | None:
    """The pipeline version on MindSpore, in a child process (None: not installed)."""
    if not installed:
        return None
    done = subprocess.run([sys.executable, __file__, "--as-mindspore", "--epochs", str(epochs)],
                          capture_output=True, text=True, timeout=3600)
    if done.returncode != 0:
        print(f"MindSpore run failed: {done.stderr.strip().splitlines()[-1:]}")
        return None
    return json.loads(done.stdout.strip().splitlines()[-1])


def as_mindspore(epochs: int) -> None:
    """Child process: the pipeline version on the real MindSpore; prints JSON."""
    import mindspore.dataset as ds
    sample = load_sample()
    ds.config.set_seed(1)
    x_train, y_train, _, _ = sample.load_digits()
    seconds, _ = model_epochs(sample, sample.create_dataset(x_train, y_train, True), epochs)
    print(json.dumps({"seconds": seconds}))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--epochs", type=int, default=5, help="timed epochs (after one more)")
    parser.add_argument("--as-mindspore", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.as_mindspore:
        return as_mindspore(args.epochs)
    installed = importlib.util.find_spec("mindspore") is not None  # NOTE: before the alias
    import amber
    import amber.compat
    import amber.dataset as ds
    amber.compat.alias_mindspore()
    sample = load_sample()
    ds.config.set_seed(1)
    x_train, y_train, _, _ = sample.load_digits()
    pipeline = sample.create_dataset(x_train, y_train, training=True)
    prepared = [tuple(b) for b in ds.NumpySlicesDataset(
        {"image": x_train, "label": y_train}, shuffle=False).map(
        [amber.dataset.vision.Resize((32, 32), amber.dataset.vision.Inter.NEAREST),
         amber.dataset.vision.Rescale(1.0 / 255, 0.0),
         amber.dataset.vision.Normalize(mean=[0.3], std=[0.4]),
         amber.dataset.vision.HWC2CHW()], "image").map(
        amber.dataset.transforms.TypeCast(np.int32), "label").batch(
        sample.BATCH, drop_remainder=True).create_tuple_iterator(output_numpy=True)]
    flat = ds.NumpySlicesDataset({"image": np.concatenate([b[0] for b in prepared]),
                                  "label": np.concatenate([b[1] for b in prepared])},
                                 shuffle=False).batch(sample.BATCH, drop_remainder=True)
    hand, hand_losses = hand_epochs(sample, prepared, args.epochs)
    model, model_losses = model_epochs(sample, flat, args.epochs)
    np.testing.assert_allclose(model_losses, hand_losses, rtol=1e-5, atol=1e-6)
    piped, _ = model_epochs(sample, pipeline, args.epochs)
    rows = [("hand loop, amber.jit(TrainOneStepCell)", hand),
            ("Model.train, prepared batches", model), ("Model.train, full pipeline", piped)]
    theirs = mindspore_epochs(args.epochs, installed)
    if theirs is not None:
        rows.append(("MindSpore 2.x Model.train, full pipeline", theirs["seconds"]))
    print(f"LeNet-5, digits, {len(prepared)} steps of {sample.BATCH} per epoch; CPU seconds "
          f"per epoch (median of {args.epochs}); losses of Model.train == hand loop (1e-5)")
    for label, seconds in rows:
        print(f"  {label:44s} {seconds:7.3f} s   {seconds / hand:6.2f}x hand")


if __name__ == "__main__":
    main()

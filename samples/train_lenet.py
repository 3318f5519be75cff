"""Train LeNet-5 on scikit-learn's handwritten digits (1797 8x8 images shipped inside
scikit-learn, so this runs offline), the way a MindSpore user writes it: `WithLossCell`, an
optimizer with a cosine learning-rate schedule, `TrainOneStepCell`, and `amber.jit` compiling the
whole train step (forward, backward and Adam update) into one NumPy function.

    pip install -e ".[examples]" && python samples/train_lenet.py [--plot curves.png]

The images are scaled up 4x (each pixel a 4x4 block) to LeNet's 32x32 input and standardized;
80% train, 20% test, shuffled mini-batches of 32. Each epoch prints its mean loss and the train
and test accuracy; the last line is the final test accuracy. `--eager` runs the same training op
by op (`jit_enabled=False`); `amber dump samples/train_lenet.py:LeNetTrainStep` shows the generated
train step (built by `LeNetTrainStep()`, inputs from `example_inputs()`).
"""
from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

# NOTE: one BLAS thread unless you chose otherwise: this model's matrices are small, and on two
# cores a second BLAS thread spins more than it helps (4x the CPU time here). Set before NumPy.
for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import numpy as np  # noqa: E402

import amber  # noqa: E402
from amber import nn  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent))
from lenet import LeNet5  # noqa: E402

BATCH = 32


def load_digits_32x32(seed: int = 0) -> tuple[np.ndarray, ...]:
    """(train images, train labels, test images, test labels): float32 [N, 1, 32, 32] images
    standardized with the training set's statistics, int32 labels; a seeded 80/20 split."""
    from sklearn.datasets import load_digits
    digits = load_digits()
    images = np.kron(digits.images.astype(np.float32) / 16.0,
                     np.ones((4, 4), np.float32))[:, None]
    labels = digits.target.astype(np.int32)
    order = np.random.default_rng(seed).permutation(len(labels))
    cut = int(len(labels) * 0.8)
    train, test = order[:cut], order[cut:]
    mean, std = images[train].mean(), images[train].std()
    images = (images - mean) / std
    return images[train], labels[train], images[test], labels[test]


class LeNetTrainStep(nn.TrainOneStepCell):
    """LeNet-5, softmax cross-entropy, Adam with a cosine-decayed learning rate (one value per
    step for `epochs` epochs of `steps_per_epoch` steps): one call is one training step."""

    def __init__(self, epochs: int = 10, steps_per_epoch: int = 44, max_lr: float = 0.003
                 ) -> None:
        net = LeNet5()
        loss = nn.WithLossCell(net, nn.SoftmaxCrossEntropyWithLogits(sparse=True,
                                                                     reduction="mean"))
        lr = nn.cosine_decay_lr(min_lr=1e-4, max_lr=max_lr, total_step=epochs * steps_per_epoch,
                                step_per_epoch=steps_per_epoch, decay_epoch=epochs)
        super().__init__(loss, nn.Adam(net.trainable_params(), learning_rate=lr))


def example_inputs() -> tuple[np.ndarray, np.ndarray]:
    """A batch (images, labels) for `amber dump`/`amber export` of LeNetTrainStep."""
    rng = np.random.default_rng(0)
    return (rng.standard_normal((BATCH, 1, 32, 32), dtype=np.float32),
            rng.integers(0, 10, BATCH).astype(np.int32))


def accuracy(predict: object, images: np.ndarray, labels: np.ndarray) -> float:
    """The fraction of `images` whose largest logit is at the right label."""
    return float((predict(images).argmax(axis=1) == labels).mean())


def train(epochs: int = 10, seed: int = 0, eager: bool = False, progress: bool = True,
          curves: dict[str, list[float]] | None = None) -> tuple[list[float], float, nn.Cell]:
    """Train from `seed`; returns (mean loss of each epoch, final test accuracy, the network).
    `curves`, if given, receives each epoch's loss and train and test accuracy."""
    from tqdm import tqdm
    x_train, y_train, x_test, y_test = load_digits_32x32(seed)
    steps = len(y_train) // BATCH  # NOTE: the last partial batch is dropped: one batch shape
    amber.set_seed(seed)
    step = LeNetTrainStep(epochs, steps)
    net = step.network.backbone_network
    run_step = step if eager else amber.jit(step)
    predict = net if eager else amber.jit(net)
    rng = np.random.default_rng(seed)
    history = []
    for epoch in range(1, epochs + 1):
        order = rng.permutation(len(y_train))
        total = 0.0
        step.set_train(True)
        bar = tqdm(range(steps), desc=f"epoch {epoch}/{epochs}", leave=False,
                   disable=not progress, unit="batch")
        for k in bar:
            batch = order[k * BATCH:(k + 1) * BATCH]
            loss = float(run_step(x_train[batch], y_train[batch]))
            total += loss
            bar.set_postfix(loss=f"{loss:.3f}")
        step.set_train(False)
        history.append(total / steps)
        train_acc = accuracy(predict, x_train, y_train)
        test_acc = accuracy(predict, x_test, y_test)
        if curves is not None:
            for name, value in (("loss", history[-1]), ("train accuracy", train_acc),
                                ("test accuracy", test_acc)):
                curves.setdefault(name, []).append(value)
        if progress:
            print(f"epoch {epoch:2d}: loss {history[-1]:.4f}  train accuracy {train_acc:.3f}  "
                  f"test accuracy {test_acc:.3f}")
    return history, test_acc, net


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--epochs", type=int, default=10)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--eager", action="store_true",
                        help="run op by op (jit_enabled=False) instead of compiled")
    parser.add_argument("--save", metavar="FILE.ckpt", help="save the trained weights")
    parser.add_argument("--plot", metavar="FILE.png", help="draw the loss and accuracy curves "
                        "(needs matplotlib, in the examples extra)")
    args = parser.parse_args()
    if args.eager:
        amber.set_context(jit_enabled=False)
    start = time.perf_counter()
    curves: dict[str, list[float]] = {}
    _, test_acc, net = train(args.epochs, args.seed, args.eager, curves=curves)
    print(f"{time.perf_counter() - start:.1f} s ({'eager' if args.eager else 'compiled'})")
    if args.save:
        amber.save_checkpoint(net, args.save)
        print(f"saved {args.save}")
    if args.plot:
        from amber.train.plots import plot_curves
        print(f"plotted {plot_curves(curves, args.plot, title='LeNet-5 on digits')}")
    print(f"test accuracy: {test_acc:.2f}")


if __name__ == "__main__":
    main()

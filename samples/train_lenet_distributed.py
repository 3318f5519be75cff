"""Train LeNet-5 on the handwritten digits data-parallel, on N processes, with MindSpore's API:

    pip install -e ".[examples,distributed]"
    mpiexec -n 2 python samples/train_lenet_distributed.py

Each process (rank) holds the whole model and, at every step, trains on its own 32/N rows of
the same global batch of 32 (`shard_rows`); `TrainOneStepCell`, built in
ParallelMode.DATA_PARALLEL, averages the gradients over the ranks with one all-reduce per step,
so the ranks stay identical and the training is the one-process training of
samples/train_lenet.py (same batches, same steps, same test accuracy), spread over N cores.
Started without mpiexec, it is that one-process training. Only rank 0 prints and saves.
"""
from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")  # NOTE: one BLAS thread per rank: the ranks are the cores

import numpy as np  # noqa: E402

import amber  # noqa: E402
from amber.communication import get_group_size, get_rank, init, shard_rows  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent))
from train_lenet import BATCH, LeNetTrainStep, accuracy, load_digits_32x32  # noqa: E402


class DataParallelLeNetStep(LeNetTrainStep):
    """samples/train_lenet.py's train step built in ParallelMode.DATA_PARALLEL: it starts from
    rank 0's weights and averages its gradients over the ranks at every step."""

    def __init__(self, epochs: int = 10, steps_per_epoch: int = 44) -> None:
        amber.set_auto_parallel_context(parallel_mode=amber.ParallelMode.DATA_PARALLEL,
                                        gradients_mean=True)
        try:
            super().__init__(epochs, steps_per_epoch)
        finally:  # NOTE: the mode is read when a step is built; leave the process as it was
            amber.reset_auto_parallel_context()


def example_inputs() -> tuple[np.ndarray, np.ndarray]:
    """This rank's rows of a batch, for `amber dump`/`amber export` of DataParallelLeNetStep."""
    rng = np.random.default_rng(0)
    return shard_rows(rng.standard_normal((BATCH, 1, 32, 32), dtype=np.float32),
                      rng.integers(0, 10, BATCH).astype(np.int32))


def train(epochs: int = 10, seed: int = 0) -> tuple[list[float], float, amber.nn.Cell]:
    """Data-parallel training from `seed`: (mean loss of each epoch on rank 0's rows, final
    test accuracy, the network)."""
    init()
    if BATCH % get_group_size():
        raise SystemExit(f"the global batch of {BATCH} does not split over {get_group_size()} "
                         "ranks; use 1, 2, 4, 8, 16 or 32 processes")
    x_train, y_train, x_test, y_test = load_digits_32x32(seed)
    steps = len(y_train) // BATCH
    amber.set_seed(seed)
    step = DataParallelLeNetStep(epochs, steps)
    net = step.network.backbone_network
    run_step, predict = amber.jit(step), amber.jit(net)
    rng = np.random.default_rng(seed)  # NOTE: the same order on every rank
    history = []
    for epoch in range(1, epochs + 1):
        order = rng.permutation(len(y_train))
        total = 0.0
        step.set_train(True)
        for k in range(steps):
            batch = order[k * BATCH:(k + 1) * BATCH]
            total += float(run_step(*shard_rows(x_train[batch], y_train[batch])))
        step.set_train(False)
        history.append(total / steps)
        test_acc = accuracy(predict, x_test, y_test)
        if get_rank() == 0:
            print(f"epoch {epoch:2d}: loss {history[-1]:.4f}  test accuracy {test_acc:.3f}",
                  flush=True)
    return history, test_acc, net


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--epochs", type=int, default=10)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--save", metavar="FILE.ckpt", help="save the trained weights (rank 0)")
    args = parser.parse_args()
    start = time.perf_counter()
    _, test_acc, net = train(args.epochs, args.seed)
    if args.save:
        amber.save_checkpoint(net, args.save)  # NOTE: writes on rank 0 only
    if get_rank() == 0:
        print(f"{time.perf_counter() - start:.1f} s on {get_group_size()} process(es)")
        print(f"test accuracy: {test_acc:.2f}")


if __name__ == "__main__":
    main()

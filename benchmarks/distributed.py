"""Data-parallel throughput: one process vs `mpiexec -n 2`, each with one BLAS thread, on the MLP
784-1024-10 and on LeNet-5, global batch 256 (each of N ranks trains on 256/N rows), compiled
train steps (SGD). Prints samples/s, the speed-up, the scaling efficiency (speed-up / N) and the
all-reduce's share of a step.

    pip install -e ".[distributed]" && python benchmarks/distributed.py [--steps 30] [--ranks 2]

The script launches itself: once alone (stand-alone training, the baseline), once under
`mpiexec -n N` (data-parallel). Each step is timed from a barrier (rank 0's time; the ranks run
in lockstep) and samples/s is the global batch over the median step, which other load on the
machine disturbs less than the mean (also printed). The all-reduce's share is measured in the
same data-parallel run: after the timed steps, each rank times `ops.all_reduce_grads` on
gradients of the model's sizes (median, a barrier before each: the reduction itself, not the
wait for a slower rank). Run it when the machine is quiet: a 2-process job waits for its slower
rank at every step, so load from other programs costs it far more than one process.
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[_var] = "1"  # NOTE: before NumPy: one core per rank, the comparison's premise

import numpy as np  # noqa: E402

import amber  # noqa: E402
from amber import communication as comm  # noqa: E402
from amber import nn, ops  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "samples"))
from lenet import LeNet5  # noqa: E402

GLOBAL_BATCH = 256


def mlp() -> nn.Cell:
    return nn.SequentialCell([nn.Dense(784, 1024, activation="relu"), nn.Dense(1024, 10)])


MODELS = {"MLP 784-1024-10": (mlp, (784,)), "LeNet-5": (LeNet5, (1, 32, 32))}


def measure(name: str, steps: int, parallel: bool) -> dict[str, float]:
    """This rank's timing of `steps` compiled train steps of model `name`."""
    build, shape = MODELS[name]
    if parallel:
        amber.set_auto_parallel_context(parallel_mode=amber.ParallelMode.DATA_PARALLEL,
                                        gradients_mean=True)
    amber.set_seed(0)
    net = build()
    loss = nn.WithLossCell(net, nn.SoftmaxCrossEntropyWithLogits(sparse=True,
                                                                 reduction="mean"))
    step = amber.jit(nn.TrainOneStepCell(loss, nn.SGD(net.trainable_params(), 0.01)))
    amber.reset_auto_parallel_context()
    rng = np.random.default_rng(0)
    x = rng.standard_normal((GLOBAL_BATCH, *shape), dtype=np.float32)
    y = rng.integers(0, 10, GLOBAL_BATCH).astype(np.int32)
    if parallel:
        x, y = comm.shard_rows(x, y)
    for _ in range(3):  # NOTE: compile and warm up
        step(x, y)
    barrier = comm_barrier()
    times = []
    for _ in range(steps):
        barrier()  # NOTE: each step timed from a common start, as the job runs in lockstep
        begin = time.perf_counter()
        step(x, y)
        times.append(time.perf_counter() - begin)
    result = {"step_s": float(np.median(times)), "mean_step_s": float(np.mean(times))}
    result["samples_per_s"] = GLOBAL_BATCH / result["step_s"]
    if parallel:
        grads = tuple(np.ones(p.shape, p.dtype) for p in net.trainable_params())
        spent = []
        for _ in range(steps):
            barrier()
            begin = time.perf_counter()
            ops.all_reduce_grads(grads)
            spent.append(time.perf_counter() - begin)
        result["all_reduce_s"] = float(np.median(spent))
        result["all_reduce_share"] = result["all_reduce_s"] / result["step_s"]
    return result


def comm_barrier():
    """MPI's barrier across the job (nothing alone)."""
    from amber.ops.collective import mpi_world
    world = mpi_world()
    return (lambda: None) if world is None else world.Barrier


def worker(steps: int, parallel: bool) -> None:
    """Measure every model; rank 0 prints one JSON line."""
    results = {name: measure(name, steps, parallel) for name in MODELS}
    if comm.get_rank() == 0:
        print("RESULT " + json.dumps(results), flush=True)


def launch(ranks: int, steps: int) -> dict:
    """Run this script as a worker: alone when `ranks` is 1, else under `mpiexec -n ranks`."""
    me = [sys.executable, __file__, "--worker", "--steps", str(steps)]
    if ranks > 1:
        exe = shutil.which("mpiexec", path=os.path.dirname(sys.executable)) or "mpiexec"
        version = subprocess.run([exe, "--version"], capture_output=True, text=True).stdout
        extra = ["--allow-run-as-root"] if "Open MPI" in version and os.geteuid() == 0 else []
        me = [exe, *extra, "-n", str(ranks), *me, "--parallel"]
    out = subprocess.run(me, capture_output=True, text=True, check=True).stdout
    line = next(line for line in out.splitlines() if line.startswith("RESULT "))
    return json.loads(line[len("RESULT "):])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--steps", type=int, default=30)
    parser.add_argument("--ranks", type=int, default=2)
    parser.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--parallel", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        return worker(args.steps, args.parallel)
    alone, many = launch(1, args.steps), launch(args.ranks, args.steps)
    print(f"Data-parallel train step (SGD), global batch {GLOBAL_BATCH}, one BLAS thread per "
          f"process, {args.steps} timed steps; machine load {os.getloadavg()[0]:.1f}")
    print(f"{'model':16} {'1 proc samples/s':>17} {f'{args.ranks} procs samples/s':>18} "
          f"{'speed-up':>9} {'efficiency':>11} {'all-reduce share':>17} {'mean-step speed-up':>19}")
    for name in MODELS:
        one, n = alone[name], many[name]
        speedup = n["samples_per_s"] / one["samples_per_s"]
        print(f"{name:16} {one['samples_per_s']:17.0f} {n['samples_per_s']:18.0f} "
              f"{speedup:8.2f}x {speedup / args.ranks:10.0%} "
              f"{n['all_reduce_share']:16.1%} {one['mean_step_s'] / n['mean_step_s']:18.2f}x")


if __name__ == "__main__":
    main()

"""Data-parallel throughput: one process vs `mpiexec -n 2`, each with one BLAS thread, on the MLP
784-1024-10 and on LeNet-5, global batch 256 (each of N ranks trains on 256/N rows), compiled
train steps (SGD). Prints samples/s, the speed-up, the scaling efficiency (speed-up / N) and the
all-reduce's share of a step, from wall-clock time and from CPU time, with the machine's load.

    pip install -e ".[distributed]" && python benchmarks/distributed.py --steps 40

The script launches itself, `--rounds` times in turn (so both see the same load): alone
(stand-alone training, the baseline) and under `mpiexec -n N` (data-parallel). Each step is
timed from a barrier (rank 0's figures; the ranks run in lockstep): wall time and CPU time
(time.process_time), medians over the steps and then over the rounds. On a busy machine the
wall-clock speed-up is unfair to the job that needs two cores at once, so the CPU figures
project it: CPU per step alone / CPU per step on one rank. A rank's CPU time includes its spin
in the all-reduce while the other rank is descheduled, so the projection replaces the
reduction's CPU time inside the step with the reduction's own cost, timed after the steps with
a barrier before each (also the all-reduce share).
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import time
import types
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
    in_step = time_reductions_in_compiled_steps()
    barrier = comm_barrier()
    wall, cpu = [], []
    for _ in range(steps):
        barrier()  # NOTE: each step timed from a common start, as the job runs in lockstep
        begin, begin_cpu = time.perf_counter(), time.process_time()
        step(x, y)
        wall.append(time.perf_counter() - begin)
        cpu.append(time.process_time() - begin_cpu)
    result = {"step_s": float(np.median(wall)), "cpu_step_s": float(np.median(cpu)),
              "reduce_cpu_in_step_s": float(np.median(in_step[-steps:] or [0.0]))}
    if parallel and len(in_step) != steps:
        raise RuntimeError(f"timed {len(in_step)} all-reduces in {steps} steps")
    if parallel:
        grads = tuple(np.ones(p.shape, p.dtype) for p in net.trainable_params())
        spent, spent_cpu = [], []
        for _ in range(steps):
            barrier()
            begin, begin_cpu = time.perf_counter(), time.process_time()
            ops.all_reduce_grads(grads, in_place=True)
            spent.append(time.perf_counter() - begin)
            spent_cpu.append(time.process_time() - begin_cpu)
        result["all_reduce_s"] = float(np.median(spent))
        result["all_reduce_cpu_s"] = float(np.median(spent_cpu))
    return result


def time_reductions_in_compiled_steps() -> list[float]:
    """Wrap the all-reduce kernel of every loaded compiled step (a generated module's copy of
    the helper) with a CPU timer; the list its calls' CPU seconds are appended to."""
    import gc
    spent: list[float] = []
    for kernel in [f for f in gc.get_objects() if isinstance(f, types.FunctionType)
                   and f.__name__ == "all_reduce_grads_kernel"
                   and f.__module__.startswith("amber_generated")]:
        def timed(*args, kernel=kernel, **kwargs):
            begin = time.process_time()
            try:
                return kernel(*args, **kwargs)
            finally:
                spent.append(time.process_time() - begin)
        kernel.__globals__["all_reduce_grads_kernel"] = timed
    return spent


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


def median_over_rounds(rounds: list[dict]) -> dict:
    """{model: {figure: median over the rounds}}."""
    return {name: {key: float(np.median([r[name][key] for r in rounds]))
                   for key in rounds[0][name]} for name in MODELS}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--steps", type=int, default=40)
    parser.add_argument("--ranks", type=int, default=2)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--parallel", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        return worker(args.steps, args.parallel)
    loads, alone_rounds, many_rounds = [os.getloadavg()[0]], [], []
    for _ in range(args.rounds):  # NOTE: interleaved, so both see the same load
        alone_rounds.append(launch(1, args.steps))
        many_rounds.append(launch(args.ranks, args.steps))
        loads.append(os.getloadavg()[0])
    alone, many = median_over_rounds(alone_rounds), median_over_rounds(many_rounds)
    print(f"Data-parallel train step (SGD), global batch {GLOBAL_BATCH}, one BLAS thread per "
          f"process, {args.steps} timed steps x {args.rounds} rounds; machine load (1 min) "
          f"{min(loads):.1f}..{max(loads):.1f} on {os.cpu_count()} cores")
    n = args.ranks
    print(f"{'':16} {'wall clock':^46} | {'CPU time':^42}")
    print(f"{'model':16} {'1 proc ms':>9} {f'{n} procs ms':>10} {'samples/s':>14} "
          f"{'speed-up':>8} | {'1 proc ms':>9} {f'{n} procs ms':>10} {'reduce ms':>9} "
          f"{'projected':>9} {'share':>6}")
    for name in MODELS:
        one, par = alone[name], many[name]
        # NOTE: the reduction's CPU time in the step includes spinning for a descheduled rank
        own_cpu = par["cpu_step_s"] - par["reduce_cpu_in_step_s"] + par["all_reduce_cpu_s"]
        rates = f"{GLOBAL_BATCH / one['step_s']:.0f}>{GLOBAL_BATCH / par['step_s']:.0f}"
        print(f"{name:16} {one['step_s'] * 1e3:9.2f} {par['step_s'] * 1e3:10.2f} {rates:>14} "
              f"{one['step_s'] / par['step_s']:7.2f}x | {one['cpu_step_s'] * 1e3:9.2f} "
              f"{own_cpu * 1e3:10.2f} {par['all_reduce_cpu_s'] * 1e3:9.2f} "
              f"{one['cpu_step_s'] / own_cpu:8.2f}x {par['all_reduce_cpu_s'] / own_cpu:6.1%}")
    print(f"(CPU '{n} procs': a rank's step with its all-reduce timed alone; 'projected' is the "
          f"speed-up on {n} idle cores; efficiency = speed-up / {n})")


if __name__ == "__main__":
    main()

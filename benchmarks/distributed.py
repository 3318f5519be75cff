"""Data-parallel throughput: one process vs `mpiexec -n 2`, each with one BLAS thread, on the MLP
784-1024-10 and on LeNet-5, global batch 256 (each of N ranks trains on 256/N rows), compiled
train steps (SGD). Prints wall-clock and CPU figures per step, the speed-up, and the
all-reduce's share of a step, with the machine's load.

    pip install -e ".[distributed]" && python benchmarks/distributed.py --steps 40

The script launches itself `--rounds` times in turn (so both see the same load): alone
(stand-alone training, the baseline) and under `mpiexec -n N` (data-parallel).

- Wall clock: each step timed from a barrier (rank 0's figures; the ranks run in lockstep),
  medians over steps, then over rounds. This is the real speed-up, on a quiet machine only:
  a job that needs N cores at once suffers from other load far more than one process.
- CPU time (time.process_time), which other load disturbs less: the alone run times, in
  turn, the stand-alone step on 256 rows and one rank's data-parallel step on 256/N rows (in a
  world of one: all of it, the copy into the flat buffer and the update included, but the
  MPI transfer); the N-rank run first times the all-reduce of the model's gradients, each
  after a barrier, whose fastest time is its cost when no rank is descheduled mid-way (on a
  busy machine its median is mostly a rank spinning for another one), less the fastest copy
  of the gradients into the flat buffer (the rank's step holds that copy already): the
  transfer. Projected speed-up = stand-alone step / (rank's step + transfer): the speed-up
  on N idle cores. The
  N-rank job's own CPU time per step is printed too; on a busy machine it counts a rank's
  spinning in the all-reduce while the other rank is descheduled.
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
from amber.ops.collective import flat_buffers  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "samples"))
from lenet import LeNet5  # noqa: E402

GLOBAL_BATCH = 256


def mlp() -> nn.Cell:
    return nn.SequentialCell([nn.Dense(784, 1024, activation="relu"), nn.Dense(1024, 10)])


MODELS = {"MLP 784-1024-10": (mlp, (784,)), "LeNet-5": (LeNet5, (1, 32, 32)),
          "MLP, NumPy by hand": (mlp, (784,))}
HAND_WRITTEN = "MLP, NumPy by hand"
"""The same MLP step written by hand in NumPy (and mpi4py), no amber: what the machine allows."""


def hand_written_step(net: nn.Cell, x: np.ndarray, y: np.ndarray, parallel: bool):
    """The MLP's SGD step (softmax cross-entropy, mean over the global batch), doing only what
    it must: the weight-gradient GEMMs write into a flat buffer with the rate and 1/N on
    their small operand, one in-place all-reduce, one pass `param -= grad`."""
    from amber.ops.collective import mpi_world
    world = mpi_world() if parallel else None
    params = [np.array(p) for p in net.trainable_params()]  # w0, b0, w1, b1
    flat = np.empty(sum(p.size for p in params), np.float32)
    grads, start = [], 0
    for p in params:
        grads.append(flat[start:start + p.size].reshape(p.shape))
        start += p.size
    scale = np.float32(0.01 / GLOBAL_BATCH)  # NOTE: rate x the global batch's mean
    rows = np.arange(len(y))

    def step():
        w0, b0, w1, b1 = params
        h = x @ w0.T
        h += b0
        np.maximum(h, 0, out=h)
        logits = h @ w1.T
        logits += b1
        logits -= logits.max(axis=1, keepdims=True)
        probs = np.exp(logits)
        probs /= probs.sum(axis=1, keepdims=True)
        probs[rows, y] -= 1
        probs *= scale
        dh = probs @ w1
        dh *= h > 0
        np.matmul(probs.T, h, out=grads[2])
        np.sum(probs, axis=0, out=grads[3])
        np.matmul(dh.T, x, out=grads[0])
        np.sum(dh, axis=0, out=grads[1])
        if world is not None:
            from mpi4py import MPI
            world.Allreduce(MPI.IN_PLACE, flat, op=MPI.SUM)
        for p, g in zip(params, grads):
            np.subtract(p, g, out=p)
    return step


def build(name: str, parallel: bool, rows: slice):
    """The compiled train step of model `name` (data-parallel if `parallel`) and its batch."""
    make, shape = MODELS[name]
    if parallel:
        amber.set_auto_parallel_context(parallel_mode=amber.ParallelMode.DATA_PARALLEL,
                                        gradients_mean=True)
    amber.set_seed(0)
    net = make()
    loss = nn.WithLossCell(net, nn.SoftmaxCrossEntropyWithLogits(sparse=True,
                                                                 reduction="mean"))
    step = amber.jit(nn.TrainOneStepCell(loss, nn.SGD(net.trainable_params(), 0.01)))
    amber.reset_auto_parallel_context()
    rng = np.random.default_rng(0)
    x = rng.standard_normal((GLOBAL_BATCH, *shape), dtype=np.float32)
    y = rng.integers(0, 10, GLOBAL_BATCH).astype(np.int32)
    if name == HAND_WRITTEN:
        step = hand_written_step(net, x[rows], y[rows], parallel)
        for _ in range(3):
            step()
        return net, step
    for _ in range(3):  # NOTE: compile and warm up
        step(x[rows], y[rows])
    return net, lambda: step(x[rows], y[rows])


def measure(name: str, steps: int, parallel: bool) -> dict[str, float]:
    """This rank's wall and CPU time of `steps` compiled train steps of model `name`."""
    rows = slice(None)
    if parallel:
        share = GLOBAL_BATCH // comm.get_group_size()
        rows = slice(comm.get_rank() * share, (comm.get_rank() + 1) * share)
    _, step = build(name, parallel, rows)
    in_step = time_reductions_in_compiled_steps()
    barrier = comm_barrier()
    wall, cpu = [], []
    for _ in range(steps):
        barrier()  # NOTE: each step timed from a common start, as the job runs in lockstep
        begin, begin_cpu = time.perf_counter(), time.process_time()
        step()
        wall.append(time.perf_counter() - begin)
        cpu.append(time.process_time() - begin_cpu)
    if name == HAND_WRITTEN:
        in_step = []  # NOTE: its all-reduce is MPI's own call, not amber's kernel
    elif parallel and len(in_step) != steps:
        raise RuntimeError(f"timed {len(in_step)} all-reduces in {steps} steps")
    result = {"step_s": float(np.median(wall)), "cpu_step_s": float(np.median(cpu)),
              "cpu_without_reduce_s": float(np.median(np.subtract(cpu, in_step or 0.0)))}
    return result


def measure_all_reduce(name: str, repeats: int) -> dict[str, float]:
    """CPU time of the all-reduce of model `name`'s gradients, each call after a barrier."""
    amber.set_seed(0)
    grads = tuple(np.ones(p.shape, p.dtype) for p in MODELS[name][0]().trainable_params())
    barrier = comm_barrier()
    spent, copying = [], []
    for _ in range(repeats):
        barrier()
        begin = time.process_time()
        ops.all_reduce_grads(grads, in_place=True)
        spent.append(time.process_time() - begin)
        begin = time.process_time()  # NOTE: the copy into the flat buffer, which the rank's
        flat_buffers(grads, 1.0 / comm.get_group_size())  # step timed alone does too
        copying.append(time.process_time() - begin)
    return {"all_reduce_cpu_s": float(np.median(spent)),
            "all_reduce_cpu_min_s": float(np.min(spent)),
            "copy_in_cpu_min_s": float(np.min(copying))}


def measure_cpu_in_turn(name: str, steps: int, ranks: int) -> dict[str, float]:
    """CPU time of the stand-alone step on the whole batch and of one rank's data-parallel
    step on its 1/`ranks` of the rows (alone: no MPI transfer), timed in turn."""
    _, alone = build(name, False, slice(None))
    _, rank = build(name, True, slice(0, GLOBAL_BATCH // ranks))
    alone_cpu, rank_cpu = [], []
    for _ in range(steps):
        for step, spent in ((alone, alone_cpu), (rank, rank_cpu)):
            begin = time.process_time()
            step()
            spent.append(time.process_time() - begin)
    return {"alone_cpu_s": float(np.median(alone_cpu)),
            "rank_cpu_s": float(np.median(rank_cpu))}


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


def worker(steps: int, parallel: bool, ranks: int) -> None:
    """Measure every model; rank 0 prints one JSON line."""
    # NOTE: the all-reduces first: a process that has just trained hard gets descheduled
    # more often on a busy machine, so its partner spins longer
    reduces = {name: measure_all_reduce(name, 4 * steps) for name in MODELS} if parallel else {}
    results = {name: {**measure(name, steps, parallel), **reduces.get(name, {})}
               for name in MODELS}
    if not parallel:
        for name in MODELS:
            results[name].update(measure_cpu_in_turn(name, steps, ranks))
    if comm.get_rank() == 0:
        print("RESULT " + json.dumps(results), flush=True)


def launch(ranks: int, steps: int, parallel_ranks: int | None = None,
           amber_dir: str | None = None) -> dict:
    """Run this script as a worker: alone when `ranks` is 1 (measuring a rank's step of a
    `parallel_ranks` job in turn), else under `mpiexec -n ranks`; with the amber at
    `amber_dir` (a checkout, the folder named amber) if given."""
    me = [sys.executable, __file__, "--worker", "--steps", str(steps),
          "--ranks", str(parallel_ranks or ranks)]
    if ranks > 1:
        exe = shutil.which("mpiexec", path=os.path.dirname(sys.executable)) or "mpiexec"
        version = subprocess.run([exe, "--version"], capture_output=True, text=True).stdout
        extra = ["--allow-run-as-root"] if "Open MPI" in version and os.geteuid() == 0 else []
        me = [exe, *extra, "-n", str(ranks), *me, "--parallel"]
    env = dict(os.environ)
    if amber_dir:
        env["PYTHONPATH"] = os.pathsep.join(
            [str(Path(amber_dir).resolve().parent), *filter(None, [env.get("PYTHONPATH")])])
    out = subprocess.run(me, capture_output=True, text=True, check=True, env=env).stdout
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
    parser.add_argument("--against", metavar="DIR",
                        help="also measure the amber checkout DIR (the folder named amber), "
                             "in turn with this one, and print its table second")
    args = parser.parse_args()
    if args.worker:
        return worker(args.steps, args.parallel, args.ranks)
    versions = [None] + ([args.against] if args.against else [])
    loads = [os.getloadavg()[0]]
    rounds = {v: ([], []) for v in versions}
    for _ in range(args.rounds):  # NOTE: interleaved, so all see the same load
        for version in versions:
            rounds[version][0].append(launch(1, args.steps, args.ranks, version))
            rounds[version][1].append(launch(args.ranks, args.steps, amber_dir=version))
            loads.append(os.getloadavg()[0])
    print(f"Data-parallel train step (SGD), global batch {GLOBAL_BATCH}, one BLAS thread per "
          f"process, {args.steps} timed steps x {args.rounds} rounds; machine load (1 min) "
          f"{min(loads):.1f}..{max(loads):.1f} on {os.cpu_count()} cores")
    for version in versions:
        print(f"\namber at {version or Path(amber.__file__).parent}:")
        table(*(median_over_rounds(r) for r in rounds[version]), args.ranks)


def table(alone: dict, many: dict, n: int) -> None:
    """Print the figures of one amber version."""
    print(f"{'':18} {'wall clock per step':^40} | {'CPU time per step (process_time)':^62}")
    print(f"{'model':18} {'1 proc ms':>9} {f'{n} procs ms':>10} {'samples/s':>11} "
          f"{'speed-up':>8} | {'1 proc ms':>9} {'rank ms':>8} {'transfer ms':>13} "
          f"{'projected':>9} {'share':>6} {'job rank ms':>11}")
    for name in MODELS:
        one, par = alone[name], many[name]
        transfer = max(par["all_reduce_cpu_min_s"] - par["copy_in_cpu_min_s"], 0.0)
        projected = one["rank_cpu_s"] + transfer
        rates = f"{GLOBAL_BATCH / one['step_s']:.0f}>{GLOBAL_BATCH / par['step_s']:.0f}"
        reduce = f"{transfer * 1e3:.2f} ({par['all_reduce_cpu_min_s'] * 1e3:.2f})"
        print(f"{name:18} {one['step_s'] * 1e3:9.2f} {par['step_s'] * 1e3:10.2f} {rates:>11} "
              f"{one['step_s'] / par['step_s']:7.2f}x | {one['alone_cpu_s'] * 1e3:9.2f} "
              f"{one['rank_cpu_s'] * 1e3:8.2f} {reduce:>13} {one['alone_cpu_s'] / projected:8.2f}x "
              f"{transfer / projected:6.1%} {par['cpu_step_s'] * 1e3:11.2f}")
    print(f"CPU: '1 proc' the stand-alone step, 'rank' one rank's step on 1/{n} of the rows "
          f"without the MPI transfer,\n'transfer' the fastest all-reduce in the {n}-rank job "
          f"less the fastest copy into its buffer (what copying\nthe rank's step does, 'rank' "
          f"holds; in brackets the whole all-reduce), 'projected' = 1 proc / (rank +\n"
          f"transfer), the speed-up on {n} "
          f"idle cores (efficiency = speed-up / {n}), 'share' the transfer's share of it,\n"
          f"'job rank ms' rank 0's step in the {n}-rank job (on a busy machine: with its spin "
          f"in the all-reduce).")


if __name__ == "__main__":
    main()

"""Paired, call by call: the MLP and LeNet-5 SGD steps of benchmarks/train.py as hand-written
NumPy, as amber's generated function alone and as the whole `amber.jit` call; with `--against
DIR` (DIR/amber another amber tree, e.g. main unpacked by `git archive`) the same again for that
amber, in its own processes.

Every round runs each tree in a fresh process (alternating); a process calls each version once
per pass, in rotating order, each on its own copy of the weights, with one eager step and a
garbage collection before each call (`--tight` skips them) as in `run.py`'s rounds, where memory
other work frees between steps must be faulted in again. Reported per tree and version: the
median over rounds of the median CPU time per call (one BLAS thread) and of the median per-call
ratio to the hand code (the range of the rounds in brackets), and minor page faults per call
(getrusage).

    python benchmarks/step_levers.py --rounds 5 --calls 200 --against /tmp/mainpkg
"""
from __future__ import annotations

import argparse
import gc
import json
import os
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any, Callable

for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import numpy as np  # noqa: E402

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

_DUMP = """
import sys
sys.path.insert(0, {here!r})
import numpy as np, amber
from train import MLP, train_step, BATCH
from lenet import LeNet5
make = MLP if {kind!r} == "mlp" else LeNet5
amber.set_seed(0)
step = amber.jit(train_step(make()))
rng = np.random.default_rng(0)
shape = (BATCH, 784) if {kind!r} == "mlp" else (BATCH, 1, 32, 32)
step(rng.standard_normal(shape, dtype=np.float32), rng.integers(0, 10, BATCH).astype(np.int32))
assert amber.__file__.startswith({root!r}), amber.__file__
sys.stdout.write(step.last.function_name + "\\n" + step.code)
"""


def versions(kind: str) -> tuple[dict[str, Callable[[], Any]], Callable[[], Any]]:
    """label -> a call of that version, each on its own weights; and one eager step."""
    import amber
    from train import BATCH, MLP, HandLeNetStep, HandMLPStep, train_step
    from lenet import LeNet5
    make, hand_step = (MLP, HandMLPStep) if kind == "mlp" else (LeNet5, HandLeNetStep)
    rng = np.random.default_rng(0)
    shape = (BATCH, 784) if kind == "mlp" else (BATCH, 1, 32, 32)
    x = rng.standard_normal(shape, dtype=np.float32)
    y = rng.integers(0, 10, BATCH).astype(np.int32)

    def fresh() -> Any:
        amber.set_seed(0)
        return make()

    hand = hand_step(fresh(), BATCH)
    jitted = amber.jit(train_step(fresh()))
    jitted(x, y)
    eager_step = train_step(fresh())
    compiled = amber.jit(train_step(fresh()))
    compiled(x, y)
    entry = compiled.last
    (binding,) = compiled._states[id(compiled._instance)].bindings.values()
    params = tuple(binding.arrays)

    def eager() -> None:
        amber.set_context(jit_enabled=False)
        try:
            eager_step(x, y)
        finally:
            amber.set_context(jit_enabled=True)
    return {"hand": lambda: hand(x, y), "jit call": lambda: jitted(x, y),
            "generated": lambda: entry.fn(*params, x, y)}, eager


def measure(calls: dict[str, Callable[[], Any]], eager: Callable[[], Any], passes: int,
            tight: bool) -> dict[str, tuple[float, float, float]]:
    """Per version: median CPU seconds per call, median ratio to the hand code's call of the
    same pass, minor faults per call."""
    for call in calls.values():
        call()
    names = list(calls)
    times: dict[str, list[float]] = {n: [] for n in names}
    faults = dict.fromkeys(names, 0)
    for r in range(passes):
        for name in names[r % len(names):] + names[:r % len(names)]:
            if not tight:
                eager()
                gc.collect()
            before = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
            start = time.thread_time()
            calls[name]()
            times[name].append(time.thread_time() - start)
            faults[name] += resource.getrusage(resource.RUSAGE_SELF).ru_minflt - before
    hand = times["hand"]
    return {n: (statistics.median(times[n]),
                statistics.median(t / h for t, h in zip(times[n], hand)),
                faults[n] / passes) for n in names}


def worker(kind: str, passes: int, tight: bool) -> None:
    """One round in this process: the measurements as JSON on stdout."""
    sys.path.insert(0, str(HERE.parent / "samples"))
    calls, eager = versions(kind)
    import amber
    print(json.dumps({"amber": str(Path(amber.__file__).parent),
                      **measure(calls, eager, passes, tight)}))


def run_round(root: str | None, kind: str, passes: int, tight: bool) -> dict[str, Any]:
    """One round of `kind` under the amber in `root` (None: this one), in a fresh process."""
    env = dict(os.environ)
    if root is not None:
        env["PYTHONPATH"] = os.pathsep.join([str(Path(root).resolve()), env.get("PYTHONPATH", "")])
    command = [sys.executable, str(Path(__file__).resolve()), "--worker", kind,
               "--calls", str(passes)] + (["--tight"] if tight else [])
    out = subprocess.run(command, env=env, capture_output=True, text=True, check=True,
                         cwd=root or None).stdout
    return json.loads(out.splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--calls", type=int, default=200, help="passes over the versions a round")
    parser.add_argument("--against", help="a directory holding another amber tree (DIR/amber)")
    parser.add_argument("--only", nargs="*", choices=["mlp", "lenet"], default=["mlp", "lenet"])
    parser.add_argument("--tight", action="store_true",
                        help="no eager step and collection between calls")
    parser.add_argument("--worker", choices=["mlp", "lenet"], help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        worker(args.worker, args.calls, args.tight)
        return
    trees = {"this": None} if not args.against else {"this": None, "against": args.against}
    for kind in args.only:
        passes = args.calls if kind == "mlp" else max(args.calls // 10, 10)
        found: dict[tuple[str, str], list[list[float]]] = {}
        loads, where = [], {}
        for r in range(args.rounds):
            order = list(trees.items()) if r % 2 == 0 else list(trees.items())[::-1]
            for tree, root in order:
                loads.append(os.getloadavg()[0])
                rows = run_round(root, kind, passes, args.tight)
                where[tree] = rows.pop("amber")
                for name, row in rows.items():
                    found.setdefault((tree, name), []).append(row)
        print(f"{kind}: {args.rounds} rounds of {passes} passes, load {min(loads):.1f}-"
              f"{max(loads):.1f}, " + ("tight loop" if args.tight else
                                        "an eager step and gc.collect() before each call"))
        for tree, path in where.items():
            print(f"    {tree}: {path}")
        for (tree, name), rows in found.items():
            us, ratio, faults = ([row[k] for row in rows] for k in range(3))
            print(f"    {tree:8s} {name:10s} {statistics.median(us) * 1e6:9.1f} us "
                  f"[{min(us) * 1e6:.0f}-{max(us) * 1e6:.0f}]   /hand "
                  f"{statistics.median(ratio):5.3f}x [{min(ratio):.3f}-{max(ratio):.3f}]   "
                  f"minor faults/call {statistics.median(faults):6.1f}")


if __name__ == "__main__":
    main()

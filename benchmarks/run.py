"""Side-by-side timings, one suite per module: each suite's versions (eager Python, amber, careful
hand-written NumPy, and peers where installed) are checked against each other, then timed
interleaved round by round; the tables show median CPU microseconds per call, amber's ratio to
every other version and peak memory per call (tracemalloc). Then start-up times.

    python benchmarks/run.py [--quick] [--only forward ...]
"""
from __future__ import annotations

import argparse
import os
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import harness  # noqa: E402  (sets one BLAS thread before NumPy loads)

import amber  # noqa: E402

import dispatch  # noqa: E402
import dynamic  # noqa: E402
import exceptions  # noqa: E402
import forward  # noqa: E402
import grad  # noqa: E402
import inference  # noqa: E402
import native  # noqa: E402
import recording  # noqa: E402
import resnet  # noqa: E402
import startup  # noqa: E402
import train  # noqa: E402
import transforms  # noqa: E402

SUITES = {"forward": forward, "grad": grad, "train": train, "dynamic": dynamic, "native": native,
          "inference": inference, "transforms": transforms, "exceptions": exceptions}
"""Suite name -> module with TITLE and `workloads(quick) -> list[Workload]` (and optionally
`report()`, printing more after its table)."""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="fewer rounds (a smoke run)")
    extras = ["startup", "resnet", "dispatch", "recording"]
    parser.add_argument("--only", nargs="*", choices=[*SUITES, *extras],
                        help="run only these suites")
    args = parser.parse_args()
    chosen = args.only or [*SUITES, *extras]
    scratch = tempfile.TemporaryDirectory()  # NOTE: leave the user's disk cache alone
    amber.set_context(cache_dir=scratch.name)
    rounds = 5 if args.quick else 15
    print(f"BLAS threads: {os.environ['OPENBLAS_NUM_THREADS']} (OPENBLAS_NUM_THREADS); "
          f"{rounds} interleaved rounds; medians of CPU time per call")
    for name in chosen:
        if name in SUITES:
            suite = SUITES[name]
            harness.run_workloads(suite.TITLE, suite.workloads(args.quick), rounds)
            if hasattr(suite, "report"):  # NOTE: a suite's extra measurements (compile cost)
                suite.report()
    if "startup" in chosen:
        startup.report()
    if "resnet" in chosen:  # NOTE: fresh processes, one per thread count and batch
        resnet.report(args.quick)
    if "dispatch" in chosen:
        dispatch.report()
    if "recording" in chosen:
        recording.report(rounds=3 if args.quick else 5)


if __name__ == "__main__":
    main()

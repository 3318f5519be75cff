"""What recording a run for the compile report costs, on the LeNet-5 train step of
`samples/train_lenet.py` (batch 32): the compile (frontend, passes, codegen, with the IR printed
after each pass that changed it) with and without the recorder, and a compiled step, which the
recorder never touches. CPU time, medians over interleaved rounds, disk cache off.

    python benchmarks/run.py --only recording
"""
from __future__ import annotations

import statistics
import sys
import tempfile
import time
from pathlib import Path

import amber
from amber import report as amber_report

SAMPLES = Path(__file__).resolve().parent.parent / "samples"


def _compile_and_step(record: bool, steps: int) -> tuple[float, float]:
    """(CPU seconds of the first call, median CPU seconds of the next `steps` calls)."""
    sys.path.insert(0, str(SAMPLES))
    from train_lenet import LeNetTrainStep, example_inputs
    sys.path.remove(str(SAMPLES))
    images, labels = example_inputs()
    step = amber.jit(LeNetTrainStep(epochs=1, steps_per_epoch=steps + 1))
    with tempfile.TemporaryDirectory() as directory:
        if record:
            amber_report.start(directory)
        try:
            t = time.process_time()
            step(images, labels)
            first = time.process_time() - t
            times = []
            for _ in range(steps):
                t = time.process_time()
                step(images, labels)
                times.append(time.process_time() - t)
        finally:
            if record:
                amber_report.stop()
    return first, statistics.median(times)


def report(rounds: int = 5, steps: int = 20) -> None:
    amber.set_context(disk_cache=False)
    seen: dict[bool, list[tuple[float, float]]] = {False: [], True: []}
    for _ in range(rounds):
        for record in (False, True):
            seen[record].append(_compile_and_step(record, steps))
    amber.set_context(disk_cache=True)
    first = {r: statistics.median(f for f, _ in v) for r, v in seen.items()}
    step = {r: statistics.median(s for _, s in v) for r, v in seen.items()}
    print("\nCompile report recording (LeNet-5 train step, batch 32; CPU time, medians of "
          f"{rounds} rounds):")
    print(f"  first call (compile): {first[False] * 1e3:8.1f} ms off, {first[True] * 1e3:8.1f} ms "
          f"recording ({first[True] / first[False]:.2f}x)")
    print(f"  later steps:          {step[False] * 1e3:8.2f} ms off, {step[True] * 1e3:8.2f} ms "
          f"recording ({step[True] / step[False]:.2f}x)")

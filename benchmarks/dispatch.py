"""The fixed cost of a call: a compiled call of a tiny function and of a tiny Cell, against its
generated function called directly, and the parts of the fast path (the call key, the guard
check). CPU time, best of 7 rounds of 20,000 calls (the best: other processes only add).

Then the same cost cold, as a training step meets it: the MLP train step of train.py, its
generated function swapped for a no-op, called through `amber.jit` and directly, each call
right after one eager step and a garbage collection have pushed the interpreter's code and
objects out of the caches (median of 1,000 calls each, alternating). Cold, every Python frame
and object the call path touches costs several times its figure in a tight loop."""
from __future__ import annotations

import gc
import statistics
import time
from typing import Any, Callable

import numpy as np

import amber
from amber import nn
from amber.runtime.keys import call_key


def add_one(x: np.ndarray) -> np.ndarray:
    return x + 1.0


class TinyDense(nn.Cell):
    def __init__(self) -> None:
        super().__init__()
        self.fc = nn.Dense(4, 4)

    def construct(self, x: np.ndarray) -> np.ndarray:
        return self.fc(x)


def per_call(fn: Callable[..., Any], *args: Any, calls: int = 20000) -> float:
    """Best CPU microseconds per call of `fn(*args)` over 7 rounds."""
    best = float("inf")
    for _ in range(7):
        start = time.process_time()
        for _ in range(calls):
            fn(*args)
        best = min(best, (time.process_time() - start) / calls)
    return best * 1e6


def cold_step_fixed_cost(rounds: int = 1000) -> tuple[float, float]:
    """Median CPU microseconds of the MLP train step's jit call and of its generated function
    called directly, both with that function a no-op, each after an eager step and a
    collection."""
    from train import BATCH, MLP, train_step
    rng = np.random.default_rng(0)
    x = rng.standard_normal((BATCH, 784), dtype=np.float32)
    y = rng.integers(0, 10, BATCH).astype(np.int32)
    step, eager = amber.jit(train_step(MLP())), train_step(MLP())
    step(x, y)
    entry = step.last
    (binding,) = step._states[id(step._instance)].bindings.values()
    done = np.float32(0.0)
    entry.fn = lambda *args: done  # NOTE: the call path alone
    calls = {"jit": lambda: step(x, y), "alone": lambda: entry.fn(*binding.arrays, x, y)}
    times: dict[str, list[float]] = {name: [] for name in calls}
    for r in range(rounds):
        for name, call in calls.items() if r % 2 else reversed(calls.items()):
            amber.set_context(jit_enabled=False)
            eager(x, y)
            amber.set_context(jit_enabled=True)
            gc.collect()
            start = time.thread_time()
            call()
            times[name].append(time.thread_time() - start)
    return statistics.median(times["jit"]) * 1e6, statistics.median(times["alone"]) * 1e6


def report() -> None:
    x = np.ones((2, 4), np.float32)
    print("\n## Per-call dispatch: CPU us per call (best of 7 rounds of 20,000 calls)")
    for name, target in (("function x + 1", add_one), ("Cell Dense(4, 4)", TinyDense())):
        fast = amber.jit(target)
        fast(x)
        entry = fast.last
        instance = target if isinstance(target, nn.Cell) else None
        binding = fast._states[id(instance)].bindings[call_key((x,), {})]
        whole = per_call(fast, x)
        alone = per_call(lambda: entry.fn(*binding.arrays, x))
        print(f"  {name:<17}: jit call {whole:5.2f}, the generated function alone {alone:5.2f}"
              f" -> fixed cost {whole - alone:4.2f} (call key {per_call(call_key, (x,), {}):4.2f},"
              f" guard check {per_call(binding.plan.holds, instance):4.2f}, the rest: binding "
              f"lookup, argument gathering, the wrapper's frames)")
    jit, alone = cold_step_fixed_cost()
    print(f"  MLP train step, cold (after an eager step and gc.collect(), medians of 1,000): "
          f"jit call {jit:5.1f}, a no-op alone {alone:5.1f} -> fixed cost {jit - alone:4.1f}")


if __name__ == "__main__":
    report()

"""The fixed cost of a call: a compiled call of a tiny function and of a tiny Cell, against its
generated function called directly, and the parts of the fast path (the call key, the guard
check). CPU time, best of 7 rounds of 20,000 calls (the best: other processes only add).

Then the same cost cold, as a training step meets it: each call right after a 512x512 matmul
has pushed the interpreter's code and objects out of the caches (median of 1,000 calls each,
alternating). Cold, every Python frame and object the call path
touches costs several times its figure in a tight loop."""
from __future__ import annotations

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


def cold_per_call(calls: dict[str, Callable[[], Any]], rounds: int = 1000) -> dict[str, float]:
    """Median CPU microseconds of each call made right after evicting the caches."""
    big = np.ones((512, 512), np.float32)
    times: dict[str, list[float]] = {name: [] for name in calls}
    for r in range(rounds):
        for name, call in calls.items() if r % 2 else reversed(calls.items()):
            big @ big
            start = time.thread_time()
            call()
            times[name].append(time.thread_time() - start)
    return {name: statistics.median(t) * 1e6 for name, t in times.items()}


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
        cold = cold_per_call({"jit": lambda: fast(x),
                              "alone": lambda: entry.fn(*binding.arrays, x)})
        print(f"  {'':<17}  cold: jit call {cold['jit']:5.1f}, the generated function alone "
              f"{cold['alone']:5.1f} -> fixed cost {cold['jit'] - cold['alone']:4.1f}")


if __name__ == "__main__":
    report()

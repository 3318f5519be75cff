"""The native tier: loops over small tensors, where NumPy's per-call overhead dominates.

Each row times amber with the default backend ("amber": auto, which compiles the loop regions
its cost rule favours as Numba kernels when Numba is installed) beside amber's NumPy backend
("amber-numpy"), careful hand-written NumPy, and JAX jit (`lax.cond`/`lax.while_loop`: XLA
compiles the whole loop) and torch (eager; `torch.compile` would recompile per trip count)
where installed. Then the RNN scaling grid (amber vs its NumPy backend only) and, per backend,
the cold and warm first call in a fresh process (`report`).

    python benchmarks/run.py --only native [--quick]
"""
from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any, Callable

import numpy as np

import amber
from amber import nn
from harness import Workload

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "samples"))
from rnn import EarlyStopRNN, example_inputs as sample_rnn_inputs  # noqa: E402

TITLE = "Native tier: loops over small tensors (amber auto vs its NumPy backend, JAX, torch)"

LOOP_ITERATIONS, LOOP_SIZE = 200, 16
RNN_STEPS, RNN_BATCH, RNN_INPUT, RNN_HIDDEN = 50, 16, 32, 64
SCALING_HIDDEN = (16, 64, 256, 1024)
SCALING_STEPS = (10, 50, 200)
NO_STOP = 1e30
"""A threshold the state's norm never reaches: the RNN runs every step."""


class ControlLoop(nn.Cell):
    """200 iterations of an if/else on a tensor condition over 16 floats."""

    def construct(self, x: np.ndarray) -> np.ndarray:
        for _ in range(LOOP_ITERATIONS):
            if x.sum() > 0:
                x = x * 0.5 - 1.0
            else:
                x = x * 0.5 + 1.0
        return x


def _installed(name: str) -> bool:
    return importlib.util.find_spec(name) is not None


# -- hand-written NumPy ------------------------------------------------------------------------

def hand_loop(x: np.ndarray) -> np.ndarray:
    """The micro loop with one buffer updated in place."""
    y = x.copy()
    for _ in range(LOOP_ITERATIONS):
        y *= 0.5
        y += -1.0 if y.sum() > 0 else 1.0  # NOTE: sum of 0.5*y has the sign of y.sum()
    return y


class HandRNN:
    """The RNN with every step's input projection done as one GEMM up front."""

    def __init__(self, net: EarlyStopRNN) -> None:
        self.wih = np.array(net.input_to_hidden.weight).T.copy()
        self.bih = np.array(net.input_to_hidden.bias)
        self.whh = np.array(net.hidden_to_hidden.weight).T.copy()
        self.threshold, self.hidden = net.threshold, net.hidden_size

    def __call__(self, x: np.ndarray) -> tuple[np.ndarray, int]:
        xw = x @ self.wih
        xw += self.bih
        h = np.zeros((x.shape[1], self.hidden), x.dtype)
        tmp = np.empty_like(h)
        t = 0
        while t < x.shape[0]:
            np.matmul(h, self.whh, out=tmp)
            tmp += xw[t]
            h = np.tanh(tmp)
            t += 1
            if np.sqrt((h * h).sum()) > self.threshold:
                break
        return h, t


# -- peers -------------------------------------------------------------------------------------

def jax_loop() -> Callable[[np.ndarray], Any] | None:
    if not _installed("jax"):
        return None
    import jax
    import jax.numpy as jnp
    jax.config.update("jax_platforms", "cpu")

    def step(_: Any, x: Any) -> Any:
        return jax.lax.cond(x.sum() > 0, lambda v: v * 0.5 - 1.0, lambda v: v * 0.5 + 1.0, x)

    run = jax.jit(lambda x: jax.lax.fori_loop(0, LOOP_ITERATIONS, step, x))
    return lambda x: run(x).block_until_ready()  # NOTE: JAX dispatches asynchronously


def jax_rnn(net: EarlyStopRNN) -> Callable[[np.ndarray], Any] | None:
    if not _installed("jax"):
        return None
    import jax
    import jax.numpy as jnp
    jax.config.update("jax_platforms", "cpu")
    wih = jnp.asarray(np.array(net.input_to_hidden.weight).T)
    bih = jnp.asarray(np.array(net.input_to_hidden.bias))
    whh = jnp.asarray(np.array(net.hidden_to_hidden.weight).T)
    threshold, hidden = net.threshold, net.hidden_size

    @jax.jit
    def run(x: Any) -> tuple[Any, Any]:
        def cond(carry: Any) -> Any:
            t, _, stop = carry
            return (t < x.shape[0]) & ~stop

        def body(carry: Any) -> Any:
            t, h, _ = carry
            h = jnp.tanh(x[t] @ wih + bih + h @ whh)
            return t + 1, h, jnp.sqrt(jnp.sum(h * h)) > threshold

        h0 = jnp.zeros((x.shape[1], hidden), x.dtype)
        t, h, _ = jax.lax.while_loop(cond, body, (0, h0, False))
        return h, t

    def call(x: np.ndarray) -> tuple[Any, Any]:
        h, t = run(x)
        return h.block_until_ready(), t
    return call


def torch_loop() -> Callable[[np.ndarray], Any] | None:
    if not _installed("torch"):
        return None
    import torch
    torch.set_num_threads(1)

    def run(x: np.ndarray) -> Any:
        with torch.no_grad():
            y = torch.from_numpy(x)
            for _ in range(LOOP_ITERATIONS):
                y = y * 0.5 - 1.0 if y.sum() > 0 else y * 0.5 + 1.0
            return y.numpy()
    return run


def torch_rnn(net: EarlyStopRNN) -> Callable[[np.ndarray], Any] | None:
    if not _installed("torch"):
        return None
    import torch
    torch.set_num_threads(1)
    wih = torch.from_numpy(np.array(net.input_to_hidden.weight).T.copy())
    bih = torch.from_numpy(np.array(net.input_to_hidden.bias))
    whh = torch.from_numpy(np.array(net.hidden_to_hidden.weight).T.copy())
    threshold, hidden = net.threshold, net.hidden_size

    def run(x: np.ndarray) -> tuple[Any, int]:
        with torch.no_grad():
            xs = torch.from_numpy(x)
            h = torch.zeros(x.shape[1], hidden)
            t = 0
            while t < x.shape[0]:
                h = torch.tanh(xs[t] @ wih + bih + h @ whh)
                t += 1
                if torch.sqrt((h * h).sum()) > threshold:
                    break
            return h.numpy(), t
    return run


# -- workloads ---------------------------------------------------------------------------------

def _peers(**peers: Callable[..., Any] | None) -> dict[str, Callable[..., Any]]:
    return {label: fn for label, fn in peers.items() if fn is not None}


def _rnn_inputs(steps: int, ramp: bool) -> np.ndarray:
    """[steps, batch, input]; with `ramp`, the scale grows over time (so the norm crosses the
    early-stop threshold part way through)."""
    rng = np.random.default_rng(0)
    x = rng.standard_normal((steps, RNN_BATCH, RNN_INPUT), dtype=np.float32) * 0.5
    if ramp:
        x *= np.linspace(0.1, 4.0, steps, dtype=np.float32).reshape(steps, 1, 1)
    return x


def _same_steps(out: Any) -> list[np.ndarray]:
    return [np.asarray(out[0]), np.asarray(out[1])]


def _rnn_row(name: str, net: EarlyStopRNN, x: np.ndarray, calls: int,
             peers: bool = True) -> Workload:
    versions = {"eager": net.construct, "amber": amber.jit(net),
                "amber-numpy": amber.jit(net, backend="numpy")}
    if peers:
        versions |= {"numpy": HandRNN(net), **_peers(jax=jax_rnn(net), torch=torch_rnn(net))}
    steps = int(amber.jit(net, backend="numpy")(x)[1])
    return Workload(name, versions, (x,), calls, compare=_same_steps,
                    notes=[f"{steps} of {x.shape[0]} steps taken"])


def workloads(quick: bool) -> list[Workload]:
    """The native set, built with seed 0."""
    amber.set_seed(0)
    scale = 1 if quick else 4
    loop = ControlLoop()
    x16 = np.random.default_rng(0).standard_normal(LOOP_SIZE).astype(np.float32)
    rows = [Workload(f"if/else loop x{LOOP_ITERATIONS} on {LOOP_SIZE} floats",
                     {"eager": loop.construct, "amber": amber.jit(loop),
                      "amber-numpy": amber.jit(loop, backend="numpy"), "numpy": hand_loop,
                      **_peers(jax=jax_loop(), torch=torch_loop())},
                     (x16,), 5 * scale)]
    full = EarlyStopRNN(RNN_INPUT, RNN_HIDDEN, threshold=NO_STOP)
    rows.append(_rnn_row(f"RNN while, hidden {RNN_HIDDEN}, {RNN_STEPS} steps, batch {RNN_BATCH}",
                         full, _rnn_inputs(RNN_STEPS, ramp=False), 5 * scale))
    early = EarlyStopRNN(RNN_INPUT, RNN_HIDDEN, threshold=20.0)
    rows.append(_rnn_row(f"RNN while, hidden {RNN_HIDDEN}, early stop", early,
                         _rnn_inputs(RNN_STEPS, ramp=True), 5 * scale))
    rows.append(_rnn_row("RNN sample (samples/rnn.py: hidden 16, batch 2, early stop)",
                         EarlyStopRNN(), *sample_rnn_inputs(), 10 * scale))
    for hidden in SCALING_HIDDEN:
        for steps in SCALING_STEPS:
            if quick and steps != RNN_STEPS:
                continue
            net = EarlyStopRNN(RNN_INPUT, hidden, threshold=NO_STOP)
            calls = max(1, int(2e4 // (hidden * steps))) * scale
            rows.append(_rnn_row(f"RNN scaling, hidden {hidden}, {steps} steps", net,
                                 _rnn_inputs(steps, ramp=False), calls, peers=False))
    return rows


# -- compile cost ------------------------------------------------------------------------------

_PROBE = """
import json, sys, time
wall, cpu = time.perf_counter, time.process_time
sys.path.insert(0, {benchmarks!r})
import numpy as np
import amber
import native
amber.set_seed(0)
net = native.{make}
x = native.{inputs}
fn = amber.jit(net, backend={backend!r})
t, c = wall(), cpu(); fn(x); first, first_cpu = wall() - t, cpu() - c
t = wall(); fn(x); second = wall() - t
print(json.dumps({{"first": first, "first_cpu": first_cpu, "second": second,
                   "compiles": fn.stats.compiles, "disk_hits": fn.stats.disk_hits}}))
"""

PROBES = {
    "if/else loop": ("ControlLoop()",
                     "np.random.default_rng(0).standard_normal(16).astype(np.float32)"),
    f"RNN hidden {RNN_HIDDEN}": (f"EarlyStopRNN({RNN_INPUT}, {RNN_HIDDEN}, threshold=1e30)",
                               f"_rnn_inputs({RNN_STEPS}, ramp=False)"),
}


def first_call(cache_dir: str, make: str, inputs: str, backend: str) -> dict[str, float]:
    """Seconds of the first call (wall, as a user waits, and this process's CPU time, which
    other processes on a busy machine do not inflate) and of the second call, in a new
    interpreter with disk cache `cache_dir`."""
    env = {**os.environ, "AMBER_CACHE_DIR": cache_dir, "AMBER_CACHE": "1"}
    code = _PROBE.format(benchmarks=str(ROOT / "benchmarks"), make=make, inputs=inputs,
                         backend=backend)
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True,
                         check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def report() -> None:
    """Cold (compiling) and warm (disk cache, Numba's cache beside it) first calls per backend."""
    print("\n## Native tier: first call in a fresh process, ms wall (CPU) (cold: amber and "
          "Numba compile; warm: both served from disk, Numba still imports and sets up its "
          "target)")
    backends = ("numpy", "numba") if _installed("numba") else ("numpy",)
    for name, (make, inputs) in PROBES.items():
        for backend in backends:
            with tempfile.TemporaryDirectory() as cache:
                cold = first_call(cache, make, inputs, backend)
                warm = first_call(cache, make, inputs, backend)
            print(f"  {name:<14} backend={backend:<6}: cold first call {cold['first'] * 1e3:7.1f}"
                  f" ({cold['first_cpu'] * 1e3:7.1f}), warm first call "
                  f"{warm['first'] * 1e3:6.1f} ({warm['first_cpu'] * 1e3:6.1f}); second call "
                  f"{cold['second'] * 1e3:.2f} (disk hits={warm['disk_hits']}, "
                  f"compiles={warm['compiles']})")

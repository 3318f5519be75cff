"""The small CIFAR ResNet of issue 28 (3x3 stem, three residual stages of 16/32/64 channels,
stride-2 down-sampling with 1x1 projections, global average pooling, Dense 64->10, no BatchNorm):
forward and SGD train step at batch 32 and 1, amber beside JAX and PyTorch where installed.

Each (threads, batch) cell runs in a fresh process, so the BLAS / XLA thread count is set before
anything loads: at one thread the clock is the process's CPU time, at more the wall time (CPU
time would add the threads up). Versions are checked equal on the first call (forward output;
the train step's loss and an updated weight), then timed in interleaved rounds, medians.
Peak memory: tracemalloc's peak during one call for amber (NumPy's allocations; that call runs
the convolutions' NumPy parts, whose buffers the native parts allocate alike, unseen by
tracemalloc: ops/conv_native.py); XLA's own allocator is not traced, so JAX's figure is its
compiled call's memory analysis (temporaries plus outputs, marked `XLA`).

    python benchmarks/resnet.py [--quick] [--threads N]   (also: benchmarks/run.py --only resnet)
    python benchmarks/resnet.py --profile     (amber's time per op: resnet_profile.py)
    python benchmarks/resnet.py --layers      (each forward convolution against JAX's)
    python benchmarks/resnet.py --lines [--threads N]   (wall time per line: resnet_profile.py)
    python benchmarks/resnet.py --against DIR (amber from DIR/amber against this checkout)
    python benchmarks/resnet.py --against DIR --threads 2   (the same at 2 threads, wall time)
    python benchmarks/resnet.py --pair DIR [--threads N]    (both in one process, call by call)
"""
from __future__ import annotations

import argparse
import importlib.util
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any, Callable

HERE = Path(__file__).resolve().parent
LR = 0.01
THREADS = (1, 2)
BATCHES = (32, 1)


def build_net(package: str = "amber") -> Any:
    """The ResNet, seed 0 (amber's nn, from `package`; MindSpore's weight layout: OIHW, Dense
    [out, in])."""
    import importlib

    import numpy as np
    nn = importlib.import_module(f"{package}.nn")

    def conv(cin: int, cout: int, k: int, stride: int = 1) -> nn.Conv2d:
        return nn.Conv2d(cin, cout, k, stride=stride, pad_mode="same", has_bias=True,
                         weight_init="he_normal")

    class Block(nn.Cell):
        def __init__(self, cin: int, cout: int, stride: int) -> None:
            super().__init__()
            self.conv1 = conv(cin, cout, 3, stride)
            self.conv2 = conv(cout, cout, 3)
            self.relu = nn.ReLU()
            self.project = conv(cin, cout, 1, stride) if stride != 1 or cin != cout else None

        def construct(self, x: np.ndarray) -> np.ndarray:
            out = self.conv2(self.relu(self.conv1(x)))
            shortcut = x if self.project is None else self.project(x)
            return self.relu(out + shortcut)

    class ResNet(nn.Cell):
        def __init__(self) -> None:
            super().__init__()
            self.stem = conv(3, 16, 3)
            self.stage1 = Block(16, 16, 1)
            self.stage2 = Block(16, 32, 2)
            self.stage3 = Block(32, 64, 2)
            self.relu = nn.ReLU()
            self.fc = nn.Dense(64, 10)

        def construct(self, x: np.ndarray) -> np.ndarray:
            x = self.relu(self.stem(x))
            x = self.stage3(self.stage2(self.stage1(x)))
            return self.fc(x.mean(axis=(2, 3)))

    return ResNet()


def settle() -> None:
    """Build amber's native parts now (`ops/conv_native.py`: a process builds them after 10 s
    of convolutions) and wait for every background build, so that timed rounds see the steady
    state, not a build sharing the interpreter."""
    import threading
    try:
        from amber.ops.conv_native import build_now
    except ImportError:  # NOTE: an amber from before the native parts (--pair, --against)
        pass
    else:
        build_now()
    for thread in threading.enumerate():
        if thread.name.startswith("amber-native"):
            thread.join()


def amber_versions(net: Any, package: str = "amber") -> dict[str, Callable[..., Any]]:
    import importlib

    import numpy as np
    amber = importlib.import_module(package)
    nn = importlib.import_module(f"{package}.nn")
    forward = amber.jit(net)
    loss = nn.WithLossCell(net, nn.SoftmaxCrossEntropyWithLogits(sparse=True, reduction="mean"))
    step = amber.jit(nn.TrainOneStepCell(loss, nn.SGD(net.trainable_params(), LR)))

    def train(x: np.ndarray, y: np.ndarray) -> tuple[Any, np.ndarray]:
        return np.asarray(step(x, y)), net.stem.weight
    return {"forward": forward, "train": train, "jit": {"forward": forward, "train": step}}


def jax_versions(net: Any) -> dict[str, Callable[..., Any]] | None:
    if importlib.util.find_spec("jax") is None:
        return None
    import jax
    import jax.numpy as jnp
    import numpy as np
    jax.config.update("jax_platforms", "cpu")
    params = {name: jnp.asarray(np.array(v)) for name, v in net.parameters_and_names()}

    def conv(p: dict, x: Any, name: str, stride: int) -> Any:
        y = jax.lax.conv_general_dilated(x, p[f"{name}.weight"], (stride, stride), "SAME",
                                         dimension_numbers=("NCHW", "OIHW", "NCHW"))
        return y + p[f"{name}.bias"][None, :, None, None]

    def block(p: dict, x: Any, name: str, stride: int, project: bool) -> Any:
        out = conv(p, jax.nn.relu(conv(p, x, f"{name}.conv1", stride)), f"{name}.conv2", 1)
        shortcut = conv(p, x, f"{name}.project", stride) if project else x
        return jax.nn.relu(out + shortcut)

    def forward(p: dict, x: Any) -> Any:
        x = jax.nn.relu(conv(p, x, "stem", 1))
        x = block(p, x, "stage1", 1, False)
        x = block(p, x, "stage2", 2, True)
        x = block(p, x, "stage3", 2, True)
        return x.mean(axis=(2, 3)) @ p["fc.weight"].T + p["fc.bias"]

    def loss_fn(p: dict, x: Any, y: Any) -> Any:
        logp = jax.nn.log_softmax(forward(p, x))
        return -jnp.mean(jnp.take_along_axis(logp, y[:, None], axis=1))

    def update(p: dict, x: Any, y: Any) -> Any:
        loss, g = jax.value_and_grad(loss_fn)(p, x, y)
        return loss, jax.tree_util.tree_map(lambda a, b: a - LR * b, p, g)

    jit_forward = jax.jit(forward)
    jit_update = jax.jit(update, donate_argnums=0)
    state = {"p": params}

    def peak(kind: str, *args: Any) -> str:
        """XLA's own account of one call's memory: temporaries plus outputs."""
        fn, first = (jit_forward, state["p"]) if kind == "forward" else (jit_update, state["p"])
        stats = fn.lower(first, *args).compile().memory_analysis()
        if stats is None:
            return "n/a"
        return f"{(stats.temp_size_in_bytes + stats.output_size_in_bytes) // 1024} KiB (XLA)"

    def run_forward(x: np.ndarray) -> np.ndarray:
        return np.asarray(jit_forward(state["p"], x).block_until_ready())

    def train(x: np.ndarray, y: np.ndarray) -> tuple[Any, np.ndarray]:
        loss, state["p"] = jit_update(state["p"], x, y)
        return np.asarray(loss.block_until_ready()), np.asarray(state["p"]["stem.weight"])
    return {"forward": run_forward, "train": train, "peak": peak}


def torch_versions(net: Any, threads: int) -> dict[str, Callable[..., Any]] | None:
    """The same net in eager PyTorch (CPU, `threads` intra-op threads; its training step is
    autograd then an in-place SGD update), or None where torch is not installed. PyTorch's
    allocator is not traced: its peak shows as n/a."""
    if importlib.util.find_spec("torch") is None:
        return None
    import numpy as np
    import torch
    import torch.nn.functional as F
    torch.set_num_threads(threads)
    params = {name: torch.tensor(np.array(v), requires_grad=True)
              for name, v in net.parameters_and_names()}

    def conv(x: Any, name: str, stride: int) -> Any:
        weight = params[f"{name}.weight"]
        if stride == 1:
            return F.conv2d(x, weight, params[f"{name}.bias"], padding="same")
        # NOTE: 'same' at stride 2 pads the bottom/right (TF/MindSpore), as JAX's "SAME" does
        pad = max(weight.shape[-1] - stride, 0)
        x = F.pad(x, (pad // 2, pad - pad // 2, pad // 2, pad - pad // 2))
        return F.conv2d(x, weight, params[f"{name}.bias"], stride=stride)

    def block(x: Any, name: str, stride: int, project: bool) -> Any:
        out = conv(F.relu(conv(x, f"{name}.conv1", stride)), f"{name}.conv2", 1)
        shortcut = conv(x, f"{name}.project", stride) if project else x
        return F.relu(out + shortcut)

    def forward(x: Any) -> Any:
        x = F.relu(conv(x, "stem", 1))
        x = block(x, "stage1", 1, False)
        x = block(x, "stage2", 2, True)
        x = block(x, "stage3", 2, True)
        return x.mean(dim=(2, 3)) @ params["fc.weight"].T + params["fc.bias"]

    def run_forward(x: np.ndarray) -> np.ndarray:
        with torch.no_grad():
            return forward(torch.from_numpy(x)).numpy()

    def train(x: np.ndarray, y: np.ndarray) -> tuple[Any, np.ndarray]:
        loss = F.cross_entropy(forward(torch.from_numpy(x)), torch.from_numpy(y).long())
        loss.backward()
        with torch.no_grad():
            for p in params.values():
                p -= LR * p.grad
                p.grad = None
        return loss.item(), params["stem.weight"].detach().numpy()
    return {"forward": run_forward, "train": train, "peak": lambda kind, *args: "n/a"}


def measure(batch: int, threads: int, rounds: int, jax: bool = True,
            torch: bool = False) -> dict[str, Any]:
    """One cell of the table, in this process (threads already set by the caller): amber beside
    JAX (`jax`) or PyTorch (`torch`, where installed), or alone. PyTorch gets a process of its
    own: its OpenMP threads spin after each op, taking the core the next peer's call needs."""
    import tracemalloc

    import numpy as np

    import amber
    amber.set_seed(0)
    clock = time.process_time if threads == 1 else time.perf_counter
    rng = np.random.default_rng(0)
    x = rng.standard_normal((batch, 3, 32, 32), dtype=np.float32)
    y = rng.integers(0, 10, batch).astype(np.int32)
    results: dict[str, Any] = {}
    peers: dict[str, dict[str, Callable[..., Any]]] = {}
    for kind in ("forward", "train"):
        amber.set_seed(0)
        net = build_net()
        peers = {"amber": amber_versions(net)}
        jax_fns = jax_versions(net) if jax else None
        if jax_fns is not None:
            peers["jax"] = jax_fns
        torch_fns = torch_versions(net, threads) if torch else None
        if torch_fns is not None:
            peers["torch"] = torch_fns
        args = (x,) if kind == "forward" else (x, y)
        first = {name: fns[kind](*args) for name, fns in peers.items()}
        settle()
        ref = first["amber"]
        for name, got in first.items():
            pairs = [(got, ref)] if kind == "forward" else [(got[0], ref[0]), (got[1], ref[1])]
            assert all(np.allclose(np.asarray(g), np.asarray(r), rtol=2e-3, atol=2e-4)
                       for g, r in pairs), f"{name} {kind} disagrees with amber"
        samples: dict[str, list[float]] = {name: [] for name in peers}
        calls = max(1, 8 // batch) * (3 if kind == "forward" else 1)
        for _ in range(rounds):
            for name, fns in peers.items():
                start = clock()
                for _ in range(calls):
                    fns[kind](*args)
                samples[name].append((clock() - start) / calls)
        for name, fns in peers.items():
            if "peak" in fns:
                peak = fns["peak"](kind, *args)
            else:
                built = sys.modules.get("_amber_native_parts")  # NOTE: None under an amber
                parts = built.ready if built else None  # from before the native parts
                if built:
                    built.ready = None
                tracemalloc.start()  # NOTE: with the NumPy parts: Numba's allocator is not
                base = tracemalloc.get_traced_memory()[0]  # traced; the native parts take
                fns[kind](*args)  # buffers of the same sizes
                peak = f"{(tracemalloc.get_traced_memory()[1] - base) // 1024} KiB"
                tracemalloc.stop()
                if built:
                    built.ready = parts
            results[f"{kind}/{name}"] = (statistics.median(samples[name]), peak)
    return results


def _warmed_up(batch: int) -> tuple[dict[str, Any], dict[str, tuple]]:
    """amber's versions of the seed-0 net and each kind's inputs (seed 0), each called once."""
    import numpy as np

    import amber
    amber.set_seed(0)
    fns = amber_versions(build_net())
    rng = np.random.default_rng(0)
    x = rng.standard_normal((batch, 3, 32, 32), dtype=np.float32)
    y = rng.integers(0, 10, batch).astype(np.int32)
    inputs = {"forward": (x,), "train": (x, y)}
    for kind, args in inputs.items():
        fns[kind](*args)
    settle()
    return fns, inputs


LAYERS = (("stem", 3, 16, 3, 1, 32), ("stage1 (x2)", 16, 16, 3, 1, 32),
          ("stage2.conv1", 16, 32, 3, 2, 32), ("stage2.conv2", 32, 32, 3, 1, 16),
          ("stage2.project", 16, 32, 1, 2, 32), ("stage3.conv1", 32, 64, 3, 2, 16),
          ("stage3.conv2", 64, 64, 3, 1, 8), ("stage3.project", 32, 64, 1, 2, 16))
"""The ResNet's convolutions: name, in and out channels, kernel, stride, input size."""


def compare_layers(batch: int = 32, rounds: int = 15, calls: int = 5) -> None:
    """Each forward convolution alone at one thread, CPU time, interleaved rounds: amber's
    channels-last kernel (what the layout pass runs) against `jax.lax.conv_general_dilated`
    under jit in the layout XLA prefers on CPU (NHWC, HWIO), bias added in both."""
    import numpy as np

    from amber.ops.conv_nhwc import conv2d_nhwc_kernel
    jax = None
    if importlib.util.find_spec("jax") is not None:
        import jax
        jax.config.update("jax_platforms", "cpu")
    rng = np.random.default_rng(0)
    print(f"forward convolutions, batch {batch}, 1 thread, CPU ms (medians of {rounds} "
          f"interleaved rounds, load {os.getloadavg()[0]:.1f})")
    for name, c, o, k, stride, size in LAYERS:
        x = (rng.standard_normal((batch, c, size, size), dtype=np.float32).transpose(0, 2, 3, 1)
             if c < 16 else rng.standard_normal((batch, size, size, c), dtype=np.float32))  # NOTE:
        # the stem reads a channels-last view of the user's NCHW images
        w = rng.standard_normal((o, c, k, k), dtype=np.float32)
        b = rng.standard_normal(o, dtype=np.float32)
        fns = {"amber": lambda: conv2d_nhwc_kernel(x, w, b, stride=(stride, stride),
                                                   pad_mode="same")}
        if jax is not None:
            step = (stride, stride)
            conv = jax.jit(lambda x, w, b: jax.lax.conv_general_dilated(
                x, w, step, "SAME", dimension_numbers=("NHWC", "HWIO", "NHWC")) + b)
            args = (jax.numpy.asarray(x), jax.numpy.asarray(w.transpose(2, 3, 1, 0)),
                    jax.numpy.asarray(b))
            assert np.allclose(conv(*args), fns["amber"](), rtol=1e-3, atol=1e-3), name
            fns["jax"] = lambda: conv(*args).block_until_ready()
        times: dict[str, list[float]] = {key: [] for key in fns}
        for r in range(rounds):
            for key in (list(fns) if r % 2 else list(fns)[::-1]):
                start = time.process_time()
                for _ in range(calls):
                    fns[key]()
                times[key].append((time.process_time() - start) / calls * 1e3)
        cells = {key: statistics.median(v) for key, v in times.items()}
        ratio = f", amber/jax {cells['amber'] / cells['jax']:.2f}x" if "jax" in cells else ""
        print(f"  {name:<15} {c:>2} -> {o:<2} {k}x{k} stride {stride} {size:>2}px: " +
              "; ".join(f"{key} {t:6.3f}" for key, t in cells.items()) + ratio)


def thread_env(threads: int) -> dict[str, str]:
    env = {**os.environ, "AMBER_CACHE": "0"}
    for var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS",
                "NUMBA_NUM_THREADS"):
        env[var] = str(threads)
    env["XLA_FLAGS"] = (f"--xla_cpu_multi_thread_eigen={'true' if threads > 1 else 'false'} "
                        f"intra_op_parallelism_threads={threads}")
    return env


def resnet_command(call: str) -> list[str]:
    """The command line running `call` (`resnet.<name>(...)`, this module, or
    `resnet_profile.<name>(...)`) in a fresh Python process."""
    return [sys.executable, "-c", f"import sys, json; sys.path.insert(0, {str(HERE)!r}); "
            f"import resnet, resnet_profile; {call}"]


def fresh(batch: int, threads: int, rounds: int, jax: bool = True,
          tree: str | None = None, torch: bool = False) -> dict[str, Any]:
    """`measure` in a fresh process; `tree`: a directory whose `amber` package it imports."""
    command = resnet_command(
        f"print(json.dumps(resnet.measure({batch}, {threads}, {rounds}, {jax}, {torch})))")
    env = thread_env(threads)
    if tree is not None:
        env["PYTHONPATH"] = tree
    if torch:  # NOTE: spinning beside OpenBLAS's threads, PyTorch's OpenMP threads took 408 ms
        env.setdefault("OMP_WAIT_POLICY", "PASSIVE")  # a 2-thread forward here, waiting 22 ms
    out = subprocess.run(command, env=env, capture_output=True, text=True)
    if out.returncode:
        raise RuntimeError(out.stderr[-2000:])
    return json.loads(out.stdout.strip().splitlines()[-1])


def report(quick: bool = False, threads: tuple[int, ...] | None = None) -> None:
    """The table: each thread count of `threads` (default `THREADS`) and batch."""
    rounds = 3 if quick else 7
    print(f"\n## ResNet (CIFAR, 16/32/64, no BN): ms per call, medians of {rounds} interleaved "
          "rounds; 1 thread = CPU time, 2 threads = wall time; peak memory of one call")
    with_torch = importlib.util.find_spec("torch") is not None
    for count in THREADS if threads is None else threads:
        for batch in BATCHES:
            cell = fresh(batch, count, rounds)
            if with_torch:  # NOTE: amber again, beside PyTorch in a process of their own
                beside = fresh(batch, count, rounds, jax=False, torch=True)
            for kind in ("forward", "train"):
                amber_time = cell[f"{kind}/amber"][0]
                parts = [f"{name} {t * 1e3:7.2f} ms ({peak})" for key, (t, peak) in cell.items()
                         if key.startswith(kind) for name in [key.split("/")[1]]]
                ratio = "".join(f", amber/{key.split('/')[1]} {amber_time / t:.2f}x"
                                for key, (t, _) in cell.items()
                                if key.startswith(kind) and not key.endswith("/amber"))
                if with_torch:
                    mine, theirs = beside[f"{kind}/amber"][0], beside[f"{kind}/torch"][0]
                    parts.append(f"torch {theirs * 1e3:7.2f} ms (beside amber's "
                                 f"{mine * 1e3:.2f} ms)")
                    ratio += f", amber/torch {mine / theirs:.2f}x"
                print(f"  {kind:<7} batch {batch:>2}, {count} thread{'s' if count > 1 else ''}"
                      f": {'; '.join(parts)}{ratio}")


def against(tree: str, rounds: int = 7, threads: int = 1) -> None:
    """amber from `tree` (a directory holding another version's `amber` package, e.g.
    `git archive <commit> | tar -x -C <tree>/amber`) against this checkout: a fresh process
    per version, batch and round, interleaved; one thread: CPU time, more: wall time (BLAS,
    OpenMP and amber's `num_threads` all at `threads`); medians and ranges."""
    versions = {"other": tree, "this": None}
    for batch in BATCHES:
        samples: dict[str, list[dict[str, Any]]] = {name: [] for name in versions}
        for _ in range(rounds):
            for name, path in versions.items():
                samples[name].append(fresh(batch, threads, 3, jax=False, tree=path))
        for kind in ("forward", "train"):
            cells = []
            for name in versions:
                times = [cell[f"{kind}/amber"][0] * 1e3 for cell in samples[name]]
                cells.append(f"{name} {statistics.median(times):7.2f} ms ({min(times):.2f}-"
                             f"{max(times):.2f}, {samples[name][0][f'{kind}/amber'][1]})")
            print(f"  {kind:<7} batch {batch:>2}: {'; '.join(cells)}")


def pair(tree: str, threads: int = 1, rounds: int = 21) -> None:
    """amber from `tree` (as `--against`) and this checkout in ONE process, imported as two
    packages (`tree`'s as `amber_other`), called in interleaved rounds (the order alternating),
    medians with quartiles: on a shared machine the spread between fresh processes (+-30% at
    load 3) hides a 5% change that alternating calls in one process show. One thread: CPU
    time, more: wall time. Both share the process's BLAS setting and kernel pool."""
    import importlib
    import tempfile

    import numpy as np
    link = Path(tempfile.mkdtemp()) / "amber_other"
    link.symlink_to(Path(tree, "amber").resolve(), target_is_directory=True)
    sys.path.insert(0, str(link.parent))
    clock = time.process_time if threads == 1 else time.perf_counter
    for batch in BATCHES:
        rng = np.random.default_rng(0)
        x = rng.standard_normal((batch, 3, 32, 32), dtype=np.float32)
        y = rng.integers(0, 10, batch).astype(np.int32)
        fns = {}
        for name, package in (("other", "amber_other"), ("this", "amber")):
            amber = importlib.import_module(package)
            amber.set_context(num_threads=threads)
            amber.set_seed(0)
            fns[name] = amber_versions(build_net(package), package)
        for kind, args in (("forward", (x,)), ("train", (x, y))):
            first = [np.asarray(fn[kind](*args)[0] if kind == "train" else fn[kind](*args))
                     for fn in fns.values()]
            assert np.allclose(*first, rtol=2e-3, atol=2e-4), f"{kind}: the versions disagree"
            settle()
            samples: dict[str, list[float]] = {name: [] for name in fns}
            calls = max(1, 8 // batch) * 3
            for k in range(rounds):
                for name in (list(fns) if k % 2 else list(fns)[::-1]):
                    start = clock()
                    for _ in range(calls):
                        fns[name][kind](*args)
                    samples[name].append((clock() - start) / calls * 1e3)
            cells = [f"{name} {statistics.median(v):7.2f} ms ({np.percentile(v, 25):.2f}-"
                     f"{np.percentile(v, 75):.2f})" for name, v in samples.items()]
            ratio = statistics.median(samples["this"]) / statistics.median(samples["other"])
            print(f"  {kind:<7} batch {batch:>2}: {'; '.join(cells)}; this/other {ratio:.3f} "
                  f"(load {os.getloadavg()[0]:.1f})")


def in_fresh_process(call: str, threads: int) -> None:
    """`call` (as `resnet_command` takes it) in a fresh process whose BLAS / XLA thread counts
    are `threads`: they must be set before NumPy loads."""
    subprocess.run(resnet_command(call), env=thread_env(threads), check=True)


def forward_for(seconds: float, batch: int = 32) -> None:
    """amber's one-thread forward called for `seconds` of wall time; prints its median ms."""
    import numpy as np
    fns = amber_versions(build_net())
    x = np.random.default_rng(0).standard_normal((batch, 3, 32, 32), dtype=np.float32)
    fns["forward"](x)
    times, end = [], time.perf_counter() + seconds
    while time.perf_counter() < end:
        start = time.perf_counter()
        fns["forward"](x)
        times.append(time.perf_counter() - start)
    print(json.dumps(statistics.median(times) * 1e3))


def ceiling(seconds: float = 5.0, rounds: int = 3) -> None:
    """What this machine's second core gives: amber's one-thread forward (batch 32) alone, and
    in two processes at once (each with its own core, no thread of amber's shared); the ratio
    bounds what splitting one call over two threads can gain here."""
    command = resnet_command(f"resnet.forward_for({seconds})")

    def run(count: int) -> list[float]:
        procs = [subprocess.Popen(command, env=thread_env(1), stdout=subprocess.PIPE, text=True)
                 for _ in range(count)]
        return [float(p.communicate()[0].strip().splitlines()[-1]) for p in procs]
    for _ in range(rounds):
        alone, both = run(1)[0], run(2)
        print(f"  forward batch 32, 1 thread: alone {alone:.2f} ms; two processes at once "
              f"{both[0]:.2f} and {both[1]:.2f} ms: the two cores give "
              f"{2 * alone / max(both):.2f}-{2 * alone / min(both):.2f}x one's throughput "
              f"(load {os.getloadavg()[0]:.1f})")


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(
        description="The small CIFAR ResNet of issue 28: amber beside JAX (and torch), or "
                    "amber against another version of amber.")
    mode = parser.add_mutually_exclusive_group()
    mode.add_argument("--profile", action="store_true",
                      help="amber's time per op of the generated code (one BLAS thread)")
    mode.add_argument("--lines", action="store_true",
                      help="wall time per generated line (at --threads, default 2)")
    mode.add_argument("--against", metavar="DIR",
                      help="amber from DIR/amber against this checkout, a fresh process per "
                           "version and round (at --threads, default 1)")
    mode.add_argument("--layers", action="store_true",
                      help="each forward convolution alone against JAX's (one thread)")
    mode.add_argument("--ceiling", action="store_true",
                      help="what the second core gives: the one-thread forward alone and in two "
                           "processes at once")
    mode.add_argument("--pair", metavar="DIR",
                      help="amber from DIR/amber and this checkout in one process, call by call "
                           "(at --threads, default 1)")
    parser.add_argument("--threads", type=int, metavar="N",
                        help="thread count (the table: only N threads, default 1 and 2)")
    parser.add_argument("--quick", action="store_true", help="the table: 3 rounds, not 7")
    args = parser.parse_args(argv)
    if args.threads is not None and args.threads < 1:
        parser.error("--threads must be 1 or more")
    if args.profile:
        in_fresh_process("resnet_profile.profile_ops()", 1)
    elif args.layers:
        in_fresh_process("resnet.compare_layers()", 1)
    elif args.lines:
        in_fresh_process(f"resnet_profile.profile_lines(threads={args.threads or 2})",
                         args.threads or 2)
    elif args.ceiling:
        ceiling()
    elif args.pair is not None:
        in_fresh_process(f"resnet.pair({args.pair!r}, {args.threads or 1})", args.threads or 1)
    elif args.against is not None:
        against(args.against, threads=args.threads or 1)
    else:
        report(quick=args.quick, threads=None if args.threads is None else (args.threads,))


if __name__ == "__main__":
    main()

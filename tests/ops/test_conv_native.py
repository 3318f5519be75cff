"""The convolutions' native parts (ops/conv_native.py) against their NumPy parts: the same bits,
for random geometries, at one thread and two, whenever the parts are built; the build never
holds up a call, and nothing builds where the compile's backend is NumPy."""
from __future__ import annotations

import collections
import importlib.util
import json
import os
import subprocess
import sys
import textwrap
import threading
import time
import types
from typing import Any

import numpy as np
import pytest

import amber
from amber import nn
from amber.ops import conv_native
from amber.ops.conv_nhwc import (conv2d_nhwc_grad_input_kernel, conv2d_nhwc_grad_weight_kernel,
                                 conv2d_nhwc_kernel)
from amber.ops.conv_pairs import conv2d_nhwc_grads_kernel
from amber.ops.parallel import one_blas_thread

pytestmark = pytest.mark.skipif(importlib.util.find_spec("numba") is None,
                                reason="the native parts need Numba (the native extra)")


@pytest.fixture(scope="module")
def built() -> Any:
    """The process's native parts, built (or the test skips: no OpenBLAS NumPy exposes)."""
    parts = conv_native.build_now()
    assert sys.modules["_amber_native_parts"].failed is None  # NOTE: a build that raised
    if parts is None:
        pytest.skip("NumPy's BLAS is not an OpenBLAS with cblas_sgemm: no native parts")
    return parts


def counting(parts: Any, used: collections.Counter) -> Any:
    """`parts` whose every call is counted in `used`."""
    def count(name: str) -> Any:
        def call(*args: Any) -> Any:
            used[name] += 1
            return getattr(parts, name)(*args)
        return call
    return types.SimpleNamespace(**{name: count(name) if callable(part) else part
                                    for name, part in vars(parts).items()})


def geometries(seed: int, count: int, large: bool = False) -> Any:
    """Random channels-last convolutions (images, weight, bias or none, conv2d attributes),
    those with an empty result left out; `large`: 1-3 images of 12-47 pixels a side and
    16-63 channels, mostly one image (about 1-40M multiply-adds: Numba's team splits, and
    results past 64 Ki elements, whose bias is widened: `wide_bias`)."""
    rng = np.random.default_rng(seed)
    made = 0
    while made < count:
        n, c, o = int(rng.integers(1, 7)), int(rng.integers(1, 50)), int(rng.integers(1, 50))
        h, w = int(rng.integers(1, 14)), int(rng.integers(1, 14))
        if large:
            n = (1, 1, 2, 3)[int(rng.integers(0, 4))]
            c, o = int(rng.integers(16, 64)), int(rng.integers(16, 64))
            h, w = int(rng.integers(12, 48)), int(rng.integers(12, 48))
        kernel = (int(rng.integers(1, 4)), int(rng.integers(1, 4)))
        attrs = {"stride": tuple(int(v) for v in rng.integers(1, 3, 2)),
                 "dilation": tuple(int(v) for v in rng.integers(1, 4, 2)),
                 "pad_mode": ("same", "valid", "pad")[int(rng.integers(0, 3))]}
        if attrs["pad_mode"] == "pad":
            attrs["padding"] = tuple(int(v) for v in rng.integers(0, 3, 4))
        x = rng.standard_normal((n + 1, h, w, c), dtype=np.float32)
        x = x[1:] if rng.random() < 0.3 else x[:n]  # NOTE: a view: rows still contiguous
        if c <= 15 and rng.random() < 0.8:  # NOTE: as the stem's: a view of NCHW images
            x = rng.standard_normal((n, c, h, w), dtype=np.float32).transpose(0, 2, 3, 1)
        weight = rng.standard_normal((o, c, *kernel), dtype=np.float32)
        bias = (rng.standard_normal(o, dtype=np.float32),) if rng.random() < 0.7 else ()
        try:
            y = conv2d_nhwc_kernel(x, weight, *bias, **attrs)
        except (ValueError, ZeroDivisionError):  # NOTE: a window wider than the padded image
            continue
        if y.size:
            made += 1
            yield x, weight, bias, attrs, rng.standard_normal(y.shape, dtype=np.float32)


def kernels(x: np.ndarray, weight: np.ndarray, bias: tuple, attrs: dict,
            g: np.ndarray) -> dict[str, Any]:
    n, h, w, c = x.shape
    return {
        "forward": lambda **k: conv2d_nhwc_kernel(x, weight, *bias, **attrs, **k),
        "input gradient": lambda **k: conv2d_nhwc_grad_input_kernel(
            g, weight, x_shape=(n, c, h, w), **attrs, **k),
        "weight gradient": lambda **k: conv2d_nhwc_grad_weight_kernel(
            x, g, w_shape=weight.shape, **attrs, **k),
        "gradient pair": lambda **k: conv2d_nhwc_grads_kernel(
            x, g, weight, x_shape=(n, c, h, w), w_shape=weight.shape, **attrs, **k)}


@pytest.mark.parametrize("seed", range(3))
def test_native_parts_give_the_numpy_parts_bits(built: Any, seed: int,
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    shared = sys.modules["_amber_native_parts"]
    used: collections.Counter = collections.Counter()
    calls = 0
    for x, weight, bias, attrs, g in geometries(seed, 100):
        for name, kernel in kernels(x, weight, bias, attrs, g).items():
            for threads in (1, 2):
                monkeypatch.setattr(shared, "ready", None)
                want = kernel(threads=threads, native=True)
                monkeypatch.setattr(shared, "ready", counting(built, used))
                got = kernel(threads=threads, native=True)
                calls += 1
                for a, b in zip(*(r if isinstance(r, tuple) else (r,) for r in (got, want))):
                    assert a.dtype == b.dtype and a.shape == b.shape
                    assert np.array_equal(a, b), (name, x.shape, weight.shape, attrs, threads)
    assert calls > 400
    assert min(used[name] for name in vars(built) if not name.endswith("_split") and
               name != "team") >= 8, used


def test_team_splits_give_one_thread_s_bits(built: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    """Where the pool keeps one part, Numba's team takes the native parts' ranges
    (`ops/parallel.team_bounds`): the NumPy parts' bits at one thread (BLAS at one thread,
    as two threads hold it: OpenBLAS's own threads may round a GEMM differently)."""
    if built.team < 2:
        pytest.skip("Numba runs parallel code on its workqueue layer here: no team splits")
    shared = sys.modules["_amber_native_parts"]
    used: collections.Counter = collections.Counter()
    for x, weight, bias, attrs, g in geometries(11, 40, large=True):
        for name, kernel in kernels(x, weight, bias, attrs, g).items():
            monkeypatch.setattr(shared, "ready", None)
            want = one_blas_thread(lambda: kernel(threads=1, native=True))()
            monkeypatch.setattr(shared, "ready", counting(built, used))
            got = kernel(threads=2, native=True)
            for a, b in zip(*(r if isinstance(r, tuple) else (r,) for r in (got, want))):
                assert np.array_equal(a, b), (name, x.shape, weight.shape, attrs)
    assert used["rows_forward_split"] >= 5 and used["rows_grad_weight_split"] >= 5, used


class Bordered:
    """NumPy for the convolution kernels' modules, whose `empty` and `zeros` give views into the
    middle of byte buffers filled with a sentinel: a native part writing past the arrays it is
    given (its outputs, kept products) changes a border, where a comparison of the results
    alone may not see it."""
    PAD = 256  # NOTE: bytes each side; a multiple of 64 keeps NumPy's alignment

    def __init__(self) -> None:
        self.made: list[np.ndarray] = []

    def __getattr__(self, name: str) -> Any:
        return getattr(np, name)

    def empty(self, shape: Any, dtype: Any = float) -> np.ndarray:
        shape = (int(shape),) if np.ndim(shape) == 0 else tuple(int(d) for d in shape)
        dtype = np.dtype(dtype)
        size = int(np.prod(shape)) * dtype.itemsize
        base = np.full(size + 2 * self.PAD, 0xA5, np.uint8)
        self.made.append(base)
        return base[self.PAD:self.PAD + size].view(dtype).reshape(shape)

    def zeros(self, shape: Any, dtype: Any = float) -> np.ndarray:
        made = self.empty(shape, dtype)
        made[...] = 0
        return made

    def intact(self) -> bool:
        return all((base[:self.PAD] == 0xA5).all() and (base[-self.PAD:] == 0xA5).all()
                   for base in self.made)


def test_native_parts_write_only_their_arrays(built: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    from amber.ops import conv_columns, conv_nhwc, conv_row_taps
    guard = Bordered()
    for module in (conv_nhwc, conv_row_taps, conv_columns):
        monkeypatch.setattr(module, "np", guard)
    used: collections.Counter = collections.Counter()
    monkeypatch.setattr(sys.modules["_amber_native_parts"], "ready", counting(built, used))
    for large in (False, True):
        for x, weight, bias, attrs, g in geometries(21, 40, large):
            for name, kernel in kernels(x, weight, bias, attrs, g).items():
                for threads in (1, 2):
                    kernel(threads=threads, native=True)
                    assert guard.intact(), (name, x.shape, weight.shape, attrs, threads)
                    guard.made.clear()
    assert len(used) >= 7, used


def test_native_false_or_float64_runs_the_numpy_parts(built: Any,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    used: collections.Counter = collections.Counter()
    monkeypatch.setattr(sys.modules["_amber_native_parts"], "ready", counting(built, used))
    x, weight, bias, attrs, g = next(geometries(7, 1))
    for kernel in kernels(x, weight, bias, attrs, g).values():
        kernel(threads=2)
    wide = kernels(x.astype(np.float64), weight.astype(np.float64),
                   tuple(b.astype(np.float64) for b in bias), attrs, g.astype(np.float64))
    for kernel in wide.values():
        kernel(threads=2, native=True)
    assert not used


class Block(nn.Cell):
    def __init__(self) -> None:
        super().__init__()
        self.conv = nn.Conv2d(16, 16, 3, pad_mode="same", has_bias=True)
        self.relu = nn.ReLU()

    def construct(self, x: np.ndarray) -> np.ndarray:
        return self.relu(self.conv(self.relu(self.conv(x))) + x)


def test_the_backend_decides_and_the_code_says_so(monkeypatch: pytest.MonkeyPatch) -> None:
    x = np.random.default_rng(0).standard_normal((4, 16, 8, 8)).astype(np.float32)
    amber.set_seed(0)
    auto = amber.jit(Block(), backend="auto")
    amber.set_seed(0)
    plain = amber.jit(Block(), backend="numpy")
    np.testing.assert_array_equal(auto(x), plain(x))
    entry = "def Block_construct"
    assert "native=True" in auto.code[auto.code.index(entry):]
    assert "native=" not in plain.code[plain.code.index(entry):]



def test_a_generated_module_asks_amber_for_the_parts(built: Any,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    x = np.random.default_rng(1).standard_normal((4, 16, 8, 8)).astype(np.float32)
    net = amber.jit(Block(), backend="auto")
    used: collections.Counter = collections.Counter()
    monkeypatch.setattr(sys.modules[conv_native.PARTS], "ready", None)
    want = net(x)
    monkeypatch.setattr(sys.modules[conv_native.PARTS], "ready", counting(built, used))
    np.testing.assert_array_equal(net(x), want)
    assert used  # NOTE: the module's own `native_parts` found amber's
    assert "def native_parts" in net.code and "numba" not in net.code  # no build code in it


_PROBE = """
import json, sys, threading, time
import numpy as np
import amber
sys.path.insert(0, {here!r})
from test_conv_native import Block
x = np.random.default_rng(0).standard_normal((4, 16, 8, 8)).astype(np.float32)
net = amber.jit(Block(), backend={backend!r})
first = net(x)
shared = sys.modules.get("_amber_native_parts")
building = shared is not None and shared.ready is None and any(
    thread.name == "amber-native-parts" for thread in threading.enumerate())
due = shared is not None and shared.due is not None
for thread in threading.enumerate():
    if thread.name == "amber-native-parts":
        thread.join(120)
again = net(x)
print(json.dumps({{"numba": "numba" in sys.modules, "building": building, "due": due,
                  "built": shared is not None and shared.ready is not None,
                  "same": bool(np.array_equal(first, again))}}))
"""


@pytest.mark.parametrize("backend, when", [("auto", "now"), ("auto", ""), ("numpy", "now")])
def test_the_build_runs_behind_the_calls(backend: str, when: str, tmp_path: Any) -> None:
    code = textwrap.dedent(_PROBE.format(here=os.path.dirname(__file__), backend=backend))
    env = {**os.environ, "AMBER_CACHE": "0", "AMBER_CACHE_DIR": str(tmp_path),
           "AMBER_NATIVE_KERNELS": when}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env,
                         check=True, timeout=300)
    found = json.loads(out.stdout.strip().splitlines()[-1])
    assert found["same"]
    if backend == "numpy":
        assert not found["numba"] and not found["built"]
    elif when == "now":  # NOTE: the first call did not wait for Numba's compile (seconds)
        assert found["building"] and found["built"]
    else:  # NOTE: by default a process builds them only after 10 s of convolutions
        assert found["due"] and not found["building"] and not found["numba"]


def test_amber_native_kernels_0_turns_them_off(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AMBER_NATIVE_KERNELS", "0")
    monkeypatch.setitem(sys.modules, conv_native.PARTS, conv_native.parts_state())
    start = time.perf_counter()
    assert conv_native.native_parts() is None
    assert time.perf_counter() - start < 1
    assert sys.modules[conv_native.PARTS].due is None
    assert not any(t.name == "amber-native-parts" and t.is_alive()
                   for t in threading.enumerate())


def test_a_forked_child_keeps_the_built_parts(built: Any) -> None:
    if not hasattr(os, "fork"):
        pytest.skip("no fork on this platform")
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:  # NOTE: the child: the parts at once, no build thread
        kept = conv_native.native_parts()
        ok = {**vars(kept), "team": built.team} == vars(built) and not any(
            t.name == "amber-native-parts" for t in threading.enumerate())
        os.write(write, b"1" if ok else b"0")
        os._exit(0)
    os.waitpid(pid, 0)
    assert os.read(read, 1) == b"1"


def test_a_child_forked_after_a_team_split_runs_its_parts_alone(built: Any) -> None:
    """GNU OpenMP ends a forked child that starts a team its parent started: the child's
    kernels keep the native parts but not the splits, and compute the same numbers."""
    if not hasattr(os, "fork"):
        pytest.skip("no fork on this platform")
    rng = np.random.default_rng(3)
    x = rng.standard_normal((1, 32, 32, 16), dtype=np.float32)
    weight = rng.standard_normal((16, 16, 3, 3), dtype=np.float32)
    want = conv2d_nhwc_kernel(x, weight, pad_mode="same", threads=2, native=True)
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:
        got = conv2d_nhwc_kernel(x, weight, pad_mode="same", threads=2, native=True)
        ok = conv_native.native_parts().team == 0 and np.array_equal(got, want)
        os.write(write, b"1" if ok else b"0")
        os._exit(0)
    _, status = os.waitpid(pid, 0)
    assert status == 0 and os.read(read, 1) == b"1"


def test_the_build_imports_numba_under_amber_s_import_lock(built: Any,
                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    """Numba's imports are circular: the build waits while another thread of amber imports it
    (ops/background.py), and builds once that is done."""
    from amber.ops.background import NUMBA_IMPORT_LOCK
    monkeypatch.setenv("AMBER_NATIVE_KERNELS", "now")
    monkeypatch.setitem(sys.modules, conv_native.PARTS, conv_native.parts_state())
    found = []
    with NUMBA_IMPORT_LOCK:
        caller = threading.Thread(target=lambda: found.append(conv_native.build_now()))
        caller.start()
        caller.join(1.0)
        (build,) = [t for t in threading.enumerate() if t.name == "amber-native-parts"]
        waiting = sys._current_frames()[build.ident]  # NOTE: its innermost frame: the lock's
        assert waiting.f_code.co_name == "build_native_parts" and not found  # line, not Numba
    caller.join(300)
    assert found and found[0] is not None and found[0] is not built


def test_a_child_forked_before_the_build_starts_afresh(monkeypatch: pytest.MonkeyPatch) -> None:
    if not hasattr(os, "fork"):
        pytest.skip("no fork on this platform")
    parent = conv_native.parts_state()
    parent.asked, parent.due = True, time.perf_counter() + 3600  # NOTE: asked, not started
    parent.lock.acquire()  # NOTE: as a build starting in another thread could hold it
    monkeypatch.setitem(sys.modules, conv_native.PARTS, parent)
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:  # NOTE: the child: a state of its own, not asked yet, its lock free
        child = sys.modules[conv_native.PARTS]
        ok = child is not parent and not child.asked and child.lock.acquire(timeout=1)
        os.write(write, b"1" if ok else b"0")
        os._exit(0)
    parent.lock.release()
    os.waitpid(pid, 0)
    assert os.read(read, 1) == b"1"

"""The place_threads pass (graph/passes/place_threads.py): a convolution keeps `threads` only
where its static work splits (the same rule as `thread_ranges` at run time); a function none
of whose kernels split is the one-thread function, character for character; a symbolic batch
keeps `threads`."""
import importlib.util
import types

import numpy as np
import pytest

import amber
from amber import nn
from amber.ops.parallel import kernel_threads, splits, team_bounds, thread_ranges
from central_differences import SquaredSum  # conftest puts it on the path


class Block(nn.Cell):
    """A residual block of 16 channels on 16x16 images: 0.6M multiply-adds a convolution an
    image, so one image is one part and sixteen are several."""

    def __init__(self) -> None:
        super().__init__()
        self.conv1 = nn.Conv2d(16, 16, 3, pad_mode="same", has_bias=True)
        self.conv2 = nn.Conv2d(16, 16, 3, pad_mode="same", has_bias=True)
        self.relu = nn.ReLU()

    def construct(self, x: np.ndarray) -> np.ndarray:
        return self.relu(self.conv2(self.relu(self.conv1(x))) + x)


def _codes(batch: int, threads: int, **jit_options) -> tuple[str, str]:
    amber.set_context(num_threads=threads)
    amber.set_seed(0)
    net = Block()
    x = np.random.default_rng(batch).standard_normal((batch, 16, 16, 16)).astype(np.float32)
    forward = amber.jit(net, **jit_options)
    grad = amber.jit(amber.grad(SquaredSum(net), grad_position=0, weights=net.trainable_params()),
                     **jit_options)
    forward(x), grad(x)
    return forward.code, grad.code


def _entry(code: str) -> str:
    """The generated entry function (the module's last), without its decorator."""
    return code[code.rindex("\ndef "):]


def test_kernels_that_would_not_split_are_spelled_as_one_threads(restore_threads) -> None:
    """At batch 1 the entry function is the one-thread function, but for the BLAS hold it
    keeps (BLAS's own threads, spinning and waiting for a core, made the ResNet's batch-1
    forward 5.6 ms against 1.5 here without it)."""
    one = _codes(1, 1)
    two = _codes(1, 2)
    for a, b in zip(one, two):
        assert _entry(a) == _entry(b) and "threads=2" not in b
        assert "\n@one_blas_thread\n" in b and "@one_blas_thread" not in a
    for code in _codes(16, 2):  # NOTE: sixteen images split (or pair)
        assert "threads=2" in code and "\n@one_blas_thread\n" in code


def test_code_without_convolutions_keeps_blas_threads(restore_threads) -> None:
    """A dense network is not amber's to thread: its GEMMs stay on BLAS's threads."""
    amber.set_context(num_threads=2)
    dense = amber.jit(nn.Dense(64, 32))
    dense(np.ones((4, 64), np.float32))
    assert "one_blas_thread" not in dense.code


def test_a_symbolic_batch_keeps_threads(restore_threads) -> None:
    for code in _codes(1, 2, dynamic={"x": 0}):
        assert "threads=2" in code


@pytest.mark.skipif(kernel_threads().blas is None, reason="NumPy's BLAS is not an OpenBLAS "
                    "amber can hold at one thread: kernels keep one part")
def test_the_compile_time_rule_is_the_run_time_rule() -> None:
    for work in (0, 1 << 20, (1 << 22) - 1, 1 << 22, 9 << 21, 1 << 30):
        for threads in (1, 2, 3):
            assert splits(work, threads) == (len(thread_ranges(64, threads, work)) > 1)


def test_a_native_kernel_keeps_threads_for_numba_s_team(restore_threads) -> None:
    """A convolution whose parts may run natively (`native=True`: backend "auto" or "numba")
    keeps its threads from 2M multiply-adds, where Numba's team may take two parts
    (`team_bounds`); below that, and with the NumPy backend, it is spelled as one thread's."""
    amber.set_context(num_threads=2)
    x = np.ones((1, 16, 32, 32), np.float32)
    for backend, wide in (("auto", 32), ("numpy", 32), ("auto", 16)):
        net = nn.Conv2d(16, 16, 3, pad_mode="same", has_bias=True)  # NOTE: 2.4M at 32x32
        conv = amber.jit(net, backend=backend)
        conv(x[..., :wide, :wide])
        native = "native=True" in conv.code
        assert native == (backend == "auto" and importlib.util.find_spec("numba") is not None)
        assert ("threads=2" in conv.code) == (native and wide == 32), (backend, wide)


def test_the_team_s_rule_is_the_compile_time_rule() -> None:
    team = types.SimpleNamespace(team=2)
    for work in (0, (1 << 21) - 1, 1 << 21, 1 << 22, (1 << 23) - 1):
        for threads in (1, 2, 3):
            bounds = team_bounds(team, [(0, 64)], 64, threads, work)
            assert splits(work, threads, native=True) == (bounds is not None)
            assert bounds is None or list(bounds) == [0, 32, 64]

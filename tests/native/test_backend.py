"""Choosing the backend: `backend=` on jit and set_context, AMBER_BACKEND, auto without Numba,
forcing Numba without it, and `amber dump --backend`."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import amber
from amber.runtime import CompileOptions, native, reset_context

ROOT = Path(__file__).resolve().parents[2]


def count_down(x):
    for _ in range(50):
        if x.sum() > 0:
            x = x * 0.5 - 1.0
        else:
            x = x * 0.5 + 1.0
    return x


def straight(x):
    return np.tanh(x) * 2.0 + 1.0


X = np.linspace(-1.0, 1.0, 16, dtype=np.float32)


def test_unknown_backend_is_an_error() -> None:
    with pytest.raises(ValueError, match="backend must be one of"):
        amber.set_context(backend="cuda")
    with pytest.raises(ValueError, match="backend must be one of"):
        amber.jit(count_down, backend="llvm")


def test_environment_variable_sets_the_default(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AMBER_BACKEND", "numpy")
    assert reset_context().options.backend == "numpy"
    monkeypatch.setenv("AMBER_BACKEND", "bogus")
    with pytest.raises(ValueError, match="AMBER_BACKEND"):
        reset_context()
    monkeypatch.delenv("AMBER_BACKEND")
    assert reset_context().options.backend == "auto"


def test_without_numba_auto_is_numpy_and_numba_is_a_clear_error(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(native, "numba_installed", lambda: False)
    assert CompileOptions(backend="auto").codegen_backend == "numpy"
    assert CompileOptions(backend="auto").cache_token() == CompileOptions(
        backend="numpy").cache_token()
    fast = amber.jit(count_down)
    np.testing.assert_array_equal(fast(X), count_down(X))
    assert "numba" not in fast.code
    for force in (lambda: amber.set_context(backend="numba"),
                  lambda: amber.jit(count_down, backend="numba")):
        with pytest.raises(ImportError, match=r"needs Numba.*pip install"):
            force()


def test_numpy_code_is_the_same_whatever_the_backend_without_loops(numba) -> None:
    codes = []
    for backend in ("numpy", "auto", "numba"):
        fast = amber.jit(straight, backend=backend)
        fast(X)
        codes.append(fast.code)
    assert codes[0] == codes[1] == codes[2]
    assert "numba" not in codes[0]


def test_the_backend_is_part_of_the_cache_key(numba) -> None:
    assert CompileOptions(backend="numpy").cache_token() != \
        CompileOptions(backend="numba").cache_token()


def test_jit_backend_overrides_the_context(numba) -> None:
    amber.set_context(backend="numpy")
    fast = amber.jit(count_down, backend="numba")
    fast(X)
    assert "@numba.njit(" in fast.code
    plain = amber.jit(count_down)
    plain(X)
    assert "numba" not in plain.code


def test_dump_shows_the_kernel(numba) -> None:
    spec = f"{ROOT / 'samples' / 'rnn.py'}:EarlyStopRNN"
    out = subprocess.run([sys.executable, "-m", "amber", "dump", spec, "--backend", "numba"],
                         capture_output=True, text=True, check=True).stdout
    assert "import numba" in out and "@numba.njit(" in out
    assert "def EarlyStopRNN_construct_while(" in out
    assert "EarlyStopRNN_construct_while(" in out.split("def EarlyStopRNN_construct(")[1]
    plain = subprocess.run([sys.executable, "-m", "amber", "dump", spec], capture_output=True,
                           text=True, check=True).stdout
    assert "numba" not in plain


def squash(x):
    for _ in range(20):
        x = np.tanh(x * 1.5)
    return x


def project(x, w):
    for _ in range(20):
        x = np.maximum(x @ w, 0.0)
    return x


@pytest.mark.parametrize("fn, args, kernel", [
    (count_down, (X,), True),                                    # 16 floats, many iterations
    (squash, (np.linspace(-1, 1, 64, dtype=np.float32),), True),  # tanh of 64: calls dominate
    (squash, (np.linspace(-1, 1, 4096, dtype=np.float32).reshape(64, 64),), False),  # tanh dominates
    (project, (np.ones((4, 8), np.float32), np.eye(8, dtype=np.float32)), True),
    # a big weight made outside: read through one contiguous copy a call (kernel 0.5x NumPy)
    (project, (np.ones((1, 128), np.float32), np.eye(128, dtype=np.float32)), True),
    # a big carried product (16x512): NumPy (a kernel measured 1.4x)
    (project, (np.ones((16, 512), np.float32), np.eye(512, dtype=np.float32)), False),
], ids=["tiny", "tanh-small", "tanh-large", "matmul-small", "matmul-large-weight",
        "matmul-large-carried"])
def test_auto_compiles_a_kernel_only_where_the_cost_rule_expects_it_to_win(
        numba, fn, args, kernel: bool) -> None:
    auto, plain = amber.jit(fn, backend="auto"), amber.jit(fn, backend="numpy")
    np.testing.assert_allclose(auto(*args), plain(*args), rtol=1e-6, atol=1e-6)
    assert auto.wait_kernels(120)  # NOTE: auto runs NumPy code until its kernels are ready
    assert ("@numba.njit(" in auto.code) == kernel

"""Tests of the Numba backend. Each test starts from default settings with a private disk-cache
directory; tests that compile kernels need numba (`numba` fixture: skipped, saying why, when it
is not installed)."""
from __future__ import annotations

import importlib.util
from pathlib import Path
from typing import Any, Iterator

import pytest

import amber
from amber.runtime import reset_context
from amber.runtime.tiers import wait_all


@pytest.fixture(autouse=True)
def cache_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """A private cache directory (also in the environment, for subprocesses)."""
    path = tmp_path / "amber-cache"
    monkeypatch.setenv("AMBER_CACHE_DIR", str(path))
    monkeypatch.setenv("AMBER_CACHE", "0")
    monkeypatch.delenv("AMBER_BACKEND", raising=False)
    reset_context()
    amber.set_seed(0)
    yield path
    wait_all(300)  # NOTE: no background compile of this test runs into the next one
    reset_context()


@pytest.fixture
def numba() -> Any:
    """The numba module; the test is skipped (saying why) when it is not installed."""
    if importlib.util.find_spec("numba") is None:
        pytest.skip("the Numba backend needs numba: pip install -e '.[native]'")
    import numba as module
    return module

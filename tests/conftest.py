"""Suite-wide isolation: no test writes under the user's home. Before collection (some test
modules run programs while being imported), every test process points `$AMBER_CACHE_DIR` at a
directory of its own, removed at the end; subprocesses inherit it. Test folders that need a
fresh directory per test (tests/runtime, tests/cli) override it with their own fixture."""
from __future__ import annotations

import os
import shutil
import tempfile

import pytest

_SAVED = "_amber_saved_cache_dir"


def pytest_configure(config: pytest.Config) -> None:
    """Give this test process a private disk-cache directory; compile with the NumPy backend
    unless `$AMBER_BACKEND` says otherwise (tests of the Numba backend ask for it)."""
    setattr(config, _SAVED, os.environ.get("AMBER_CACHE_DIR"))
    os.environ["AMBER_CACHE_DIR"] = tempfile.mkdtemp(prefix="amber-test-cache-")
    os.environ.setdefault("AMBER_BACKEND", "numpy")


def pytest_unconfigure(config: pytest.Config) -> None:
    """Remove the directory and restore the environment."""
    shutil.rmtree(os.environ.get("AMBER_CACHE_DIR", ""), ignore_errors=True)
    saved = getattr(config, _SAVED, None)
    if saved is None:
        os.environ.pop("AMBER_CACHE_DIR", None)
    else:
        os.environ["AMBER_CACHE_DIR"] = saved

"""Every runtime test gets its own disk cache directory and starts from default settings."""
from __future__ import annotations

import sys
from pathlib import Path
from typing import Iterator

import pytest

# NOTE: tests have no __init__.py (importlib import mode): test files reach this directory's
# helper modules (fresh_process.py) as top-level modules
sys.path.insert(0, str(Path(__file__).parent))

import amber
from amber.runtime import reset_context


@pytest.fixture(autouse=True)
def cache_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """A private cache directory (also in the environment, for subprocesses)."""
    path = tmp_path / "amber-cache"
    monkeypatch.setenv("AMBER_CACHE_DIR", str(path))
    monkeypatch.delenv("AMBER_CACHE", raising=False)
    reset_context()
    amber.set_seed(0)
    yield path
    reset_context()

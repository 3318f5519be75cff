"""Every CLI test gets its own disk cache directory and starts from default settings."""
from __future__ import annotations

from pathlib import Path
from typing import Iterator

import pytest

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

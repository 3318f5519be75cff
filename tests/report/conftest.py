"""Compile-report tests: `browser.py` is importable as a top-level module; each test records
into a fresh directory, with a fresh disk cache, and stops recording afterwards."""
from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Iterator

import pytest

sys.path.insert(0, os.path.dirname(__file__))

import amber  # noqa: E402
from amber import report  # noqa: E402
from amber.runtime import reset_context  # noqa: E402

SAMPLES = Path(amber.__file__).resolve().parent / "samples"


@pytest.fixture
def recording(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """Record this test's compiles into `tmp_path / "run"`; yields that directory."""
    monkeypatch.setenv("AMBER_CACHE_DIR", str(tmp_path / "cache"))
    reset_context()
    directory = tmp_path / "run"
    report.start(directory)
    try:
        yield directory
    finally:
        report.stop()
        reset_context()

"""Gradient tests: `numeric.py` (float64 central finite differences) and `sample_programs.py`
(programs several tests differentiate) are importable as top-level modules, as tests have no
packages; every test starts from default settings."""
from __future__ import annotations

import os
import sys
from typing import Iterator

import pytest

sys.path.insert(0, os.path.dirname(__file__))

import amber  # noqa: E402
from amber.runtime import reset_context  # noqa: E402


@pytest.fixture(autouse=True)
def fresh_context() -> Iterator[None]:
    reset_context()
    amber.set_seed(0)
    yield
    reset_context()

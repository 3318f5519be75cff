"""The program corpus, Tangent style: every category file marks small programs with
`harness.runs(...)`, and `pytest_generate_tests` turns them into one `program` parametrization
(ids = program names) that `check_program` runs eagerly and compiled.

Random programs (`test_random_programs.py`) run 400 hypothesis examples by default; a deep search:
    AMBER_HYPOTHESIS_EXAMPLES=10000 python -m pytest tests/programs/test_random_programs.py
"""
from __future__ import annotations

import os
import sys
from typing import Any, Callable

import pytest

# NOTE: tests have no __init__.py (importlib import mode), so category files reach the harness
# as a top-level module on this directory.
sys.path.insert(0, os.path.dirname(__file__))

import harness  # noqa: E402


@pytest.fixture(autouse=True, scope="module")
def no_disk_cache() -> Any:
    """Compile every program afresh: a disk entry written by an older compiler must not answer
    for the current one. (Module scope: tests elsewhere keep their cache settings.)"""
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("AMBER_CACHE", "0")
        yield


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    """Parametrize `program` with the programs marked in the requesting module."""
    if "program" in metafunc.fixturenames:
        programs = harness.collect(vars(metafunc.module))
        metafunc.parametrize("program", programs, ids=[p.name for p in programs])


@pytest.fixture
def check_program(capsys: pytest.CaptureFixture[str]) -> Callable[[harness.Program], None]:
    """Run a program eagerly and compiled on each of its inputs and assert they agree."""
    def run(program: harness.Program) -> None:
        harness.check(program, capsys)
    return run


"""The program corpus, Tangent style: every category file marks small programs with
`harness.runs(...)`, and `pytest_generate_tests` turns them into one `program` parametrization
(ids = program names) that `check_program` runs eagerly and compiled, in every compile mode:
-O0, -O1, -O2 (the default) and -O2 verifying the IR after each pass.

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

import amber  # noqa: E402
import harness  # noqa: E402

MODES = {"O0": {"opt_level": 0}, "O1": {"opt_level": 1}, "O2": {"opt_level": 2},
         "O2verify": {"opt_level": 2, "verify": True}, "disk": {"opt_level": 2}}
"""Compile modes every corpus program runs in (`amber.set_context` options). In `disk` mode the
disk cache is on: each program is checked twice, the second time from what the first stored."""


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


@pytest.fixture(scope="session")
def disk_cache_dir(tmp_path_factory: pytest.TempPathFactory) -> str:
    """The disk cache shared by every program in `disk` mode."""
    return str(tmp_path_factory.mktemp("amber_cache"))


@pytest.fixture(params=sorted(MODES))
def compile_mode(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch,
                 disk_cache_dir: str) -> Any:
    """Compile with one mode's options for the duration of a test."""
    before = amber.get_context()
    amber.set_context(**MODES[request.param])
    if request.param == "disk":
        monkeypatch.setenv("AMBER_CACHE", "1")
        monkeypatch.setenv("AMBER_CACHE_DIR", disk_cache_dir)
    yield request.param
    amber.set_context(opt_level=before.opt_level, verify=before.options.verify)


@pytest.fixture
def check_program(capsys: pytest.CaptureFixture[str],
                  compile_mode: str) -> Callable[[harness.Program], None]:
    """Run a program eagerly and compiled on each of its inputs and assert they agree."""
    def run(program: harness.Program) -> None:
        harness.check(program, capsys)
        if compile_mode == "disk":  # NOTE: a fresh jit object: served from the disk cache
            harness.check(program, capsys)
    return run


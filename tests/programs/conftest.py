"""The program corpus, Tangent style: every category file marks small programs with
`harness.runs(...)`, and `pytest_generate_tests` turns them into one `program` parametrization
(ids = program names) that `check_program` runs eagerly and compiled, in every compile mode:
-O0, -O1, -O2 (the default) and -O2 verifying the IR after each pass.

Random programs (`test_random_programs.py`) run 480 hypothesis examples by default (30 per flavor); a deep search:
    AMBER_HYPOTHESIS_EXAMPLES=10000 python -m pytest tests/programs/test_random_programs.py

The Numba backend: every program with a `for` or `while` in its source also runs in `numba`
mode (backend="numba": its loops compiled as Numba kernels where they can be); the whole corpus
in every mode under Numba is the deep run:
    AMBER_NATIVE_CORPUS=all python -m pytest tests/programs
Without Numba installed the `numba` mode is skipped (saying so).
"""
from __future__ import annotations

import ast
import functools
import importlib.util
import inspect
import os
import re
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

NATIVE_MODE = "numba"
NATIVE_ALL = os.environ.get("AMBER_NATIVE_CORPUS", "").lower() == "all"
HAS_NUMBA = importlib.util.find_spec("numba") is not None
_LOOP = re.compile(r"^\s*(for|while)\b", re.M)


def has_loop(program: harness.Program) -> bool:
    """True if the program's own source has a `for` or `while` statement."""
    target = program.target
    try:
        found = _top_level_loops(inspect.getsourcefile(target)).get(target.__qualname__)
        if found is None:
            return bool(_LOOP.search("".join(harness.source_lines(target)[0])))
        return found
    except (OSError, TypeError):
        return True


@functools.cache
def _top_level_loops(path: str | None) -> dict[str, bool]:
    """For each name a file defines once at top level (a function or class), whether its body
    has a `for` or `while`. NOTE: `inspect.getsource` of a class parses its whole file each time
    (Python 3.11): with a hundred Cell programs in a file, collecting took minutes."""
    if path is None:
        raise OSError("no source file")
    with open(path, encoding="utf-8") as file, harness.PARSE_LOCK:  # NOTE: see source_lines
        tree = ast.parse(file.read())
    defined = [node for node in tree.body
               if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef)]
    names = [node.name for node in defined]
    return {node.name: any(isinstance(n, ast.For | ast.While | ast.AsyncFor)
                           for n in ast.walk(node))
            for node in defined if names.count(node.name) == 1}


PEER = "test_peer_"
"""Programs ported from other compilers' test suites run in O2 (and numba for loops) only."""


def modes_of(program: harness.Program) -> list[str]:
    """The modes a program runs in: every one, plus `numba` for a program with a loop (under
    AMBER_NATIVE_CORPUS=all, every mode again with the Numba backend). The peer-suite ports
    (test_peer_*), and every program under NumPy 1, run in O2 only (+ `numba` for a loop),
    unless AMBER_NATIVE_CORPUS=all."""
    modes = sorted(MODES)
    if (PEER in program.origin or harness.NUMPY_1) and not NATIVE_ALL:
        # NOTE: the peer ports add breadth of Python, not of pipelines; NumPy 1 changes
        # promotion, which O2 meets as the other modes do (CI time)
        modes = ["O2"]
    if NATIVE_ALL:
        return modes + [f"{NATIVE_MODE}-{m}" for m in modes]
    return modes + ([NATIVE_MODE] if has_loop(program) else [])


@pytest.fixture(autouse=True, scope="module")
def no_disk_cache() -> Any:
    """Compile every program afresh: a disk entry written by an older compiler must not answer
    for the current one. (Module scope: tests elsewhere keep their cache settings.)"""
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("AMBER_CACHE", "0")
        yield


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    """Parametrize `program` with the programs marked in the requesting module, each in its
    compile modes (`modes_of`); tests without programs run in every plain mode."""
    if "program" in metafunc.fixturenames and "compile_mode" not in metafunc.fixturenames:
        programs = harness.collect(vars(metafunc.module))
        metafunc.parametrize("program", programs, ids=[p.name for p in programs])
    elif "program" in metafunc.fixturenames:
        programs = harness.collect(vars(metafunc.module))
        pairs = [(m, p) for p in programs for m in modes_of(p)]
        pairs.sort(key=lambda pair: pair[0])  # NOTE: ids read `mode-program`, grouped by mode
        metafunc.parametrize(["compile_mode", "program"], pairs, indirect=["compile_mode"],
                             ids=[f"{m}-{p.name}" for m, p in pairs])
    elif "compile_mode" in metafunc.fixturenames:
        metafunc.parametrize("compile_mode", sorted(MODES), indirect=True)


@pytest.fixture(scope="session")
def disk_cache_dir(tmp_path_factory: pytest.TempPathFactory) -> str:
    """The disk cache shared by every program in `disk` mode."""
    return str(tmp_path_factory.mktemp("amber_cache"))


@pytest.fixture
def compile_mode(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch,
                 disk_cache_dir: str) -> Any:
    """Compile with one mode's options for the duration of a test."""
    before = amber.get_context()
    mode = request.param
    native = mode.startswith(NATIVE_MODE)
    if native and not HAS_NUMBA:
        pytest.skip("the Numba backend needs numba (pip install -e '.[native]')")
    base = mode.removeprefix(NATIVE_MODE).lstrip("-") or "O2"
    # NOTE: the plain modes run NumPy code: under "auto" each looped program would start Numba
    # compiles in the background, which queued on Numba's compiler lock and stalled later tests
    # for minutes (the tiers have their own tests in tests/native)
    amber.set_context(**MODES[base], backend="numba" if native else "numpy")
    if base == "disk":
        monkeypatch.setenv("AMBER_CACHE", "1")
        monkeypatch.setenv("AMBER_CACHE_DIR", disk_cache_dir)
    yield base
    amber.set_context(opt_level=before.opt_level, verify=before.options.verify,
                      backend=before.options.backend)


@pytest.fixture
def check_program(capsys: pytest.CaptureFixture[str],
                  compile_mode: str) -> Callable[[harness.Program], None]:
    """Run a program eagerly and compiled on each of its inputs and assert they agree."""
    def run(program: harness.Program) -> None:
        harness.check(program, capsys)
        if compile_mode == "disk":  # NOTE: a fresh jit object: served from the disk cache
            harness.check(program, capsys)
    return run


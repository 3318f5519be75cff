"""A test run writes nothing under $HOME: tests/conftest.py gives every test process a private
disk-cache directory before collection (removed at the end), and subprocesses inherit it."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

TESTS = Path(__file__).resolve().parent


def test_a_test_run_writes_nothing_under_home(tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    env = {k: v for k, v in os.environ.items()
           if k not in ("AMBER_CACHE_DIR", "AMBER_CACHE", "XDG_CACHE_HOME")}
    env.update(HOME=str(home), USERPROFILE=str(home), LOCALAPPDATA=str(home / "AppData"),
               TMPDIR=str(tmp_path / "tmp"))
    (tmp_path / "tmp").mkdir()
    # NOTE: modules that compile through the disk cache with no fixture of their own (the
    # samples, run in process; the user-lines tests also spawn processes) and one with it.
    modules = [TESTS / "nn" / "test_samples.py", TESTS / "codegen" / "test_user_lines.py",
               TESTS / "runtime" / "test_save_graphs.py"]
    done = subprocess.run([sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-q",
                           "-W", "ignore", *map(str, modules)], cwd=tmp_path, env=env,
                          capture_output=True, text=True)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    assert " passed" in done.stdout
    written = sorted(str(p.relative_to(home)) for p in home.rglob("*"))
    assert written == [], written
    leftovers = sorted(p.name for p in (tmp_path / "tmp").iterdir())
    assert not [n for n in leftovers if n.startswith("amber-test-cache-")], leftovers

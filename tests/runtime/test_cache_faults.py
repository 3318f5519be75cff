"""The disk cache under faults (issue 29): any file of an entry deleted, replaced by a folder or
swapped with another entry's, a process killed with SIGKILL in the middle of a store, and
threads racing on one jit object: each call still returns eager's result, a damaged entry is
compiled again, never run."""
from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import warnings
from pathlib import Path

import numpy as np
import pytest

import amber
from amber.runtime import DiskCache


def affine(x: np.ndarray, k: int) -> np.ndarray:
    if x.sum() > 0:
        return x * k + 1.0
    return x - k


def run(x: np.ndarray, k: int = 2) -> amber.runtime.JitFunction:
    fast = amber.jit(affine)  # NOTE: a new jit object: only the disk cache has entries
    np.testing.assert_allclose(fast(x, k), affine(x, k))
    return fast


X = np.arange(4, dtype=np.float32)


@pytest.mark.parametrize("fault", ["deleted", "folder"])
@pytest.mark.parametrize("suffix", [".py", ".json", ".compile.lock"])
def test_a_file_of_an_entry_deleted_or_replaced_by_a_folder(suffix: str, fault: str,
                                                            cache_dir: Path) -> None:
    run(X)
    meta = next(cache_dir.glob("*/*.json"))
    path = meta.parent / ".compile.lock" if suffix == ".compile.lock" else \
        meta.with_suffix(suffix)
    path.unlink()
    if fault == "folder":
        path.mkdir()
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # NOTE: the cache keeps working, silently
        assert run(X).stats.disk_hits == (suffix == ".compile.lock")
        assert run(X).stats.disk_hits == 1  # NOTE: rewritten


def test_files_swapped_between_entries_are_not_used(cache_dir: Path) -> None:
    run(X, 2)
    run(X, 3)
    (a, b) = sorted(cache_dir.glob("*/*.py"))
    text_a, text_b = a.read_text(), b.read_text()
    a.write_text(text_b)
    b.write_text(text_a)
    assert run(X, 2).stats.compiles == 1 and run(X, 3).stats.compiles == 1
    metas = sorted(cache_dir.glob("*/*.json"))
    a_meta, b_meta = metas[0].read_text(), metas[1].read_text()
    metas[0].write_text(b_meta)
    metas[1].write_text(a_meta)
    assert run(X, 2).stats.compiles == 1 and run(X, 3).stats.compiles == 1


KILLED_MID_STORE = """
import os, signal, sys
import numpy as np
sys.path.insert(0, {tests!r})
import amber
from amber.runtime import diskcache
from test_cache_faults import affine
real = diskcache._atomic_write
def write_then_die(path, text):
    if path.suffix == ".json":  # NOTE: the module is in place, the metadata half written
        tmp = path.with_name("." + path.stem + ".partial.tmp")
        tmp.write_text(text[: len(text) // 2])
        os.kill(os.getpid(), signal.SIGKILL)
    real(path, text)
diskcache._atomic_write = write_then_die
amber.jit(affine)(np.arange(4, dtype=np.float32), 2)
"""


def test_a_process_killed_mid_store_leaves_nothing_that_is_used(cache_dir: Path) -> None:
    script = KILLED_MID_STORE.format(tests=str(Path(__file__).parent))
    env = {**os.environ, "AMBER_CACHE_DIR": str(cache_dir)}
    proc = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True)
    assert proc.returncode == -signal.SIGKILL, proc.stderr
    assert list(cache_dir.glob("*/.*.tmp")) and not list(cache_dir.glob("*/*.json"))
    assert run(X).stats.compiles == 1  # NOTE: the lock died with the process: no waiting
    assert run(X).stats.disk_hits == 1
    old = 2 * 3600
    for tmp in cache_dir.glob("*/.*.tmp"):
        os.utime(tmp, (tmp.stat().st_atime - old, tmp.stat().st_mtime - old))
    DiskCache(cache_dir).prune()
    assert not list(cache_dir.glob("*/.*.tmp"))


@pytest.mark.filterwarnings("ignore:.*changed between calls")
def test_threads_racing_on_one_jit_object() -> None:
    fast = amber.jit(affine)
    inputs = [(np.arange(n, dtype=np.float32) - 2, k) for n in (3, 4, 5) for k in (1, 2)]
    failures: list[BaseException] = []

    def worker(seed: int) -> None:
        try:
            for i in range(20):
                x, k = inputs[(seed + i) % len(inputs)]
                np.testing.assert_allclose(fast(x, k), affine(x, k))
        except BaseException as err:  # noqa: BLE001 (reported by the main thread)
            failures.append(err)

    threads = [threading.Thread(target=worker, args=(s,)) for s in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=60)
    assert not failures, failures[0]
    assert fast.stats.specializations <= len(inputs) + 2  # NOTE: symbolic sizes may add some

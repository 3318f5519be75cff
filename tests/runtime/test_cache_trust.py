"""The disk cache's trust rules and accounting (issue 29, items 1 and 2): every folder and file
amber (or Numba for it) writes is private to the user whatever the umask; a cache root or key
folder that others could write, or that another user owns, is not used (one warning saying why
and how to fix it); every file of an entry (Numba's included) counts toward the size limit, is
evicted, listed and cleared with it, so `amber cache list` adds up to what is on disk."""
from __future__ import annotations

import os
import stat
import warnings
from pathlib import Path
from typing import Iterator

import numpy as np
import pytest

import amber
from amber import cli
from amber.runtime import DiskCache
from amber.runtime.native import numba_installed

needs_numba = pytest.mark.skipif(not numba_installed(), reason="Numba's kernel files need Numba")


def steps(x: np.ndarray, n: int) -> np.ndarray:
    for i in range(n):  # NOTE: a loop: a Numba kernel under the numba backend
        x = x * 0.5 + i
    return x


def scaled(x: np.ndarray) -> np.ndarray:
    return x * 3.0 + 1.0


X = np.arange(4, dtype=np.float32)


def run(function, backend: str = "numpy", *args) -> amber.runtime.JitFunction:
    fast = amber.jit(function, backend=backend)
    np.testing.assert_allclose(fast(X, *args), function(X, *args), rtol=1e-6)
    return fast


@pytest.fixture
def umask(request: pytest.FixtureRequest) -> Iterator[int]:
    old = os.umask(request.param)
    yield request.param
    os.umask(old)


def _walk(root: Path) -> list[Path]:
    return [root, *root.rglob("*")]


def _files_bytes(root: Path) -> int:
    return sum(p.stat().st_size for p in root.rglob("*") if p.is_file())


@pytest.mark.parametrize("umask", [0o000, 0o022, 0o077], indirect=True,
                         ids=["umask000", "umask022", "umask077"])
def test_everything_written_is_private_whatever_the_umask(umask: int, tmp_path: Path) -> None:
    root = tmp_path / "new" / "parents" / "cache"
    amber.set_context(cache_dir=root)
    run(scaled)
    run(steps, "numpy", 3)
    for path in _walk(tmp_path / "new"):
        assert stat.S_IMODE(path.stat().st_mode) & 0o077 == 0, path


@needs_numba
@pytest.mark.parametrize("umask", [0o000], indirect=True)
def test_numba_files_are_private_counted_listed_evicted_and_cleared(
        umask: int, cache_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    run(steps, "numba", 3)
    native = list(cache_dir.glob("*/__pycache__/*.nb[ic]"))
    assert native, "Numba cached no kernel beside the module"
    for path in _walk(cache_dir):
        assert stat.S_IMODE(path.stat().st_mode) & 0o077 == 0, path
    next(cache_dir.glob("*/__pycache__/*.nbi")).write_bytes(b"\x80garbage")  # NOTE: damaged
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # NOTE: no "Numba could not compile": its files are redone
        assert run(steps, "numba", 3).stats.compiles == 1
    assert run(steps, "numba", 3).stats.disk_hits == 1
    run(scaled)
    entries = list(DiskCache(cache_dir).entries())
    memo = sum(p.stat().st_size for p in cache_dir.glob("fingerprint-*.json"))
    assert len(entries) == 2 and sum(e.size for e in entries) + memo == _files_bytes(cache_dir)
    # NOTE: a limit below the Numba entry alone: storing another entry evicts all of its files
    monkeypatch.setenv("AMBER_CACHE_MAX_MB", str(1.5 * max(e.size for e in entries if
                                                         e.target == "scaled") / 2**20))
    run(double)
    assert not list(cache_dir.glob("*/__pycache__/*")), "Numba files outlived their entry"
    assert _files_bytes(cache_dir) - memo <= 1.5 * max(e.size for e in entries)
    assert DiskCache(cache_dir).clear() >= 1
    assert {p.name for p in cache_dir.rglob("*")} <= {p.name for p in
                                                     cache_dir.glob("fingerprint-*.json")}


def double(x: np.ndarray) -> np.ndarray:
    return x + x


@pytest.mark.parametrize("mode", [0o777, 0o775, 0o757])
def test_a_root_others_can_write_is_not_used(mode: int, cache_dir: Path) -> None:
    cache_dir.mkdir()
    os.chmod(cache_dir, mode)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        run(scaled)
        run(scaled)
        run(double)
    messages = [str(w.message) for w in caught]
    assert len(messages) == 1, messages
    assert f"not using the compile cache {cache_dir}" in messages[0]
    assert f"chmod 700 {cache_dir}" in messages[0] and "AMBER_CACHE_DIR" in messages[0]
    assert f"mode {mode:04o}" in messages[0]
    assert list(cache_dir.iterdir()) == []  # NOTE: nothing read or written there


def test_a_root_owned_by_another_user_is_not_used(cache_dir: Path,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    cache_dir.mkdir(mode=0o700)
    monkeypatch.setattr(os, "getuid", lambda: os.stat(cache_dir).st_uid + 1)
    with pytest.warns(RuntimeWarning, match="owned by another user"):
        run(scaled)
    assert list(cache_dir.iterdir()) == []


@pytest.mark.parametrize("where", ["key folder", "numba folder"])
def test_a_key_folder_others_can_write_is_not_used(where: str, cache_dir: Path) -> None:
    run(scaled)
    folder = next(cache_dir.glob("*/*.json")).parent
    target = folder if where == "key folder" else folder / "__pycache__"
    target.mkdir(exist_ok=True)
    os.chmod(target, 0o777)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert run(scaled).stats.disk_hits == 0  # NOTE: recompiled, not read from there
        assert run(scaled).stats.disk_hits == 0
    messages = [str(w.message) for w in caught]
    assert len(messages) == 1 and f"chmod 700 {target}" in messages[0], messages


def test_cache_list_says_an_untrusted_root_is_not_used(cache_dir: Path, capsys) -> None:
    cache_dir.mkdir()
    os.chmod(cache_dir, 0o770)
    assert cli.main(["cache", "list"]) == 0
    assert f"not used by amber: its group can write to it (mode 0770); make it private " \
           f"(chmod 700 {cache_dir})" in capsys.readouterr().out

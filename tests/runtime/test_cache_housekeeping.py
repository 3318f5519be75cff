"""Disk cache housekeeping: the compiler fingerprint follows content (not modification times)
and is memoized; a size limit with least-recently-used eviction; stale entries of another amber
version listed as such and pruned; the platform's default directory; counters and the `amber`
logger; `amber cache list/prune`."""
from __future__ import annotations

import json
import logging
import os
from pathlib import Path

import numpy as np
import pytest

import amber
from amber import cli, nn, version
from amber.runtime import DiskCache, diskcache
from amber.runtime.cachedir import default_cache_dir, user_cache_dir


class Net(nn.Cell):
    def __init__(self) -> None:
        super().__init__()
        self.fc = nn.Dense(8, 8)

    def construct(self, x: np.ndarray) -> np.ndarray:
        return self.fc(x) * 2.0


def call(rows: int) -> amber.runtime.JitFunction:
    fast = amber.jit(Net())
    fast(np.ones((rows, 8), np.float32))
    return fast


def entry_sizes(cache_dir: Path) -> int:
    return sum(p.stat().st_size for p in cache_dir.glob("*/*") if p.suffix in (".py", ".json"))


# -- fingerprint -----------------------------------------------------------------------------

def _tree(root: Path) -> None:
    for name, text in {"a/x.py": "x = 1\n", "a/sub/y.py": "y = 2\n", "b/z.py": "z = 3\n"}.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)


def test_fingerprint_follows_content_not_times(tmp_path: Path) -> None:
    _tree(tmp_path)
    first = version.fingerprint_of(tmp_path, ("a", "b"))
    stat = (tmp_path / "a/x.py").stat()
    os.utime(tmp_path / "a/x.py", ns=(stat.st_atime_ns, stat.st_mtime_ns + 10**9))
    assert version.fingerprint_of(tmp_path, ("a", "b")) == first
    (tmp_path / "a/sub/y.py").write_text("y = 3\n")
    assert version.fingerprint_of(tmp_path, ("a", "b")) != first


def test_fingerprint_memo_skips_reading(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    code, memo = tmp_path / "code", tmp_path / "memo"
    _tree(code)
    opened: list[str] = []
    real_open = open
    monkeypatch.setattr(version, "open", lambda p, *a, **k: opened.append(p) or real_open(
        p, *a, **k), raising=False)
    first = version.fingerprint_of(code, ("a", "b"), memo)
    assert len(opened) == 3 and list(memo.glob("fingerprint-*.json"))
    opened.clear()
    assert version.fingerprint_of(code, ("a", "b"), memo) == first and opened == []
    os.utime(code / "b/z.py")  # a touch: read again, same hash
    assert version.fingerprint_of(code, ("a", "b"), memo) == first and len(opened) == 3


# -- size limit and LRU ----------------------------------------------------------------------

def test_size_limit_evicts_least_recently_used(cache_dir: Path,
                                               monkeypatch: pytest.MonkeyPatch) -> None:
    call(1)
    one = entry_sizes(cache_dir)
    limit_mb = 3.5 * one / 2**20
    monkeypatch.setenv("AMBER_CACHE_MAX_MB", str(limit_mb))
    call(2)
    call(3)
    assert call(1).stats.disk_hits == 1  # used again: now the most recent
    evicted_before = diskcache.STATS.evictions
    call(4)  # 4 entries: over the limit, the least recently used one (rows=2) goes
    assert entry_sizes(cache_dir) <= limit_mb * 2**20
    assert diskcache.STATS.evictions == evicted_before + 1
    assert len(list(cache_dir.glob("*/*.json"))) == 3
    assert call(1).stats.disk_hits == 1  # kept: recently used
    assert call(2).stats.compiles == 1  # evicted: least recently used


def test_no_limit(cache_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AMBER_CACHE_MAX_MB", "0")
    for rows in (1, 2, 3):
        call(rows)
    assert len(list(cache_dir.glob("*/*.json"))) == 3


# -- stale entries -----------------------------------------------------------------------------

def _make_stale(meta_path: Path) -> None:
    meta = json.loads(meta_path.read_text())
    del meta["sha256"]
    meta["amber_version"] = "0.0.1+000000000000"
    meta_path.write_text(diskcache._seal(meta))


def test_stale_and_damaged_entries_are_listed_and_pruned(cache_dir: Path, capsys) -> None:
    for rows in (1, 2, 3):
        call(rows)
    metas = sorted(cache_dir.glob("*/*.json"))
    _make_stale(metas[0])
    metas[1].with_suffix(".py").write_text("garbage")
    states = sorted(e.state for e in DiskCache(cache_dir).entries())
    assert states == ["damaged", "ok", "stale"]
    assert cli.main(["cache", "list"]) == 0
    out = capsys.readouterr().out
    assert "[stale]" in out and "[damaged]" in out and "3 entries" in out
    assert "1 stale, 1 damaged" in out
    assert cli.main(["cache", "prune"]) == 0
    assert capsys.readouterr().out.startswith("removed 2 stale or damaged and 0 least")
    assert [e.state for e in DiskCache(cache_dir).entries()] == ["ok"]


def test_prune_enforces_the_limit(cache_dir: Path, monkeypatch: pytest.MonkeyPatch,
                                  capsys) -> None:
    for rows in (1, 2, 3):
        call(rows)
    monkeypatch.setenv("AMBER_CACHE_MAX_MB", str(entry_sizes(cache_dir) / 2 / 2**20))
    assert cli.main(["cache", "prune"]) == 0
    assert "and 2 least recently used entries" in capsys.readouterr().out


# -- default directory -------------------------------------------------------------------------

@pytest.mark.parametrize("platform, environ, expected", [
    ("linux", {"HOME": "/home/u"}, "/home/u/.cache/amber"),
    ("linux", {"HOME": "/home/u", "XDG_CACHE_HOME": "/x/cache"}, "/x/cache/amber"),
    ("linux", {"HOME": "/home/u", "XDG_CACHE_HOME": "relative"}, "/home/u/.cache/amber"),
    ("darwin", {"HOME": "/Users/u"}, "/Users/u/Library/Caches/amber"),
    ("win32", {"LOCALAPPDATA": "C:/Users/u/AppData/Local"},
     "C:/Users/u/AppData/Local/amber/Cache"),
    ("win32", {"USERPROFILE": "C:/Users/u"}, "C:/Users/u/AppData/Local/amber/Cache"),
])
def test_platform_cache_dir(platform: str, environ: dict, expected: str) -> None:
    assert user_cache_dir(platform, environ) == Path(expected)


def test_amber_cache_dir_wins(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("AMBER_CACHE_DIR", str(tmp_path / "mine"))
    assert default_cache_dir() == tmp_path / "mine"
    monkeypatch.delenv("AMBER_CACHE_DIR")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    if os.name == "posix" and not os.uname().sysname == "Darwin":
        assert default_cache_dir() == tmp_path / "xdg" / "amber"


# -- counters and logging ----------------------------------------------------------------------

def test_counters(cache_dir: Path) -> None:
    before = diskcache.CacheStats(**vars(diskcache.STATS))
    cold = call(2)
    warm = call(2)
    assert (cold.stats.disk_misses, cold.stats.compiles, cold.stats.disk_hits) == (1, 1, 0)
    assert (warm.stats.disk_misses, warm.stats.compiles, warm.stats.disk_hits) == (0, 0, 1)
    after = diskcache.STATS
    assert after.hits - before.hits == 1 and after.stores - before.stores == 1
    assert after.misses - before.misses == 2  # NOTE: looked up again under the compile lock


def test_logging(cache_dir: Path, caplog: pytest.LogCaptureFixture,
                 monkeypatch: pytest.MonkeyPatch) -> None:
    caplog.set_level(logging.DEBUG, logger="amber")
    fast = amber.jit(Net())
    fast(np.ones((2, 8), np.float32))
    fast(np.ones((3, 8), np.float32))
    call(2)
    messages = [r.getMessage() for r in caplog.records if r.name == "amber"]
    compiled = [m for m in messages if m.startswith("amber: compiled Net.construct")]
    assert len(compiled) == 2 and "(f32[2,8]) in " in compiled[0]
    assert compiled[0].endswith("ms (first call)")
    assert compiled[1].endswith("ms (new arg 0 (f32[2,8], f32[N,8]))")  # batch now symbolic
    assert sum(m.startswith("amber: disk cache stored ") for m in messages) == 2
    assert sum(m.startswith("amber: disk cache hit ") for m in messages) == 1
    monkeypatch.setenv("AMBER_CACHE_MAX_MB", str(entry_sizes(cache_dir) / 2**20))
    caplog.clear()
    call(4)
    assert any("evicted 2 least recently used entries" in r.getMessage() for r in caplog.records)


def test_compile_lock_within_one_process(tmp_path: Path) -> None:
    """A file lock belongs to an open file: the same thread taking a key's lock again must not
    wait for itself, and another thread of the process waits until the holder lets go."""
    import threading

    from amber.runtime.cachedir import key_lock

    order: list[str] = []

    def other() -> None:
        with key_lock(tmp_path, wait=30.0) as got:
            order.append(f"other {got}")

    with key_lock(tmp_path, wait=1.0) as outer:
        with key_lock(tmp_path, wait=1.0) as inner:  # NOTE: 1 s: it used to wait it out, False
            order.append(f"nested {outer} {inner}")
        thread = threading.Thread(target=other)
        thread.start()
        thread.join(0.2)
        order.append("outer leaves")
    thread.join(30.0)
    assert order == ["nested True True", "outer leaves", "other True"]

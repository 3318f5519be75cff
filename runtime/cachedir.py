"""The disk cache's directory: where it is by default on each platform, the lock that lets one
process compile a key while others wait for its entry, and keeping the directory under its size
limit by evicting the least recently used entries.

Default location (`$AMBER_CACHE_DIR` overrides it), the rule platformdirs' `user_cache_dir`
follows, kept here so amber needs no dependency beyond NumPy and gast:
- Linux and other Unix: `$XDG_CACHE_HOME/amber` (when it is an absolute path), else
  `~/.cache/amber`;
- macOS: `~/Library/Caches/amber`;
- Windows: `%LOCALAPPDATA%\\amber\\Cache` (else `~\\AppData\\Local\\amber\\Cache`).

Size limit: `AMBER_CACHE_MAX_MB` (default `DEFAULT_MAX_MB`; 0 or less: no limit). Each hit
touches the entry's metadata file, so its modification time is its last use; after a store
pushes the directory past the limit, the least recently used entries are deleted until it is
under 90% of it.

Locks: a file lock per first key (`fcntl.flock` on Unix, `msvcrt.locking` on Windows, both
released by the OS if the process dies), taken only after a miss: a process that finds the lock
held waits, then looks the key up again and finds the entry the other process wrote.
"""
from __future__ import annotations

import contextlib
import os
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Iterator

from . import log

DEFAULT_MAX_MB = 256
LOCK_NAME = ".compile.lock"
LOCK_WAIT_SECONDS = 300.0
"""How long a process waits for another one compiling the same key before compiling itself."""
_TMP_AGE_SECONDS = 3600.0


def default_cache_dir() -> Path:
    """`$AMBER_CACHE_DIR`, else the platform's user cache directory plus `amber` (see above)."""
    explicit = os.environ.get("AMBER_CACHE_DIR")
    if explicit:
        return Path(explicit).expanduser()
    return user_cache_dir(sys.platform, os.environ)


def user_cache_dir(platform: str, environ: os._Environ | dict) -> Path:
    """amber's directory under the user cache directory of `platform` (a `sys.platform`)."""
    if platform == "win32":
        local = environ.get("LOCALAPPDATA")
        base = Path(local) if local else Path(environ.get("USERPROFILE") or Path.home()) / \
            "AppData" / "Local"
        return base / "amber" / "Cache"
    home = Path(environ.get("HOME") or Path.home())
    if platform == "darwin":
        return home / "Library" / "Caches" / "amber"
    xdg = environ.get("XDG_CACHE_HOME", "")
    base = Path(xdg) if xdg and os.path.isabs(xdg) else home / ".cache"
    return base / "amber"


def max_bytes() -> int | None:
    """The size limit from `AMBER_CACHE_MAX_MB` (None: no limit)."""
    text = os.environ.get("AMBER_CACHE_MAX_MB", "").strip()
    try:
        megabytes = float(text) if text else float(DEFAULT_MAX_MB)
    except ValueError:
        megabytes = float(DEFAULT_MAX_MB)
    return None if megabytes <= 0 else int(megabytes * 1024 * 1024)


@dataclass(frozen=True)
class StoredEntry:
    """One entry's files as the eviction sees them."""
    meta: Path
    size: int
    last_used: float

    @property
    def code(self) -> Path:
        return self.meta.with_suffix(".py")

    def delete(self) -> None:
        for path in (self.meta, self.code):  # NOTE: metadata first: the commit record
            path.unlink(missing_ok=True)


def stored_entries(root: Path) -> list[StoredEntry]:
    """Every entry under `root` (a stat per file, no reads), least recently used first."""
    found = []
    for meta in root.glob("*/*.json"):
        try:
            stat = meta.stat()
            size = stat.st_size + _size(meta.with_suffix(".py"))
        except OSError:  # removed meanwhile by another process
            continue
        found.append(StoredEntry(meta, size, stat.st_mtime))
    return sorted(found, key=lambda e: e.last_used)


def evict(root: Path, limit: int | None) -> tuple[int, int]:
    """Delete least recently used entries until `root` holds at most 90% of `limit` bytes
    (nothing if it holds at most `limit`). Returns (entries removed, bytes freed)."""
    if limit is None:
        return 0, 0
    entries = stored_entries(root)
    total = sum(e.size for e in entries)
    if total <= limit:
        return 0, 0
    removed = freed = 0
    for entry in entries:
        if total - freed <= 0.9 * limit:
            break
        entry.delete()
        removed, freed = removed + 1, freed + entry.size
    remove_empty_folders(root)
    log.info("amber: disk cache over %.1f MB: evicted %d least recently used entries (%.1f MB)",
             limit / 2**20, removed, freed / 2**20)
    return removed, freed


def remove_empty_folders(root: Path) -> None:
    """Drop key folders left empty (a lock file alone counts as empty); stray temporary files
    older than an hour (a writer that died) go first."""
    now = time.time()
    for folder in root.iterdir() if root.is_dir() else ():
        if not folder.is_dir():
            continue
        for tmp in folder.glob(".*.tmp"):
            with contextlib.suppress(OSError):
                if now - tmp.stat().st_mtime > _TMP_AGE_SECONDS:
                    tmp.unlink()
        names = {p.name for p in folder.iterdir()}
        if names <= {LOCK_NAME}:
            with contextlib.suppress(OSError):
                (folder / LOCK_NAME).unlink(missing_ok=True)
                folder.rmdir()


def _size(path: Path) -> int:
    try:
        return path.stat().st_size
    except OSError:
        return 0


@contextlib.contextmanager
def key_lock(folder: Path, wait: float = LOCK_WAIT_SECONDS) -> Iterator[bool]:
    """Hold the exclusive lock of one key folder (created if needed); yields False if it could
    not be had (no lock support, an unwritable folder, or `wait` seconds passed): the caller
    then compiles unlocked, as it would without a lock."""
    try:
        fd = os.open(folder / LOCK_NAME, os.O_RDWR | os.O_CREAT, 0o600)
    except OSError:
        yield False
        return
    try:
        got = _acquire(fd, wait)
        if not got:
            log.debug("amber: gave up waiting for the compile lock in %s", folder)
        try:
            yield got
        finally:
            if got:
                _release(fd)
    finally:
        os.close(fd)


def _acquire(fd: int, wait: float) -> bool:
    deadline = time.monotonic() + wait
    delay = 0.005
    while True:
        try:
            if _try_lock(fd):
                return True
        except OSError:
            return False
        if time.monotonic() >= deadline:
            return False
        time.sleep(delay)
        delay = min(delay * 2, 0.1)


if sys.platform == "win32":  # pragma: no cover (tested on Unix)
    import msvcrt

    def _try_lock(fd: int) -> bool:
        try:
            msvcrt.locking(fd, msvcrt.LK_NBLCK, 1)
            return True
        except OSError:
            return False

    def _release(fd: int) -> None:
        os.lseek(fd, 0, os.SEEK_SET)
        msvcrt.locking(fd, msvcrt.LK_UNLCK, 1)
else:
    import fcntl

    def _try_lock(fd: int) -> bool:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return True
        except BlockingIOError:
            return False

    def _release(fd: int) -> None:
        fcntl.flock(fd, fcntl.LOCK_UN)

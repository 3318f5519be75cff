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

Trust (as ssh treats its keys): amber creates every folder and file of the cache private to the
user (0700 / 0600, whatever the umask; Numba's kernel files too), and uses a cache root or key
folder only if the user owns it and neither group nor others can write it (`untrusted_reason`):
the cache holds code amber runs, so anyone who can write there could make amber run theirs.

Accounting: an entry is its metadata, its module and Numba's files for its kernels
(`<key folder>/__pycache__/<key>.*.nbi/.nbc`); all of them count toward the size limit and go
when the entry is evicted, pruned or cleared. A key folder's lock file goes with its last entry.

Locks: a file lock per first key (`fcntl.flock` on Unix, `msvcrt.locking` on Windows, both
released by the OS if the process dies), taken only after a miss: a process that finds the lock
held waits, then looks the key up again and finds the entry the other process wrote.
"""
from __future__ import annotations

import contextlib
import os
import stat
import sys
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Iterator

from . import log

DEFAULT_MAX_MB = 256
LOCK_NAME = ".compile.lock"
NATIVE_FOLDER = "__pycache__"
"""Where Numba caches the kernels of the modules in a key folder (beside them, its rule)."""
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
    native: tuple[Path, ...] = ()
    """Numba's cache files of the entry's kernels."""

    @property
    def code(self) -> Path:
        return self.meta.with_suffix(".py")

    def delete(self) -> None:
        for path in (self.meta, self.code, *self.native):  # NOTE: metadata first: the commit
            path.unlink(missing_ok=True)


def native_files(folder: Path) -> dict[str, list[Path]]:
    """Numba's files in a key folder, by the key of the module they belong to."""
    found: dict[str, list[Path]] = {}
    native = folder / NATIVE_FOLDER
    for path in native.iterdir() if native.is_dir() else ():
        found.setdefault(path.name.split(".", 1)[0], []).append(path)
    return found


def stored_entries(root: Path) -> list[StoredEntry]:
    """Every entry under `root` (a stat per file, no reads), least recently used first."""
    found = []
    for folder in root.iterdir() if root.is_dir() else ():
        try:
            metas = list(folder.glob("*.json")) if folder.is_dir() else []
            native = native_files(folder) if metas else {}
        except OSError:  # removed meanwhile by another process
            continue
        for meta in metas:
            try:
                stat_ = meta.stat()
            except OSError:
                continue
            files = tuple(native.get(meta.stem, ()))
            size = stat_.st_size + sum(map(_size, (meta.with_suffix(".py"), *files)))
            found.append(StoredEntry(meta, size, stat_.st_mtime, files))
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
    """Drop key folders left without entries (a lock file alone counts as empty), with Numba
    files whose entry is gone (evicted while its kernels were being written); stray temporary
    files older than an hour (a writer that died) go first."""
    now = time.time()
    for folder in root.iterdir() if root.is_dir() else ():
        if not folder.is_dir():
            continue
        for tmp in folder.glob(".*.tmp"):
            with contextlib.suppress(OSError):
                if now - tmp.stat().st_mtime > _TMP_AGE_SECONDS:
                    tmp.unlink()
        with contextlib.suppress(OSError):
            for key, files in native_files(folder).items():
                if not (folder / f"{key}.json").exists():
                    for path in files:
                        path.unlink(missing_ok=True)
            (folder / NATIVE_FOLDER).rmdir()  # NOTE: only if empty
        names = {p.name for p in folder.iterdir()}
        if names <= {LOCK_NAME}:
            with contextlib.suppress(OSError):
                (folder / LOCK_NAME).unlink(missing_ok=True)
                folder.rmdir()


def untrusted_reason(folder: Path) -> str | None:
    """Why amber must not use `folder` of the cache (None if it may, or it does not exist yet):
    not a folder, owned by another user, or writable by group or others."""
    if sys.platform == "win32":  # pragma: no cover (no POSIX modes; ACLs are the user's)
        return None
    try:
        info = os.stat(folder)
    except OSError:  # NOTE: missing, or unreachable: then not readable either (writing warns)
        return None
    if not stat.S_ISDIR(info.st_mode):
        return "it is not a folder"
    if info.st_uid != os.getuid():
        return f"it is owned by another user (uid {info.st_uid})"
    if info.st_mode & 0o022:
        who = "group and others" if info.st_mode & 0o022 == 0o022 else \
            "others" if info.st_mode & 0o002 else "its group"
        return f"{who} can write to it (mode {stat.S_IMODE(info.st_mode):04o})"
    return None


def make_private_dirs(folder: Path) -> None:
    """Create `folder` and its missing parents private to the user (0700 whatever the umask)."""
    missing = []
    for path in (folder, *folder.parents):
        if path.is_dir():
            break
        missing.append(path)
    for path in reversed(missing):
        with contextlib.suppress(FileExistsError):
            path.mkdir(mode=0o700)
            os.chmod(path, 0o700)  # NOTE: mkdir's mode is filtered by the umask


def make_private(paths: list[Path]) -> None:
    """Make files amber did not create itself (Numba's) private: 0600, their folder 0700."""
    for path in paths:
        with contextlib.suppress(OSError):
            os.chmod(path, 0o700 if path.is_dir() else 0o600)


def _size(path: Path) -> int:
    try:
        return path.stat().st_size
    except OSError:
        return 0


@dataclass
class _LocalHold:
    """This process's hold of one key folder's lock: a file lock belongs to an open file, so
    a second open in the same process (another thread, or a compile within a compile) would
    wait for itself; threads queue on `lock` instead, and only the outermost hold locks the
    file."""
    lock: threading.RLock
    depth: int = 0


_LOCAL_HOLDS: dict[str, _LocalHold] = {}
_LOCAL_HOLDS_GUARD = threading.Lock()
if hasattr(os, "register_at_fork"):  # NOTE: a forked child has none of the holding threads
    os.register_at_fork(after_in_child=_LOCAL_HOLDS.clear)


@contextlib.contextmanager
def key_lock(folder: Path, wait: float = LOCK_WAIT_SECONDS) -> Iterator[bool]:
    """Hold the exclusive lock of one key folder (created if needed); yields False if it could
    not be had (no lock support, an unwritable folder, or `wait` seconds passed): the caller
    then compiles unlocked, as it would without a lock."""
    with _LOCAL_HOLDS_GUARD:
        hold = _LOCAL_HOLDS.setdefault(str(folder), _LocalHold(threading.RLock()))
    if not hold.lock.acquire(timeout=wait):
        yield False
        return
    try:
        hold.depth += 1
        if hold.depth > 1:
            yield True  # NOTE: this thread holds the file lock already
            return
        with _file_lock(folder, wait) as got:
            yield got
    finally:
        hold.depth -= 1
        hold.lock.release()


@contextlib.contextmanager
def _file_lock(folder: Path, wait: float) -> Iterator[bool]:
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

"""amber's version and the fingerprint of its compiler's files: below every other module, so
any layer may read them without importing the package root."""
from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path

__version__ = "0.1.0"

COMPILER_PACKAGES = ("ops", "frontend", "graph", "codegen", "runtime")
"""The packages whose files decide what code a compile produces."""

_ROOT = Path(__file__).resolve().parent
_fingerprint: list[str] = []


def compiler_fingerprint(memo_dir: str | os.PathLike | None = None) -> str:
    """A hash of the content of the compiler's own files, computed once per process.

    Reading every file costs milliseconds at each start, so the hash is kept in `memo_dir` (the
    disk cache directory) together with the files' stat signature (path, size, modification
    time): while the signature matches, the stored hash is used (a stat per file, no reads).
    A `touch`, a fresh checkout or a reinstall changes the signature but not the content: the
    files are read again and give the same hash, so cached code stays valid."""
    if not _fingerprint:
        _fingerprint.append(fingerprint_of(_ROOT, COMPILER_PACKAGES, memo_dir))
    return _fingerprint[0]


def fingerprint_of(root: Path, packages: tuple[str, ...],
                   memo_dir: str | os.PathLike | None = None) -> str:
    """The content hash of the .py files of `packages` under `root` (see
    `compiler_fingerprint`), memoized by their stat signature in `memo_dir` when given."""
    files = _python_files(root, packages)
    signature = hashlib.sha256()
    for rel, path in files:
        stat = os.stat(path)
        signature.update(f"{rel}:{stat.st_size}:{stat.st_mtime_ns}\n".encode())
    memo = None
    if memo_dir is not None:
        place = hashlib.sha256(str(root).encode()).hexdigest()[:12]
        memo = Path(memo_dir) / f"fingerprint-{place}.json"
        try:
            saved = json.loads(memo.read_text(encoding="utf-8"))
            if saved.get("stat") == signature.hexdigest():
                return str(saved["content"])
        except (OSError, ValueError, KeyError, AttributeError):
            pass
    content = hashlib.sha256()
    for rel, path in files:
        with open(path, "rb") as f:
            data = f.read()
        content.update(f"{rel}:{len(data)}\n".encode())
        content.update(data)
    digest = content.hexdigest()[:12]
    if memo is not None:
        _write_memo(memo, {"stat": signature.hexdigest(), "content": digest})
    return digest


def _python_files(root: Path, packages: tuple[str, ...]) -> list[tuple[str, str]]:
    """(path relative to root with '/', absolute path) of every .py file, sorted."""
    found = []
    for package in packages:
        for folder, dirs, names in os.walk(root / package):
            dirs[:] = [d for d in dirs if d != "__pycache__"]
            for name in names:
                if name.endswith(".py"):
                    path = os.path.join(folder, name)
                    found.append((Path(os.path.relpath(path, root)).as_posix(), path))
    return sorted(found)


def _write_memo(path: Path, record: dict[str, str]) -> None:
    """Best effort: a read-only directory only costs the reads next time. A missing one is
    created private to the user (0700), as the disk cache creates it."""
    try:
        missing = [p for p in (path.parent, *path.parent.parents) if not p.is_dir()]
        for folder in reversed(missing):  # NOTE: parents too: mkdir's would follow the umask
            folder.mkdir(mode=0o700, exist_ok=True)
            os.chmod(folder, 0o700)  # NOTE: mkdir's mode is filtered by the umask
        tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)  # NOTE: not by the umask
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(json.dumps(record))
        os.replace(tmp, path)
    except OSError:
        pass

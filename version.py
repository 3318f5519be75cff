"""amber's version and the fingerprint of its compiler's files: below every other module, so
any layer may read them without importing the package root."""
from __future__ import annotations

import hashlib
from pathlib import Path

__version__ = "0.1.0"

COMPILER_PACKAGES = ("ops", "frontend", "graph", "codegen", "runtime")
"""The packages whose files decide what code a compile produces."""

_fingerprint: list[str] = []


def compiler_fingerprint() -> str:
    """A hash of the compiler's own files (path, size and modification time of each: a stat
    per file, no reads), computed once per process."""
    if not _fingerprint:
        root = Path(__file__).resolve().parent
        h = hashlib.sha256()
        for package in COMPILER_PACKAGES:
            for path in sorted((root / package).rglob("*.py")):
                stat = path.stat()
                h.update(f"{path.relative_to(root)}:{stat.st_size}:{stat.st_mtime_ns}\n".encode())
        _fingerprint.append(h.hexdigest()[:12])
    return _fingerprint[0]
